package awq

import (
	"math/rand"
	"testing"

	"github.com/bitexact/bitexact/refimpl/half"
)

func benchWeight(IC, OC int) []uint16 {
	rng := rand.New(rand.NewSource(1))
	w := make([]uint16, IC*OC)
	for i := range w {
		w[i] = half.EncodeFP16(float32(rng.NormFloat64() * 0.02))
	}
	return w
}

func benchQuantizePack(b *testing.B, qz Quantizer) {
	const IC, OC, G = 4096, 4096, 128
	w := benchWeight(IC, OC)
	b.SetBytes(int64(2 * IC * OC))
	b.ResetTimer()
	for b.Loop() {
		q, err := Quantize(w, IC, OC, G, qz)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := AWQ.PackWeight(q.Q, IC, OC); err != nil {
			b.Fatal(err)
		}
		if _, _, err := AWQ.PackZeros(q.Zeros, IC, OC, G); err != nil {
			b.Fatal(err)
		}
	}
}

// AWQ quantize + pack of a 4096x4096 fp16 weight, G = 128.
func BenchmarkQuantizePackForge(b *testing.B)   { benchQuantizePack(b, Forge) }
func BenchmarkQuantizePackAutoAWQ(b *testing.B) { benchQuantizePack(b, AutoAWQ) }

// Dequantize of a 4096x4096 AWQ weight, G = 128.
func BenchmarkDequantize(b *testing.B) {
	const IC, OC, G = 4096, 4096, 128
	q, _ := Quantize(benchWeight(IC, OC), IC, OC, G, Forge)
	qw, _, _ := AWQ.PackWeight(q.Q, IC, OC)
	qz, _, _ := AWQ.PackZeros(q.Zeros, IC, OC, G)
	b.SetBytes(int64(2 * IC * OC))
	b.ResetTimer()
	for b.Loop() {
		if _, err := Dequantize(qw, qz, q.Scales, IC, OC, G); err != nil {
			b.Fatal(err)
		}
	}
}
