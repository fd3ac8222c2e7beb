package ggml

import (
	"math"
	"testing"
)

// TestQ8_1Builds: the two C builds of quantize_row_q8_1_ref differ in the
// sign of the NaN 0 * Inf creates and in out-of-range casts (recorded on
// the golden inputs: conformance/harness/ggml/records/q8_1.{x86-64,arm64}).
func TestQ8_1Builds(t *testing.T) {
	inf := float32(math.Inf(1))
	x := make([]float32, QK)
	x[0] = inf
	for j := 1; j < QK; j++ {
		x[j] = float32(j)
	}
	for _, tc := range []struct {
		p    Q8_1Profile
		d, s uint16
	}{
		{Q8_1CPU, 0x7c00, 0xfe00},   // x86's default NaN is negative
		{Q8_1ARM64, 0x7c00, 0x7e00}, // arm64's is positive
	} {
		bs, err := QuantizeQ8_1(x, tc.p)
		if err != nil {
			t.Fatal(err)
		}
		if bs[0].D != tc.d || bs[0].S != tc.s {
			t.Errorf("%s: d %#04x s %#04x, want %#04x %#04x", tc.p.Name, bs[0].D, bs[0].S, tc.d, tc.s)
		}
	}
	for _, tc := range []struct {
		v        float32
		x86, arm int8
	}{
		{128, -128, -128},
		{float32(math.Inf(1)), 0, -1},
		{float32(math.Inf(-1)), 0, 0},
		{3e9, 0, -1},
		{float32(math.NaN()), 0, 0},
		{-5, -5, -5},
	} {
		if g := castI8X86(tc.v); g != tc.x86 {
			t.Errorf("castI8X86(%g) = %d, want %d", tc.v, g, tc.x86)
		}
		if g := castI8ARM64(tc.v); g != tc.arm {
			t.Errorf("castI8ARM64(%g) = %d, want %d", tc.v, g, tc.arm)
		}
	}
	if p, err := LookupQ8_1Profile("arm64"); err != nil || p != Q8_1ARM64 {
		t.Errorf("LookupQ8_1Profile(arm64) = %v, %v", p.Name, err)
	}
}

// TestE8M0ToFP32: ggml decodes code 0xFF to +Inf (its NaN branch is
// commented out), code 0 to 2^-127.
func TestE8M0ToFP32(t *testing.T) {
	for _, tc := range []struct {
		e    uint8
		want uint32
	}{{0, 0x00400000}, {1, 0x00800000}, {127, 0x3f800000}, {254, 0x7f000000}, {255, 0x7f800000}} {
		if got := math.Float32bits(E8M0ToFP32(tc.e)); got != tc.want {
			t.Errorf("E8M0ToFP32(%#02x) = %#08x, want %#08x", tc.e, got, tc.want)
		}
	}
}
