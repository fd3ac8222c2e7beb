package e8m0

import (
	"math"
	"testing"
)

var inf = float32(math.Inf(1))

func nextUp(x float32) float32   { return math.Nextafter32(x, inf) }
func nextDown(x float32) float32 { return math.Nextafter32(x, -inf) }
func pow2(e int) float32         { return float32(math.Ldexp(1, e)) }
func f32bits(b uint32) float32   { return math.Float32frombits(b) }

const (
	srcCUDA  = "NVIDIA cuda_fp8.hpp __nv_cvt_float_to_e8m0 fallback (bf16 rz/ru then exponent; satfinite) and formats.md (ran)"
	srcTorch = "pytorch torch/headeronly/util/Float8_e8m0fnu.h fp8e8m0fnu_from_fp32_value"
	srcML    = "ml_dtypes 0.6.0 float8_e8m0fnu, ran on the H100 host (out/check.py): ties up like torch; negative, 0, -0 -> 0xFF"
)

func TestDecode(t *testing.T) {
	for _, c := range []struct {
		code uint8
		bits uint32
	}{
		{0x00, 0x00400000}, // 2^-127, a float32 subnormal (OCP MX v1.0 §5.4.1)
		{0x01, 0x00800000}, // 2^-126
		{0x7f, 0x3f800000}, // 1
		{0x80, 0x40000000}, // 2
		{0xfe, 0x7f000000}, // 2^127
		{0xff, 0x7fc00000}, // NaN
	} {
		if got := math.Float32bits(Decode(c.code)); got != c.bits {
			t.Errorf("Decode(%#02x) = %#08x, want %#08x", c.code, got, c.bits)
		}
	}
}

func TestEncode(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	for _, c := range []struct {
		name              string
		x                 float32
		rz, rp, torch, ml uint8
	}{
		{"1", 1, 0x7f, 0x7f, 0x7f, 0x7f},
		{"1+ulp", nextUp(1), 0x7f, 0x80, 0x7f, 0x7f},
		{"2-ulp", nextDown(2), 0x7f, 0x80, 0x80, 0x80},
		{"1.5 tie, odd exponent", 1.5, 0x7f, 0x80, 0x80, 0x80},
		{"1.5-ulp", nextDown(1.5), 0x7f, 0x80, 0x7f, 0x7f},
		{"1.5+ulp", nextUp(1.5), 0x7f, 0x80, 0x80, 0x80},
		{"3 tie, even exponent", 3, 0x80, 0x81, 0x81, 0x81},
		{"-4 sign", -4, 0x81, 0x81, 0x81, 0xff},
		{"-1.5", -1.5, 0x7f, 0x80, 0x80, 0xff},
		{"+0", 0, 0x00, 0x00, 0x00, 0xff},
		{"-0", negZero, 0x00, 0x00, 0x00, 0xff},
		{"+Inf", inf, 0xfe, 0xfe, 0xff, 0xff},
		{"-Inf", -inf, 0xfe, 0xfe, 0xff, 0xff},
		{"+NaN", f32bits(0x7fc00000), 0xff, 0xff, 0xff, 0xff},
		{"-NaN", f32bits(0xffc00000), 0xff, 0xff, 0xff, 0xff},
		{"NaN payload 1", f32bits(0x7f800001), 0xff, 0xff, 0xff, 0xff},
		{"2^127", pow2(127), 0xfe, 0xfe, 0xfe, 0xfe},
		{"2^127+ulp", nextUp(pow2(127)), 0xfe, 0xfe, 0xfe, 0xfe},
		{"1.5*2^127 tie, even exponent", 1.5 * pow2(127), 0xfe, 0xfe, 0xff, 0xff},
		{"max float32", math.MaxFloat32, 0xfe, 0xfe, 0xff, 0xff},
		{"2^-126 min normal", pow2(-126), 0x01, 0x01, 0x01, 0x01},
		{"2^-126-ulp subnormal", nextDown(pow2(-126)), 0x00, 0x01, 0x01, 0x01},
		{"2^-127 subnormal = code 0", pow2(-127), 0x00, 0x00, 0x00, 0x00},
		{"2^-127+ulp", nextUp(pow2(-127)), 0x00, 0x01, 0x01, 0x01},
		{"2^-127-ulp", nextDown(pow2(-127)), 0x00, 0x00, 0x00, 0x00},
		{"1.5*2^-127 value midpoint", 1.5 * pow2(-127), 0x00, 0x01, 0x01, 0x01},
		{"float32 min subnormal", f32bits(1), 0x00, 0x00, 0x00, 0x00},
		{"-float32 min subnormal", f32bits(0x80000001), 0x00, 0x00, 0x00, 0xff},
	} {
		for _, w := range []struct {
			r    Rounding
			want uint8
			src  string
		}{{RZ, c.rz, srcCUDA}, {RP, c.rp, srcCUDA}, {Torch, c.torch, srcTorch}, {MLDtypes, c.ml, srcML}} {
			if got := w.r.Encode(c.x); got != w.want {
				t.Errorf("%s %s: Encode(%g [%#08x]) = %#02x, want %#02x (%s)", w.r.Name, c.name, c.x, math.Float32bits(c.x), got, w.want, w.src)
			}
		}
	}
}

