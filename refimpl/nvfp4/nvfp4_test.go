package nvfp4

import (
	"math"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/internal/codetable"
	"github.com/bitexact/bitexact/refimpl/unary"
)

// f32 builds a float32 from its bits.
func f32(b uint32) float32 { return math.Float32frombits(b) }

// block returns a 16-element block: the given leading values, then zeros.
func block(v ...float32) []float32 {
	b := make([]float32, BlockSize)
	copy(b, v)
	return b
}

// codes unpacks q's elements, one E2M1 code per byte.
func codes(q Quantized) []uint8 { return fp4.Unpack(q.Packed, 2*len(q.Packed)) }

func TestGlobalFromAmax(t *testing.T) {
	cases := []struct {
		name string
		amax float32
		r    Recipe
		want float32
		src  string
	}{
		{"amax 2688 gives 1", 2688, Canonical, 1, "2688/2688"},
		{"amax 1 gives 2688", 1, Canonical, 2688, "2688/1"},
		{"amax 3 gives 896", 3, Canonical, 896, "2688/3 exact"},
		{"amax 0 saturates", 0, Canonical, math.MaxFloat32, "2688/0 = +Inf, saturated (blocks.md)"},
		{"tiny amax saturates", f32(1), Canonical, math.MaxFloat32, "2688/2^-149 overflows"},
		{"decode scale amax 2688", 2688, TorchAO017CPU, 1, "2688/2688"},
		{"decode scale amax 0", 0, ModelOptCPU, 0, "0/2688"},
	}
	for _, c := range cases {
		if got := GlobalFromAmax(c.amax, c.r); got != c.want {
			t.Errorf("%s: GlobalFromAmax(%v) = %v, want %v (%s)", c.name, c.amax, got, c.want, c.src)
		}
	}
}

func TestTensorAmax(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := f32(0x7FC00000)
	if got := TensorAmax([]float32{-3, nan, inf, 2, float32(math.Inf(-1))}); got != 3 {
		t.Errorf("TensorAmax ignores NaN and Inf: got %v, want 3", got)
	}
	if got := TensorAmax([]float32{nan}); got != 0 {
		t.Errorf("TensorAmax of all NaN = %v, want 0", got)
	}
}

// TestQuantizeBlocks pins single-block results under the canonical recipe
// with an explicit global scale. Expected codes are derived by hand from
// the recipe in the package comment; float32 intermediates were checked
// with gcc float arithmetic on x86-64 (SSE, round to nearest even).
func TestQuantizeBlocks(t *testing.T) {
	nan := f32(0x7FC00000)
	negNaN := f32(0xFFC00001)
	inf := float32(math.Inf(1))
	cases := []struct {
		name   string
		x      []float32
		global float32
		scale  uint8
		codes  []uint8 // leading element codes; the rest must be 0
		src    string
	}{
		{"midpoints tie to even", block(6, 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5),
			1, 0x38, []uint8{7, 0, 2, 2, 4, 4, 6, 6},
			"b=6, t=1 -> E4M3 0x38, d=1; E2M1 midpoints go to the even code (formats.md)"},
		{"negative midpoints", block(-6, -0.25, -0.75, -5),
			1, 0x38, []uint8{0xF, 0x8, 0xA, 0xE}, "sign bit 3 of the E2M1 code"},
		{"just above midpoints", block(6, f32(0x3E800001), f32(0x3F400001), f32(0x40A00001)),
			1, 0x38, []uint8{7, 1, 2, 7}, "one ulp above a midpoint rounds away from the even code: 0.5, 1.0, 6"},
		{"scale rounds down, amax saturates", block(6.375, 6, -6.375),
			1, 0x38, []uint8{7, 7, 0xF},
			"t = 6.375/6 = 1.0625 is the E4M3 midpoint of 1 and 1.125 -> 1 (even); 6.375/1 > 6 -> code 7"},
		{"all equal block", []float32{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
			2688, 0x7E, []uint8{7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7},
			"t = float32(1/6)*2688 = 448 exactly (gcc), d = 448/2688 = 0x3e2aaaab, 1/d = 6 exactly"},
		{"zero block", block(), 1, 0x00, nil, "b=0 -> t=0 -> E4M3 0, d=0 -> x*0 = +0"},
		{"zero block keeps -0", block(float32(math.Copysign(0, -1)), 0), 1, 0x00, []uint8{8, 0},
			"d=0 -> x*0 = -0 for x=-0 -> nvidia code 0x8"},
		{"NaN element ignored in amax", block(nan, 6, negNaN), 1, 0x38, []uint8{7, 7, 7},
			"IgnoreNaN amax = 6; NaN -> canonical +NaN -> nvidia 0x7"},
		{"Inf saturates the scale", block(inf, 448, 1), 1, 0x7E, []uint8{7, 2, 0},
			"b=Inf -> t=Inf -> satfinite 448 (0x7E); Inf/448=Inf -> 7, 448/448=1 -> 2, 1/448 -> 0"},
		{"subnormal E4M3 scale", block(6*0x1p-9, 0x1p-10, -0x1p-10*3), 1, 0x01, []uint8{7, 1, 0xB},
			"t = 2^-9, the smallest E4M3 subnormal (0x01); q = 6, 0.5, -1.5"},
		{"scale underflows to zero", block(6*0x1p-11, -0x1p-11), 1, 0x00, []uint8{0, 8},
			"t = 2^-11 < 2^-10 (half the smallest subnormal) -> 0; d=0 -> signed zeros"},
	}
	for _, c := range cases {
		q, err := QuantizeWithGlobal(c.x, 1, BlockSize, c.global, Canonical)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if q.Scales[0] != c.scale {
			t.Errorf("%s: scale code %#02x, want %#02x (%s)", c.name, q.Scales[0], c.scale, c.src)
		}
		got := codes(q)
		want := make([]uint8, BlockSize)
		copy(want, c.codes)
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: element %d (x=%v) code %#x, want %#x (%s)", c.name, i, c.x[i], got[i], want[i], c.src)
			}
		}
	}
}

