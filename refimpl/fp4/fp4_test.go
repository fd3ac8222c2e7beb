package fp4

import (
	"math"
	"strings"
	"testing"
)

// ulps returns x with its magnitude moved by n float32 ulps (n < 0: toward
// zero), keeping the sign.
func ulps(x float32, n int32) float32 {
	b := math.Float32bits(x)
	return math.Float32frombits(b&signBit | uint32(int32(b&^signBit)+n))
}

func bits(u uint32) float32 { return math.Float32frombits(u) }

// Columns of want, in Profiles() order. Where each column's rule comes
// from (see also the Profile docs and docs/rationale/fp4.md):
//
//	nvidia           CUDA 13.0 cuda_fp4.hpp host fallback, run on H100
//	sw-sm121         Avarok-Cybersecurity/dgx-vllm patch_nvfp4_utils_sw_e2m1.py _sw_float_to_e2m1, read
//	ml_dtypes        ml_dtypes 0.6.0 float4_e2m1fn (ml_dtypes/include/mxfloat.h), run
//	cutlass          NVIDIA/cutlass float_e2m1_t host convert (include/cutlass/exmy_base.h), read
//	ties-away        microxcaling _round_mantissa "nearest" = sign*floor(|x|+0.5), read
//	ties-toward-zero llama.cpp best_index_mxfp4 (strict <, index order), read
var columns = [6]string{"nvidia", "sw-sm121", "ml_dtypes", "cutlass", "ties-away", "ties-toward-zero"}

type encodeCase struct {
	name string
	x    float32
	want [6]uint8
}

