package suite

import (
	"fmt"
	"math"
	"math/big"
	"sort"

	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/gemv"
)

// BoundAllowance says what a bound model allows on a suite's tasks: how
// large its bound is against the outputs it bounds. A certificate
// carries it, so that a reader sees whether "within the bound" still
// pins the outputs down.
//
// An output is tiny by construction when its exact value y is within
// what no kernel of the model can avoid: the bound of the base model (no
// rounded multiplication, no fp16 rounding, the claimed output
// precision), which the float32 additions of any summation order already
// reach, plus the model's underflow allowance (2^-150 per rounded
// float32 product and 2^-25 per fp16 rounding of each term: the model's
// declared precisions cannot hold a value that small). No model can
// check the sign of such an output; an exact zero is the extreme case,
// within every bound. Every other finite output is informative.
type BoundAllowance struct {
	// Informative counts the informative outputs; Tiny those tiny by
	// construction. Outputs with a NaN or infinite term, or whose terms
	// may overflow (MayOverflow), are in neither.
	Informative int `json:"informative_outputs"`
	Tiny        int `json:"tiny_outputs"`
	// ZeroWithin counts the informative outputs at which a zero (and so
	// possibly a sign-flipped value) would be within the model's bound.
	ZeroWithin int `json:"zero_within"`
	// MaxRatio and MedianRatio are the largest and the median of
	// bound/|y| over the informative outputs: below 1, a zero or negated
	// output is outside the bound.
	MaxRatio    float64 `json:"max_bound_over_y"`
	MedianRatio float64 `json:"median_bound_over_y"`
}

// CheckBoundModel computes what bound model c allows on the suite's
// tasks (natively, from the golden inputs of set) and refuses a model
// under which a zero output would pass: one whose bound reaches |y| at
// half or more of some task's informative outputs, or a suite with no
// informative output at all. A model meeting this rule is within the
// bound of a zero or a negated output on fewer than half of every task's
// informative outputs, so neither all-zero nor sign-flipped results can
// conform. See docs/rationale/bound-models.md.
func (s *Suite) CheckBoundModel(set *golden.Set, c BoundClaim) (BoundAllowance, error) {
	var a BoundAllowance
	base := gemv.BoundModel{Out: c.Model.Out}
	var ratios []float64
	for _, t := range s.Tasks {
		in, err := set.Inputs(t.Cases[t.Profiles[0]])
		if err != nil {
			return a, err
		}
		ps, err := s.BoundProblems(t, in, c)
		if err != nil {
			return a, fmt.Errorf("task %s: %w", t.Name, err)
		}
		informative, within := 0, 0
		var tr []float64
		for _, p := range ps {
			k := len(p.X)
			var w []float64
			var rows []int
			for r := 0; r < p.N; r++ {
				row := p.W[r*k : (r+1)*k]
				if !finiteTerms(row, p.X) || MayOverflow(row, p.X, c.Model) {
					continue
				}
				w = append(w, row...)
				rows = append(rows, r)
			}
			al, err := gemv.Allowances(w, len(rows), p.X, []gemv.BoundModel{base, c.Model})
			if err != nil {
				return a, fmt.Errorf("task %s: %w", t.Name, err)
			}
			for _, o := range al {
				y := new(big.Float).Abs(o.Exact)
				if y.Cmp(new(big.Float).Add(o.Bounds[0], underflow(k, c.Model))) <= 0 {
					a.Tiny++
					continue
				}
				informative++
				if o.Bounds[1].Cmp(y) >= 0 {
					within++
				}
				q, _ := new(big.Float).Quo(o.Bounds[1], y).Float64()
				tr = append(tr, q)
			}
		}
		a.Informative += informative
		a.ZeroWithin += within
		ratios = append(ratios, tr...)
		if informative > 0 && 2*within >= informative {
			sort.Float64s(tr)
			return a, fmt.Errorf("bound model %s is too loose for suite %s: on task %s a zero output is within its bound at %d of the %d outputs that are not tiny by construction (bound/|y|: median %.3g, max %.3g); a model must keep zero and sign-flipped outputs outside the bound at most of them",
				c.Name, s.Name, t.Name, within, informative, median(tr), tr[len(tr)-1])
		}
	}
	if a.Informative == 0 {
		return a, fmt.Errorf("bound model %s: no output of suite %s is more than the rounding of its own additions away from zero, so no bound can tell a zero output from a right one", c.Name, s.Name)
	}
	sort.Float64s(ratios)
	a.MaxRatio, a.MedianRatio = ratios[len(ratios)-1], median(ratios)
	return a, nil
}

// underflow is the part of a k-term bound under m that covers underflow,
// k*(Mul32*2^-150 + Round16*2^-25) (gemv.Bound's eta without its 1+theta
// factor), exact.
func underflow(k int, m gemv.BoundModel) *big.Float {
	e := new(big.Float).SetMantExp(big.NewFloat(float64(m.Mul32)), -150)
	e.Add(e, new(big.Float).SetMantExp(big.NewFloat(float64(m.Round16)), -25))
	return e.Mul(e, big.NewFloat(float64(k)))
}

// median of sorted non-empty v (the lower middle for an even count).
func median(v []float64) float64 { return v[(len(v)-1)/2] }

func finiteTerms(w, x []float64) bool {
	for i, a := range w {
		if math.IsNaN(a) || math.IsInf(a, 0) || math.IsNaN(x[i]) || math.IsInf(x[i], 0) {
			return false
		}
	}
	return true
}

// MayOverflow reports whether a row of finite terms can overflow in some
// summation order under model m: the sum of their magnitudes, widened by
// a margin for the rounding of products and partial sums, reaches the
// least magnitude that rounds to infinity in float32 (2^128 - 2^103), or
// in fp16 (65520) when partials or the output are fp16. The error bound
// assumes no overflow; past this point a kernel that is right in every
// rounding may still write an infinity, or a NaN from opposite ones.
func MayOverflow(w, x []float64, m gemv.BoundModel) bool {
	limit := math.Ldexp(1, 128) - math.Ldexp(1, 103)
	if m.Round16 > 0 || m.Out == gemv.FP16 {
		limit = 65520
	}
	var sum float64
	for i, a := range w {
		sum += math.Abs(a * x[i])
	}
	return sum*(1+1.0/1024) >= limit
}
