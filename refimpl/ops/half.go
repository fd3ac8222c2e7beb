package ops

import (
	"fmt"

	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

func init() {
	for _, h := range []struct {
		family string
		dtype  tensor.DType
		enc    func(half.Profile, float32) uint16
		dec    func(uint16) float32
	}{
		{"bf16", tensor.BF16, half.Profile.EncodeBF16, half.DecodeBF16},
		{"fp16", tensor.F16, half.Profile.EncodeFP16, half.DecodeFP16},
	} {
		register(Op{
			Name: h.family + ".encode",
			Doc: "float32 (or F16/BF16 x with parameter input, widened exactly to float32 first) -> " + string(h.dtype) + ", nearest even, overflow to Inf (satfinite: to max finite); NaN per profile " +
				"(rne: quiet, sign and payload kept; canonical-nan: 0x7FFF; sign-nan: sign | quiet NaN; torch-cpu, bf16: 0xFFFF; numpy, fp16: payload kept unquieted)",
			Params:   map[string]string{"profile": "rne (default) | canonical-nan | sign-nan | satfinite | torch-cpu (bf16) | numpy (fp16)", "input": inputParam},
			Defaults: Params{"profile": half.RNE.Name, "input": "fp32"},
			Choices:  map[string][]Choice{"profile": halfChoices(h.family)},
			Inputs:   []string{"x"},
			Outputs:  []string{"y"},
			Run: func(p Params, in Tensors) (Tensors, error) {
				x, err := widenInput(p, in["x"])
				if err != nil {
					return nil, err
				}
				if err := x.Expect("x", tensor.F32); err != nil {
					return nil, err
				}
				prof, err := half.LookupProfile(p["profile"])
				if err != nil {
					return nil, err
				}
				if !prof.Has(h.family) {
					return nil, fmt.Errorf("%s.encode: profile %s is defined for %s only", h.family, prof.Name, prof.Formats)
				}
				v := x.F32()
				b := make([]uint16, len(v))
				for i, xi := range v {
					b[i] = h.enc(prof, xi)
				}
				return Tensors{"y": tensor.FromBits16(h.dtype, x.Shape, b)}, nil
			},
		})
		register(Op{
			Name:    h.family + ".decode",
			Doc:     string(h.dtype) + " -> exact float32",
			Params:  map[string]string{},
			Inputs:  []string{"y"},
			Outputs: []string{"x"},
			Run: func(p Params, in Tensors) (Tensors, error) {
				y := in["y"]
				if err := y.Expect("y", h.dtype); err != nil {
					return nil, err
				}
				b := y.Bits16()
				v := make([]float32, len(b))
				for i, bi := range b {
					v[i] = h.dec(bi)
				}
				return Tensors{"x": tensor.FromF32(y.Shape, v)}, nil
			},
		})
	}
}
