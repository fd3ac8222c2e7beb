package golden

import (
	"context"
	"fmt"

	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/unary"
)

// Engine runs reference operations. Two implementations exist: Native
// (the refimpl compiled for the host) and the wasm package's *wasm.Runtime
// (the same code compiled to GOOS=wasip1 and run under wazero), which
// satisfies Engine as is. Golden data is generated through wasm, because
// WebAssembly pins every float operation, and cross-checked natively.
//
// Implementations must be safe for concurrent use.
type Engine interface {
	// Run runs the registered op with the given parameters and inputs.
	Run(ctx context.Context, op string, p ops.Params, in ops.Tensors) (ops.Tensors, error)
	// Unary writes the codes of the float32 inputs with bit patterns start,
	// start+1, ... under the unary conversion conv ("format/profile"), one
	// code per unary.Conversion.Width() bytes, for len(out)/Width() inputs.
	Unary(ctx context.Context, conv string, start uint32, out []byte) error
}

// describer is implemented by engines that can name the code they run.
// The wasm engine returns the SHA-256 of its module, which golden
// manifests record as the generator.
type describer interface {
	ModuleDigest() string
}

// Native runs the reference in the host process.
type Native struct{}

// Run calls ops.Run.
func (Native) Run(ctx context.Context, op string, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return ops.Run(op, p, in)
}

// Unary calls unary.Conversion.EncodeRange.
func (Native) Unary(ctx context.Context, conv string, start uint32, out []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c, err := unary.Lookup(conv)
	if err != nil {
		return err
	}
	if len(out)%c.Width() != 0 {
		return fmt.Errorf("unary %s: output of %d bytes is not a multiple of the code width %d", conv, len(out), c.Width())
	}
	c.EncodeRange(start, out)
	return nil
}

// EngineName says which engine e is, for reports: "wasm sha256:…" when it
// describes its module, "native" for Native, else its Go type.
func EngineName(e Engine) string {
	if d, ok := e.(describer); ok {
		return "wasm sha256:" + d.ModuleDigest()
	}
	if _, ok := e.(Native); ok {
		return "native"
	}
	return fmt.Sprintf("%T", e)
}