// Midpoints and their float32 neighbours. Below/above a midpoint every
// profile rounds to the nearer magnitude; at it, nearest-even takes the
// even code (0.25->0, 0.75->1, 1.25->1, 1.75->2, 2.5->2, 3.5->4, 5->4),
// ties-away the larger and ties-toward-zero the smaller magnitude. Negative
// zeros are 0x8 except in ties-toward-zero (llama.cpp: index 0 wins ties).
var midpointCases = []encodeCase{
	{"0.25 below", ulps(0.25, -1), [6]uint8{0x0, 0x0, 0x0, 0x0, 0x0, 0x0}},
	{"0.25 at", ulps(0.25, 0), [6]uint8{0x0, 0x0, 0x0, 0x0, 0x1, 0x0}},
	{"0.25 above", ulps(0.25, +1), [6]uint8{0x1, 0x1, 0x1, 0x1, 0x1, 0x1}},
	{"-0.25 below", ulps(-0.25, -1), [6]uint8{0x8, 0x8, 0x8, 0x8, 0x8, 0x0}},
	{"-0.25 at", ulps(-0.25, 0), [6]uint8{0x8, 0x8, 0x8, 0x8, 0x9, 0x0}},
	{"-0.25 above", ulps(-0.25, +1), [6]uint8{0x9, 0x9, 0x9, 0x9, 0x9, 0x9}},
	{"0.75 below", ulps(0.75, -1), [6]uint8{0x1, 0x1, 0x1, 0x1, 0x1, 0x1}},
	{"0.75 at", ulps(0.75, 0), [6]uint8{0x2, 0x2, 0x2, 0x2, 0x2, 0x1}},
	{"0.75 above", ulps(0.75, +1), [6]uint8{0x2, 0x2, 0x2, 0x2, 0x2, 0x2}},
	{"-0.75 below", ulps(-0.75, -1), [6]uint8{0x9, 0x9, 0x9, 0x9, 0x9, 0x9}},
	{"-0.75 at", ulps(-0.75, 0), [6]uint8{0xA, 0xA, 0xA, 0xA, 0xA, 0x9}},
	{"-0.75 above", ulps(-0.75, +1), [6]uint8{0xA, 0xA, 0xA, 0xA, 0xA, 0xA}},
	{"1.25 below", ulps(1.25, -1), [6]uint8{0x2, 0x2, 0x2, 0x2, 0x2, 0x2}},
	{"1.25 at", ulps(1.25, 0), [6]uint8{0x2, 0x2, 0x2, 0x2, 0x3, 0x2}},
	{"1.25 above", ulps(1.25, +1), [6]uint8{0x3, 0x3, 0x3, 0x3, 0x3, 0x3}},
	{"-1.25 below", ulps(-1.25, -1), [6]uint8{0xA, 0xA, 0xA, 0xA, 0xA, 0xA}},
	{"-1.25 at", ulps(-1.25, 0), [6]uint8{0xA, 0xA, 0xA, 0xA, 0xB, 0xA}},
	{"-1.25 above", ulps(-1.25, +1), [6]uint8{0xB, 0xB, 0xB, 0xB, 0xB, 0xB}},
	{"1.75 below", ulps(1.75, -1), [6]uint8{0x3, 0x3, 0x3, 0x3, 0x3, 0x3}},
	{"1.75 at", ulps(1.75, 0), [6]uint8{0x4, 0x4, 0x4, 0x4, 0x4, 0x3}},
	{"1.75 above", ulps(1.75, +1), [6]uint8{0x4, 0x4, 0x4, 0x4, 0x4, 0x4}},
	{"-1.75 below", ulps(-1.75, -1), [6]uint8{0xB, 0xB, 0xB, 0xB, 0xB, 0xB}},
	{"-1.75 at", ulps(-1.75, 0), [6]uint8{0xC, 0xC, 0xC, 0xC, 0xC, 0xB}},
	{"-1.75 above", ulps(-1.75, +1), [6]uint8{0xC, 0xC, 0xC, 0xC, 0xC, 0xC}},
	{"2.5 below", ulps(2.5, -1), [6]uint8{0x4, 0x4, 0x4, 0x4, 0x4, 0x4}},
	{"2.5 at", ulps(2.5, 0), [6]uint8{0x4, 0x4, 0x4, 0x4, 0x5, 0x4}},
	{"2.5 above", ulps(2.5, +1), [6]uint8{0x5, 0x5, 0x5, 0x5, 0x5, 0x5}},
	{"-2.5 below", ulps(-2.5, -1), [6]uint8{0xC, 0xC, 0xC, 0xC, 0xC, 0xC}},
	{"-2.5 at", ulps(-2.5, 0), [6]uint8{0xC, 0xC, 0xC, 0xC, 0xD, 0xC}},
	{"-2.5 above", ulps(-2.5, +1), [6]uint8{0xD, 0xD, 0xD, 0xD, 0xD, 0xD}},
	{"3.5 below", ulps(3.5, -1), [6]uint8{0x5, 0x5, 0x5, 0x5, 0x5, 0x5}},
	{"3.5 at", ulps(3.5, 0), [6]uint8{0x6, 0x6, 0x6, 0x6, 0x6, 0x5}},
	{"3.5 above", ulps(3.5, +1), [6]uint8{0x6, 0x6, 0x6, 0x6, 0x6, 0x6}},
	{"-3.5 below", ulps(-3.5, -1), [6]uint8{0xD, 0xD, 0xD, 0xD, 0xD, 0xD}},
	{"-3.5 at", ulps(-3.5, 0), [6]uint8{0xE, 0xE, 0xE, 0xE, 0xE, 0xD}},
	{"-3.5 above", ulps(-3.5, +1), [6]uint8{0xE, 0xE, 0xE, 0xE, 0xE, 0xE}},
	{"5 below", ulps(5, -1), [6]uint8{0x6, 0x6, 0x6, 0x6, 0x6, 0x6}},
	{"5 at", ulps(5, 0), [6]uint8{0x6, 0x6, 0x6, 0x6, 0x7, 0x6}},
	{"5 above", ulps(5, +1), [6]uint8{0x7, 0x7, 0x7, 0x7, 0x7, 0x7}},
	{"-5 below", ulps(-5, -1), [6]uint8{0xE, 0xE, 0xE, 0xE, 0xE, 0xE}},
	{"-5 at", ulps(-5, 0), [6]uint8{0xE, 0xE, 0xE, 0xE, 0xF, 0xE}},
	{"-5 above", ulps(-5, +1), [6]uint8{0xF, 0xF, 0xF, 0xF, 0xF, 0xF}},
}

