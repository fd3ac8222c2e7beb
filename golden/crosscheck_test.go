package golden

import (
	"context"
	"testing"
)

// TestWasmCrossCheck is the determinism cross-check: for every case of the
// committed set, the native reference and the WebAssembly build give the
// same bytes, and both equal the committed expected output. A difference
// between native and wasm means a platform-dependent float expression in
// the reference (fix it with explicit float32 conversions, never by
// loosening this test).
func TestWasmCrossCheck(t *testing.T) {
	ctx := context.Background()
	s, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWasm(ctx, wasmOptions())
	if err != nil {
		t.Fatalf("starting the wasm engine: %v", err)
	}
	defer w.Close(ctx)
	for _, c := range s.Manifest.Cases {
		in, err := s.Inputs(c)
		if err != nil {
			t.Fatal(err)
		}
		want, err := s.Expected(c)
		if err != nil {
			t.Fatal(err)
		}
		nat, err := Native{}.Run(ctx, c.Op, c.Params, in)
		if err != nil {
			t.Errorf("%s: native: %v", c.Name, err)
			continue
		}
		was, err := w.Run(ctx, c.Op, c.Params, in)
		if err != nil {
			t.Errorf("%s: wasm: %v", c.Name, err)
			continue
		}
		for _, d := range DiffTensors(nat, was) {
			t.Errorf("%s: wasm differs from native: tensor %q: %s", c.Name, d.Tensor, d.Problem)
		}
		for _, d := range DiffTensors(want, nat) {
			t.Errorf("%s: native differs from %s: tensor %q: %s", c.Name, c.File, d.Tensor, d.Problem)
		}
	}
}
