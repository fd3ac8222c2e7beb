package ggml

import (
	"fmt"
	"math"
)

// MXFP4Block is block_mxfp4: 17 bytes, the scale byte e then qs. qs[j]
// holds element j in its low nibble and element j+16 in its high nibble.
type MXFP4Block struct {
	E  uint8
	Qs [QK / 2]uint8
}

// Code is the 4-bit code (index into KValuesMXFP4) of element j, 0 <= j < 32.
func (b *MXFP4Block) Code(j int) uint8 {
	if j < QK/2 {
		return b.Qs[j] & 0xF
	}
	return b.Qs[j-QK/2] >> 4
}

// Value is element j: float32(KValuesMXFP4[code]) * E8M0ToFP32Half(E), an
// exact product.
func (b *MXFP4Block) Value(j int) float32 {
	return float32(KValuesMXFP4[b.Code(j)]) * E8M0ToFP32Half(b.E)
}

// ParseMXFP4 reads consecutive 17-byte blocks.
func ParseMXFP4(data []byte) ([]MXFP4Block, error) {
	if len(data)%MXFP4BlockBytes != 0 {
		return nil, fmt.Errorf("ggml: %d bytes are not a whole number of %d-byte block_mxfp4", len(data), MXFP4BlockBytes)
	}
	bs := make([]MXFP4Block, len(data)/MXFP4BlockBytes)
	for i := range bs {
		p := data[i*MXFP4BlockBytes:]
		bs[i].E = p[0]
		copy(bs[i].Qs[:], p[1:MXFP4BlockBytes])
	}
	return bs, nil
}

// AppendMXFP4 appends the 17-byte encoding of each block.
func AppendMXFP4(dst []byte, bs []MXFP4Block) []byte {
	for i := range bs {
		dst = append(dst, bs[i].E)
		dst = append(dst, bs[i].Qs[:]...)
	}
	return dst
}

// Log2Mode is how the scale exponent floor(log2f(amax)) is modelled.
type Log2Mode uint8

const (
	// Log2Exact takes floor(log2(amax)) from the float32 bits: the exact
	// exponent.
	Log2Exact Log2Mode = iota
	// Log2F emulates floorf(log2f(amax)) with a correctly rounded log2f.
	// It differs from Log2Exact exactly on the floats just below a power of
	// two 2^n, n >= 3 or n <= -2, whose log2 rounds up to the integer n
	// (1 to 44 floats per power; see Log2FloorF and blocks.md).
	Log2F
)

// CastMode is how the C conversion (uint8_t) of an out-of-range float is
// modelled: the exponent expression floorf(log2f(amax)) - 2 + 127 is
// negative for amax < 2^-125 and infinite for amax = +Inf, both undefined
// behaviour in C.
type CastMode uint8

const (
	// CastX86 is x86-64 gcc/clang code: cvttss2si to int32 (NaN, ±Inf and
	// out-of-range give 0x80000000), then the low byte.
	CastX86 CastMode = iota
	// CastARM64 is AArch64 code: fcvtzu to uint32 (saturating, NaN -> 0),
	// then the low byte.
	CastARM64
)

// MXFP4Options select the emulation of quantize_row_mxfp4_ref.
type MXFP4Options struct {
	Log2 Log2Mode
	Cast CastMode
}

// DefaultMXFP4 is the x86-64 build with a correctly rounded log2f.
var DefaultMXFP4 = MXFP4Options{Log2: Log2F, Cast: CastX86}

// LookupLog2Mode maps "exact" and "log2f".
func LookupLog2Mode(s string) (Log2Mode, error) {
	switch s {
	case "exact":
		return Log2Exact, nil
	case "log2f":
		return Log2F, nil
	}
	return 0, fmt.Errorf("ggml: unknown log2 mode %q (known: exact, log2f)", s)
}

// LookupCastMode maps "x86-64" and "arm64".
func LookupCastMode(s string) (CastMode, error) {
	switch s {
	case "x86-64":
		return CastX86, nil
	case "arm64":
		return CastARM64, nil
	}
	return 0, fmt.Errorf("ggml: unknown cast mode %q (known: x86-64, arm64)", s)
}

// castU8 is the C conversion (uint8_t)v of an integer-valued or infinite v.
func castU8(v float32, m CastMode) uint8 {
	f := float64(v)
	if m == CastARM64 {
		switch {
		case f != f || f <= 0:
			return 0
		case f >= 1<<32:
			return 0xFF
		}
		return uint8(uint32(f))
	}
	if f != f || f >= 1<<31 || f < -(1<<31) {
		return 0
	}
	return uint8(int32(f))
}

// castI8X86 is the x86-64 C conversion (int8_t)v of an integer-valued v.
func castI8X86(v float32) int8 {
	f := float64(v)
	if f != f || f >= 1<<31 || f < -(1<<31) {
		return 0
	}
	return int8(int32(f))
}

