package gemv

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
)

// ExactDot returns Σ w[i]*x[i] computed without any rounding. Every finite
// float32, fp16 or decoded low-precision value is a float64, so callers
// pass the exact decoded inputs (a dequantized weight such as E2M1 * E4M3
// * a float32 global scale has at most 30 significant bits and is exact in
// float64). NaN or infinite inputs are an error: the exact value is only
// defined for finite ones.
func ExactDot(w, x []float64) (*big.Float, error) {
	if len(w) != len(x) {
		return nil, fmt.Errorf("exact dot: %d weights and %d activations", len(w), len(x))
	}
	lo, hi := math.MaxInt, math.MinInt
	for i := range w {
		if math.IsNaN(w[i]) || math.IsInf(w[i], 0) || math.IsNaN(x[i]) || math.IsInf(x[i], 0) {
			return nil, fmt.Errorf("exact dot: term %d (%v * %v) is not finite", i, w[i], x[i])
		}
		if w[i] == 0 || x[i] == 0 {
			continue
		}
		_, ew := math.Frexp(w[i])
		_, ex := math.Frexp(x[i])
		// The product lies in [2^(ew+ex-2), 2^(ew+ex)) and its lowest bit
		// is at or above 2^(ew+ex-106).
		lo = min(lo, ew+ex-106)
		hi = max(hi, ew+ex)
	}
	sum := new(big.Float)
	if lo > hi {
		return sum, nil // all terms zero
	}
	prec := uint(hi-lo) + uint(bits.Len(uint(len(w)))) + 2
	sum.SetPrec(prec)
	var p, b big.Float
	p.SetPrec(106)
	b.SetPrec(53)
	for i := range w {
		p.SetFloat64(w[i])
		p.Mul(&p, b.SetFloat64(x[i]))
		sum.Add(sum, &p)
	}
	return sum, nil
}

// BoundModel describes, for a kernel whose summation order is unknown, the
// roundings each term w[i]*x[i] may meet on its way to the result besides
// the at most K-1 float32 additions any summation tree of K terms applies
// to it.
type BoundModel struct {
	// Mul32 is the number of float32-rounded multiplications on each
	// term's path: 0 when products are exact (fp16 * fp16, E2M1 * fp16),
	// 1 for a rounded float32 product (then the float32 bound is
	// gamma_K), 2 for the sparse FP4 GEMV (the scale E4M3 * global and
	// the group sum * scale) and for MXFP4 x Q8_1 (d = 2^(e-128) * d8,
	// rounding only on underflow, and d * sumi).
	Mul32 int
	// Round16 is the number of fp16 roundings on each term's path, for
	// example 1 for a split-K kernel storing fp16 partials.
	Round16 int
	// Out is the precision of the kernel's output.
	Out Precision
}

// Verdict is the result of checking a kernel output against the exact
// value. It says whether the output is within the rigorous error bound of
// every summation order; it never says the output is bit-exact.
type Verdict struct {
	// Exact is the exact value Σ w[i]*x[i].
	Exact *big.Float
	// ExactValue is Exact rounded to nearest even in the output precision.
	ExactValue float64
	// Got is the kernel output.
	Got float64
	// ULPError is |Got - Exact| in units of the output precision's spacing
	// at |Exact| (for a subnormal or zero Exact, the smallest subnormal).
	ULPError float64
	// BoundULP is the bound in the same units.
	BoundULP float64
	// Within reports |Got - Exact| <= bound, compared exactly.
	Within bool
}

