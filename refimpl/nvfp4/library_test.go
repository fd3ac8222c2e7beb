package nvfp4

import (
	"math"
	"testing"
)

func TestLibraryCasts(t *testing.T) {
	f := math.Float32frombits
	for _, tc := range []struct {
		name string
		r    Recipe
		q    float32
		want uint8
	}{
		{"torchao NaN 0x7FC00000", TorchAO017CPU, f(0x7FC00000), 0x3},
		{"torchao NaN 0x7FFFFFFF (CUDA)", TorchAO017CUDA, f(0x7FFFFFFF), 0x4},
		{"torchao NaN 0xFFFFFFFF (x86 max)", TorchAO017CPU, f(0xFFFFFFFF), 0xC},
		{"torchao clamps 7 to 6", TorchAO017CPU, 7, 0x7},
		{"torchao keeps -0", TorchAO017CPU, f(0x80000000), 0x8},
		{"modelopt 2.5 ties to even (2)", ModelOptCPU, 2.5, 0x4},
		{"modelopt 3.5 ties to even (4)", ModelOptCPU, 3.5, 0x6},
		{"modelopt 0.75 ties to even (1)", ModelOptCPU, -0.75, 0xA},
		{"modelopt writes -0 as +0", ModelOptCPU, f(0x80000000), 0x0},
		{"modelopt NaN is 7", ModelOptCPU, f(0xFFC00000), 0x7},
		{"modelopt Inf is 6", ModelOptCPU, float32(math.Inf(-1)), 0xF},
	} {
		if got := tc.r.castE2M1(tc.q); got != tc.want {
			t.Errorf("%s: %s cast of %#08x = %#x, want %#x", tc.name, tc.r.Name, math.Float32bits(tc.q), got, tc.want)
		}
	}
}

func TestArithNaNBits(t *testing.T) {
	f := math.Float32frombits
	inf := float32(math.Inf(1))
	for _, tc := range []struct {
		name string
		a    arith
		got  float32
		want uint32
	}{
		{"x86 keeps the first NaN operand, quieted", arith(X86), arith(X86).mul(f(0xFF800001), f(0x7FC00000)), 0xFFC00001},
		{"x86 second operand NaN", arith(X86), arith(X86).div(1, f(0xFFFFFFFF)), 0xFFFFFFFF},
		{"x86 invalid is the default NaN", arith(X86), arith(X86).mul(0, inf), 0xFFC00000},
		{"CUDA NaN is 0x7FFFFFFF", arith(CUDA), arith(CUDA).div(inf, inf), 0x7FFFFFFF},
		{"canonical", arith(CanonicalNaN), arith(CanonicalNaN).mul(0, inf), 0x7FC00000},
	} {
		if b := math.Float32bits(tc.got); b != tc.want {
			t.Errorf("%s: %#08x, want %#08x", tc.name, b, tc.want)
		}
	}
}

func TestLibraryRecipeRefusesGivenGlobal(t *testing.T) {
	if _, err := QuantizeWithGlobal(make([]float32, 16), 1, 16, 1, TorchAO017CPU); err == nil {
		t.Error("a library recipe took a given per-tensor value")
	}
}
