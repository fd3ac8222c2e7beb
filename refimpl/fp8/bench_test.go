package fp8

import (
	"math"
	"testing"
)

var sink uint8
var sinkF float32

func benchInputs() []float32 {
	x := make([]float32, 4096)
	for i := range x {
		x[i] = math.Float32frombits(uint32(i) * 0x9e3779b9) // spread over all classes
	}
	return x
}

func BenchmarkEncode(b *testing.B) {
	x := benchInputs()
	for _, f := range []Format{E4M3, E5M2} {
		for _, p := range Profiles() {
			b.Run(f.Name+"/"+p.Name, func(b *testing.B) {
				var s uint8
				for i := 0; i < b.N; i++ {
					s += f.Encode(x[i&4095], p)
				}
				sink = s
			})
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, f := range []Format{E4M3, E5M2} {
		b.Run(f.Name, func(b *testing.B) {
			var s float32
			for i := 0; i < b.N; i++ {
				s += f.Decode(uint8(i))
			}
			sinkF = s
		})
	}
}