// Log2FloorF is floorf(log2f(x)) for finite x > 0 where log2f is correctly
// rounded to float32.
//
// Let x = m*2^E with m in [1, 2). floor(log2 x) = E exactly, and log2 x
// lies in [E, E+1), so the rounded value has floor E or E+1; it is E+1
// exactly when log2 x lies within half a float32 spacing of E+1, that is
// when D = E+1 - log2 x = -log2(1 - (2-m)/2) is below h, half the gap
// between E+1 and its float32 neighbour toward log2 x. D is computed with
// math.Log1p in float64 (relative error near 2^-52); over every float32 x
// the smallest |D - h| is 0.8% of h (x 11 steps below 2^-128), so the
// comparison is exact, also where Go fuses operations inside math.Log1p. There is never a tie: log2 of a
// non-power-of-two rational is irrational.
func Log2FloorF(x float32) int {
	b := math.Float32bits(x)
	exp := int(b>>23) & 0xFF
	mant := b & 0x7FFFFF
	var E int
	var m float64
	if exp == 0 { // subnormal: normalise
		E = -149 + bitsLen(mant) - 1
		m = float64(mant) / float64(uint64(1)<<uint(bitsLen(mant)-1))
	} else {
		E = exp - 127
		m = 1 + float64(mant)/(1<<23)
	}
	if m == 1 {
		return E
	}
	D := -math.Log1p(-(2-m)/2) / math.Ln2
	n := E + 1 // candidate integer log2 rounds to
	h := halfGapToward(n, n > 0)
	if D < h {
		return n
	}
	return E
}

// halfGapToward is half the float32 spacing next to the integer n on the
// side of smaller values (below is true: log2 x < n with n > 0, the gap
// just below n) or of larger magnitude (n <= 0: log2 x is more negative
// than n, the gap just above |n|).
func halfGapToward(n int, below bool) float64 {
	a := n
	if a < 0 {
		a = -a
	}
	if a == 0 {
		return 0 // log2 x in (-1, 0) never rounds to 0: 0 is never a floor+1 above a nonzero gap
	}
	e := bitsLen(uint32(a)) - 1 // a in [2^e, 2^(e+1))
	if below && a == 1<<uint(e) {
		e-- // the gap just below a power of two is that of the binade below
	}
	return math.Ldexp(1, e-24)
}

func bitsLen(v uint32) int {
	n := 0
	for v != 0 {
		n++
		v >>= 1
	}
	return n
}

// ScaleMXFP4 is quantize_row_mxfp4_ref's scale byte for a block amax:
// amax > 0 ? (uint8_t)(floorf(log2f(amax)) - 2 + 127) : 0.
func ScaleMXFP4(amax float32, o MXFP4Options) uint8 {
	if !(amax > 0) {
		return 0
	}
	var v float32
	switch {
	case math.IsInf(float64(amax), 1):
		v = amax // log2f(+Inf) = +Inf
	case o.Log2 == Log2F:
		v = float32(Log2FloorF(amax) - 2 + 127)
	default:
		v = float32(exactExponent(amax) - 2 + 127)
	}
	return castU8(v, o.Cast)
}

func exactExponent(x float32) int {
	b := math.Float32bits(x)
	if exp := int(b>>23) & 0xFF; exp != 0 {
		return exp - 127
	}
	return -149 + bitsLen(b&0x7FFFFF) - 1
}

// BestIndexMXFP4 is best_index_mxfp4: the first index i minimising
// fabsf(float32(KValuesMXFP4[i]*d) - x) under strict <, each difference a
// correctly rounded float32 subtraction. A NaN x gives 0 (no comparison
// holds), and so does ±Inf (every error is +Inf).
func BestIndexMXFP4(x, d float32) uint8 {
	kd := kTimes(d)
	return bestIndex(x, &kd)
}

// kTimes is the table of exact products float32(KValuesMXFP4[i]) * d.
func kTimes(d float32) (kd [16]float32) {
	for i, k := range KValuesMXFP4 {
		kd[i] = float32(k) * d
	}
	return kd
}

func bestIndex(x float32, kd *[16]float32) uint8 {
	best := uint8(0)
	bestErr := abs32(kd[0] - x)
	for i := 1; i < 16; i++ {
		if err := abs32(kd[i] - x); err < bestErr {
			best, bestErr = uint8(i), err
		}
	}
	return best
}

// abs32 is fabsf: it clears the sign bit, NaN included.
func abs32(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }

// QuantizeMXFP4 is quantize_row_mxfp4_ref over len(x)/32 blocks. The block
// amax is the C loop "if (amax < fabsf(v)) amax = fabsf(v)" from 0, which
// skips NaN.
func QuantizeMXFP4(x []float32, o MXFP4Options) ([]MXFP4Block, error) {
	if err := checkLen(len(x)); err != nil {
		return nil, err
	}
	bs := make([]MXFP4Block, len(x)/QK)
	for i := range bs {
		xs := x[i*QK : (i+1)*QK]
		var amax float32
		for _, v := range xs {
			if a := abs32(v); amax < a {
				amax = a
			}
		}
		e := ScaleMXFP4(amax, o)
		d := E8M0ToFP32Half(e)
		bs[i].E = e
		kd := kTimes(d)
		for j := 0; j < QK/2; j++ {
			bs[i].Qs[j] = bestIndex(xs[j], &kd) | bestIndex(xs[j+QK/2], &kd)<<4
		}
	}
	return bs, nil
}

// DequantizeMXFP4 is dequantize_row_mxfp4: every element is an exact
// product (no NaN, no rounding).
func DequantizeMXFP4(bs []MXFP4Block) []float32 {
	y := make([]float32, len(bs)*QK)
	for i := range bs {
		for j := 0; j < QK; j++ {
			y[i*QK+j] = bs[i].Value(j)
		}
	}
	return y
}
