package fp8

import (
	"math"
	"testing"
)

var (
	posNaN = math.Float32frombits(0x7fc00000)
	negNaN = math.Float32frombits(0xffc00000)
	inf    = float32(math.Inf(1))
)

func up(x float32) float32   { return math.Nextafter32(x, inf) }
func down(x float32) float32 { return math.Nextafter32(x, -inf) }
func pow2(e int) float32     { return float32(math.Ldexp(1, e)) }

// Sources of expected values.
const (
	srcTable = "formats.md FP8 table: H100 cvt.rn.satfinite (ran), torch 2.11 eager (ran), ml_dtypes (ran)"
	srcRNE   = "OCP 8-bit FP spec v1.0: round to nearest, ties to even; value from the code table"
	srcSub   = "formats.md: subnormal tie 2^-10 -> 0x00, 2^-10+ulp -> 0x01, -0 -> 0x80 everywhere"
	srcE5NaN = "satfinite: cvt.rn.satfinite.e5m2x2.f32 on H100 (ran, sm_90): any NaN -> 0x7f; nosat: torch 2.11 e5m2 (ran on H100 host: 0x7fc00000 -> 0x7f, 0xffc00000 -> 0xff)"
)

type encCase struct {
	name      string
	x         float32
	sat, nsat uint8
	src       string
}

var e4m3Cases = []encCase{
	{"+0", 0, 0x00, 0x00, srcSub},
	{"-0", float32(math.Copysign(0, -1)), 0x80, 0x80, srcSub},
	{"1", 1, 0x38, 0x38, srcRNE},
	{"tie 1.0625 -> 1 (even)", 1.0625, 0x38, 0x38, srcRNE},
	{"tie 1.0625 +ulp", up(1.0625), 0x39, 0x39, srcRNE},
	{"tie 1.0625 -ulp", down(1.0625), 0x38, 0x38, srcRNE},
	{"tie 1.1875 -> 1.25 (even)", 1.1875, 0x3a, 0x3a, srcRNE},
	{"tie -1.1875", -1.1875, 0xba, 0xba, srcRNE},
	{"max 448", 448, 0x7e, 0x7e, srcRNE},
	{"448 +ulp", up(448), 0x7e, 0x7e, srcRNE},
	{"tie 464 -> 448", 464, 0x7e, 0x7e, srcTable},
	{"464 -ulp", down(464), 0x7e, 0x7e, srcTable},
	{"464 +ulp", up(464), 0x7e, 0x7f, srcTable},
	{"480", 480, 0x7e, 0x7f, srcTable},
	{"-480", -480, 0xfe, 0xff, srcTable},
	{"max float32", math.MaxFloat32, 0x7e, 0x7f, srcTable},
	{"+Inf", inf, 0x7e, 0x7f, srcTable},
	{"-Inf", -inf, 0xfe, 0xff, srcTable},
	{"+NaN", posNaN, 0x7f, 0x7f, srcTable},
	{"-NaN", negNaN, 0x7f, 0xff, srcTable},
	{"-NaN payload 1", math.Float32frombits(0xff800001), 0x7f, 0xff, srcTable},
	{"min normal 2^-6", pow2(-6), 0x08, 0x08, srcRNE},
	{"min subnormal 2^-9", pow2(-9), 0x01, 0x01, srcRNE},
	{"tie 2^-10 -> 0", pow2(-10), 0x00, 0x00, srcSub},
	{"2^-10 +ulp", up(pow2(-10)), 0x01, 0x01, srcSub},
	{"-2^-10 -> -0", -pow2(-10), 0x80, 0x80, srcSub},
	{"tie 3*2^-10 -> 2^-8 (even)", 3 * pow2(-10), 0x02, 0x02, srcRNE},
	{"tie 3*2^-10 -ulp", down(3 * pow2(-10)), 0x01, 0x01, srcRNE},
	{"tie 15*2^-10 -> min normal (even)", 15 * pow2(-10), 0x08, 0x08, srcRNE},
	{"tie 15*2^-10 -ulp", down(15 * pow2(-10)), 0x07, 0x07, srcRNE},
	{"float32 min subnormal", math.Float32frombits(1), 0x00, 0x00, srcSub},
	{"-float32 min subnormal", math.Float32frombits(0x80000001), 0x80, 0x80, srcSub},
}

