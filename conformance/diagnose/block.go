package diagnose

import (
	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/refimpl/block"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// blockAlternatives are the fault models a block format's description
// declares (refimpl/block Format.Faults), for the quantize or dequantize
// suite of the format whose fixed parameters the suite's filter holds:
// each runs under the profile diagnosed against. Nothing here names a
// format.
func blockAlternatives(s *suite.Suite) []Alternative {
	var alts []Alternative
	for _, f := range block.Formats() {
		quant := f.Quantize != nil && s.Op == f.Quantize.Op && block.Match(s.Filter, f.Quantize.Params)
		dequant := s.Op == f.Dequantize.Op && block.Match(s.Filter, f.Dequantize.Params)
		if !quant && !dequant {
			continue
		}
		for _, fault := range f.Faults {
			fault, f := fault, f
			switch {
			case quant && fault.Quantize != nil:
				alts = append(alts, Alternative{Class: fault.Class, Doc: fault.Doc,
					Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
						x, ok := t.Inputs["x"]
						if !ok || x.DType != tensor.F32 || x.Len()%f.BlockElems != 0 {
							return nil, false, nil
						}
						b, err := fault.Quantize(x.F32(), t.Params[f.ProfileParam])
						if err != nil {
							return nil, false, nil
						}
						out := tensor.FromU8([]int{len(b) / f.BlockBytes, f.BlockBytes}, b)
						out.Logical = f.Suite
						return ops.Tensors{"blocks": out}, true, nil
					}})
			case dequant && fault.Dequantize != nil:
				alts = append(alts, Alternative{Class: fault.Class, Doc: fault.Doc,
					Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
						b, ok := t.Inputs["blocks"]
						if !ok || b.DType != tensor.U8 || len(b.Data)%f.BlockBytes != 0 {
							return nil, false, nil
						}
						y, err := fault.Dequantize(b.Data, t.Params[f.ProfileParam])
						if err != nil {
							return nil, false, nil
						}
						return ops.Tensors{"y": tensor.FromF32([]int{len(y)}, y)}, true, nil
					}})
			}
		}
	}
	return alts
}

// isBlockDequantize reports whether op dequantizes a block format of
// refimpl/block: its float outputs are a function of the blocks, so the
// decoder classes (signed zero, NaN sign, FTZ, a float product) apply.
func isBlockDequantize(op string) bool {
	for _, f := range block.Formats() {
		if f.Dequantize.Op == op {
			return true
		}
	}
	return false
}
