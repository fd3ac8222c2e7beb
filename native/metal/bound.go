package metal

import (
	"fmt"
	"math"

	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/fp8"
	"github.com/bitexact/bitexact/refimpl/gemv"
	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// BoundResult is the fallback verdict for a GEMV output that differs from
// its declared schedule: how many outputs lie within refimpl/gemv's
// rigorous error bound for any float32 summation order (gemv.Bound). It
// can say "within bound", never "bit-exact".
type BoundResult struct {
	Outputs, Within int
	// NonFinite counts outputs whose exact value is undefined (a NaN or
	// infinite weight, e.g. an E4M3 NaN scale); they count as within when
	// the kernel's output is NaN too.
	NonFinite int
	// First describes the first output outside the bound.
	First string
}

// GEMVBound holds a GEMV's outputs got (the kernel's "y") to the error
// bound of the exact product on inputs in, for op "gemv.sparse_fp4" or
// "gemv.mxfp4_q8_1" with parameters p, using the models refimpl/gemv
// documents for these ops (two float32 multiplications on each term's
// path).
func GEMVBound(op string, p ops.Params, in ops.Tensors, got tensor.Tensor) (BoundResult, error) {
	var rows [][]float64 // per output: w
	var xs [][]float64   // per output: x (shared slices)
	switch op {
	case "gemv.mxfp4_q8_1":
		w, act := in["w"], in["act"]
		if len(w.Shape) != 3 || len(act.Shape) != 2 {
			return BoundResult{}, fmt.Errorf("metal: bound: bad shapes w %v act %v", w.Shape, act.Shape)
		}
		n, nb := w.Shape[0], w.Shape[1]
		x := make([]float64, 32*nb)
		for b := 0; b < nb; b++ {
			blk := act.Data[36*b:]
			d8 := float64(half.DecodeFP16(uint16(blk[0]) | uint16(blk[1])<<8))
			for j := 0; j < 32; j++ {
				x[32*b+j] = float64(int8(blk[4+j])) * d8
			}
		}
		for r := 0; r < n; r++ {
			wr := make([]float64, 32*nb)
			for b := 0; b < nb; b++ {
				blk := w.Data[(r*nb+b)*17:]
				sc := math.NaN()
				if blk[0] != 0xFF {
					sc = math.Ldexp(1, int(blk[0])-128)
				}
				for j := 0; j < 16; j++ {
					wr[32*b+j] = float64(gemv.KValuesMXFP4[blk[1+j]&15]) * sc
					wr[32*b+j+16] = float64(gemv.KValuesMXFP4[blk[1+j]>>4]) * sc
				}
			}
			rows, xs = append(rows, wr), append(xs, x)
		}
	case "gemv.sparse_fp4":
		comp, meta, scales := in["comp"], in["meta"], in["scales"]
		k, n := 4*comp.Shape[1], comp.Shape[2]
		ns := scales.Shape[1]
		glob, act, experts := in["global"].F32(), in["act"].Bits16(), in["experts"].I32()
		dgx := p.Get("scale_decode", "e4m3fn") == "dgx_lut"
		for a, ex := range experts {
			x := make([]float64, k)
			off := 0
			if len(act) != k {
				off = a * k
			}
			for i := range x {
				x[i] = float64(half.DecodeFP16(act[off+i]))
			}
			ei := int(ex)
			for col := 0; col < n; col++ {
				wr := make([]float64, k)
				for q := 0; q < k/4; q++ {
					c := comp.Data[(ei*(k/4)+q)*n+col]
					m := meta.Data[(ei*(k/8)+q/2)*n+col] >> (4 * uint(q%2))
					sb := scales.Data[(ei*ns+(4*q)/(k/ns))*n+col]
					s := float64(fp8.E4M3.Decode(sb))
					if dgx && sb&0x7F == 0x7F {
						s = math.Copysign(480, float64(int8(sb)))
					}
					s *= float64(glob[ei])
					wr[4*q+int(m&3)] += float64(fp4.Decode(c&15)) * s
					wr[4*q+int(m>>2&3)] += float64(fp4.Decode(c>>4)) * s
				}
				rows, xs = append(rows, wr), append(xs, x)
			}
		}
	default:
		return BoundResult{}, fmt.Errorf("metal: bound: op %s has no bound model here", op)
	}
	if got.DType != tensor.F32 || got.Len() != len(rows) {
		return BoundResult{}, fmt.Errorf("metal: bound: output %s %v, want F32 with %d elements", got.DType, got.Shape, len(rows))
	}
	g := got.F32()
	res := BoundResult{Outputs: len(rows)}
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
