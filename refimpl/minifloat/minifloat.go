// Package minifloat converts between float32 and the binary floating-point
// formats of at most 8 bits that have no infinity: the OCP MX FP6 formats
// E2M3 and E3M2 (every code a number) and the FNUZ FP8 formats E4M3FNUZ and
// E5M2FNUZ (one NaN at the negative-zero code, no -0). A format is data
// (widths, bias, which codes are special); one integer routine encodes all
// of them.
//
// Decoding is exact. Encoding rounds to nearest, ties to even, everywhere
// including the subnormal range; what overflow, infinities and NaN become
// is chosen by a Profile. The formats and their profiles are declared
// where refimpl/unary describes them (refimpl/unary fp6.go, fnuz.go).
// Encoding is integer work on the float32 bit pattern, so results are the
// same on every GOARCH.
package minifloat

import "math"

// Specials says which codes of a format are not numbers.
type Specials uint8

const (
	// Finite: every code is a number, both zeros included (OCP FP6).
	Finite Specials = iota
	// NaNAtNegZero: the code with only the sign bit set is the format's
	// one NaN; there is no infinity and no -0 (FNUZ: "finite, NaN,
	// unsigned zero").
	NaNAtNegZero
)

// Format is a sign bit, ExpBits exponent bits of the given Bias and
// ManBits mantissa bits, with its special codes. A code with exponent
// field e > 0 is (-1)^s * 2^(e-Bias) * 1.m, one with e = 0 is
// (-1)^s * 2^(1-Bias) * 0.m; the all-ones exponent holds numbers too.
type Format struct {
	ExpBits, ManBits, Bias int
	Specials               Specials
}

// Bits is the code width, 1+ExpBits+ManBits.
func (f Format) Bits() int { return 1 + f.ExpBits + f.ManBits }

// signBit is the code's sign bit.
func (f Format) signBit() uint8 { return 1 << (f.ExpBits + f.ManBits) }

// MaxFinite is the code of the largest finite value: every magnitude bit
// set.
func (f Format) MaxFinite() uint8 { return f.signBit() - 1 }

// NaN is the NaN code of a NaNAtNegZero format (the sign bit alone).
func (f Format) NaN() uint8 { return f.signBit() }

// IsNaN reports whether code c (its low Bits() bits) is NaN.
func (f Format) IsNaN(c uint8) bool {
	return f.Specials == NaNAtNegZero && c&(f.signBit()<<1-1) == f.NaN()
}

// Decode returns the exact float32 value of the code in the low Bits()
// bits of c. The NaN of a NaNAtNegZero format decodes to the quiet
// float32 NaN with the code's sign bit set (0xffc00000), as the decoders
// of refimpl/fp8 give a NaN the sign of its code.
func (f Format) Decode(c uint8) float32 {
	c &= f.signBit()<<1 - 1
	if f.IsNaN(c) {
		return math.Float32frombits(0xffc00000)
	}
	neg := c&f.signBit() != 0
	mag := uint32(c &^ f.signBit())
	e := int(mag >> f.ManBits)
	m := mag & (1<<f.ManBits - 1)
	var v float64
	if e == 0 {
		v = math.Ldexp(float64(m), 1-f.Bias-f.ManBits)
	} else {
		v = math.Ldexp(float64(m|1<<f.ManBits), e-f.Bias-f.ManBits)
	}
	if neg {
		v = -v
	}
	return float32(v)
}

// NaNRule says which code a NaN input gets.
type NaNRule uint8

const (
	// NaNToNaN: the format's NaN, whatever the input's sign (FNUZ).
	NaNToNaN NaNRule = iota
	// NaNToFlippedZero: the zero of the opposite sign, +NaN -> -0 and
	// -NaN -> +0: ml_dtypes' FP6 types return their quiet_NaN(), which
	// is -0, and then negate it for a negative input.
	NaNToFlippedZero
)

// Profile says what an encoder does where implementations disagree.
type Profile struct {
	Name string
	// Summary says in one line what the profile does at the edges.
	Summary string
	// Source names the implementation the profile reproduces.
	Source string
	// Saturate sends finite values that round beyond the largest finite
	// value, and infinities, to the largest finite value of their sign;
	// without it they become the format's NaN (a Finite format has none,
	// so its profiles saturate).
	Saturate bool
	NaN      NaNRule
}

// Encode rounds x to the nearest value of f, ties to even, and applies p
// to overflow, infinities and NaN. A zero result keeps the sign of x where
// f has -0 (Finite) and is +0 otherwise.
func (f Format) Encode(x float32, p Profile) uint8 {
	b := math.Float32bits(x)
	neg := b>>31 != 0
	a := b & 0x7fffffff
	sign := uint8(0)
	if neg {
		sign = f.signBit()
	}
	over := f.MaxFinite() | sign
	if !p.Saturate && f.Specials == NaNAtNegZero {
		over = f.NaN()
	}
	switch {
	case a > 0x7f800000:
		if p.NaN == NaNToFlippedZero {
			return sign ^ f.signBit()
		}
		return f.NaN()
	case a == 0x7f800000:
		return over
	}
	// Significand with its hidden bit and unbiased exponent of |x|.
	e := int(a>>23) - 127
	sig := a&0x7fffff | 1<<23
	if a < 1<<23 {
		e, sig = -126, a&0x7fffff
	}
	emin := 1 - f.Bias
	if e > (1<<f.ExpBits-1)-f.Bias { // beyond the largest exponent
		return over
	}
	te := max(e, emin) // exponent of the result's encoding slot
	shift := uint(23 - f.ManBits + te - e)
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
	code := uint32(te-emin)<<f.ManBits + q
	switch {
	case code > uint32(f.MaxFinite()):
		return over
	case code == 0 && f.Specials == NaNAtNegZero:
		return 0 // no -0: the sign bit alone is NaN
	}
	return sign | uint8(code)
}
