package gemv

import (
	"math/rand"
	"testing"

	"github.com/bitexact/bitexact/refimpl/half"
)

// The down projection of dgx-vllm's sparse FP4 MoE benchmark: K=2048, N=512, 10 active experts of 16.
func BenchmarkSparseFP4(b *testing.B) {
	in := randomSparse(rand.New(rand.NewSource(1)), 16, 2048, 512, 10, 16)
	b.SetBytes(int64(10 * 2048 * 512 * 3 / 8))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := SparseFP4GEMV(in, SparseV7); err != nil {
			b.Fatal(err)
		}
	}
}

// gpt-oss FC1: K=4096, N=11776, MXFP4 weights.
func BenchmarkMXFP4Q81(b *testing.B) {
	const n, k = 11776, 4096
	w, act := randomMXFP4(rand.New(rand.NewSource(1)), n, k)
	b.SetBytes(int64(len(w)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := MXFP4Q81GEMV(w, act, n, k, MMVQ); err != nil {
			b.Fatal(err)
		}
	}
}

// A 4096 x 4096 fp16 GEMV (the AWQ op after dequantization).
func BenchmarkF16GEMV(b *testing.B) {
	const ic, oc = 4096, 4096
	r := rand.New(rand.NewSource(1))
	w := make([]uint16, ic*oc)
	for i := range w {
		w[i] = half.EncodeFP16(float32(r.NormFloat64()))
	}
	x := make([]uint16, ic)
	for i := range x {
		x[i] = half.EncodeFP16(float32(r.NormFloat64()))
	}
	b.SetBytes(int64(2 * len(w)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := F16GEMV(w, x, ic, oc, SeqF16Out); err != nil {
			b.Fatal(err)
		}
	}
}

// The exact value and bound of one K=4096 dot product.
func BenchmarkBound(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	w := make([]float64, 4096)
	x := make([]float64, 4096)
	for i := range w {
		w[i] = float64(float32(r.NormFloat64()))
		x[i] = float64(half.DecodeFP16(half.EncodeFP16(float32(r.NormFloat64()))))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Bound(w, x, BoundModel{Mul32: 1}, 0); err != nil {
			b.Fatal(err)
		}
	}
}
