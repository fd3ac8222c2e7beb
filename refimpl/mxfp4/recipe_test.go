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

// TestLibraryRecipes holds the ModelOpt, microxcaling and
// compressed-tensors recipes to codes their records show, one block each.
func TestLibraryRecipes(t *testing.T) {
	nan := math.Float32frombits(0x7FC00000)
	block := func(first ...float32) []float32 {
		x := make([]float32, BlockSize)
		copy(x, first)
		return x
	}
	for _, c := range []struct {
		name        string
		r           Recipe
		in          Input
		x           []float32
		scale       uint8
		lo, hi      uint8 // codes of x[0], x[1]
		last, last2 uint8 // codes of x[30], x[31]
	}{
		// amax 6: e = 0; zero of either sign is 0x8; 1.75 ties toward zero.
		{"modelopt zero", ModelOptCPU, F32, block(6, 0, 1.75), 127, 0x7, 0x8, 0x8, 0x8},
		{"modelopt tie toward zero", ModelOptCPU, F32, block(1.75, -2.5, 6), 127, 0x3, 0xC, 0x8, 0x8},
		// A NaN block: scale NaN cast to 0, every code sign(NaN)=0 -> 0x8.
		{"modelopt NaN block", ModelOptCPU, F32, block(nan, 1), 0, 0x8, 0x8, 0x8, 0x8},
		// amax 2^-126: e = -127; CUDA's exp2(-127) is one ulp low, so the
		// tie 1.75 rounds up.
		{"modelopt cpu 2^-127 tie", ModelOptCPU, F32, block(0x1p-126, 1.75*0x1p-127), 0, 0x4, 0x3, 0x8, 0x8},
		{"modelopt cuda 2^-127 tie", ModelOptCUDA, F32, block(0x1p-126, 1.75*0x1p-127), 0, 0x4, 0x4, 0x8, 0x8},
		// amax 4: se = 0; nearest takes 1.25 away, even to 1.0, floor down.
		{"microxcaling nearest", MicroxcalingNearest, F32, block(4, 1.25), 127, 0x6, 0x3, 0x0, 0x0},
		{"microxcaling even", MicroxcalingEven, F32, block(4, 1.25), 127, 0x6, 0x2, 0x0, 0x0},
		{"microxcaling floor", MicroxcalingFloor, F32, block(4, 1.25), 127, 0x6, 0x2, 0x0, 0x0},
		// float16 amax 2^-23: se = -25, 2^-25 rounds to 0 in float16: x/0
		// is Inf (code sign|7), 0/0 NaN (0x7).
		{"microxcaling fp16 zero scale", MicroxcalingNearest, F16, block(0x1p-23, -0x1p-24), 102, 0x7, 0xF, 0x7, 0x7},
		// compressed-tensors: amax 1.75 rounds to 2, e = -1; 0.875/0.5 =
		// 1.75 ties to even (2.0).
		{"compressed-tensors even", CompressedTensorsCPU, F32, block(1.75, 0.875), 126, 0x6, 0x4, 0x0, 0x0},
		// A NaN group on CUDA: 0x7FFFFFFF carries to -0, scale 0; the
		// elements x/2^-127 saturate to 6 and NaN is index 0.
		{"compressed-tensors cuda NaN", CompressedTensorsCUDA, F32, block(nan, 1), 0, 0x0, 0x7, 0x0, 0x0},
		// The same group on the CPU, in the scalar tail (one group):
		// 0x7FC00000 carries to Inf, scale 0x7F, x/Inf = 0.
		{"compressed-tensors cpu NaN tail", CompressedTensorsCPU, F32, block(nan, 1), 0x7F, 0x0, 0x0, 0x0, 0x0},
	} {
		q, err := c.r.QuantizeInput(c.x, 1, BlockSize, c.r.Modes()[0], c.in)
		if err != nil {
			t.Fatal(err)
		}
		p := q.Packed
		got := [5]uint8{q.Scales[0], p[0] & 0xF, p[0] >> 4, p[15] & 0xF, p[15] >> 4}
		if want := [5]uint8{c.scale, c.lo, c.hi, c.last, c.last2}; got != want {
			t.Errorf("%s: scale, codes %#x, want %#x", c.name, got, want)
		}
	}
}

// TestRecipeModes: a recipe with one scale rule refuses the others.
func TestRecipeModes(t *testing.T) {
	x := make([]float32, BlockSize)
	if _, err := ModelOptCPU.Quantize(x, 1, BlockSize, e8m0.Floor); err == nil {
		t.Error("modelopt recipe took mode floor")
	}
	if _, err := ModelOptCPU.Quantize(x, 1, BlockSize, e8m0.RCeil); err != nil {
		t.Error(err)
	}
	if n := len(TorchAO017CPU.Modes()); n != 4 {
		t.Errorf("torchao recipe has %d modes, want 4", n)
	}
}