func TestRoundTrip(t *testing.T) {
	for _, r := range Roundings() {
		for c := 0; c < 255; c++ {
			if got := r.Encode(Decode(uint8(c))); got != uint8(c) {
				t.Errorf("%s: Encode(Decode(%#02x)) = %#02x", r.Name, c, got)
			}
		}
	}
}

func TestLookup(t *testing.T) {
	for _, r := range Roundings() {
		if q, err := LookupRounding(r.Name); err != nil || q != r {
			t.Errorf("LookupRounding(%q) = %v, %v", r.Name, q, err)
		}
	}
	for _, m := range ScaleModes() {
		if q, err := LookupScaleMode(m.Name); err != nil || q != m {
			t.Errorf("LookupScaleMode(%q) = %v, %v", m.Name, q, err)
		}
	}
	if _, err := LookupRounding("rn"); err == nil {
		t.Error("LookupRounding(rn) succeeded")
	}
	if _, err := LookupScaleMode("round"); err == nil {
		t.Error("LookupScaleMode(round) succeeded")
	}
}

func TestSharedScale(t *testing.T) {
	const srcOCP = "OCP MX v1.0 §6.3 floor(log2 amax) - emax; torchao mx_tensor.py to_mx"
	for _, c := range []struct {
		name                   string
		amax                   float32
		floor, ceil, even, rce uint8
	}{
		{"0", 0, 0x00, 0x00, 0x00, 0x00},
		{"-0", float32(math.Copysign(0, -1)), 0x00, 0x00, 0x00, 0x00},
		{"1", 1, 125, 125, 125, 125},
		{"4", 4, 127, 127, 127, 127},
		{"6 = max E2M1", 6, 127, 128, 127, 127},
		{"-6 sign ignored", -6, 127, 128, 127, 127},
		{"6+ulp", nextUp(6), 127, 128, 127, 128},
		{"7 = 1.75*4 (even rounds up)", 7, 127, 128, 128, 128},
		{"7-ulp", nextDown(7), 127, 128, 127, 128},
		{"8", 8, 128, 128, 128, 128},
		{"12", 12, 128, 129, 128, 128},
		{"2^-124 (/6 is above 2^-127)", pow2(-124), 1, 1, 1, 1},
		{"2^-125", pow2(-125), 0, 0, 0, 0},
		{"subnormal 2^-127", pow2(-127), 0, 0, 0, 0},
		{"float32 min subnormal", f32bits(1), 0, 0, 0, 0},
		{"2^127", pow2(127), 252, 252, 252, 252},
		{"max float32 (even carries to Inf)", math.MaxFloat32, 252, 253, 0xff, 253},
		{"1.75*2^127", 1.75 * pow2(127), 252, 253, 0xff, 253},
		{"+Inf", inf, 0xff, 0xff, 0xff, 0xff},
		{"NaN", f32bits(0x7fc00000), 0xff, 0xff, 0xff, 0xff},
		{"-NaN", f32bits(0xffc00000), 0xff, 0xff, 0xff, 0xff},
	} {
		for _, w := range []struct {
			m    ScaleMode
			want uint8
		}{{Floor, c.floor}, {Ceil, c.ceil}, {Even, c.even}, {RCeil, c.rce}} {
			if got := SharedScale(c.amax, w.m, 2, 6); got != w.want {
				t.Errorf("%s %s: SharedScale(%g [%#08x], e2m1) = %d, want %d (%s)", w.m.Name, c.name, c.amax, math.Float32bits(c.amax), got, w.want, srcOCP)
			}
		}
	}
	// Bounds not reachable with E2M1, documented in SharedScale.
	for _, c := range []struct {
		name string
		amax float32
		mode ScaleMode
		emax int
		max  float32
		want uint8
	}{
		{"unbiased 128 -> NaN", pow2(127), Floor, -1, 0.75, 0xff},
		{"ceil of subnormal exactly 2^-127, emax 0", pow2(-127), Ceil, 0, 1, 0x00},
		{"ceil of subnormal above 2^-127, emax 0", nextUp(pow2(-127)), Ceil, 0, 1, 0x01},
		{"floor of subnormal 2^-127, emax -1", pow2(-127), Floor, -1, 1, 0x01},
		{"rceil quotient overflow", math.MaxFloat32, RCeil, 0, 0.5, 0xff},
		{"rceil division by zero", 1, RCeil, 0, 0, 0xff},
	} {
		if got := SharedScale(c.amax, c.mode, c.emax, c.max); got != c.want {
			t.Errorf("%s: SharedScale(%g, %s, %d, %g) = %d, want %d", c.name, c.amax, c.mode, c.emax, c.max, got, c.want)
		}
	}
}
