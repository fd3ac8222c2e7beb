package ggml

import (
	"math"
	"strings"
	"testing"
)

func f32(b uint32) float32 { return math.Float32frombits(b) }

func TestE8M0ToFP32Half(t *testing.T) {
	// ggml-impl.h ggml_e8m0_to_fp32_half: x < 2 -> 0x00200000 << x, else
	// (x-1) << 23.
	cases := []struct {
		e    uint8
		bits uint32
	}{{0, 0x00200000}, {1, 0x00400000}, {2, 0x00800000}, {127, 0x3F000000}, {128, 0x3F800000}, {255, 0x7F000000}}
	for _, c := range cases {
		if got := math.Float32bits(E8M0ToFP32Half(c.e)); got != c.bits {
			t.Errorf("E8M0ToFP32Half(%d) = %#08x, want %#08x", c.e, got, c.bits)
		}
	}
}

// log2fRuns is the count K(n) of consecutive float32 values just below 2^n
// for which floorf(log2f(x)) is n rather than n-1, obtained by running
// floorf(log2f(x)) of glibc 2.36 (x86-64, gcc -O2) over all 2^31-2^23
// positive finite floats: 7456 inputs, each run contiguous and ending at
// the float just below 2^n. n absent from the table: K = 0.
func log2fRuns(n int) int {
	switch {
	case n == -131 || n == -3 || n == -2 || n == 3 || n == 4:
		return 1
	case n == -130 || n >= -7 && n <= -4 || n >= 5 && n <= 8:
		return 2
	case n == -129 || n >= -15 && n <= -8 || n >= 9 && n <= 16:
		return 5
	case n == -128 || n == -127 || n >= -31 && n <= -16 || n >= 17 && n <= 32:
		return 11
	case n == -126 || n >= -63 && n <= -32 || n >= 33 && n <= 64:
		return 22
	case n >= -125 && n <= -64 || n >= 65 && n <= 128:
		return 44
	}
	return 0
}

// pow2Bits is the bit pattern of 2^n, n in [-149, 128] (2^128 as +Inf's
// bits, whose predecessor is MaxFloat32).
func pow2Bits(n int) uint32 {
	if n >= -126 {
		return uint32(n+127) << 23
	}
	return 1 << uint(n+149)
}

func TestLog2FloorFMatchesGlibc(t *testing.T) {
	total := 0
	for n := -148; n <= 128; n++ {
		p := pow2Bits(n)
		k := log2fRuns(n)
		for i := uint32(1); i <= 200 && i < p; i++ {
			x := f32(p - i)
			exact := exactExponent(x)
			want := exact
			if int(i) <= k {
				want = n
				total++
			}
			if got := Log2FloorF(x); got != want {
				t.Fatalf("Log2FloorF(%#08x) = %d, want %d (glibc run; exact %d)", p-i, got, want, exact)
			}
		}
		if n <= 127 {
			if got := Log2FloorF(f32(p)); got != n {
				t.Fatalf("Log2FloorF(2^%d) = %d", n, got)
			}
		}
	}
	if total != 7456 {
		t.Errorf("checked %d rounding-up inputs, glibc run found 7456", total)
	}
}

// TestLog2FloorFFar checks a spread of inputs away from powers of two,
// where the float64 log2 decides unambiguously.
func TestLog2FloorFFar(t *testing.T) {
	for b := uint32(1); b < 0x7F800000; b += 0x10001 {
		x := f32(b)
		if (b+200)&0x7FFFFF < 400 || b < 0x01000000 {
			continue // near a power of two or subnormal: covered above
		}
		want := int(math.Floor(math.Log2(float64(x))))
		if got := Log2FloorF(x); got != want {
			t.Fatalf("Log2FloorF(%#08x) = %d, want %d", b, got, want)
		}
	}
}

func TestScaleMXFP4(t *testing.T) {
	x86log2f := MXFP4Options{Log2: Log2F, Cast: CastX86}
	exact := MXFP4Options{Log2: Log2Exact, Cast: CastX86}
	arm := MXFP4Options{Log2: Log2F, Cast: CastARM64}
	cases := []struct {
		name string
		amax float32
		o    MXFP4Options
		want uint8
		src  string
	}{
		{"amax 1", 1, x86log2f, 125, "0 - 2 + 127"},
		{"amax 6", 6, x86log2f, 127, "floor(log2 6) = 2"},
		{"below 8, log2f rounds up", f32(0x40FFFFFF), x86log2f, 128, "log2f(8-ulp) = 3.0f (glibc run)"},
		{"below 8, exact exponent", f32(0x40FFFFFF), exact, 127, "exponent field 2"},
		{"below 4, no rounding", f32(0x407FFFFF), x86log2f, 126, "log2f(4-ulp) < 2 (glibc run)"},
		{"max float", math.MaxFloat32, x86log2f, 253, "log2f(MaxFloat32) = 128.0f"},
		{"max float exact", math.MaxFloat32, exact, 252, "exponent 127"},
		{"zero", 0, x86log2f, 0, "amax > 0 false"},
		{"2^-125", 0x1p-125, x86log2f, 0, "-125-2+127 = 0"},
		{"2^-126 wraps on x86", 0x1p-126, x86log2f, 255, "(uint8_t)-1.0f: cvttss2si -> 0xFFFFFFFF, low byte (gcc run)"},
		{"2^-149 wraps on x86", f32(1), x86log2f, 232, "(uint8_t)-24.0f = 232 (gcc run)"},
		{"2^-126 saturates on arm64", 0x1p-126, arm, 0, "fcvtzu saturates negatives to 0"},
		{"+Inf on x86", float32(math.Inf(1)), x86log2f, 0, "(uint8_t)+Inf = 0 (gcc run)"},
		{"+Inf on arm64", float32(math.Inf(1)), arm, 255, "fcvtzu(+Inf) = 0xFFFFFFFF"},
	}
	for _, c := range cases {
		if got := ScaleMXFP4(c.amax, c.o); got != c.want {
			t.Errorf("%s: ScaleMXFP4(%v) = %d, want %d (%s)", c.name, c.amax, got, c.want, c.src)
		}
	}
}

