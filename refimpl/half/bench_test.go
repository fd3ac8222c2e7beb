package half

import (
	"math"
	"testing"
)

var sink16 uint16
var sinkF float32

func benchInputs() []float32 {
	x := make([]float32, 4096)
	for i := range x {
		x[i] = math.Float32frombits(uint32(i) * 0x9e3779b9)
	}
	return x
}

func BenchmarkEncodeBF16(b *testing.B) {
	x := benchInputs()
	var s uint16
	for i := 0; i < b.N; i++ {
		s += EncodeBF16(x[i&4095])
	}
	sink16 = s
}

func BenchmarkEncodeFP16(b *testing.B) {
	x := benchInputs()
	var s uint16
	for i := 0; i < b.N; i++ {
		s += EncodeFP16(x[i&4095])
	}
	sink16 = s
}

func BenchmarkDecodeBF16(b *testing.B) {
	var s float32
	for i := 0; i < b.N; i++ {
		s += DecodeBF16(uint16(i))
	}
	sinkF = s
}

func BenchmarkDecodeFP16(b *testing.B) {
	var s float32
	for i := 0; i < b.N; i++ {
		s += DecodeFP16(uint16(i) & 0x7bff)
	}
	sinkF = s
}
