//go:build cuda

package cuda

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"runtime"
	"strings"
	"unsafe"

	"gorgonia.org/cu"
)

// ThirdParty is a PTX module supplied by a kernel author for
// certification. It is loaded into the Device's context beside the
// embedded modules but resolved on its own, so that an entry point of the
// third-party module can never be confused with one of bitexact's
// kernels (and vice versa).
type ThirdParty struct {
	d   *Device
	mod cu.Module
	fns map[string]cu.Function // driver thread only
	// SHA256 is the digest of the PTX text as loaded.
	SHA256 string
}

// LoadPTX JIT-compiles ptx for this device. Errors (syntax, an
// unsupported target) come back from the driver with the module's digest.
func (d *Device) LoadPTX(ctx context.Context, ptx []byte) (*ThirdParty, error) {
	if len(ptx) == 0 {
		return nil, fmt.Errorf("cuda: third-party PTX is empty")
	}
	sum := sha256.Sum256(ptx)
	m := &ThirdParty{d: d, fns: map[string]cu.Function{}, SHA256: hex.EncodeToString(sum[:])}
	src := strings.TrimRight(string(ptx), "\x00")
	err := d.do(ctx, "loading third-party PTX", func() error {
		mod, err := cu.LoadData(src)
		if err != nil {
			return fmt.Errorf("cuda: loading third-party PTX (sha256 %s) on %s (sm_%d): %w", m.SHA256, d.name, d.cc, err)
		}
		m.mod = mod
		return nil
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Unload releases the module.
func (m *ThirdParty) Unload(ctx context.Context) error {
	return m.d.do(ctx, "unloading third-party PTX", func() error { return m.mod.Unload() })
}

// Has reports whether the module defines entry point name.
func (m *ThirdParty) Has(ctx context.Context, name string) error {
	return m.d.do(ctx, "looking up "+name, func() error {
		_, err := m.function(name)
		return err
	})
}

func (m *ThirdParty) function(name string) (cu.Function, error) {
	if fn, ok := m.fns[name]; ok {
		return fn, nil
	}
	fn, err := m.mod.Function(name)
	if err != nil {
		return cu.Function{}, &KernelError{name, "lookup", fmt.Errorf("not an entry point of the third-party PTX: %w", err)}
	}
	m.fns[name] = fn
	return fn, nil
}

// Launch runs entry point name of the module and waits for it, as
// Device.Launch does for the embedded kernels.
func (m *ThirdParty) Launch(ctx context.Context, name string, grid, block Dims, shared int, args ...any) error {
	ptrs, vals, err := packArgs(args)
	if err != nil {
		return &KernelError{name, "arguments", err}
	}
	return m.d.do(ctx, "third-party kernel "+name, func() error {
		fn, err := m.function(name)
		if err != nil {
			return err
		}
		if err := fn.Launch(grid.X, grid.Y, grid.Z, block.X, block.Y, block.Z, shared, cu.Stream{}, ptrs); err != nil {
			return &KernelError{name, "launch", err}
		}
		runtime.KeepAlive(vals)
		if err := cu.Synchronize(); err != nil {
			return &KernelError{name, "run", err}
		}
		return nil
	})
}

// CopyIn copies src into the start of b (no allocation).
func (d *Device) CopyIn(ctx context.Context, b Buffer, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	if int64(len(src)) > b.n {
		return fmt.Errorf("cuda: copy of %d bytes into a %d-byte buffer", len(src), b.n)
	}
	return d.do(ctx, fmt.Sprintf("copy %d bytes to the device", len(src)), func() error {
		return cu.MemcpyHtoD(b.ptr, unsafe.Pointer(&src[0]), int64(len(src)))
	})
}
