package ops

import (
	"fmt"
	"math"

	"github.com/bitexact/bitexact/refimpl/fp8"
	"github.com/bitexact/bitexact/refimpl/nanconv"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

func init() {
	register(Op{
		Name: "fp8.encode",
		Doc:  "float32 (or F16/BF16 x with parameter input, widened exactly to float32 first) -> FP8 codes, nearest even, overflow/Inf/NaN per profile",
		Params: map[string]string{
			"format":  "e4m3 | e5m2 (required)",
			"profile": "satfinite | nosat | ml_dtypes (e5m2 only) (required)",
			"input":   inputParam,
		},
		Defaults: Params{"input": "fp32"},
		Choices:  map[string][]Choice{"profile": fp8Choices()},
		Inputs:   []string{"x"},
		Outputs:  []string{"codes"},
		Run: func(p Params, in Tensors) (Tensors, error) {
			formatName, err := param8(p, "format")
			if err != nil {
				return nil, err
			}
			f, err := fp8.LookupFormat(formatName)
			if err != nil {
				return nil, err
			}
			profileName, err := param8(p, "profile")
			if err != nil {
				return nil, err
			}
			prof, err := fp8.LookupProfile(profileName)
			if err != nil {
				return nil, err
			}
			if !prof.Has(f.Name) {
				return nil, fmt.Errorf("fp8.encode: profile %s is defined for %s only", prof.Name, prof.Formats)
			}
			return encodeCodes(p, in["x"], f.Name, f.Name+"/"+prof.Name, func(x float32) uint8 { return f.Encode(x, prof) })
		},
	})
	register(withNaN(Op{
		Name:    "fp8.decode",
		Doc:     "FP8 codes -> exact float32 (NaN codes -> quiet NaN 0x7fc00000 with the code's sign, or per the nan convention)",
		Params:  map[string]string{"format": "e4m3 | e5m2 (required)"},
		Inputs:  []string{"codes"},
		Outputs: []string{"x"},
		Run: func(p Params, in Tensors) (Tensors, error) {
			formatName, err := param8(p, "format")
			if err != nil {
				return nil, err
			}
			f, err := fp8.LookupFormat(formatName)
			if err != nil {
				return nil, err
			}
			c := in["codes"]
			if err := checkCodesU8(c, "codes", f.Name); err != nil {
				return nil, err
			}
			nan, err := nanConv(p)
			if err != nil {
				return nil, err
			}
			v := make([]float32, len(c.Data))
			for i, ci := range c.Data {
				v[i] = f.Decode(ci)
				if f.IsNaN(ci) {
					v[i] = nan.NaN(math.Float32bits(v[i]), nanconv.CarriedFP8(ci, f.ManBits))
				}
			}
			return Tensors{"x": tensor.FromF32(c.Shape, v)}, nil
		},
	}))
}
