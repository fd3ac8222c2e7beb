//go:build cuda

package cuda

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"gorgonia.org/cu"
)

// Override loads ptx in place of the embedded module named module, so that
// every kernel of that module (Launch, rangeInto, Engine) runs from the
// given PTX until restore is called. It exists for the CUDA mutant test
// (internal/conformance/mutants), which recompiles a kernel family from patched
// sources and certifies it through the same Engine path as the real one.
//
// The module it replaces stays loaded, and restore puts it back and
// unloads the replacement; calling restore again does nothing. Overrides
// of one module nest when restored in reverse order. The ptx must define
// every entry point of the module that callers use (a kernel it lacks
// fails at lookup).
func (d *Device) Override(ctx context.Context, module string, ptx []byte) (restore func() error, err error) {
	if len(ptx) == 0 {
		return nil, fmt.Errorf("cuda: override of module %s: empty PTX", module)
	}
	sum := sha256.Sum256(ptx)
	digest := hex.EncodeToString(sum[:])
	src := strings.TrimRight(string(ptx), "\x00")
	var (
		index         int
		embedded, mod cu.Module
	)
	err = d.do(ctx, "overriding module "+module, func() error {
		index = -1
		for i, l := range d.modules {
			if l.m.Name == module {
				index = i
				break
			}
		}
		if index < 0 {
			return fmt.Errorf("cuda: override: module %s is not loaded on %s (sm_%d)", module, d.name, d.cc)
		}
		embedded = d.modules[index].mod
		var err error
		if mod, err = cu.LoadData(src); err != nil {
			return fmt.Errorf("cuda: override: loading PTX (sha256 %s) for module %s on %s (sm_%d): %w", digest, module, d.name, d.cc, err)
		}
		// Only the mod field changes, so Loaded (which reads the module
		// names from other goroutines) never races with an override.
		d.modules[index].mod = mod
		d.fns = map[string]cu.Function{} // resolved functions belong to the old module
		return nil
	})
	if err != nil {
		return nil, err
	}
	done := false
	restore = func() error {
		if done {
			return nil
		}
		done = true
		return d.do(context.Background(), "restoring module "+module, func() error {
			d.modules[index].mod = embedded
			d.fns = map[string]cu.Function{}
			return mod.Unload()
		})
	}
	return restore, nil
}
