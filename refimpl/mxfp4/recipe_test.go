package mxfp4

import (
	"math"
	"testing"

	"github.com/bitexact/bitexact/refimpl/e8m0"
)

// TestFloatxE2M1 holds torchao's bit-level E2M1 conversion to the codes
// its records show: nearest-even values, saturation, and NaN codes taken
// from the NaN's bits (x86 quiet NaN 3, CUDA 0x7FFFFFFF 4, sign kept).
func TestFloatxE2M1(t *testing.T) {
	for _, c := range []struct {
		name string
		bits uint32
		want uint8
	}{
		{"+0", 0x00000000, 0x0},
		{"-0", 0x80000000, 0x8},
		{"0.25 tie to even", math.Float32bits(0.25), 0x0},
		{"0.75 tie to even", math.Float32bits(0.75), 0x2},
		{"2.5 tie to even", math.Float32bits(2.5), 0x4},
		{"5 tie to even", math.Float32bits(5), 0x6},
		{"-6", math.Float32bits(-6), 0xF},
		{"+Inf", 0x7F800000, 0x7},
		{"quiet NaN", 0x7FC00000, 0x3},
		{"x86 default NaN", 0xFFC00000, 0xB},
		{"CUDA NaN", 0x7FFFFFFF, 0x4},
	} {
		if got := floatxE2M1(math.Float32frombits(c.bits)); got != c.want {
			t.Errorf("%s (%#08x): code %#x, want %#x", c.name, c.bits, got, c.want)
		}
	}
}

// TestRecipeNaNBlock holds the recorded codes of a block with one NaN
// element: torchao 0.17 divides by +Inf (finite x -> ±0, the NaN keeps its
// bits on the CPU), main multiplies by the signalling NaN 0x7F800001.
func TestRecipeNaNBlock(t *testing.T) {
	x := make([]float32, BlockSize)
	x[0] = math.Float32frombits(0xFFC00001)
	x[1] = -0.5
	for _, c := range []struct {
		r    Recipe
		want uint8
	}{
		{TorchAO017CPU, 0x8B},
		{TorchAO017CUDA, 0x84},
		{TorchAOMainCPU, 0x33},
		{TorchAOMainCUD, 0x44},
	} {
		q, err := c.r.Quantize(x, 1, BlockSize, e8m0.Floor)
		if err != nil {
			t.Fatal(err)
		}
		if q.Scales[0] != NaNScale || q.Packed[0] != c.want {
			t.Errorf("%s: scale %#x packed[0] %#x, want 0xff %#x", c.r.Name, q.Scales[0], q.Packed[0], c.want)
		}
	}
}
