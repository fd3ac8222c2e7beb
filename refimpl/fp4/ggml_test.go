package fp4

import (
	"math"
	"testing"
)

// TestGGML: best_index_mxfp4(x, 0.5f) as ggml compiles it agrees with the
// exact rule (ties-toward-zero) below 0x4c000003 and not above, where its
// float32 errors round (recorded over all 2^32 inputs:
// conformance/harness/ggml/records/e2m1.*.json).
func TestGGML(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   uint32
		want uint8
	}{
		{"0.75 tie toward zero", 0x3f400000, 0x1},
		{"-0.25 tie to +0", 0xbe800000, 0x0},
		{"-0", 0x80000000, 0x0},
		{"5 tie toward zero", 0x40a00000, 0x6},
		{"7", 0x40e00000, 0x7},
		{"-7", 0xc0e00000, 0xf},
		{"2^25 + 4", 0x4c000001, 0x7},
		// Expected codes from ggml's best_index_mxfp4 compiled with gcc -O3.
		// x - 2, x - 3, x - 4, x - 6 all round to 2^25 + 8: index 4 wins.
		{"0x4c000003: the errors of 2..6 round equal", 0x4c000003, 0x4},
		{"2^26", 0x4c800000, 0x7},
		{"2^27: 2^27 - 6 rounds to 2^27 - 8, the least error", 0x4d000000, 0x7},
		{"-2^27", 0xcd000000, 0xf},
		{"2^28: every error rounds to |x|", 0x4d800000, 0x0},
		{"max float32", 0x7f7fffff, 0x0},
		{"+Inf", 0x7f800000, 0x0},
		{"-NaN", 0xffc00000, 0x0},
	} {
		if got := GGML.Encode(math.Float32frombits(tc.in)); got != tc.want {
			t.Errorf("%s (%#08x): %#x, want %#x", tc.name, tc.in, got, tc.want)
		}
	}
	// Below 0x4c000003 GGML is ties-toward-zero; a stride sample of both
	// signs (the exhaustive comparison is the digests').
	for b := uint32(0); b < 0x4c000003; b += 0x1235 {
		for _, s := range []uint32{0, 1 << 31} {
			x := math.Float32frombits(b | s)
			if g, w := GGML.Encode(x), TiesTowardZero.Encode(x); g != w {
				t.Fatalf("%#08x: ggml %#x, ties-toward-zero %#x", b|s, g, w)
			}
		}
	}
	if p, err := Lookup("ggml"); err != nil || p != GGML {
		t.Errorf("Lookup(ggml) = %v, %v", p.Name, err)
	}
	if GGML.IsNearest() || !TiesTowardZero.IsNearest() {
		t.Error("IsNearest: ggml is not a nearest-value rule, ties-toward-zero is")
	}
	for _, p := range Profiles() {
		if p.Name == GGML.Name {
			t.Error("GGML is not among the nearest-value Profiles()")
		}
	}
}
