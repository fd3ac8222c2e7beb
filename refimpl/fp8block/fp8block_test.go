package fp8block

import (
	"math"
	"math/rand"
	"testing"

	"github.com/bitexact/bitexact/refimpl/fp8"
)

func f32(b uint32) float32 { return math.Float32frombits(b) }

var nan = float32(math.NaN())
var inf = float32(math.Inf(1))
var negZero = float32(math.Copysign(0, -1))

func TestBitCeil(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   float32
		want float32
	}{
		{"one", 1, 1},
		{"1.5 up", 1.5, 2},
		{"just above 2^-9", f32(0x3b000001), 0x1p-8},
		{"power of two stays", 0x1p-9, 0x1p-9},
		{"sign ignored", -3, 4},
		{"zero clamps to 2^-126", 0, 0x1p-126},
		{"subnormal clamps to 2^-126", f32(1), 0x1p-126},
		{"Inf clamps to 2^127", inf, 0x1p127},
		{"NaN clamps to 2^127", nan, 0x1p127},
		{"largest finite clamps", math.MaxFloat32, 0x1p127},
	} {
		if got := BitCeil(tc.in); got != tc.want {
			t.Errorf("%s: BitCeil(%g) = %g, want %g", tc.name, tc.in, got, tc.want)
		}
	}
}

func TestLog2Ceil(t *testing.T) {
	const ulp = 0x1p-23
	for _, tc := range []struct {
		name string
		in   float32
		want float32
	}{
		{"one", 1, 1},
		{"three", 3, 4},
		{"power of two", 0x1p-9, 0x1p-9},
		// log2 = e + 2^-23/ln2 = e + 1.72e-7: half the float32 spacing at
		// e decides.
		{"2^1 (1+ulp): half spacing 2^-24 < t", 2 * (1 + ulp), 4},
		{"2^-1 (1+ulp): half spacing 2^-25 < t", 0.5 * (1 + ulp), 1},
		{"2^4 (1+ulp): half spacing 2^-22 > t, rounds to 4", 16 * (1 + ulp), 16},
		{"2^-4 (1+ulp): below |e| = 4 the half spacing is 2^-23 < t", 0x1p-4 * (1 + ulp), 0x1p-3},
		{"2^-5 (1+ulp): half spacing 2^-22 > t", 0x1p-5 * (1 + ulp), 0x1p-5},
		{"2^-9 (1+ulp): rounds to -9", 0x1p-9 * (1 + ulp), 0x1p-9},
		{"2^-9 (1+2^-20): t = 1.38e-6 above the half spacing 4.8e-7", 0x1p-9 * (1 + 0x1p-20), 0x1p-8},
		{"vLLM's eps floor 1e-10/448", 1e-10 / 448, 0x1p-42},
		{"Inf", inf, inf},
		{"zero", 0, 0},
	} {
		if got := Log2Ceil(tc.in); got != tc.want {
			t.Errorf("%s: Log2Ceil(%g) = %g, want %g", tc.name, tc.in, got, tc.want)
		}
	}
	if got := Log2Ceil(nan); got == got {
		t.Errorf("Log2Ceil(NaN) = %g, want NaN", got)
	}
}

// TestLog2CeilProperty holds Log2Ceil to the float64 log2 rounded to
// float32 on random positive floats, and to BitCeil's exact ceiling or
// half of it.
func TestLog2CeilProperty(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 20000; i++ {
		s := f32(uint32(rng.Int63n(0x7f000000)) + 0x00800000)
		if i%2 == 0 { // near powers of two, where the rules split
			s = f32(math.Float32bits(s)&0xff800000 | uint32(rng.Intn(64)))
		}
		got := Log2Ceil(s)
		want := exp2(int(math.Ceil(float64(float32(math.Log2(float64(s)))))))
		if got != want {
			t.Fatalf("Log2Ceil(%g [%#08x]) = %g, float32(log2) gives %g", s, math.Float32bits(s), got, want)
		}
		if b := BitCeil(s); s <= 0x1p127 && got != b && got != b/2 {
			t.Fatalf("Log2Ceil(%g) = %g, BitCeil %g", s, got, b)
		}
	}
}

