package golden

import (
	"context"
	"testing"
)

// BenchmarkBuild measures a full golden regeneration in memory (inputs from
// seeds plus every case's expected outputs), natively and through wasm; the
// target is under 60 s through wasm on a 2-core machine. The wasm runtime
// is started outside the timer (its compilation is cached on disk).
func BenchmarkBuild(b *testing.B) {
	ctx := context.Background()
	b.Run("native", func(b *testing.B) {
		for b.Loop() {
			if _, err := Build(ctx, Native{}, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("wasm", func(b *testing.B) {
		w, err := NewWasm(ctx, wasmOptions())
		if err != nil {
			b.Fatal(err)
		}
		defer w.Close(ctx)
		for b.Loop() {
			if _, err := Build(ctx, w, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
