package mutants

import (
	"math"

	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// Faulty AWQ ops the suites' mutants run: the GEMM-layout dequantization
// with another nibble order or zero point, and the forge quantizer with the
// scale cast toward zero or a reciprocal multiply.

// awqDequant is vLLM's AWQ dequantization (GEMM layout) written out:
// nibble p of a word holds column 8j+order[p]; w = fp16((u - (z+zeroPlus)) * s),
// the product correctly rounded; negZero keeps a -0 product (triton),
// otherwise -0 becomes +0 (the CUDA kernel's fma with +0); zeroIgnored uses
// the implicit zero point 8.
func awqDequant(order [8]int, zeroPlus int, negZero, zeroIgnored bool) func(ops.Params, ops.Tensors) (ops.Tensors, error) {
	return func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
		qw, qz, sc := in["qweight"], in["qzeros"], in["scales"]
		if err := qw.Expect("qweight", tensor.I32, -1, -1); err != nil {
			return nil, err
		}
		ic, oc := qw.Shape[0], 8*qw.Shape[1]
		g := ic / sc.Shape[0]
		words, zw, s := qw.I32(), qz.I32(), sc.Bits16()
		nib := func(w int32, col int) int {
			for p, c := range order {
				if c == col%8 {
					return int(uint32(w) >> (4 * p) & 15)
				}
			}
			panic("order")
		}
		out := make([]uint16, ic*oc)
		for k := 0; k < ic; k++ {
			for n := 0; n < oc; n++ {
				u := nib(words[k*oc/8+n/8], n)
				z := (nib(zw[(k/g)*oc/8+n/8], n) + zeroPlus) & 15
				if zeroIgnored {
					z = 8
				}
				v := float32(u-z) * half.DecodeFP16(s[(k/g)*oc+n])
				h := half.EncodeFP16(v)
				switch {
				case v != v:
					h = 0x7FFF // NVIDIA's canonical fp16 NaN
				case h == 0x8000 && !negZero:
					h = 0
				}
				out[k*oc+n] = h
			}
		}
		return ops.Tensors{"w": tensor.FromBits16(tensor.F16, []int{ic, oc}, out)}, nil
	}
}

// awqForge is the forge quantizer with the scale cast toward zero (rz) or
// the division done as a reciprocal multiply (rcp).
func awqForge(rz, rcp bool) func(ops.Params, ops.Tensors) (ops.Tensors, error) {
	return func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
		w := in["w"]
		ic, oc := w.Shape[0], w.Shape[1]
		g, err := p.Int("group", 128)
		if err != nil {
			return nil, err
		}
		wb := w.Bits16()
		qw := make([]int32, ic*oc/8)
		qz := make([]int32, ic/g*oc/8)
		sc := make([]uint16, ic/g*oc)
		// Zero points are all 8: nibble p of every zero word.
		for i := range qz {
			qz[i] = -0x77777778 // 0x88888888: every nibble 8
		}
		for grp := 0; grp < ic/g; grp++ {
			for n := 0; n < oc; n++ {
				var amax float32
				for k := grp * g; k < (grp+1)*g; k++ {
					amax = max(amax, float32(math.Abs(float64(half.DecodeFP16(wb[k*oc+n])))))
				}
				s := half.EncodeFP16(amax / 7)
				if rz && half.DecodeFP16(s) > amax/7 {
					s--
				}
				sc[grp*oc+n] = s
				sf := half.DecodeFP16(s)
				for k := grp * g; k < (grp+1)*g; k++ {
					u := 8
					if sf != 0 {
						x := half.DecodeFP16(wb[k*oc+n])
						q := float32(0)
						if rcp {
							q = x * (1 / sf)
						} else {
							q = x / sf
						}
						u += int(math.Max(-8, math.Min(7, math.RoundToEven(float64(q)))))
					}
					// Column n sits at nibble (n%2)*4 + (n%8)/2 of its word.
					qw[k*oc/8+n/8] |= int32(uint32(u) << (4 * ((n%2)*4 + (n%8)/2)))
				}
			}
		}
		return ops.Tensors{
			"qweight": tensor.FromI32([]int{ic, oc / 8}, qw),
			"qzeros":  tensor.FromI32([]int{ic / g, oc / 8}, qz),
			"scales":  tensor.FromBits16(tensor.F16, []int{ic / g, oc}, sc),
		}, nil
	}
}
