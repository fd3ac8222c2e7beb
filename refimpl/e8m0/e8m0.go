// Package e8m0 converts float32 to and from E8M0 (UE8M0), the unsigned
// power-of-two scale format of the OCP MX v1.0 specification: code c is
// 2^(c-127), 0xFF is NaN, there is no zero, no sign and no infinity.
//
// Encoders disagree on rounding, sign, zero, subnormal and overflow
// handling; each is a named Rounding (data) driving one routine. The MX
// shared-scale computation of a block from its absolute maximum is
// SharedScale, parameterised by a ScaleMode.
package e8m0

import (
	"fmt"
	"math"
)

// NaN is the only NaN code.
const NaN uint8 = 0xFF

// Decode returns 2^(c-127) exactly; code 0 is the float32 subnormal 2^-127
// and 0xFF is a quiet NaN (0x7fc00000), as OCP MX v1.0 defines it. ggml's
// ggml_e8m0_to_fp32 differs on 0xFF, which it decodes to +Inf (modelled by
// refimpl/ggml.E8M0ToFP32 and recorded from ggml's build).
func Decode(c uint8) float32 {
	switch c {
	case NaN:
		return math.Float32frombits(0x7fc00000)
	case 0:
		return math.Float32frombits(0x00400000)
	}
	return math.Float32frombits(uint32(c) << 23)
}

// roundRule is how a float32 magnitude between 2^e and 2^(e+1) picks one of
// them.
type roundRule uint8

const (
	// towardZero keeps 2^e.
	towardZero roundRule = iota
	// up takes 2^(e+1) unless the magnitude is exactly 2^e.
	up
	// halfUp takes 2^(e+1) when the float32 mantissa is at least half
	// (magnitude >= 1.5*2^e): the midpoint is arithmetic, not geometric.
	halfUp
)

// Rounding is one float32 -> E8M0 encoder.
type Rounding struct {
	Name string
	// Source names the implementation reproduced.
	Source string
	// Summary says in one line what the rounding does where public
	// implementations differ (diagnoses and docs show it beside the name).
	Summary string
	rule    roundRule
	// negativeNaN: every input with the sign bit set, -0 included, is NaN.
	// Otherwise the sign is ignored.
	negativeNaN bool
	// zeroNaN: ±0 encode as NaN; otherwise as 0x00 (2^-127).
	zeroNaN bool
	// satfinite: infinities and finite values rounding beyond 2^127 encode
	// as 0xFE; otherwise as NaN.
	satfinite bool
}

// The encoders.
var (
	// RZ is cvt.rz.satfinite.ue8m0x2.f32 and its CUDA fallback
	// __nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cudaRoundZero): the float32
	// exponent field; subnormals and ±0 give 0x00, ±Inf 0xFE, NaN 0xFF.
	RZ = Rounding{
		Name:      "rz",
		Summary:   "round toward zero (floor of log2), saturating (cvt.rz.satfinite.ue8m0x2)",
		Source:    "PTX cvt.rz.satfinite.ue8m0x2.f32; CUDA cuda_fp8.hpp __nv_cvt_float_to_e8m0 fallback (ran, CUDA 13.0)",
		rule:      towardZero,
		satfinite: true,
	}
	// RP is cvt.rp.satfinite.ue8m0x2.f32 and its CUDA fallback: round up
	// whenever the magnitude is not a power of two; a float32 subnormal
	// rounds to 0x01 when above 2^-127 and to 0x00 otherwise; overflow and
	// ±Inf give 0xFE.
	RP = Rounding{
		Name:      "rp",
		Summary:   "round up (ceil of log2), saturating (cvt.rp.satfinite.ue8m0x2)",
		Source:    "PTX cvt.rp.satfinite.ue8m0x2.f32; CUDA cuda_fp8.hpp __nv_cvt_float_to_e8m0 fallback (ran, CUDA 13.0)",
		rule:      up,
		satfinite: true,
	}
	// Torch is c10::Float8_e8m0fnu(float): round up when the float32
	// mantissa is >= 0x400000 (for a subnormal only when > 0x400000, as its
	// implied bit is 0), sign ignored, Inf/NaN/overflow give 0xFF.
	Torch = Rounding{
		Name:    "torch",
		Summary: "round half up on the mantissa, overflow -> NaN (c10 Float8_e8m0fnu)",
		Source:  "pytorch torch/headeronly/util/Float8_e8m0fnu.h fp8e8m0fnu_from_fp32_value",
		rule:    halfUp,
	}
	// MLDtypes is ml_dtypes.float8_e8m0fnu: torch's rounding (its "nearest
	// even" takes the implied bit as the last kept bit, so ties go up: 1.5
	// -> 2, 3 -> 4), but every input with the sign bit set (-0 included),
	// and +0, give 0xFF.
	MLDtypes = Rounding{
		Name:        "ml_dtypes",
		Summary:     "round half up, negative and zero inputs -> NaN (ml_dtypes float8_e8m0fnu)",
		Source:      "ml_dtypes 0.6.0 float8_e8m0fnu (ran on the H100 host: 1.5 -> 0x80, 3 -> 0x81, 0x00400001 -> 0x01, 0 -> 0xFF)",
		rule:        halfUp,
		negativeNaN: true,
		zeroNaN:     true,
	}
)

// Roundings lists the encoders.
func Roundings() []Rounding { return []Rounding{RZ, RP, Torch, MLDtypes} }

// LookupRounding returns the encoder with the given name.
func LookupRounding(name string) (Rounding, error) {
	for _, r := range Roundings() {
		if r.Name == name {
			return r, nil
		}
	}
	return Rounding{}, fmt.Errorf("e8m0: unknown rounding %q (known: rz, rp, torch, ml_dtypes)", name)
}

// Encode converts x to E8M0 under r.
func (r Rounding) Encode(x float32) uint8 {
	// Passing the rule fields (not r, which holds two strings) lets this
	// wrapper inline and keeps the call cheap in hot loops, wasm included.
	return encode(math.Float32bits(x), r.rule, r.negativeNaN, r.zeroNaN, r.satfinite)
}

func encode(b uint32, rule roundRule, negativeNaN, zeroNaN, satfinite bool) uint8 {
	overflow := NaN
	if satfinite {
		overflow = 0xFE
	}
	a := b & 0x7fffffff
	switch {
	case a > 0x7f800000:
		return NaN
	case negativeNaN && b>>31 == 1:
		return NaN
	case a == 0x7f800000:
		return overflow
	case a == 0:
		if zeroNaN {
			return NaN
		}
		return 0
	}
	e := a >> 23
	m := a & 0x7fffff
	if e == 0 {
		// A float32 subnormal lies in (0, 2^-126); code 0 is 2^-127 (the
		// mantissa 0x400000) and code 1 is 2^-126. rz keeps code 0. rp goes
		// to code 1 above 2^-127 (CUDA fallback: round up when |x| > 2^-127).
		// torch and ml_dtypes apply their mantissa threshold 0x400000 with
		// an implied bit of 0, so exactly 2^-127 stays (torch's tie goes to
		// the even implied bit) and anything above rounds up: the same
		// split, although the value midpoint would be mantissa 0x600000.
		if rule != towardZero && m > 0x400000 {
			return 1
		}
		return 0
	}
	var inc bool
	switch rule {
	case up:
		inc = m != 0
	case halfUp:
		inc = m >= 0x400000
	}
	if inc {
		e++
	}
	if e >= 0xFF {
		return overflow
	}
	return uint8(e)
}
