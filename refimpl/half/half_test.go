package half

import (
	"math"
	"testing"
)

var inf = float32(math.Inf(1))

func up(x float32) float32   { return math.Nextafter32(x, inf) }
func down(x float32) float32 { return math.Nextafter32(x, -inf) }
func pow2(e int) float32     { return float32(math.Ldexp(1, e)) }
func f32(b uint32) float32   { return math.Float32frombits(b) }

// Expected values: IEEE 754-2019 binary16 and bfloat16 (8-bit exponent,
// 7-bit mantissa) with roundTiesToEven; the code is computed by hand from
// the format definition.
func TestEncode(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	for _, c := range []struct {
		name     string
		x        float32
		bf, fp16 uint16
	}{
		{"+0", 0, 0x0000, 0x0000},
		{"-0", negZero, 0x8000, 0x8000},
		{"1", 1, 0x3f80, 0x3c00},
		{"-2", -2, 0xc000, 0xc000},
		// BF16 ties between 1 and 1+2^-7 at 1+2^-8; FP16 ties between 1 and
		// 1+2^-10 at 1+2^-11.
		{"bf16 tie 1+2^-8 -> 1 (even)", 1 + pow2(-8), 0x3f80, 0x3c04},
		{"bf16 tie 1+3*2^-8 -> 1+2^-6 (even)", 1 + 3*pow2(-8), 0x3f82, 0x3c0c},
		{"bf16 tie +ulp", up(1 + pow2(-8)), 0x3f81, 0x3c04},
		{"fp16 tie 1+2^-11 -> 1 (even)", 1 + pow2(-11), 0x3f80, 0x3c00},
		{"fp16 tie 1+3*2^-11 -> 1+2^-9 (even)", 1 + 3*pow2(-11), 0x3f80, 0x3c02},
		{"fp16 tie +ulp", up(1 + pow2(-11)), 0x3f80, 0x3c01},
		{"fp16 tie -ulp", down(1 + 3*pow2(-11)), 0x3f80, 0x3c01},
		{"fp16 max 65504", 65504, 0x4780, 0x7bff},
		{"fp16 tie 65520 -> Inf (even)", 65520, 0x4780, 0x7c00},
		{"fp16 65520-ulp", down(65520), 0x4780, 0x7bff},
		{"-65520", -65520, 0xc780, 0xfc00},
		{"bf16 max 0x7f7f", f32(0x7f7f0000), 0x7f7f, 0x7c00},
		{"bf16 tie 0x7f7f8000 -> Inf (even)", f32(0x7f7f8000), 0x7f80, 0x7c00},
		{"max float32", math.MaxFloat32, 0x7f80, 0x7c00},
		{"+Inf", inf, 0x7f80, 0x7c00},
		{"-Inf", -inf, 0xff80, 0xfc00},
		{"fp16 min normal 2^-14", pow2(-14), 0x3880, 0x0400},
		{"fp16 min subnormal 2^-24", pow2(-24), 0x3380, 0x0001},
		{"fp16 tie 2^-25 -> 0", pow2(-25), 0x3300, 0x0000},
		{"fp16 2^-25+ulp", up(pow2(-25)), 0x3300, 0x0001},
		{"fp16 -2^-25 -> -0", -pow2(-25), 0xb300, 0x8000},
		{"fp16 tie 3*2^-25 -> 2^-23 (even)", 3 * pow2(-25), 0x33c0, 0x0002},
		{"fp16 tie 2047*2^-25 -> min normal (even)", 2047 * pow2(-25), 0x3880, 0x0400},
		{"float32 subnormal 0x00400000", f32(0x00400000), 0x0040, 0x0000},
		{"bf16 subnormal tie 0x00008000 -> 0", f32(0x00008000), 0x0000, 0x0000},
		{"bf16 subnormal tie 0x00018000 -> 0x0002", f32(0x00018000), 0x0002, 0x0000},
		{"float32 min subnormal", f32(1), 0x0000, 0x0000},
	} {
		if got := EncodeBF16(c.x); got != c.bf {
			t.Errorf("%s: EncodeBF16(%g [%#08x]) = %#04x, want %#04x", c.name, c.x, math.Float32bits(c.x), got, c.bf)
		}
		if got := EncodeFP16(c.x); got != c.fp16 {
			t.Errorf("%s: EncodeFP16(%g [%#08x]) = %#04x, want %#04x", c.name, c.x, math.Float32bits(c.x), got, c.fp16)
		}
	}
}

// NaN stays NaN, quiet, sign kept: a payload only in the bits that are
// dropped must not turn into infinity.
func TestEncodeNaN(t *testing.T) {
	for _, c := range []struct {
		name     string
		in       uint32
		bf, fp16 uint16
	}{
		{"+qNaN", 0x7fc00000, 0x7fc0, 0x7e00},
		{"-qNaN", 0xffc00000, 0xffc0, 0xfe00},
		{"sNaN low payload", 0x7f800001, 0x7fc0, 0x7e00},
		{"-sNaN low payload", 0xff800001, 0xffc0, 0xfe00},
		{"sNaN high payload", 0x7fa00000, 0x7fe0, 0x7f00},
	} {
		if got := EncodeBF16(f32(c.in)); got != c.bf {
			t.Errorf("%s: EncodeBF16(%#08x) = %#04x, want %#04x", c.name, c.in, got, c.bf)
		}
		if got := EncodeFP16(f32(c.in)); got != c.fp16 {
			t.Errorf("%s: EncodeFP16(%#08x) = %#04x, want %#04x", c.name, c.in, got, c.fp16)
		}
	}
}

func TestDecode(t *testing.T) {
	for _, c := range []struct {
		h    uint16
		bf   uint32
		fp16 uint32
	}{
		{0x0000, 0x00000000, 0x00000000},
		{0x8000, 0x80000000, 0x80000000},
		{0x0001, 0x00010000, 0x33800000}, // fp16: 2^-24
		{0x03ff, 0x03ff0000, 0x387fc000}, // fp16: 1023*2^-24
		{0x3c00, 0x3c000000, 0x3f800000},
		{0x7bff, 0x7bff0000, 0x477fe000}, // fp16: 65504
		{0x7c00, 0x7c000000, 0x7f800000},
		{0xfc00, 0xfc000000, 0xff800000},
		{0x7f80, 0x7f800000, 0x7ff00000}, // bf16 +Inf; fp16 NaN: payload 0x380 kept, quiet bit set
	} {
		if got := math.Float32bits(DecodeBF16(c.h)); got != c.bf {
			t.Errorf("DecodeBF16(%#04x) = %#08x, want %#08x", c.h, got, c.bf)
		}
		if got := math.Float32bits(DecodeFP16(c.h)); got != c.fp16 {
			t.Errorf("DecodeFP16(%#04x) = %#08x, want %#08x", c.h, got, c.fp16)
		}
	}
}

// TestRoundTrip: every non-NaN 16-bit pattern decodes and encodes back.
func TestRoundTrip(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		b := uint16(h)
		if b&0x7fff <= 0x7f80 {
			if got := EncodeBF16(DecodeBF16(b)); got != b {
				t.Errorf("bf16 %#04x -> %#04x", b, got)
			}
		}
		if b&0x7fff <= 0x7c00 {
			if got := EncodeFP16(DecodeFP16(b)); got != b {
				t.Errorf("fp16 %#04x -> %#04x", b, got)
			}
		}
	}
}