// TestRecipesDiffer pins an input where the canonical division and vLLM's
// reciprocal order give different codes. Values found by a search in C
// (gcc float, x86-64): s = 320, g = 0x1.6a4f06p-2, x = 0x1.1aa1c6p+10:
// canonical q = x/(s/g) = 0x1.400002p+0 (above the 1.25 midpoint -> 1.5,
// code 3); vLLM-like q = x*(1/(s*(1/g))) = 0x1.4p+0 (the midpoint -> 1.0,
// code 2). Block amax 5400 gives t = 0x1.3e6f74p+8 (318.4) -> E4M3 320
// (0x7A) under both recipes.
func TestRecipesDiffer(t *testing.T) {
	g := float32(0x1.6a4f06p-2)
	x := block(5400, float32(0x1.1aa1c6p+10))
	for _, c := range []struct {
		r    Recipe
		code uint8
	}{{Canonical, 3}, {VLLMModel, 2}} {
		q, err := QuantizeWithGlobal(x, 1, BlockSize, g, c.r)
		if err != nil {
			t.Fatal(err)
		}
		if q.Scales[0] != 0x7A {
			t.Errorf("%s: scale %#02x, want 0x7a (320)", c.r.Name, q.Scales[0])
		}
		if got := codes(q)[1]; got != c.code {
			t.Errorf("%s: code %d, want %d", c.r.Name, got, c.code)
		}
	}
}

// TestDecodeScaleRecipes pins torchao's clamp and ModelOpt's zero rule on
// a zero block beside one of amax 2688 (so p = 1).
func TestDecodeScaleRecipes(t *testing.T) {
	x := append(block(2688), block()...)
	cases := []struct {
		name  string
		r     Recipe
		scale uint8
		src   string
	}{
		{"torchao clamps a zero block to 2^-6", TorchAO017CPU, 0x08, "clamp(0, 2^-6, 448) -> E4M3 2^-6 = 0x08 (torchao E4M3_EPS)"},
		{"torchao 0.16 clamps alike", TorchAO016CUDA, 0x08, "clamp(0, 2^-6, 448)"},
		{"modelopt replaces zero by one", ModelOptCPU, 0x38, "t=0 -> 1.0 -> 0x38"},
		{"compressed-tensors replaces zero by 0.125", CompressedTensorsCPU, 0x20, "t=0 -> 0.125 (_get_dtype_eps) -> 0x20"},
		{"TransformerEngine keeps a zero scale", TE1x16CPU, 0x00, "t=0 -> E4M3 0; its elements encode by FLT_MAX"},
	}
	for _, c := range cases {
		q, err := Quantize(x, 1, 2*BlockSize, c.r)
		if err != nil {
			t.Fatal(err)
		}
		if q.Scales[1] != c.scale {
			t.Errorf("%s: scale %#02x, want %#02x (%s)", c.name, q.Scales[1], c.scale, c.src)
		}
	}
}