// Special classes: zeros, subnormals, overflow, infinities, NaNs.
var specialCases = []encodeCase{
	// +0 is code 0 everywhere. -0 keeps its sign (0x8) except where the
	// encoder never produces 0x8 (llama.cpp).
	{"+0", 0, [6]uint8{0x0, 0x0, 0x0, 0x0, 0x0, 0x0}},
	{"-0", bits(0x80000000), [6]uint8{0x8, 0x8, 0x8, 0x8, 0x8, 0x0}},
	{"-0.1", -0.1, [6]uint8{0x8, 0x8, 0x8, 0x8, 0x8, 0x0}},
	{"+0.1", 0.1, [6]uint8{0x0, 0x0, 0x0, 0x0, 0x0, 0x0}},
	// float32 subnormals are values below 0.25: signed zero (cuda_fp4.hpp
	// run: negative denormal -> 0x8).
	{"+min subnormal", bits(0x00000001), [6]uint8{0x0, 0x0, 0x0, 0x0, 0x0, 0x0}},
	{"-min subnormal", bits(0x80000001), [6]uint8{0x8, 0x8, 0x8, 0x8, 0x8, 0x0}},
	{"+max subnormal", bits(0x007FFFFF), [6]uint8{0x0, 0x0, 0x0, 0x0, 0x0, 0x0}},
	{"-max subnormal", bits(0x807FFFFF), [6]uint8{0x8, 0x8, 0x8, 0x8, 0x8, 0x0}},
	// Finite overflow saturates to sign|7 (satfinite; 6 is the nearest code).
	{"+6", 6, [6]uint8{0x7, 0x7, 0x7, 0x7, 0x7, 0x7}},
	{"-6", -6, [6]uint8{0xF, 0xF, 0xF, 0xF, 0xF, 0xF}},
	{"+6+ulp", ulps(6, 1), [6]uint8{0x7, 0x7, 0x7, 0x7, 0x7, 0x7}},
	{"-6-ulp", ulps(-6, 1), [6]uint8{0xF, 0xF, 0xF, 0xF, 0xF, 0xF}},
	{"+7", 7, [6]uint8{0x7, 0x7, 0x7, 0x7, 0x7, 0x7}},
	{"-7", -7, [6]uint8{0xF, 0xF, 0xF, 0xF, 0xF, 0xF}},
	{"+1e30", 1e30, [6]uint8{0x7, 0x7, 0x7, 0x7, 0x7, 0x7}},
	{"-1e30", -1e30, [6]uint8{0xF, 0xF, 0xF, 0xF, 0xF, 0xF}},
	{"+MaxFloat32", math.MaxFloat32, [6]uint8{0x7, 0x7, 0x7, 0x7, 0x7, 0x7}},
	{"-MaxFloat32", -math.MaxFloat32, [6]uint8{0xF, 0xF, 0xF, 0xF, 0xF, 0xF}},
	// Infinities saturate, except llama.cpp, where |v-Inf| = Inf for every
	// code and strict < keeps index 0.
	{"+Inf", float32(math.Inf(1)), [6]uint8{0x7, 0x7, 0x7, 0x7, 0x7, 0x0}},
	{"-Inf", float32(math.Inf(-1)), [6]uint8{0xF, 0xF, 0xF, 0xF, 0xF, 0x0}},
	// NaN: cuda_fp4.hpp 0x7 for both signs; dgx-vllm and cutlass keep the
	// sign on 7; ml_dtypes +NaN -> 0x8, -NaN -> 0x0; llama.cpp index 0. The
	// payload never matters (quiet, signalling, all-ones).
	{"+qNaN", bits(0x7FC00000), [6]uint8{0x7, 0x7, 0x8, 0x7, 0x7, 0x0}},
	{"-qNaN", bits(0xFFC00000), [6]uint8{0x7, 0xF, 0x0, 0xF, 0x7, 0x0}},
	{"+sNaN payload 1", bits(0x7F800001), [6]uint8{0x7, 0x7, 0x8, 0x7, 0x7, 0x0}},
	{"-sNaN payload 1", bits(0xFF800001), [6]uint8{0x7, 0xF, 0x0, 0xF, 0x7, 0x0}},
	{"+NaN all ones", bits(0x7FFFFFFF), [6]uint8{0x7, 0x7, 0x8, 0x7, 0x7, 0x0}},
	{"-NaN payload 0x2BCDEF", bits(0xFFABCDEF), [6]uint8{0x7, 0xF, 0x0, 0xF, 0x7, 0x0}},
}

func TestEncode(t *testing.T) {
	ps := Profiles()
	if len(ps) != len(columns) {
		t.Fatalf("Profiles() has %d entries, table has %d columns", len(ps), len(columns))
	}
	for i, p := range ps {
		if p.Name != columns[i] {
			t.Fatalf("Profiles()[%d] = %q, want %q", i, p.Name, columns[i])
		}
	}
	for _, tab := range []struct {
		name  string
		cases []encodeCase
	}{{"midpoints", midpointCases}, {"specials", specialCases}} {
		for _, c := range tab.cases {
			for i, p := range ps {
				if got := p.Encode(c.x); got != c.want[i] {
					t.Errorf("%s/%s: %s.Encode(%g [%#08x]) = %#x, want %#x",
						tab.name, c.name, p.Name, c.x, math.Float32bits(c.x), got, c.want[i])
				}
			}
		}
	}
}

func TestEncodeDefaultIsNVIDIA(t *testing.T) {
	for _, c := range append(append([]encodeCase(nil), midpointCases...), specialCases...) {
		if got, want := Encode(c.x), c.want[0]; got != want {
			t.Errorf("Encode(%s) = %#x, want %#x (nvidia)", c.name, got, want)
		}
	}
}

