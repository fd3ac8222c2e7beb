package fp8block

import (
	"math"
	"math/big"
)

// BitCeil is DeepGEMM's ceil_to_ue8m0 (deep_gemm/utils/math.py): with b
// the float32 bits of |s|, the exponent field (b >> 23) & 0xFF plus one
// when the mantissa b & 0x7FFFFF is non-zero, clamped to [1, 254], as the
// exponent of the result (mantissa 0). Integer work only.
func BitCeil(s float32) float32 {
	b := math.Float32bits(s) & 0x7fffffff
	e := b >> 23
	if b&0x7fffff != 0 {
		e++
	}
	e = min(max(e, 1), 254)
	return math.Float32frombits(e << 23)
}

// Log2Ceil is exp2(ceil(log2(s))) in float32 with log2 correctly rounded
// to float32: the power of two 2^c where c is the ceiling of the float32
// nearest log2(s). For s > 0 finite that is 2^ceil(log2 s) except where s
// lies just above a power of two 2^e and log2(s) = e + t rounds to e
// (t below half the float32 spacing at e): then c = e. Inf and NaN are
// returned as they are; s <= 0 gives +0 (exp2(-Inf)) or NaN (log2 of a
// negative).
func Log2Ceil(s float32) float32 {
	switch {
	case s != s || math.IsInf(float64(s), 1):
		return s
	case s == 0:
		return 0
	case s < 0:
		return posNaN
	}
	b := math.Float32bits(s)
	e := int(b>>23) - 127
	m := b & 0x7fffff
	if b < 1<<23 { // subnormal: normalise
		for m&0x800000 == 0 {
			m <<= 1
			e--
		}
		e++ // the leading bit sits at 2^e now
		m &= 0x7fffff
	}
	if m == 0 {
		return exp2(e)
	}
	if e != 0 && log2RoundsTo(e, m) {
		return exp2(e)
	}
	return exp2(e + 1)
}

// log2RoundsTo reports whether e + log2(1 + m*2^-23) (0 < m < 2^23, e != 0)
// rounds to the float32 e. The float32 neighbour of e on the side of the
// sum is h away: half the spacing above e for e > 0, half the spacing
// below |e| for e < 0 (smaller when |e| is a power of two). log2 of a
// non-power-of-two rational is irrational, so there is no tie; the sum
// rounds to e iff log2(1+f) < h, i.e. (1+f)^(2^q) < 2 for h = 2^-q,
// decided with directed-rounding big.Float bounds.
func log2RoundsTo(e int, m uint32) bool {
	a := e
	if a < 0 {
		a = -a
	}
	p := 0 // floor(log2 |e|)
	for 1<<(p+1) <= a {
		p++
	}
	// Spacing of float32 at |e| (toward larger magnitude): 2^(p-23);
	// below a power of two the spacing halves.
	spacingExp := p - 23
	if e < 0 && a == 1<<p {
		spacingExp--
	}
	q := -(spacingExp - 1) // h = 2^(spacingExp-1) = 2^-q
	if q <= 0 {
		return false // h >= 1 > log2(1+f): cannot happen for float32 exponents
	}
	lo := new(big.Float).SetPrec(160).SetMode(big.ToZero)
	hi := new(big.Float).SetPrec(160).SetMode(big.AwayFromZero)
	base := new(big.Float).SetPrec(160).SetMantExp(big.NewFloat(float64(m|0x800000)), -23)
	lo.Set(base)
	hi.Set(base)
	two := big.NewFloat(2)
	for i := 0; i < q; i++ {
		lo.Mul(lo, lo)
		hi.Mul(hi, hi)
		if lo.Cmp(two) >= 0 {
			return false
		}
	}
	if hi.Cmp(two) < 0 {
		return true
	}
	// The bounds straddle 2: at 160 bits after at most 150 squarings this
	// needs (1+f)^(2^q) within 2^-(160-q) of 2, which no 24-bit f reaches.
	return lo.Cmp(two) < 0
}

// exp2 returns 2^e as float32 (0 below the subnormal range, +Inf above
// 2^127).
func exp2(e int) float32 {
	switch {
	case e > 127:
		return float32(math.Inf(1))
	case e < -149:
		return 0
	}
	return float32(math.Ldexp(1, e))
}

// frexpFloor is torch.ldexp(1, frexp(q).exponent - 1): 2^floor(log2 q)
// for a positive finite q, and 0.5 for 0, NaN and Inf (frexp's exponent
// is 0 for them: C99 for zero, glibc for non-finite inputs).
func frexpFloor(q float32) float32 {
	if q != q || math.IsInf(float64(q), 0) || q == 0 {
		return 0.5
	}
	_, e := math.Frexp(float64(q))
	return float32(math.Ldexp(1, e-1))
}
