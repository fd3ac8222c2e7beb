package gemv

import (
	"math"
	"math/big"
	"math/bits"
	"math/rand"
	"testing"
)

// bigExactDot is the direct big.Float evaluation of Σ w[i]*x[i] that
// ExactDot replaced (one correctly rounded big.Float addition per term at a
// precision that makes each exact); ExactDot must return the same value at
// the same precision.
func bigExactDot(w, x []float64) *big.Float {
	lo, hi := math.MaxInt, math.MinInt
	for i := range w {
		if w[i] == 0 || x[i] == 0 {
			continue
		}
		_, ew := math.Frexp(w[i])
		_, ex := math.Frexp(x[i])
		lo = min(lo, ew+ex-106)
		hi = max(hi, ew+ex)
	}
	sum := new(big.Float)
	if lo > hi {
		return sum
	}
	sum.SetPrec(uint(hi-lo) + uint(bits.Len(uint(len(w)))) + 2)
	var p, b big.Float
	p.SetPrec(106)
	b.SetPrec(53)
	for i := range w {
		p.SetFloat64(w[i])
		p.Mul(&p, b.SetFloat64(x[i]))
		sum.Add(sum, &p)
	}
	return sum
}

func sameBig(a, b *big.Float) bool {
	return a.Cmp(b) == 0 && a.Prec() == b.Prec() && a.Signbit() == b.Signbit() &&
		a.Acc() == b.Acc() && a.Mode() == b.Mode() && a.MinPrec() == b.MinPrec()
}

// TestExactDotMatchesBigFloat compares the fixed-point accumulator with
// the big.Float sum on random vectors drawn to reach its edges: products
// of subnormals (2^-2148) and near the float64 maximum, exact
// cancellation to zero and to a single low bit, signed zeros, fp16 and
// float32 values, and lengths around the digit boundaries.
func TestExactDotMatchesBigFloat(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	pick := func(kind int) float64 {
		switch kind {
		case 0:
			return float64(float32(r.NormFloat64()))
		case 1: // any finite float64 bit pattern
			for {
				v := math.Float64frombits(r.Uint64())
				if !math.IsNaN(v) && !math.IsInf(v, 0) {
					return v
				}
			}
		case 2: // subnormal
			return math.Float64frombits(r.Uint64()&(1<<52-1)) * float64(1-2*r.Intn(2))
		case 3: // huge
			return math.Float64frombits(uint64(0x7fe-r.Intn(4))<<52|r.Uint64()&(1<<52-1)) * float64(1-2*r.Intn(2))
		case 4:
			return math.Copysign(0, float64(1-2*r.Intn(2)))
		default:
			return math.Ldexp(float64(r.Intn(2048)-1024), r.Intn(80)-40)
		}
	}
	for iter := 0; iter < 3000; iter++ {
		n := r.Intn(40)
		if iter%100 == 0 {
			n = 5000
		}
		w, x := make([]float64, n), make([]float64, n)
		kw, kx := r.Intn(6), r.Intn(6)
		for i := range w {
			if r.Intn(4) == 0 {
				w[i], x[i] = pick(r.Intn(6)), pick(r.Intn(6))
			} else {
				w[i], x[i] = pick(kw), pick(kx)
			}
		}
		if n > 1 && iter%3 == 0 { // cancel the first half exactly
			for i := n / 2; i < n; i++ {
				w[i], x[i] = -w[i-n/2], x[i-n/2]
			}
			if iter%6 == 0 {
				w[n-1], x[n-1] = 0x1p-1074, 0x1p-1074
			}
		}
		got, err := ExactDot(w, x)
		if err != nil {
			t.Fatal(err)
		}
		if want := bigExactDot(w, x); !sameBig(got, want) {
			t.Fatalf("iter %d: ExactDot = %s (prec %d), big.Float = %s (prec %d)", iter, got.Text('p', 0), got.Prec(), want.Text('p', 0), want.Prec())
		}
		abs := make([]float64, n)
		for i := range w {
			abs[i] = math.Abs(w[i])
		}
		ax := make([]float64, n)
		for i := range x {
			ax[i] = math.Abs(x[i])
		}
		_, gotAbs, err := exactDots(w, x)
		if err != nil {
			t.Fatal(err)
		}
		if want := bigExactDot(abs, ax); !sameBig(gotAbs, want) {
			t.Fatalf("iter %d: Σ|w x| = %s (prec %d), big.Float = %s (prec %d)", iter, gotAbs.Text('p', 0), gotAbs.Prec(), want.Text('p', 0), want.Prec())
		}
	}
}

func BenchmarkExactDots(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	w := make([]float64, 4096)
	x := make([]float64, 4096)
	for i := range w {
		w[i] = float64(float32(r.NormFloat64()))
		x[i] = float64(float32(r.NormFloat64()))
	}
	var d dotter
	b.Run("narrow", func(b *testing.B) {
		for b.Loop() {
			d.dots(w, x)
		}
	})
	x[0] = 1 + 0x1p-40
	b.Run("wide", func(b *testing.B) {
		for b.Loop() {
			d.dots(w, x)
		}
	})
}

// fma32Nextafter is fma32 as first written, stepping with math.Nextafter;
// fma32's select form must give the same bits, signed zeros included.
func fma32Nextafter(x, y, z float32) float32 {
	p := float64(float64(x) * float64(y))
	zz := float64(z)
	s := p + zz
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return float32(s)
	}
	bb := s - p
	e := (p - (s - bb)) + (zz - bb)
	if e > 0 {
		s = math.Nextafter(s, math.Inf(1))
	} else if e < 0 {
		s = math.Nextafter(s, math.Inf(-1))
	}
	return float32(s)
}

func TestFMA32MatchesNextafter(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	special := []uint32{0, 0x80000000, 1, 0x80000001, 0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0x3f800000, 0xbf800000, 0x00800000}
	for i := 0; i < 2000000; i++ {
		var v [3]float32
		for j := range v {
			switch r.Intn(8) {
			case 0:
				v[j] = math.Float32frombits(special[r.Intn(len(special))])
			case 1:
				v[j] = math.Float32frombits(r.Uint32() & 0x807fffff) // zero or subnormal
			default:
				v[j] = math.Float32frombits(r.Uint32())
			}
		}
		x, y, z := v[0], v[1], v[2]
		if i%2 == 0 { // near-cancellation
			z = -float32(x*y) * (1 + float32(r.Intn(3)-1)*0x1p-23)
		}
		got, want := fma32(x, y, z), fma32Nextafter(x, y, z)
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("fma32(%#08x, %#08x, %#08x) = %#08x, Nextafter form %#08x", math.Float32bits(x), math.Float32bits(y), math.Float32bits(z), math.Float32bits(got), math.Float32bits(want))
		}
	}
}
