package gemv

import (
	"encoding/binary"
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
//
// The result's precision is (hi - lo) + bits.Len(len(w)) + 2 bits, where
// every non-zero product lies in [2^(hi-2), 2^hi) for the largest and has
// its lowest bit at or above 2^lo for the smallest (hi and lo from the
// math.Frexp exponents of the factors, lo = ew + ex - 106): enough to hold
// the sum exactly. A zero sum is +0 (precision 0 when every product is 0).
func ExactDot(w, x []float64) (*big.Float, error) {
	y, _, err := exactDots(w, x)
	return y, err
}

// exactDots returns Σ w[i]*x[i] and Σ |w[i]*x[i]|, both exact, with
// ExactDot's precision.
func exactDots(w, x []float64) (sum, abs *big.Float, err error) {
	var d dotter
	return d.dots(w, x)
}

// dotter holds the scratch space of exact dot products; one dotter serves
// the rows of a matrix in turn.
//
// The products are accumulated in a fixed-point accumulator (Kulisch's
// method) covering every float64 product, 2^-2148 to 2^2048, in 32-bit
// digits held in int64s whose carries are resolved once at the end, rather
// than in a big.Float: a big.Float addition allocates and, under
// GOARCH=wasm (no assembly for math/big), costs tens of times more than
// these few integer operations per term. Products of narrow factors (at
// most 24 significant bits, as every float32 and fp16 value) first go to
// bins by exponent: one multiplication and two additions per term.
type dotter struct {
	a accumulator
	// bins[2i] and bins[2i+1] sum the signed and absolute products of
	// narrow factors whose exponent fields add to i (binIndex); allocated
	// on first use, all zero between calls.
	bins []int64
}

// dots is exactDots using d's scratch space.
func (d *dotter) dots(w, x []float64) (sum, abs *big.Float, err error) {
	if len(w) != len(x) {
		return nil, nil, fmt.Errorf("exact dot: %d weights and %d activations", len(w), len(x))
	}
	if d.bins == nil {
		d.bins = make([]int64, 2*binCount)
	}
	lo, hi := math.MaxInt, math.MinInt
	for start := 0; start < len(w); {
		end := min(len(w), start+binChunk)
		ws, xs := w[start:end], x[start:end]
		l, h, stop := d.addNarrow(ws, xs)
		lo, hi = min(lo, l), max(hi, h)
		if stop < len(ws) {
			// A wide or non-finite term: the rest of the chunk takes the
			// general path.
			l, h, bad := d.a.add(ws[stop:], xs[stop:])
			if bad >= 0 {
				i := start + stop + bad
				d.a = accumulator{}
				return nil, nil, fmt.Errorf("exact dot: term %d (%v * %v) is not finite", i, w[i], x[i])
			}
			lo, hi = min(lo, l), max(hi, h)
		}
		d.a.carry()
		start = end
	}
	if lo > hi {
		d.a = accumulator{}
		return new(big.Float), new(big.Float), nil // all terms zero
	}
	prec := uint(hi-lo) + uint(bits.Len(uint(len(w)))) + 2
	sum, abs = d.a.float(0, prec), d.a.float(1, prec)
	d.a = accumulator{}
	return sum, abs, nil
}

// The accumulator's digits: digit i has weight 2^(32*i + accMinExp). The
// smallest product bit is 2^-2148 (two subnormals 2^-1074), the largest
// product is below 2^2048, and the carries fit in two more digits, the top
// one taking the sign.
const (
	accMinExp = -2148
	accDigits = (2048-accMinExp)/32 + 3
	// binChunk terms between carry passes: each adds less than 2^32 to a
	// digit (add), or less than 2^48 to a bin (addNarrow), so neither an
	// int64 digit holding less than 2^32 nor a bin can overflow.
	binChunk = 1 << 14
	// binCount bins cover the sums of two exponent fields of finite
	// values, max(e, 1) in [1, 2046].
	binCount = 2*2046 + 1
)

// accumulator holds two sums digit by digit, interleaved: a[2i] is digit
// i of Σ w*x, a[2i+1] digit i of Σ |w*x|, so that one term updates one
// contiguous run.
type accumulator [2 * accDigits]int64

// narrowBits are the low significand bits of a float64 that are zero in
// every float32 (and fp16, and decoded low-precision) value: the
// significand, hidden bit included, then has at most 24 bits.
const narrowBits = 1<<29 - 1

// addNarrow accumulates the terms w[i]*x[i] into d's bins as long as both
// factors are finite and narrow, then moves the bins into the accumulator.
// It returns the minimum of ew+ex-106 and the maximum of ew+ex over the
// non-zero products (ew, ex the math.Frexp exponents of the factors), and
// the index of the first term it did not take, len(w) when it took all.
//
// The product of two 24-bit significands is exact in a uint64 and all
// products of one bin share their lowest bit's exponent, so a term is one
// multiplication and two additions, with no branch but the loop's and the
// rare exit: Go's wasm code dispatches every taken branch through a
// br_table, which costs more than this arithmetic (the selects of min, max
// and the conditional assignment do not branch).
func (d *dotter) addNarrow(w, x []float64) (lo, hi, stop int) {
	fmin, fmax := math.MaxInt, math.MinInt
	x = x[:len(w)]
	bins := d.bins[:2*binCount]
	stop = len(w)
	for i := range w {
		bw, bx := math.Float64bits(w[i]), math.Float64bits(x[i])
		ew, ex := int(bw>>52&0x7ff), int(bx>>52&0x7ff)
		if (bw|bx)&narrowBits != 0 || (ew+1)|(ex+1) > 0x7ff {
			stop = i
			break
		}
		// The significands with their hidden bit (none for a zero or
		// subnormal), hw and hx, 1 exactly for e >= 1, less the zero low
		// bits.
		hw, hx := uint64(ew+0x7ff)>>11, uint64(ex+0x7ff)>>11
		mw := (bw&(1<<52-1) | hw<<52) >> 29
		mx := (bx&(1<<52-1) | hx<<52) >> 29
		// b = max(ew,1) + max(ex,1): the product's lowest bit has exponent
		// b - 2150 + 58.
		b := ew + int(1-hw) + ex + int(1-hx)
		p := mw * mx
		// Frexp's exponent is the lowest bit's exponent plus the
		// significand's length; a zero product takes no part.
		f := b - 2092 + bits.Len64(mw) + bits.Len64(mx)
		fl, fh := f, f
		if p == 0 {
			fl, fh = math.MaxInt, math.MinInt
		}
		fmin, fmax = min(fmin, fl), max(fmax, fh)
		sg := 1 - 2*int64((bw^bx)>>63) // the product's sign, +1 or -1
		t := (*[2]int64)(bins[2*b : 2*b+2])
		t[0] += sg * int64(p)
		t[1] += int64(p)
	}
	if fmin <= fmax {
		// Bins holding non-zero products lie between these.
		for b := max(fmin+2092-48, 0); b <= min(fmax+2092-2, binCount-1); b++ {
			sv, av := bins[2*b], bins[2*b+1]
			bins[2*b], bins[2*b+1] = 0, 0
			d.a.addAt(uint(b+56), sv, av)
		}
	}
	return fmin - 106, fmax, stop
}

// addAt adds v and av, each less than 2^63 in magnitude, times 2^(s +
// accMinExp) to the two sums.
func (a *accumulator) addAt(s uint, v, av int64) {
	d, r := s/32, s%32
	t := (*[6]int64)(a[2*d : 2*d+6])
	// v = vh*2^32 + vl with vl in [0, 2^32): vl<<r and vh<<r fit an int64.
	vl, vh := (v&0xffffffff)<<r, (v>>32)<<r
	t[0] += vl & 0xffffffff
	t[2] += vl>>32 + vh&0xffffffff
	t[4] += vh >> 32
	al, ah := (av&0xffffffff)<<r, (av>>32)<<r
	t[1] += al & 0xffffffff
	t[3] += al>>32 + ah&0xffffffff
	t[5] += ah >> 32
}

// add accumulates the terms w[i]*x[i], any finite float64s, into a. It
// returns lo and hi as addNarrow does, and the index of the first term
// with a NaN or infinite factor, or -1.
func (a *accumulator) add(w, x []float64) (lo, hi, bad int) {
	fmin, fmax := math.MaxInt, math.MinInt
	x = x[:len(w)]
	for i := range w {
		bw, bx := math.Float64bits(w[i]), math.Float64bits(x[i])
		ew, ex := int(bw>>52&0x7ff), int(bx>>52&0x7ff)
		if (ew+1)|(ex+1) > 0x7ff { // an exponent field of 0x7ff
			return fmin - 106, fmax, i
		}
		hw, hx := uint64(ew+0x7ff)>>11, uint64(ex+0x7ff)>>11
		mw := bw&(1<<52-1) | hw<<52
		mx := bx&(1<<52-1) | hx<<52
		// The product's lowest bit has exponent (max(ew,1) - 1075) +
		// (max(ex,1) - 1075), s above accMinExp.
		s := uint(ew+int(1-hw)) + uint(ex+int(1-hx)) - 2
		ph, pl := bits.Mul64(mw, mx)
		f := int(s) + accMinExp + bits.Len64(mw) + bits.Len64(mx)
		fl, fh := f, f
		if ph|pl == 0 {
			fl, fh = math.MaxInt, math.MinInt
		}
		fmin, fmax = min(fmin, fl), max(fmax, fh)
		// Shift (ph:pl) into digit d at bit r, 106 + 31 bits over five
		// digits. s <= 4090, so d+4 < accDigits.
		d, r := s/32&127, s%32
		v0 := pl << r
		v1 := ph<<r | pl>>(64-r) // pl>>64 is 0 in Go
		v2 := ph >> (64 - r)
		sg := 1 - 2*int64((bw^bx)>>63)
		c0, c1, c2, c3, c4 := int64(v0&0xffffffff), int64(v0>>32), int64(v1&0xffffffff), int64(v1>>32), int64(v2)
		t := (*[10]int64)(a[2*d : 2*d+10])
		t[0] += sg * c0
		t[1] += c0
		t[2] += sg * c1
		t[3] += c1
		t[4] += sg * c2
		t[5] += c2
		t[6] += sg * c3
		t[7] += c3
		t[8] += sg * c4
		t[9] += c4
	}
	return fmin - 106, fmax, -1
}

// carry brings every digit of both sums but the top one into [0, 2^32),
// the top one taking the sign.
func (a *accumulator) carry() {
	for i := 0; i+2 < len(a); i++ {
		c := a[i] >> 32
		a[i] -= c << 32
		a[i+2] += c
	}
}

// float returns sum k (0: Σ w*x, 1: Σ |w*x|), carried, as a big.Float of
// precision prec, which must hold it exactly.
func (a *accumulator) float(k int, prec uint) *big.Float {
	d := make([]int64, accDigits)
	for i := range d {
		d[i] = a[2*i+k]
	}
	neg := d[len(d)-1] < 0
	if neg {
		for i := range d {
			d[i] = -d[i]
		}
		for i := 0; i+1 < len(d); i++ {
			c := d[i] >> 32
			d[i] -= c << 32
			d[i+1] += c
		}
	}
	lowest := 0
	for lowest < len(d) && d[lowest] == 0 {
		lowest++
	}
	z := new(big.Float).SetPrec(prec)
	if lowest == len(d) {
		return z // +0, as a big.Float sum that cancels exactly
	}
	// Big-endian bytes of the digits from the lowest non-zero one.
	buf := make([]byte, 0, 4*(len(d)-lowest))
	for i := len(d) - 1; i >= lowest; i-- {
		buf = binary.BigEndian.AppendUint32(buf, uint32(d[i]))
	}
	z.SetInt(new(big.Int).SetBytes(buf))
	z.SetMantExp(z, 32*lowest+accMinExp)
	if neg {
		z.Neg(z)
	}
	return z
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
	var b bounder
	return b.bound(w, x, m, got)
}

// BoundRows is Bound for every row of the n x len(x) row-major matrix w
// against the same x: verdict r is Bound(w[r*len(x):(r+1)*len(x)], x, m,
// got[r]), got nil standing for zeros. It reuses its scratch space from
// row to row. An error names the row.
func BoundRows(w []float64, n int, x []float64, m BoundModel, got []float64) ([]Verdict, error) {
	k := len(x)
	if n < 0 || len(w) != n*k || got != nil && len(got) != n {
		return nil, fmt.Errorf("bound: %d weights, %d activations and %d outputs for %d rows", len(w), k, len(got), n)
	}
	var b bounder
	v := make([]Verdict, n)
	for r := range v {
		g := 0.0
		if got != nil {
			g = got[r]
		}
		var err error
		if v[r], err = b.bound(w[r*k:(r+1)*k], x, m, g); err != nil {
			return nil, fmt.Errorf("row %d: %w", r, err)
		}
	}
	return v, nil
}

// bounder is the scratch space of Bound: the exact dot products, and the
// gammas of the first row (every row of BoundRows has the same length).
type bounder struct {
	dotter
	g32, g16 *big.Float
}

func (bd *bounder) bound(w, x []float64, m BoundModel, got float64) (Verdict, error) {
	if m.Mul32 < 0 || m.Round16 < 0 || m.Out > FP16 {
		return Verdict{}, fmt.Errorf("bound: invalid model %+v", m)
	}
	y, sabs, err := bd.dots(w, x)
	if err != nil {
		return Verdict{}, err
	}
	k := len(w)
	if bd.g32 == nil {
		n32 := k - 1 + m.Mul32
		if k == 0 {
			n32 = 0
		}
		if bd.g32, err = gamma(n32, -24); err != nil {
			return Verdict{}, err
		}
		if bd.g16, err = gamma(m.Round16, -11); err != nil {
			bd.g32 = nil
			return Verdict{}, err
		}
	}
	b := allowed(y, sabs, k, m, bd.g32, bd.g16)
	const prec = 256
	up := func() *big.Float { return new(big.Float).SetPrec(prec).SetMode(big.AwayFromZero) }
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

// allowed is Bound's bound on |got - y| for k terms whose exact sum is y
// and whose magnitudes sum to sabs, under m, with g32 = gamma(k-1+Mul32,
// 2^-24) and g16 = gamma(Round16, 2^-11); rounded up.
func allowed(y, sabs *big.Float, k int, m BoundModel, g32, g16 *big.Float) *big.Float {
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
	return b
}

// Allowance is what several bound models allow one output: its exact
// value and, per model, the bound on |got - Exact| (Bound's, rounded up).
type Allowance struct {
	Exact  *big.Float
	Bounds []*big.Float
}

// Allowances returns, for each row of the n x len(x) row-major matrix w,
// the exact value and the bound each of models allows it: what a model
// lets through, independent of any kernel's output. Inputs are checked as
// BoundRows checks them; an error names the row.
func Allowances(w []float64, n int, x []float64, models []BoundModel) ([]Allowance, error) {
	k := len(x)
	if n < 0 || len(w) != n*k {
		return nil, fmt.Errorf("bound: %d weights and %d activations for %d rows", len(w), k, n)
	}
	g32s, g16s := make([]*big.Float, len(models)), make([]*big.Float, len(models))
	for i, m := range models {
		if m.Mul32 < 0 || m.Round16 < 0 || m.Out > FP16 {
			return nil, fmt.Errorf("bound: invalid model %+v", m)
		}
		n32 := k - 1 + m.Mul32
		if k == 0 {
			n32 = 0
		}
		var err error
		if g32s[i], err = gamma(n32, -24); err != nil {
			return nil, err
		}
		if g16s[i], err = gamma(m.Round16, -11); err != nil {
			return nil, err
		}
	}
	var d dotter
	a := make([]Allowance, n)
	for r := range a {
		y, sabs, err := d.dots(w[r*k:(r+1)*k], x)
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", r, err)
		}
		a[r].Exact = y
		for i, m := range models {
			a[r].Bounds = append(a[r].Bounds, allowed(y, sabs, k, m, g32s[i], g16s[i]))
		}
	}
	return a, nil
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