// TestDecode checks the table against the E2M1 definition: value =
// (-1)^s * 2^(e-1) * (1 + m/2) for e > 0 and (-1)^s * m/2 for e = 0 (OCP MX
// v1.0 section 5.3.3), computed here with float64 arithmetic.
func TestDecode(t *testing.T) {
	for c := range 256 {
		s, e, m := c>>3&1, c>>1&3, c&1
		want := float64(m) / 2
		if e > 0 {
			want = math.Ldexp(1+float64(m)/2, e-1)
		}
		if s == 1 {
			want = -want
		}
		got := Decode(uint8(c))
		if float64(got) != want || math.Signbit(float64(got)) != (s == 1) {
			t.Errorf("Decode(%#x) = %g, want %g", c, got, want)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	for _, p := range Profiles() {
		for c := range uint8(16) {
			if c == 0x8 && p.Zero == ZeroPositive {
				if got := p.Encode(Decode(c)); got != 0 {
					t.Errorf("%s: Encode(-0) = %#x, want 0x0 (ZeroPositive)", p.Name, got)
				}
				continue
			}
			if got := p.Encode(Decode(c)); got != c {
				t.Errorf("%s: Encode(Decode(%#x)=%g) = %#x", p.Name, c, Decode(c), got)
			}
		}
	}
}

func TestLookup(t *testing.T) {
	for _, p := range Profiles() {
		got, err := Lookup(p.Name)
		if err != nil || got != p {
			t.Errorf("Lookup(%q) = %v, %v", p.Name, got.Name, err)
		}
		if err := p.Validate(); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
		if p.Source == "" {
			t.Errorf("%s: empty Source", p.Name)
		}
	}
	_, err := Lookup("nvfp4")
	if err == nil || !strings.Contains(err.Error(), "ties-toward-zero") || !strings.Contains(err.Error(), `"nvfp4"`) {
		t.Errorf("Lookup(unknown) error = %v, want one naming the input and the known profiles", err)
	}
	if Profiles()[0] != NVIDIA {
		t.Error("Profiles()[0] is not the canonical NVIDIA profile")
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		p    Profile
		want string
	}{
		{"bad tie", Profile{Name: "x", Tie: 9}, "tie"},
		{"bad zero", Profile{Name: "x", Zero: 7}, "zero-sign"},
		{"bad nan code", Profile{Name: "x", NaNNeg: 0x10}, "4 bits"},
	} {
		err := c.p.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Validate() = %v, want error mentioning %q", c.name, err, c.want)
		}
	}
}

func TestPack(t *testing.T) {
	for _, c := range []struct {
		name  string
		codes []uint8
		want  []uint8
	}{
		// Element 2i in the low nibble (PTX cvt...e2m1x2 d[3:0] = second
		// source operand, which vLLM passes element 0 to).
		{"pair", []uint8{0x1, 0x2}, []uint8{0x21}},
		{"two pairs", []uint8{0xF, 0x0, 0x8, 0x7}, []uint8{0x0F, 0x78}},
		{"odd pads +0", []uint8{0x3, 0x4, 0x5}, []uint8{0x43, 0x05}},
		{"high bits ignored", []uint8{0xF1, 0xA2}, []uint8{0x21}},
		{"empty", nil, []uint8{}},
	} {
		got := Pack(c.codes)
		if string(got) != string(c.want) {
			t.Errorf("%s: Pack(%x) = %x, want %x", c.name, c.codes, got, c.want)
		}
	}
}

func TestUnpack(t *testing.T) {
	for _, c := range []struct {
		name   string
		packed []uint8
		n      int
		want   []uint8
	}{
		{"pair", []uint8{0x21}, 2, []uint8{0x1, 0x2}},
		{"odd n", []uint8{0x43, 0x05}, 3, []uint8{0x3, 0x4, 0x5}},
		{"n clamped to available", []uint8{0x21}, 5, []uint8{0x1, 0x2}},
		{"negative n", []uint8{0x21}, -1, []uint8{}},
	} {
		got := Unpack(c.packed, c.n)
		if string(got) != string(c.want) {
			t.Errorf("%s: Unpack(%x, %d) = %x, want %x", c.name, c.packed, c.n, got, c.want)
		}
	}
	all := make([]uint8, 256)
	for i := range all {
		all[i] = uint8(i) & 0xF
	}
	if got := Unpack(Pack(all), len(all)); string(got) != string(all) {
		t.Errorf("Unpack(Pack(x)) != x")
	}
}

func BenchmarkEncode(b *testing.B) {
	xs := make([]float32, 4096)
	for i := range xs {
		// Spread over [-8, 8) with every midpoint class present.
		xs[i] = float32(i-2048) / 256
	}
	for _, p := range Profiles() {
		b.Run(p.Name, func(b *testing.B) {
			var sink uint8
			for i := 0; b.Loop(); i++ {
				sink ^= p.Encode(xs[i&4095])
			}
			_ = sink
		})
	}
}
