package e8m0

import (
	"math"
	"testing"
)

var sink uint8

func benchInputs() []float32 {
	x := make([]float32, 4096)
	for i := range x {
		x[i] = math.Float32frombits(uint32(i) * 0x9e3779b9)
	}
	return x
}

func BenchmarkEncode(b *testing.B) {
	x := benchInputs()
	for _, r := range Roundings() {
		b.Run(r.Name, func(b *testing.B) {
			var s uint8
			for i := 0; i < b.N; i++ {
				s += r.Encode(x[i&4095])
			}
			sink = s
		})
	}
}

func BenchmarkSharedScale(b *testing.B) {
	x := benchInputs()
	for _, m := range ScaleModes() {
		b.Run(m.Name, func(b *testing.B) {
			var s uint8
			for i := 0; i < b.N; i++ {
				s += SharedScale(x[i&4095], m, 2, 6)
			}
			sink = s
		})
	}
}
