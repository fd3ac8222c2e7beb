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

func TestNaN16(t *testing.T) {
	f := math.Float32frombits
	for _, tc := range []struct {
		name string
		a    arith
		in   Input
		want uint32
	}{
		{"x86 vectorized bf16 conversion writes 0xFFFF", arith(X86), InputBF16, 0xFFFF0000},
		{"x86 fp16 conversion keeps sign and payload", arith(X86), InputFP16, 0x7FC00000},
		{"CUDA bf16 0x7FFF widened by a shift", arith(CUDA), InputBF16, 0x7FFF0000},
		{"CUDA fp16 0x7FFF widened by cvt.f32.f16", arith(CUDA), InputFP16, 0x7FFFFFFF},
		{"float32 keeps the NaN", arith(X86), InputF32, 0x7FC00000},
	} {
		if b := math.Float32bits(tc.a.nan16(f(0x7FC00000), tc.in)); b != tc.want {
			t.Errorf("%s: %#08x, want %#08x", tc.name, b, tc.want)
		}
	}
}

func TestTensorNaN16(t *testing.T) {
	x := append([]float32{1, math.Float32frombits(0xFFC00000)}, make([]float32, 14)...)
	for _, tc := range []struct {
		name string
		r    Recipe
		in   Input
		want uint32
	}{
		{"torchao x86 float32: vectorized max", TorchAO017CPU, InputF32, 0xFFFFFFFF},
		{"torchao x86 bf16: c10 scalar conversion", TorchAO017CPU, InputBF16, 0x7FC00000},
		{"TE x86 fp16 (measured)", TE1x16CPU, InputFP16, 0x7FFFFFFF},
		{"TE CUDA bf16", TE1x16CUDA, InputBF16, 0x7FFF0000},
	} {
		if b := math.Float32bits(tc.r.tensorNaN(x, tc.in)); b != tc.want {
			t.Errorf("%s: %#08x, want %#08x", tc.name, b, tc.want)
		}
	}
}

func TestDequantizeRecipe(t *testing.T) {
	// One block: code 8 (-0) and code 1 (0.5) under scale 0x38 (1.0), then
	// a block with the NaN scale 0xFF; p = g = 2.
	q := Quantized{Rows: 1, Cols: 32, Packed: make([]uint8, 16), Scales: []uint8{0x38, 0xFF}, Global: 2}
	q.Packed[0] = 0x18
	f := math.Float32bits
	for _, tc := range []struct {
		name       string
		r          Recipe
		y0, y1, yn uint32
	}{
		{"torchao keeps -0; NaN scale sign|0x7FF00000 on x86", TorchAO017CPU, 0x80000000, 0x3F800000, 0xFFF00000},
		{"torchao on CUDA: 0x7FFFFFFF", TorchAO017CUDA, 0x80000000, 0x3F800000, 0x7FFFFFFF},
		{"ModelOpt decodes code 8 as +0", ModelOptCPU, 0x00000000, 0x3F800000, 0xFFF00000},
		{"compressed-tensors divides by g", CompressedTensorsCPU, 0x80000000, 0x3E800000, 0xFFF00000},
	} {
		y, err := DequantizeRecipe(q, tc.r)
		if err != nil {
			t.Fatal(err)
		}
		if f(y[0]) != tc.y0 || f(y[1]) != tc.y1 || f(y[16]) != tc.yn {
			t.Errorf("%s: %#08x %#08x %#08x, want %#08x %#08x %#08x", tc.name, f(y[0]), f(y[1]), f(y[16]), tc.y0, tc.y1, tc.yn)
		}
	}
	if _, err := DequantizeRecipe(q, TE1x16CPU); err == nil {
		t.Error("TransformerEngine recipe dequantized; its library has no dequantizer")
	}
}

// TestDequantizeRecipeNaNBoth holds each library's dequantizer to the NaN
// it returns where both the block scale (E4M3 0x7F, decoded by torch to
// 0x7FF00000) and the per-tensor value (0x7FC00000) are NaN, as recorded
// on the sep.nvfp4.every-scale-nan-global task.
func TestDequantizeRecipeNaNBoth(t *testing.T) {
	q := Quantized{Rows: 1, Cols: 16, Packed: make([]uint8, 8), Scales: []uint8{0x7F}, Global: math.Float32frombits(0x7FC00000)}
	q.Packed[0] = 0x21
	for _, tc := range []struct {
		name string
		r    Recipe
		want uint32
	}{
		{"torchao p*s: the per-tensor NaN", TorchAO017CPU, 0x7FC00000},
		{"ModelOpt s*p on x86: the 0-dim per-tensor NaN", ModelOptCPU, 0x7FC00000},
		{"ModelOpt on CUDA: 0x7FFFFFFF", ModelOptCUDA, 0x7FFFFFFF},
		{"compressed-tensors s/g on x86: the scale's NaN", CompressedTensorsCPU, 0x7FF00000},
	} {
		y, err := DequantizeRecipe(q, tc.r)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range y {
			if b := math.Float32bits(v); b != tc.want {
				t.Errorf("%s: y[%d] = %#08x, want %#08x", tc.name, i, b, tc.want)
				break
			}
		}
	}
}

func TestTE16x16SharesTileScale(t *testing.T) {
	// 16 rows of one block: row 5 holds the tile's amax, every row gets its
	// scale; the 1x16 recipe gives each row its own.
	x := make([]float32, 16*16)
	for i := range x {
		x[i] = 1
	}
	x[5*16] = 96
	q2, err := Quantize(x, 16, 16, TE16x16CPU)
	if err != nil {
		t.Fatal(err)
	}
	q1, err := Quantize(x, 16, 16, TE1x16CPU)
	if err != nil {
		t.Fatal(err)
	}
	for r := range 16 {
		if q2.Scales[r] != q2.Scales[5] {
			t.Errorf("16x16: row %d scale %#02x, row 5 %#02x", r, q2.Scales[r], q2.Scales[5])
		}
	}
	if q1.Scales[0] == q1.Scales[5] {
		t.Errorf("1x16: rows 0 and 5 share scale %#02x", q1.Scales[0])
	}
}