var e5m2Cases = []encCase{
	{"+0", 0, 0x00, 0x00, srcSub},
	{"-0", float32(math.Copysign(0, -1)), 0x80, 0x80, srcSub},
	{"1", 1, 0x3c, 0x3c, srcRNE},
	{"tie 1.125 -> 1 (even)", 1.125, 0x3c, 0x3c, srcRNE},
	{"tie 1.125 +ulp", up(1.125), 0x3d, 0x3d, srcRNE},
	{"tie 1.375 -> 1.5 (even)", 1.375, 0x3e, 0x3e, srcRNE},
	{"max 57344", 57344, 0x7b, 0x7b, srcRNE},
	{"tie 61440 -ulp", down(61440), 0x7b, 0x7b, srcRNE},
	{"tie 61440 -> overflow (even)", 61440, 0x7b, 0x7c, srcTable},
	{"-61440", -61440, 0xfb, 0xfc, srcTable},
	{"65536", 65536, 0x7b, 0x7c, srcTable},
	{"max float32", math.MaxFloat32, 0x7b, 0x7c, srcTable},
	{"+Inf", inf, 0x7b, 0x7c, srcTable},
	{"-Inf", -inf, 0xfb, 0xfc, srcTable},
	{"+NaN", posNaN, 0x7f, 0x7f, srcE5NaN},
	{"-NaN", negNaN, 0x7f, 0xff, srcE5NaN},
	{"min normal 2^-14", pow2(-14), 0x04, 0x04, srcRNE},
	{"min subnormal 2^-16", pow2(-16), 0x01, 0x01, srcRNE},
	{"tie 2^-17 -> 0", pow2(-17), 0x00, 0x00, srcRNE},
	{"2^-17 +ulp", up(pow2(-17)), 0x01, 0x01, srcRNE},
	{"-2^-17 -> -0", -pow2(-17), 0x80, 0x80, srcRNE},
	{"tie 3*2^-17 -> 2^-15 (even)", 3 * pow2(-17), 0x02, 0x02, srcRNE},
	{"tie 7*2^-17 -> min normal (even)", 7 * pow2(-17), 0x04, 0x04, srcRNE},
}

func TestEncode(t *testing.T) {
	for _, tc := range []struct {
		f     Format
		cases []encCase
	}{{E4M3, e4m3Cases}, {E5M2, e5m2Cases}} {
		for _, c := range tc.cases {
			for _, p := range []struct {
				p    Profile
				want uint8
			}{{Satfinite, c.sat}, {NoSat, c.nsat}} {
				if got := tc.f.Encode(c.x, p.p); got != p.want {
					t.Errorf("%s %s %s: Encode(%g [%#08x]) = %#02x, want %#02x (%s)",
						tc.f.Name, p.p.Name, c.name, c.x, math.Float32bits(c.x), got, p.want, c.src)
				}
			}
		}
	}
}

func TestDecode(t *testing.T) {
	for _, c := range []struct {
		f    Format
		code uint8
		want float32
	}{
		// OCP 8-bit FP spec v1.0, tables of E4M3 and E5M2 values.
		{E4M3, 0x00, 0},
		{E4M3, 0x01, pow2(-9)},
		{E4M3, 0x07, 7 * pow2(-9)},
		{E4M3, 0x08, pow2(-6)},
		{E4M3, 0x38, 1},
		{E4M3, 0x39, 1.125},
		{E4M3, 0x78, 256},
		{E4M3, 0x7e, 448},
		{E4M3, 0xfe, -448},
		{E5M2, 0x01, pow2(-16)},
		{E5M2, 0x04, pow2(-14)},
		{E5M2, 0x3c, 1},
		{E5M2, 0x3d, 1.25},
		{E5M2, 0x7b, 57344},
		{E5M2, 0x7c, inf},
		{E5M2, 0xfc, -inf},
	} {
		if got := c.f.Decode(c.code); got != c.want {
			t.Errorf("%s Decode(%#02x) = %g, want %g", c.f.Name, c.code, got, c.want)
		}
	}
	if got := math.Float32bits(E4M3.Decode(0x80)); got != 0x80000000 {
		t.Errorf("e4m3 Decode(0x80) bits = %#x, want -0", got)
	}
	for _, c := range []struct {
		f    Format
		code uint8
		bits uint32
	}{
		{E4M3, 0x7f, 0x7fc00000}, {E4M3, 0xff, 0xffc00000},
		{E5M2, 0x7d, 0x7fc00000}, {E5M2, 0x7e, 0x7fc00000}, {E5M2, 0x7f, 0x7fc00000}, {E5M2, 0xff, 0xffc00000},
	} {
		if got := math.Float32bits(c.f.Decode(c.code)); got != c.bits {
			t.Errorf("%s Decode(%#02x) = %#08x, want NaN %#08x", c.f.Name, c.code, got, c.bits)
		}
	}
}

