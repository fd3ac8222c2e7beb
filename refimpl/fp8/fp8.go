// Package fp8 converts between float32 and the OCP 8-bit floating-point
// formats E4M3 (the "FN" variant: no infinities, NaN only at S.1111.111) and
// E5M2 (IEEE-like: infinities and NaNs at the all-ones exponent).
//
// Decoding is exact. Encoding rounds to nearest, ties to even, everywhere
// including the subnormal range; what happens to overflow, infinities and
// NaNs differs between implementations and is chosen by a Profile. Both
// formats share one integer conversion routine driven by the Format and
// Profile data.
package fp8

import (
	"fmt"
	"math"
)

// Format describes an 8-bit binary floating-point format: one sign bit,
// ExpBits exponent bits with the given Bias, and ManBits mantissa bits.
type Format struct {
	Name    string
	ExpBits int
	ManBits int
	Bias    int
	// HasInf reports an IEEE-like format whose all-ones exponent encodes
	// infinity (mantissa 0) and NaN (mantissa non-zero). Without it the
	// format is "FN": the all-ones exponent holds finite values and only the
	// all-ones code S.1..1.1..1 is NaN.
	HasInf bool
}

// The two OCP FP8 formats.
var (
	// E4M3 is E4M3FN: bias 7, largest finite 448 (0x7e), NaN 0x7f/0xff, no
	// infinity.
	E4M3 = Format{Name: "e4m3", ExpBits: 4, ManBits: 3, Bias: 7}
	// E5M2: bias 15, largest finite 57344 (0x7b), infinity 0x7c, NaN
	// 0x7d..0x7f.
	E5M2 = Format{Name: "e5m2", ExpBits: 5, ManBits: 2, Bias: 15, HasInf: true}
)

// LookupFormat returns the format with the given name ("e4m3" or "e5m2").
func LookupFormat(name string) (Format, error) {
	switch name {
	case E4M3.Name:
		return E4M3, nil
	case E5M2.Name:
		return E5M2, nil
	}
	return Format{}, fmt.Errorf("fp8: unknown format %q (known: e4m3, e5m2)", name)
}

// MaxFinite is the code of the largest finite positive value.
func (f Format) MaxFinite() uint8 {
	if f.HasInf {
		return uint8((1<<f.ExpBits-2)<<f.ManBits | (1<<f.ManBits - 1))
	}
	return uint8(1<<(f.ExpBits+f.ManBits) - 2)
}

// NaN is the positive canonical NaN code: all exponent and mantissa bits set.
func (f Format) NaN() uint8 { return 0x7f }

// Inf is the positive infinity code, or the NaN code for a format without
// infinities.
func (f Format) Inf() uint8 {
	if f.HasInf {
		return uint8((1<<f.ExpBits - 1) << f.ManBits)
	}
	return f.NaN()
}

// IsNaN reports whether c encodes NaN.
func (f Format) IsNaN(c uint8) bool {
	if f.HasInf {
		return c&0x7f > f.Inf()
	}
	return c&0x7f == 0x7f
}

// Decode returns the exact float32 value of code c. NaN codes decode to the
// quiet float32 NaN 0x7fc00000 with the code's sign.
func (f Format) Decode(c uint8) float32 {
	sign := uint32(c&0x80) << 24
	mag := uint32(c & 0x7f)
	e := int(mag >> f.ManBits)
	m := mag & (1<<f.ManBits - 1)
	switch {
	case f.IsNaN(c):
		return math.Float32frombits(sign | 0x7fc00000)
	case f.HasInf && mag == uint32(f.Inf()):
		return math.Float32frombits(sign | 0x7f800000)
	case e == 0:
		// Subnormal: m * 2^(1-bias-man), exact in float64 and in float32.
		v := float32(math.Ldexp(float64(m), 1-f.Bias-f.ManBits))
		return math.Float32frombits(sign | math.Float32bits(v))
	}
	return math.Float32frombits(sign | uint32(e-f.Bias+127)<<23 | m<<(23-f.ManBits))
}

// Profile names what an encoder does where implementations disagree:
// finite overflow, infinities and the sign of NaN.
type Profile struct {
	Name string
	// Source names the implementations the profile reproduces.
	Source string
	// Summary says in one line what the profile does where public
	// implementations differ (diagnoses and docs show it beside the name).
	Summary string
	// Saturate sends finite values that round beyond the largest finite
	// value, and infinities, to the largest finite value of their sign.
	// Without it they become infinity (E5M2) or NaN (E4M3), sign kept.
	Saturate bool
	// NaNKeepsSign makes a negative NaN encode as 0xff; otherwise every NaN
	// encodes as the positive canonical NaN 0x7f.
	NaNKeepsSign bool
	// NaNQuiet, with NaNKeepsSign, makes every NaN the format's quiet NaN
	// with no payload beyond the quiet bit, of the NaN's sign: 0x7e | sign
	// for E5M2 (E4M3 has the single NaN 0x7f).
	NaNQuiet bool
	// Formats limits the profile to one format ("e5m2"); empty means
	// every format. An implementation measured to differ from another
	// profile in one format only gets a profile of that format only.
	Formats string
}