func TestQuantizeGroups(t *testing.T) {
	deepNaN := []uint8{0x7f, 0x7f, 0x7f, 0x7f}
	for _, tc := range []struct {
		name     string
		r        Recipe
		x        []float32
		codes    []uint8
		scale    float32
		scaleNaN bool
	}{
		{"amax 448*2: exact scale 2", DeepGEMM, []float32{896, 1, -2, 0}, []uint8{0x7e, 0x30, 0xb8, 0x00}, 2, false},
		{"amax 448*2 ue8m0", DeepGEMMUE8M0, []float32{896, 1, -2, 0}, []uint8{0x7e, 0x30, 0xb8, 0x00}, 2, false},
		{"amax 448*2 vllm", VLLMTriton, []float32{896, 1, -2, 0}, []uint8{0x7e, 0x30, 0xb8, 0x00}, 2, false},
		{"amax 448*2 te", TE, []float32{896, 1, -2, 0}, []uint8{0x7e, 0x30, 0xb8, 0x00}, 2, false},
		{"all zero: eps 1e-4 floor", DeepGEMM, []float32{0, 0, 0, 0}, []uint8{0, 0, 0, 0}, float32(1e-4) / 448, false},
		{"all zero ue8m0: 2^-22 >= 1e-4/448", DeepGEMMUE8M0, []float32{0, 0, 0, 0}, []uint8{0, 0, 0, 0}, 0x1p-22, false},
		{"all zero vllm: eps 1e-10, times f32(1/448)", VLLMTriton, []float32{0, 0, 0, 0}, []uint8{0, 0, 0, 0}, f32(0x2a7b5124), false},
		{"all zero vllm ue8m0", VLLMTritonUE8M0, []float32{0, 0, 0, 0}, []uint8{0, 0, 0, 0}, 0x1p-42, false},
		{"all zero te: scale 1", TE, []float32{0, 0, 0, 0}, []uint8{0, 0, 0, 0}, 1, false},
		{"-0 keeps its sign", DeepGEMM, []float32{negZero, 0, 0, 1}, []uint8{0x80, 0, 0, 0x7e}, float32(1) / 448, false},
		{"-0 through the clamp", VLLMTriton, []float32{negZero, 0, 0, 0}, []uint8{0x80, 0, 0, 0}, f32(0x2a7b5124), false},
		{"NaN skipped by amax, clamped to -448", VLLMTriton, []float32{nan, 1, 2, 448}, []uint8{0xfe, 0x38, 0x40, 0x7e}, 1, false},
		{"NaN with the xorsign clamp", withClamp(VLLMTriton, ClampNaNToSignedMax), []float32{nan, 1, 2, 448}, []uint8{0x7e, 0x38, 0x40, 0x7e}, 1, false},
		{"NaN reaches torch amax", DeepGEMM, []float32{nan, 1, 2, 448}, deepNaN, 0, true},
		{"NaN amax ue8m0: scale 2^127", DeepGEMMUE8M0, []float32{nan, 1, 2, 448}, []uint8{0x7f, 0, 0, 0}, 0x1p127, false},
		{"Inf group, GPU: Inf*0 is +NaN", DeepGEMM, []float32{inf, 1, 0, -1}, []uint8{0x7f, 0, 0, 0x80}, inf, false},
		{"Inf group, host: Inf*0 is -NaN", withNaN(DeepGEMM, NaNHost), []float32{inf, 1, 0, -1}, []uint8{0xff, 0, 0, 0x80}, inf, false},
		{"Inf group vllm: Inf/Inf clamped to -448", VLLMTriton, []float32{inf, 1, 0, -1}, []uint8{0xfe, 0, 0, 0x80}, inf, false},
		{"te pow2: q = 448/3 rounded down to 128", TEPow2, []float32{3, 1, 0, 0}, []uint8{0x7c, 0x70, 0, 0}, 0x1p-7, false},
		{"te Inf amax: q = 0, stored Inf", TE, []float32{inf, 1, 0, 0}, []uint8{0x7f, 0, 0, 0}, inf, false},
	} {
		q, err := Quantize(tc.x, 1, 4, 4, tc.r)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for i := range tc.codes {
			if q.Codes[i] != tc.codes[i] {
				t.Errorf("%s (%s): code %d of %g = %#02x, want %#02x", tc.name, tc.r.Name, i, tc.x[i], q.Codes[i], tc.codes[i])
			}
		}
		if s := q.Scales[0]; tc.scaleNaN && s == s || !tc.scaleNaN && s != tc.scale {
			t.Errorf("%s (%s): scale %g, want %g (NaN: %v)", tc.name, tc.r.Name, s, tc.scale, tc.scaleNaN)
		}
	}
}

