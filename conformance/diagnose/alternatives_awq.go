package diagnose

import (
	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/refimpl/awq"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// Alternatives of AWQ: packing with another nibble order or zero offset,
// and quantize with the words packed another way.

// AWQ packing: the claimed layout with its nibble order or zero offset
// changed.
func awqAlternatives() []Alternative {
	run := func(t Task, edit func(l *awq.Layout) bool) (ops.Tensors, bool, error) {
		l, err := awq.LayoutByName(t.Params.Get("layout", "awq"))
		if err != nil {
			return nil, false, nil
		}
		if !edit(&l) {
			return nil, false, nil
		}
		q, ok := t.Inputs["q"]
		if !ok || len(q.Shape) != 2 {
			return nil, false, nil
		}
		ic, oc := q.Shape[0], q.Shape[1]
		w, ws, err := l.PackWeight(q.Data, ic, oc)
		if err != nil {
			return nil, false, nil
		}
		out := ops.Tensors{"qweight": tensor.FromI32(ws, w)}
		if z, ok := t.Inputs["zeros"]; ok && l.Zeros.Stored && len(z.Shape) == 2 && z.Shape[0] > 0 {
			zw, zs, err := l.PackZeros(z.Data, ic, oc, ic/z.Shape[0])
			if err != nil {
				return nil, false, nil
			}
			out["qzeros"] = tensor.FromI32(zs, zw)
		}
		return out, true, nil
	}
	flip := func(o [8]int) [8]int {
		if o == awq.OrderAWQ {
			return awq.OrderSequential
		}
		return awq.OrderAWQ
	}
	return []Alternative{
		{Class: "awq-nibble-order", Doc: "weight and zero nibbles in the other order (AWQ interleaved [0,2,4,6,1,3,5,7] vs sequential)",
			Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
				return run(t, func(l *awq.Layout) bool {
					l.Weight.Order = flip(l.Weight.Order)
					l.Zeros.Packing.Order = flip(l.Zeros.Packing.Order)
					return true
				})
			}},
		{Class: "awq-weight-nibble-order", Doc: "weight nibbles only in the other order (AWQ interleaved vs sequential)",
			Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
				return run(t, func(l *awq.Layout) bool { l.Weight.Order = flip(l.Weight.Order); return true })
			}},
		{Class: "gptq-zero-minus-one", Doc: "zero points stored minus one (the GPTQ v1 convention)",
			Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
				return run(t, func(l *awq.Layout) bool {
					if !l.Zeros.Stored || l.Zeros.Offset != 0 {
						return false
					}
					l.Zeros.Offset = -1
					return true
				})
			}},
		{Class: "gptq-zero-offset-missing", Doc: "zero points stored as is where the layout stores them minus one",
			Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
				return run(t, func(l *awq.Layout) bool {
					if !l.Zeros.Stored || l.Zeros.Offset == 0 {
						return false
					}
					l.Zeros.Offset = 0
					return true
				})
			}},
	}
}

// AWQ quantizers write the vLLM GEMM layout (AutoAWQ order, zero points
// stored as is). The same layout classes as for awq.pack: the claimed
// quantizer rerun, its nibbles packed in the sequential order or its zero
// points stored minus one (modulo 16, as a 4-bit field holds it).
// AutoAWQ's repack values are packed unmasked, as its from_linear does
// (awq.Quantized.PackAutoAWQ).
func awqQuantizeAlternatives() []Alternative {
	run := func(t Task, wOrder, zOrder [8]int, zOff int) (ops.Tensors, bool, error) {
		qz, err := awq.QuantizerByName(t.Params.Get("quantizer", "forge"))
		w, ic, oc, g, ok := awqQuantizeShape(t)
		sc, oks := t.Reference["scales"]
		if err != nil || !ok || !oks {
			return nil, false, nil
		}
		q, err := awq.Quantize(w.Bits16(), ic, oc, g, qz)
		if err != nil {
			return nil, false, nil
		}
		vals := make([]int32, len(q.Q))
		for i, v := range q.Q {
			vals[i] = int32(v)
		}
		if q.IntWeight != nil {
			vals = q.IntWeight
		}
		zs := make([]int32, len(q.Zeros))
		for i, z := range q.Zeros {
			zs[i] = (int32(z) + int32(zOff)) & 15
		}
		return ops.Tensors{"qweight": packWords(vals, ic, oc, wOrder), "qzeros": packWords(zs, ic/g, oc, zOrder), "scales": sc}, true, nil
	}
	awqO, seq := awq.OrderAWQ, awq.OrderSequential
	return []Alternative{
		{Class: "awq-nibble-order", Doc: "weight and zero nibbles packed sequentially instead of in the AWQ order [0,2,4,6,1,3,5,7]",
			Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) { return run(t, seq, seq, 0) }},
		{Class: "awq-weight-nibble-order", Doc: "weight nibbles only packed sequentially instead of in the AWQ order [0,2,4,6,1,3,5,7]",
			Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) { return run(t, seq, awqO, 0) }},
		{Class: "gptq-zero-minus-one", Doc: "zero points stored minus one (the GPTQ v1 convention), modulo 16",
			Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) { return run(t, awqO, awqO, -1) }},
	}
}

// packWords packs v [rows, cols] as int32 [rows, cols/8]: nibble p of word
// j holds v[8j+order[p]] shifted left 4p, unmasked (values outside 0..15
// spill into the other nibbles, as AutoAWQ's from_linear lets them).
func packWords(v []int32, rows, cols int, order [8]int) tensor.Tensor {
	out := make([]int32, rows*cols/8)
	for r := 0; r < rows; r++ {
		for j := 0; j < cols/8; j++ {
			var w uint32
			for p, e := range order {
				w |= uint32(v[r*cols+8*j+e]) << (4 * p)
			}
			out[r*cols/8+j] = int32(w)
		}
	}
	return tensor.FromI32([]int{rows, cols / 8}, out)
}
