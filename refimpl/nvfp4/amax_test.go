package nvfp4

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The float-compare forms of TensorAmax and blockAmax that the
// bit-pattern forms replaced; both must give the same bits.
func tensorAmaxFloat(x []float32) float32 {
	var m float32
	for _, v := range x {
		a := float32(math.Abs(float64(v)))
		if a > m && a <= math.MaxFloat32 {
			m = a
		}
	}
	return m
}

func blockAmaxFloat(xs []float32, rule AmaxRule) float32 {
	var m float32
	for _, v := range xs {
		if v != v {
			if rule == PropagateNaN {
				return canonNaN
			}
			continue
		}
		if a := float32(math.Abs(float64(v))); a > m {
			m = a
		}
	}
	return m
}

func TestAmaxMatchesFloatCompare(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	special := []uint32{0, 0x80000000, 1, 0x80000001, 0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 0x7f800001}
	for iter := 0; iter < 200000; iter++ {
		var xs [BlockSize]float32
		for i := range xs {
			if r.IntN(4) == 0 {
				xs[i] = math.Float32frombits(special[r.IntN(len(special))])
			} else {
				xs[i] = math.Float32frombits(r.Uint32())
			}
		}
		for _, rule := range []AmaxRule{IgnoreNaN, PropagateNaN} {
			if got, want := blockAmax(&xs, rule), blockAmaxFloat(xs[:], rule); math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("blockAmax(%x, %d) = %#x, float compare %#x", xs, rule, math.Float32bits(got), math.Float32bits(want))
			}
		}
		if got, want := TensorAmax(xs[:]), tensorAmaxFloat(xs[:]); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("TensorAmax(%x) = %#x, float compare %#x", xs, math.Float32bits(got), math.Float32bits(want))
		}
	}
}