func withClamp(r Recipe, c Clamp) Recipe { r.Clamp = c; return r }
func withNaN(r Recipe, n NaNRule) Recipe { r.NaN = n; return r }

// TestScaleDiv: amax / 448 as torch on CUDA and Triton compute it (amax
// times float32(1/448)) and as torch on the CPU does (the quotient); the
// values are the recorded scales of the harness's row of amax
// 448*2^-9*(1+2^-22) and of its all-zero row (amax = Triton's eps 1e-10);
// each recipe here multiplies its elements by the float32 reciprocal of
// the scale.
func TestScaleDiv(t *testing.T) {
	deepCPU, err := DeepGEMM.OnCPU()
	if err != nil {
		t.Fatal(err)
	}
	amax := f32(math.Float32bits(448*0x1p-9) + 2)
	for _, tc := range []struct {
		name string
		r    Recipe
		amax float32
		want uint32
	}{
		{"deepgemm CUDA: amax * f32(1/448)", DeepGEMM, amax, 0x3b000002},
		{"deepgemm CPU: amax / 448", deepCPU, amax, 0x3b000001},
		{"vllm-triton eps: 1e-10 * f32(1/448)", VLLMTriton, 0, 0x2a7b5124},
		{"sglang-triton: the same arithmetic", SGLangTriton, amax, 0x3b000002},
		{"te: 448/amax exact, stored 1/q", TE, 3, 0x3bdb6db7},
	} {
		f, s := tc.r.Scales(tc.amax)
		one := float32(1)
		if math.Float32bits(s) != tc.want || f != one/s && tc.r.From == DequantScale {
			t.Errorf("%s: Scales(%g) = %g, %#08x; want the scale %#08x and its float32 reciprocal", tc.name, tc.amax,
				f, math.Float32bits(s), tc.want)
		}
	}
	if _, err := VLLMTriton.OnCPU(); err == nil {
		t.Error("vllm-triton.OnCPU: no error for a GPU kernel")
	}
}

func TestQuantizeBlocksEdges(t *testing.T) {
	// 3 x 3 in 2 x 2 blocks: scales 2 x 2, edge tiles partial.
	x := []float32{
		448, 1, 8,
		2, 4, 16,
		896, -896, 0,
	}
	q, err := QuantizeBlocks(x, 3, 3, 2, DeepGEMM)
	if err != nil {
		t.Fatal(err)
	}
	wantS := []float32{1, float32(16) / 448, 2, float32(1e-4) / 448}
	for i, w := range wantS {
		if q.Scales[i] != w {
			t.Errorf("scale %d = %g, want %g", i, q.Scales[i], w)
		}
	}
	// Tile (0,0): amax 448, scale 1: codes of 448, 1, 2, 4.
	for i, w := range map[int]uint8{0: 0x7e, 1: 0x38, 3: 0x40, 4: 0x48, 6: 0x7e, 7: 0xfe, 8: 0x00} {
		if q.Codes[i] != w {
			t.Errorf("code %d = %#02x, want %#02x", i, q.Codes[i], w)
		}
	}
	if q.ScaleRows() != 2 || q.ScaleCols() != 2 {
		t.Errorf("scale shape %d x %d, want 2 x 2", q.ScaleRows(), q.ScaleCols())
	}
}

