package metal

import (
	"fmt"
	"math"

	"github.com/bitexact/bitexact/refimpl/gemv"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// boundResult is the fallback verdict for a GEMV output that differs from
// its declared schedule: how many outputs lie within refimpl/gemv's
// rigorous error bound for any float32 summation order (gemv.Bound). It
// can say "within bound", never "bit-exact".
type boundResult struct {
	Outputs, Within int
	// NonFinite counts outputs whose exact value is undefined (a NaN or
	// infinite weight, e.g. an E4M3 NaN scale); they count as within when
	// the kernel's output is NaN too.
	NonFinite int
	// First describes the first output outside the bound.
	First string
}

// gemvBound holds a GEMV's outputs got (the kernel's "y") to the error
// bound of the exact product on inputs in, for op "gemv.sparse_fp4" or
// "gemv.mxfp4_q8_1" with parameters p, using the models refimpl/gemv
// documents for these ops (two float32 multiplications on each term's
// path). The exact operands are refimpl's (ops.GEMVTerms).
func gemvBound(op string, p ops.Params, in ops.Tensors, got tensor.Tensor) (boundResult, error) {
	terms, err := ops.GEMVTerms(op, p, in)
	if err != nil {
		return boundResult{}, fmt.Errorf("metal: bound: %w", err)
	}
	rows, xs := terms.W, terms.X
	if got.DType != tensor.F32 || got.Len() != len(rows) {
		return boundResult{}, fmt.Errorf("metal: bound: output %s %v, want F32 with %d elements", got.DType, got.Shape, len(rows))
	}
	g := got.F32()
	res := boundResult{Outputs: len(rows)}
	for i, w := range rows {
		finite := true
		for _, v := range w {
			finite = finite && !math.IsNaN(v) && !math.IsInf(v, 0)
		}
		if !finite {
			res.NonFinite++
			if g[i] != g[i] {
				res.Within++
			} else if res.First == "" {
				res.First = fmt.Sprintf("output %d: got %g, the exact value is NaN (non-finite weight)", i, g[i])
			}
			continue
		}
		v, err := gemv.Bound(w, xs[i], gemv.BoundModel{Mul32: 2, Out: gemv.FP32}, float64(g[i]))
		if err != nil {
			return res, fmt.Errorf("metal: bound: output %d: %w", i, err)
		}
		if v.Within {
			res.Within++
		} else if res.First == "" {
			res.First = fmt.Sprintf("output %d: got %g, exact %g, error %.3g ulp > bound %.3g ulp", i, g[i], v.ExactValue, v.ULPError, v.BoundULP)
		}
	}
	return res, nil
}