func TestDequantizeRoundTrip(t *testing.T) {
	// Every E2M1 magnitude times a block scale of 2 (g = 1) must come back
	// exactly: values are on the grid, so quantization is exact.
	x := block(12, 1, 2, 3, 4, 6, 8, -12, -1, 0, -3, -8, 0.5*2, 1.5*2, 2.5, 5)
	want := block(12, 1, 2, 3, 4, 6, 8, -12, -1, 0, -3, -8, 1, 3, 2, 4)
	for _, r := range []Recipe{Canonical, VLLMModel} {
		q, err := QuantizeWithGlobal(x, 1, BlockSize, 1, r)
		if err != nil {
			t.Fatal(err)
		}
		pt := r.PerTensor
		y, err := Dequantize(q, pt)
		if err != nil {
			t.Fatal(err)
		}
		for i := range y {
			if y[i] != want[i] {
				t.Errorf("%s: element %d: %v -> %v, want %v", r.Name, i, x[i], y[i], want[i])
			}
		}
	}
}

func TestShapeErrors(t *testing.T) {
	cases := []struct {
		name       string
		n, r, c    int
		wantSubstr string
	}{
		{"cols not multiple of 16", 24, 1, 24, "multiple of the block size"},
		{"length mismatch", 16, 2, 16, "do not fill"},
		{"negative", 0, -1, 16, "negative"},
	}
	for _, c := range cases {
		_, err := Quantize(make([]float32, c.n), c.r, c.c, Canonical)
		if err == nil || !strings.Contains(err.Error(), c.wantSubstr) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.wantSubstr)
		}
	}
	if _, err := QuantizeWithGlobal(make([]float32, 16), 1, 16, float32(math.NaN()), Canonical); err == nil {
		t.Error("NaN global accepted")
	}
	if _, err := LookupRecipe("nope"); err == nil {
		t.Error("unknown recipe accepted")
	}
}

func BenchmarkQuantize4096x4096(b *testing.B) {
	const n = 4096
	x := make([]float32, n*n)
	s := uint32(1)
	for i := range x {
		s = s*1664525 + 1013904223
		x[i] = float32(int32(s)) / (1 << 28)
	}
	b.SetBytes(int64(4 * len(x)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Quantize(x, n, n, Canonical); err != nil {
			b.Fatal(err)
		}
	}
}

// TestTablesAreUnarys: the code tables Quantize reads are, byte for byte,
// those of refimpl/unary's conversions e2m1/P and e4m3/P, whose
// EncodeRange the committed exhaustive digests check; and every
// conversion of those formats that unary tabulates has one here.
func TestTablesAreUnarys(t *testing.T) {
	check := func(name string, got *codetable.Table) {
		t.Helper()
		c, err := unary.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		want := c.Table()
		if want == nil || *got != *want {
			t.Errorf("%s: table differs from unary's", name)
		}
	}
	for p, table := range e2m1Tables {
		check("e2m1/"+p.Name, table())
	}
	for p, table := range e4m3Tables {
		check("e4m3/"+p.Name, table())
	}
	n := 0
	for _, c := range unary.All() {
		if (c.Format == "e2m1" || c.Format == "e4m3") && c.Table() != nil {
			n++
		}
	}
	if n != len(e2m1Tables)+len(e4m3Tables) || n == 0 {
		t.Errorf("unary tabulates %d E2M1 and E4M3 conversions, nvfp4 holds %d tables", n, len(e2m1Tables)+len(e4m3Tables))
	}
}
