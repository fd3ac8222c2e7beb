package golden

import (
	"context"

	"github.com/bitexact/bitexact/wasm"
)

// Wasm is the reference compiled to WebAssembly (package wasm) as an
// Engine that names its module.
type Wasm struct{ *wasm.Runtime }

// NewWasm starts a wasm runtime.
func NewWasm(ctx context.Context, opt wasm.Options) (Wasm, error) {
	r, err := wasm.New(ctx, opt)
	return Wasm{r}, err
}

// ModuleDigest is the SHA-256 of the embedded reference module.
func (Wasm) ModuleDigest() string { return wasm.ModuleDigest() }

func wasmOptions() wasm.Options { return wasm.Options{} }