// TestRoundTrip: every code is the E4M3 value nearest the scaled element
// (ties to even, as the cast), so dequantize(quantize(x)) is x to within
// half an E4M3 step times the scale; UE8M0 ceiling scales never need the
// clamp.
func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	rows, cols := 37, 300
	x := make([]float32, rows*cols)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * math.Ldexp(1, rng.Intn(30)-15))
	}
	for _, r := range []Recipe{DeepGEMM, DeepGEMMUE8M0, VLLMTriton, VLLMTritonUE8M0, SGLangTriton, TE, TEPow2, TE.WithFormat(fp8.E5M2)} {
		for _, blocks := range []bool{false, true} {
			var q Quantized
			var err error
			if blocks {
				q, err = QuantizeBlocks(x, rows, cols, 128, r)
			} else {
				q, err = Quantize(x, rows, cols, 128, r)
			}
			if err != nil {
				t.Fatal(err)
			}
			d, err := Dequantize(q, r.Elem)
			if err != nil {
				t.Fatal(err)
			}
			for i := range x {
				s := q.Scales[(i/cols/q.GroupRows)*q.ScaleCols()+(i%cols)/q.GroupCols]
				c := q.Codes[i]
				if r.Pow2 == Pow2BitCeil && c&0x7f == 0x7e && math.Abs(float64(x[i])) > 448*float64(s) {
					t.Fatalf("%s: element %g beyond 448*s = %g", r.Name, x[i], 448*s)
				}
				// Nearest: the neighbours of c are no closer to x/s.
				tq := float64(x[i]) / float64(s)
				v := float64(r.Elem.Decode(c))
				for _, nb := range []uint8{c - 1, c + 1} {
					if nb&0x80 != c&0x80 || r.Elem.IsNaN(nb) {
						continue
					}
					if w := float64(r.Elem.Decode(nb)); math.Abs(w-tq) < math.Abs(v-tq)*(1-1e-6) && math.Abs(tq) <= float64(r.Max) {
						t.Fatalf("%s blocks=%v: %g/%g = %g coded %g, %g is nearer", r.Name, blocks, x[i], s, tq, v, w)
					}
				}
				if d[i] != r.Elem.Decode(c)*s {
					t.Fatalf("%s: dequantized %g, want %g*%g", r.Name, d[i], r.Elem.Decode(c), s)
				}
			}
		}
	}
}

func TestBadInput(t *testing.T) {
	if _, err := Quantize(make([]float32, 5), 2, 3, 128, DeepGEMM); err == nil {
		t.Error("5 values for 2 x 3: no error")
	}
	if _, err := Quantize(nil, 0, 0, 0, DeepGEMM); err == nil {
		t.Error("group 0: no error")
	}
	bad := DeepGEMM
	bad.Max = 0
	if _, err := Quantize(nil, 0, 0, 128, bad); err == nil {
		t.Error("Max 0: no error")
	}
	bad = DeepGEMM
	bad.Pow2 = Pow2FrexpFloor
	if err := bad.Validate(); err == nil {
		t.Error("frexp floor on a dequant scale: no error")
	}
	if _, err := Lookup("nope"); err == nil {
		t.Error("unknown recipe: no error")
	}
	if r, err := Lookup("te/e5m2"); err != nil || r.Max != 57344 || r.Elem != fp8.E5M2 {
		t.Errorf("te/e5m2: %v %+v", err, r)
	}
	for _, r := range Recipes() {
		if err := r.Validate(); err != nil || r.Summary == "" || r.Source == "" {
			t.Errorf("recipe %q: %v (summary and source required)", r.Name, err)
		}
	}
}