// value64 is the independent float64 value of a finite magnitude code,
// also used one code past the largest finite one (480 for E4M3, 2^16 for
// E5M2) as the overflow threshold's upper neighbour.
func value64(f Format, code int) float64 {
	e := code >> f.ManBits
	m := float64(code & (1<<f.ManBits - 1))
	if e == 0 {
		return math.Ldexp(m, 1-f.Bias-f.ManBits)
	}
	return math.Ldexp(1+m/float64(int(1)<<f.ManBits), e-f.Bias)
}

func TestDecodeAllCodes(t *testing.T) {
	for _, f := range []Format{E4M3, E5M2} {
		for c := 0; c < 256; c++ {
			got := f.Decode(uint8(c))
			mag := c & 0x7f
			switch {
			case f.IsNaN(uint8(c)):
				if !math.IsNaN(float64(got)) || math.Signbit(float64(got)) != (c >= 0x80) {
					t.Errorf("%s Decode(%#02x) = %g, want NaN with sign", f.Name, c, got)
				}
				continue
			case mag > int(f.MaxFinite()):
				if !math.IsInf(float64(got), 0) {
					t.Errorf("%s Decode(%#02x) = %g, want Inf", f.Name, c, got)
				}
				continue
			}
			want := value64(f, mag)
			if c >= 0x80 {
				want = -want
			}
			if float64(got) != want || math.Signbit(float64(got)) != (c >= 0x80) {
				t.Errorf("%s Decode(%#02x) = %g, want %g", f.Name, c, got, want)
			}
		}
	}
}

func TestRoundTrip(t *testing.T) {
	for _, f := range []Format{E4M3, E5M2} {
		for _, p := range Profiles() {
			for c := 0; c < 256; c++ {
				code := uint8(c)
				if f.IsNaN(code) || code&0x7f > f.MaxFinite() {
					continue
				}
				if got := f.Encode(f.Decode(code), p); got != code {
					t.Errorf("%s %s: Encode(Decode(%#02x)) = %#02x", f.Name, p.Name, code, got)
				}
			}
		}
	}
	// Infinity round-trips only where overflow is not saturated.
	if got := E5M2.Encode(E5M2.Decode(0xfc), NoSat); got != 0xfc {
		t.Errorf("e5m2 nosat: Encode(Decode(0xfc)) = %#02x", got)
	}
}

func TestLookup(t *testing.T) {
	for _, p := range Profiles() {
		if q, err := LookupProfile(p.Name); err != nil || q != p {
			t.Errorf("LookupProfile(%q) = %v, %v", p.Name, q, err)
		}
	}
	if _, err := LookupProfile("saturate"); err == nil {
		t.Error("LookupProfile(saturate) succeeded")
	}
	for _, f := range []Format{E4M3, E5M2} {
		if g, err := LookupFormat(f.Name); err != nil || g != f {
			t.Errorf("LookupFormat(%q) = %v, %v", f.Name, g, err)
		}
	}
	if _, err := LookupFormat("e4m3fnuz"); err == nil {
		t.Error("LookupFormat(e4m3fnuz) succeeded")
	}
}
