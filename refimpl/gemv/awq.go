package gemv

import (
	"fmt"

	"github.com/bitexact/bitexact/refimpl/awq"
	"github.com/bitexact/bitexact/refimpl/half"
)

// F16GEMV computes y[oc] = Σ_ic w[ic, oc] * x[ic] for fp16 weights w
// [IC, OC] and fp16 activations x [IC] (both as bits) under schedule s.
// Products of two fp16 values are exact in float32, so Fused changes
// nothing when GroupK is 1; the order of the additions is all that
// matters. The result is [OC], rounded to s.Out.
func F16GEMV(w, x []uint16, ic, oc int, s Schedule) ([]float32, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if ic < 0 || oc < 0 {
		return nil, fmt.Errorf("f16 gemv: negative dimension IC=%d OC=%d", ic, oc)
	}
	if len(w) != ic*oc {
		return nil, fmt.Errorf("f16 gemv: weights have %d elements, want IC*OC = %d", len(w), ic*oc)
	}
	if len(x) != ic {
		return nil, fmt.Errorf("f16 gemv: activations have %d elements, want IC = %d", len(x), ic)
	}
	if ic%s.GroupK != 0 {
		return nil, fmt.Errorf("f16 gemv: IC=%d is not a multiple of the schedule group %d", ic, s.GroupK)
	}
	var lut [1 << 16]float32 // every fp16 value: cheaper than decoding IC*OC times
	for h := range lut {
		lut[h] = half.DecodeFP16(uint16(h))
	}
	xf := make([]float32, ic)
	for i, h := range x {
		xf[i] = lut[h]
	}
	ng := ic / s.GroupK
	xs := make([]float32, ng)
	ys := make([]float32, ng)
	for g := range ys {
		ys[g] = 1
	}
	y := make([]float32, oc)
	var lanes []float32
	// Columns are gathered a block at a time so that W is read row by row.
	const block = 64
	cols := make([]float32, block*ic)
	for o0 := 0; o0 < oc; o0 += block {
		nb := min(block, oc-o0)
		for i0 := 0; i0 < ic; i0 += block { // transpose block x block tiles
			for i := i0; i < min(i0+block, ic); i++ {
				row := w[i*oc+o0 : i*oc+o0+nb]
				for j, h := range row {
					cols[j*ic+i] = lut[h]
				}
			}
		}
		for j := 0; j < nb; j++ {
			col := cols[j*ic : (j+1)*ic]
			if s.GroupK == 1 {
				y[o0+j], lanes = s.run(col, xf, lanes)
				continue
			}
			for g := 0; g < ng; g++ {
				xs[g] = s.chain(col[g*s.GroupK:(g+1)*s.GroupK], xf[g*s.GroupK:(g+1)*s.GroupK])
			}
			y[o0+j], lanes = s.run(xs, ys, lanes)
		}
	}
	return y, nil
}

// AWQGEMV dequantizes AWQ GEMM-layout weights with awq.Dequantize (qweight
// int32 [IC, OC/8], qzeros int32 [IC/G, OC/8], scales fp16 [IC/G, OC]) and
// multiplies them with fp16 activations x [IC] by F16GEMV. With an fp16
// Out it is the W4A16 GEMV a kernel writing fp16 should match bit for bit.
func AWQGEMV(qweight, qzeros []int32, scales []uint16, x []uint16, ic, oc, group int, s Schedule) ([]float32, error) {
	w, err := awq.Dequantize(qweight, qzeros, scales, ic, oc, group)
	if err != nil {
		return nil, fmt.Errorf("awq gemv: %w", err)
	}
	return F16GEMV(w, x, ic, oc, s)
}