// TestBestIndexMXFP4 checks best_index_mxfp4's tie rule: strict < keeps the
// lower index, so ties go toward zero (formats.md).
func TestBestIndexMXFP4(t *testing.T) {
	cases := []struct {
		x, d float32
		want uint8
	}{
		{0.5, 1, 0},   // |0-0.5| = |1-0.5|
		{-0.5, 1, 0},  // |0+0.5| = |-1+0.5|
		{2.5, 1, 2},   // 2 vs 3
		{5, 1, 4},     // 4 vs 6
		{7, 1, 5},     // 6 vs 8
		{10, 1, 6},    // 8 vs 12
		{13, 1, 7},    // 12
		{100, 1, 7},   // saturates
		{-100, 1, 15}, // -12
		{-3, 1, 11},
		{float32(math.NaN()), 1, 0},
		{float32(math.Inf(1)), 1, 0},
		{float32(math.Inf(-1)), 1, 0},
		{0x1p-128 * 3, 0x1p-128, 3}, // subnormal scale, exact products
	}
	for _, c := range cases {
		if got := BestIndexMXFP4(c.x, c.d); got != c.want {
			t.Errorf("BestIndexMXFP4(%v, %v) = %d, want %d", c.x, c.d, got, c.want)
		}
	}
}

// TestQuantizeMXFP4Ramp quantizes x[j] = j: amax 31 -> e = 4-2+127 = 129,
// d = 2; each code is the nearest k*2 to j with ties to the lower index,
// derived by hand.
func TestQuantizeMXFP4Ramp(t *testing.T) {
	x := make([]float32, 32)
	for j := range x {
		x[j] = float32(j)
	}
	want := [32]uint8{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7}
	for _, o := range []MXFP4Options{DefaultMXFP4, {Log2: Log2Exact}} {
		bs, err := QuantizeMXFP4(x, o)
		if err != nil {
			t.Fatal(err)
		}
		if bs[0].E != 129 {
			t.Errorf("e = %d, want 129", bs[0].E)
		}
		for j := 0; j < 32; j++ {
			if c := bs[0].Code(j); c != want[j] {
				t.Errorf("element %d: code %d, want %d", j, c, want[j])
			}
		}
		if bs[0].Qs[0] != want[0]|want[16]<<4 || bs[0].Qs[15] != want[15]|want[31]<<4 {
			t.Errorf("nibble layout: qs[0]=%#02x qs[15]=%#02x", bs[0].Qs[0], bs[0].Qs[15])
		}
		y := DequantizeMXFP4(bs)
		if y[9] != 8 || y[31] != 24 || y[1] != 0 {
			t.Errorf("dequantized %v %v %v, want 8 24 0", y[9], y[31], y[1])
		}
	}
}

func TestMXFP4Parse(t *testing.T) {
	raw := make([]byte, 34)
	raw[0], raw[1], raw[16], raw[17], raw[18] = 128, 0x9F, 0x21, 127, 0x07
	bs, err := ParseMXFP4(raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 2 || bs[0].Code(0) != 0xF || bs[0].Code(16) != 0x9 || bs[0].Code(15) != 1 || bs[0].Code(31) != 2 {
		t.Fatalf("parsed %+v", bs[0])
	}
	if bs[0].Value(0) != -12 || bs[0].Value(16) != -1 || bs[1].Value(0) != 12*0.5 {
		t.Errorf("values %v %v %v, want -12 -1 6", bs[0].Value(0), bs[0].Value(16), bs[1].Value(0))
	}
	if back := AppendMXFP4(nil, bs); string(back) != string(raw) {
		t.Error("AppendMXFP4 does not invert ParseMXFP4")
	}
	if _, err := ParseMXFP4(make([]byte, 18)); err == nil || !strings.Contains(err.Error(), "17-byte") {
		t.Errorf("bad length: %v", err)
	}
	if _, err := QuantizeMXFP4(make([]float32, 33), DefaultMXFP4); err == nil {
		t.Error("33 values accepted")
	}
}

func BenchmarkQuantizeMXFP4_16M(b *testing.B) {
	x := benchData(4096 * 4096)
	b.SetBytes(int64(4 * len(x)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := QuantizeMXFP4(x, DefaultMXFP4); err != nil {
			b.Fatal(err)
		}
	}
}

func benchData(n int) []float32 {
	x := make([]float32, n)
	s := uint32(1)
	for i := range x {
		s = s*1664525 + 1013904223
		x[i] = float32(int32(s)) / (1 << 28)
	}
	return x
}