// Has reports whether the profile is defined for the named format.
func (p Profile) Has(format string) bool { return p.Formats == "" || p.Formats == format }

// The encoding profiles.
var (
	// Satfinite is PTX cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 as measured on an
	// H100 (CUDA 13.0): overflow and ±Inf saturate to ±max finite, every NaN
	// becomes 0x7f.
	Satfinite = Profile{
		Name:     "satfinite",
		Summary:  "saturation to the largest finite value, NaN -> +NaN (cvt.rn.satfinite)",
		Source:   "PTX ISA cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32, measured on H100 (CUDA 13.0)",
		Saturate: true,
	}
	// NoSat is torch 2.11 .to(float8_e4m3fn / float8_e5m2), on the CPU and
	// on CUDA: overflow and ±Inf become NaN (E4M3) or Inf (E5M2) keeping
	// the sign; a NaN becomes 0x7f with its sign. ml_dtypes 0.6.0's
	// float8_e4m3fn is this profile too; its float8_e5m2 is not (MLDtypes).
	NoSat = Profile{
		Name:    "nosat",
		Summary: "no saturation: overflow and Inf -> NaN (E4M3) or Inf (E5M2), NaN sign kept (torch .to(float8))",
		Source: "torch 2.11 CPU and CUDA x.to(torch.float8_e4m3fn / float8_e5m2) (run, all 2^32 inputs); " +
			"ml_dtypes 0.6.0 float8_e4m3fn (run)",
		NaNKeepsSign: true,
	}
	// MLDtypes is ml_dtypes 0.6.0 float8_e5m2: NoSat, except that every
	// NaN, whatever its payload, becomes the quiet NaN 0x7e of its sign
	// (float8.h converts through the quiet NaN of the format; run over all
	// 2^32 inputs from the C++ headers and from Python).
	MLDtypes = Profile{
		Name:         "ml_dtypes",
		Summary:      "E5M2 without saturation, every NaN -> 0x7e with its sign (ml_dtypes float8_e5m2)",
		Source:       "jax-ml/ml_dtypes ml_dtypes/include/float8.h float8_e5m2 (ml_dtypes 0.6.0, run): NaN -> 0x7e | sign",
		NaNKeepsSign: true,
		NaNQuiet:     true,
		Formats:      "e5m2",
	}
)

// Profiles lists the known profiles; a profile need not hold for every
// format (Profile.Has).
func Profiles() []Profile { return []Profile{Satfinite, NoSat, MLDtypes} }

// LookupProfile returns the profile with the given name.
func LookupProfile(name string) (Profile, error) {
	for _, p := range Profiles() {
		if p.Name == name {
			return p, nil
		}
	}
	return Profile{}, fmt.Errorf("fp8: unknown profile %q (known: satfinite, nosat, ml_dtypes)", name)
}

// Encode rounds x to the nearest value of f, ties to even, and applies p
// to overflow, infinities and NaN. -0 encodes as 0x80.
func (f Format) Encode(x float32, p Profile) uint8 {
	if p.NaNQuiet && x != x {
		// The quiet NaN: exponent all ones, the top mantissa bit.
		q := uint8(1<<(f.ExpBits+f.ManBits) - 1<<(f.ManBits-1))
		if !f.HasInf {
			q = 0x7f
		}
		return uint8(math.Float32bits(x)>>24)&0x80 | q
	}
	return encode(math.Float32bits(x), f.ExpBits, f.ManBits, f.Bias, f.HasInf, p.Saturate, p.NaNKeepsSign)
}

// encode takes the format and profile as scalars so that a hot loop does
// not copy their name strings.
func encode(b uint32, expBits, manBits, bias int, hasInf, saturate, nanKeepsSign bool) uint8 {
	sign := uint8(b>>24) & 0x80
	a := b & 0x7fffffff
	if a > 0x7f800000 {
		if nanKeepsSign {
			return sign | 0x7f
		}
		return 0x7f
	}
	var maxFinite, over uint32
	if hasInf {
		maxFinite = (1<<expBits-2)<<manBits | (1<<manBits - 1)
		over = (1<<expBits - 1) << manBits
	} else {
		maxFinite = 1<<(expBits+manBits) - 2
		over = 0x7f
	}
	if saturate {
		over = maxFinite
	}
	if a == 0x7f800000 {
		return sign | uint8(over)
	}
	// Significand with its hidden bit and unbiased exponent of |x|.
	e := int(a>>23) - 127
	sig := a&0x7fffff | 1<<23
	if a < 1<<23 {
		e, sig = -126, a&0x7fffff
	}
	emin := 1 - bias
	if e > (1<<expBits-1)-bias { // beyond any finite exponent
		return sign | uint8(over)
	}
	te := max(e, emin) // exponent of the result's encoding slot
	shift := uint(23 - manBits + te - e)
	var q uint32
	if shift < 32 {
		q = sig >> shift
		rem := sig & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || rem == half && q&1 == 1 {
			q++
		}
	}
	// q counts units of the result's last place from the bottom of the
	// exponent slot; a carry out of the mantissa increments the exponent.
	code := uint32(te-emin)<<manBits + q
	if code > maxFinite {
		return sign | uint8(over)
	}
	return sign | uint8(code)
}