// Bound checks a kernel output got for y = Σ w[i]*x[i] against
//
//	|got - y| <= theta * Σ|w[i]*x[i]| + eta
//
// where, with K terms, u32 = 2^-24 and u16 = 2^-11, gamma(n, u) = n*u /
// (1 - n*u) (Higham, Accuracy and Stability of Numerical Algorithms, 2nd
// ed., Lemma 3.1 and (3.5)), 1 + theta = (1 + gamma(K-1+Mul32, u32)) * (1 +
// gamma(Round16, u16)), and eta covers underflow: 2^-150 per float32
// multiplication and 2^-25 per fp16 rounding on each term, K*(Mul32*2^-150
// + Round16*2^-25)*(1+theta). An fp16 output adds u16*(|y| + bound) +
// 2^-25. The bound holds for any order of float32 additions, fused or
// not.
func Bound(w, x []float64, m BoundModel, got float64) (Verdict, error) {
	if m.Mul32 < 0 || m.Round16 < 0 || m.Out > FP16 {
		return Verdict{}, fmt.Errorf("bound: invalid model %+v", m)
	}
	y, err := ExactDot(w, x)
	if err != nil {
		return Verdict{}, err
	}
	abs := make([]float64, len(w))
	for i, v := range w {
		abs[i] = math.Abs(v)
	}
	ax := make([]float64, len(x))
	for i, v := range x {
		ax[i] = math.Abs(v)
	}
	sabs, _ := ExactDot(abs, ax)
	k := len(w)
	n32 := k - 1 + m.Mul32
	if k == 0 {
		n32 = 0
	}
	g32, err := gamma(n32, -24)
	if err != nil {
		return Verdict{}, err
	}
	g16, err := gamma(m.Round16, -11)
	if err != nil {
		return Verdict{}, err
	}
	const prec = 256
	up := func() *big.Float { return new(big.Float).SetPrec(prec).SetMode(big.AwayFromZero) }
	one := big.NewFloat(1)
	theta := up().Add(g32, one)
	theta.Mul(theta, up().Add(g16, one))
	theta.Sub(theta, one)
	b := up().Mul(theta, sabs)
	eta := up().SetInt64(int64(m.Mul32))
	eta.SetMantExp(eta, -150)
	eta.Add(eta, up().SetMantExp(up().SetInt64(int64(m.Round16)), -25))
	eta.Mul(eta, up().SetInt64(int64(k)))
	eta.Mul(eta, up().Add(theta, one))
	b.Add(b, eta)
	if m.Out == FP16 {
		t := up().Abs(y)
		t.Add(t, b)
		t.Mul(t, up().SetFloat64(0x1p-11))
		b.Add(b, t)
		b.Add(b, up().SetFloat64(0x1p-25))
	}
	v := Verdict{Exact: y, ExactValue: roundBig(y, m.Out), Got: got}
	ulp := ulpAt(y, m.Out)
	bu, _ := up().Quo(b, ulp).Float64()
	v.BoundULP = bu
	if math.IsNaN(got) || math.IsInf(got, 0) {
		v.ULPError = math.Inf(1)
		return v, nil
	}
	d := new(big.Float).SetPrec(y.Prec() + 64).SetFloat64(got)
	d.Sub(d, y)
	d.Abs(d)
	eu, _ := new(big.Float).SetPrec(prec).Quo(d, ulp).Float64()
	v.ULPError = eu
	v.Within = d.Cmp(b) <= 0
	return v, nil
}

// gamma returns n*u/(1-n*u), u = 2^uexp, rounded up.
func gamma(n, uexp int) (*big.Float, error) {
	nu := new(big.Float).SetPrec(256).SetMode(big.AwayFromZero).SetMantExp(big.NewFloat(float64(n)), uexp)
	if nu.Cmp(big.NewFloat(1)) >= 0 {
		return nil, fmt.Errorf("bound: n*u = %d*2^%d >= 1, no bound", n, uexp)
	}
	den := new(big.Float).SetPrec(256).SetMode(big.ToZero).Sub(big.NewFloat(1), nu)
	return new(big.Float).SetPrec(256).SetMode(big.AwayFromZero).Quo(nu, den), nil
}

func formatOf(p Precision) (mant, emin, emax int) {
	if p == FP16 {
		return 11, -14, 15
	}
	return 24, -126, 127
}

// ulpAt is the spacing of precision p at |x|: 2^(floor(log2|x|)-mant+1),
// at least the smallest subnormal.
func ulpAt(x *big.Float, p Precision) *big.Float {
	mant, emin, _ := formatOf(p)
	e := emin
	if x.Sign() != 0 {
		e = max(x.MantExp(nil)-1, emin)
	}
	return new(big.Float).SetMantExp(big.NewFloat(1), e-mant+1)
}

// roundBig rounds x to nearest even in precision p, with subnormals and
// overflow to infinity, returned as a float64 (exact).
func roundBig(x *big.Float, p Precision) float64 {
	mant, emin, emax := formatOf(p)
	if x.Sign() == 0 {
		if x.Signbit() {
			return math.Copysign(0, -1)
		}
		return 0
	}
	e := x.MantExp(nil) - 1 // floor(log2 |x|)
	r := new(big.Float).SetMode(big.ToNearestEven)
	q := emin - mant + 1 // exponent of the smallest subnormal
	switch nbits := e - q + 1; {
	case e >= emin:
		r.SetPrec(uint(mant)).Set(x)
	case nbits >= 1:
		r.SetPrec(uint(nbits)).Set(x)
	case nbits == 0 && new(big.Float).Abs(x).Cmp(new(big.Float).SetMantExp(big.NewFloat(1), q-1)) > 0:
		// Above half the smallest subnormal: rounds up to it.
		r.SetPrec(8).SetMantExp(big.NewFloat(1), q)
		if x.Sign() < 0 {
			r.Neg(r)
		}
	default:
		// At most half the smallest subnormal: the tie goes to even zero.
		return math.Copysign(0, float64(x.Sign()))
	}
	f, _ := r.Float64()
	if math.Abs(f) >= math.Ldexp(1, emax+1) {
		return math.Copysign(math.Inf(1), f)
	}
	return f
}
