package ops

import (
	"fmt"
	"math"

	"github.com/bitexact/bitexact/refimpl/e8m0"
	"github.com/bitexact/bitexact/refimpl/ggml"
	"github.com/bitexact/bitexact/refimpl/nanconv"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// e8m0ScaleElems are the element formats known to e8m0.shared_scale: largest
// normal exponent and largest value.
var e8m0ScaleElems = map[string]struct {
	emax int
	max  float32
}{
	"e2m1": {2, 6},
}

func init() {
	register(Op{
		Name:     "e8m0.encode",
		Doc:      "float32 (or F16/BF16 x with parameter input, widened exactly to float32 first) -> E8M0 codes under a named rounding",
		Params:   map[string]string{"rounding": "rz | rp | torch | ml_dtypes (required)", "input": inputParam},
		Defaults: Params{"input": "fp32"},
		Choices:  map[string][]Choice{"rounding": roundingChoices()},
		Inputs:   []string{"x"},
		Outputs:  []string{"codes"},
		Run: func(p Params, in Tensors) (Tensors, error) {
			roundingName, err := param8(p, "rounding")
			if err != nil {
				return nil, err
			}
			r, err := e8m0.LookupRounding(roundingName)
			if err != nil {
				return nil, err
			}
			return encodeCodes(p, in["x"], "e8m0", "e8m0/"+r.Name, r.Encode)
		},
	})
	register(withNaN(Op{
		Name: "e8m0.decode",
		Doc:  "E8M0 codes -> exact float32 2^(c-127) (0x00 -> 2^-127; 0xFF -> NaN 0x7fc00000, or +Inf under profile ggml)",
		Params: map[string]string{"profile": "ocp (default; the OCP MX spec: 0xFF is NaN) | " +
			"ggml (ggml_e8m0_to_fp32, whose NaN branch is commented out: 0xFF -> +Inf, recorded from ggml compiled unmodified)"},
		Defaults: Params{"profile": "ocp"},
		Inputs:   []string{"codes"},
		Outputs:  []string{"x"},
		Run: func(p Params, in Tensors) (Tensors, error) {
			c := in["codes"]
			if err := checkCodesU8(c, "codes", "e8m0"); err != nil {
				return nil, err
			}
			nan, err := nanConv(p)
			if err != nil {
				return nil, err
			}
			var decode func(uint8) float32
			switch name := p["profile"]; name {
			case "ocp":
				decode = func(c uint8) float32 {
					if c == 0xFF {
						return nan.NaN(math.Float32bits(e8m0.Decode(c)), nanconv.CarriedE8M0)
					}
					return e8m0.Decode(c)
				}
			case "ggml":
				decode = ggml.E8M0ToFP32
			default:
				return nil, fmt.Errorf("unknown e8m0.decode profile %q (profiles: ocp, ggml)", name)
			}
			v := make([]float32, len(c.Data))
			for i, ci := range c.Data {
				v[i] = decode(ci)
			}
			return Tensors{"x": tensor.FromF32(c.Shape, v)}, nil
		},
	}))
	register(Op{
		Name: "e8m0.shared_scale",
		Doc:  "MX block absolute maximum (float32) -> E8M0 shared scale code",
		Params: map[string]string{
			"mode": "floor | ceil | even | rceil, or a recorded library's scale: torchao-0.17-floor, torchao-0.17-ceil, torchao-0.17-even, torchao-0.17-rceil, modelopt-5a4242fa-cpu, modelopt-5a4242fa-cuda, microxcaling-7bc41952, compressed-tensors-ac8e2ba8-cpu, compressed-tensors-ac8e2ba8-cuda (required)",
			"elem": "element format: e2m1 (default; emax 2, max 6)",
		},
		Defaults: Params{"elem": "e2m1"},
		Choices:  map[string][]Choice{"mode": sharedScaleModeChoices()},
		Inputs:   []string{"amax"},
		Outputs:  []string{"scale"},
		Run: func(p Params, in Tensors) (Tensors, error) {
			modeName, err := param8(p, "mode")
			if err != nil {
				return nil, err
			}
			m, err := e8m0.LookupSharedScaleMode(modeName)
			if err != nil {
				return nil, err
			}
			name := p["elem"]
			el, ok := e8m0ScaleElems[name]
			if !ok {
				return nil, fmt.Errorf("unknown elem %q (known: e2m1)", name)
			}
			a := in["amax"]
			if err := a.Expect("amax", tensor.F32); err != nil {
				return nil, err
			}
			v := a.F32()
			c := make([]uint8, len(v))
			for i, ai := range v {
				c[i] = e8m0.SharedScale(ai, m, el.emax, el.max)
			}
			out := tensor.FromU8(a.Shape, c)
			out.Logical = "e8m0"
			return Tensors{"scale": out}, nil
		},
	})
}

// checkCodesU8 checks a U8 tensor of codes whose Logical format, when set,
// must be logical.
func checkCodesU8(t tensor.Tensor, name, logical string) error {
	if err := t.Expect(name, tensor.U8); err != nil {
		return err
	}
	if t.Logical != "" && t.Logical != logical {
		return fmt.Errorf("tensor %q: logical format %q, want %q", name, t.Logical, logical)
	}
	return nil
}

// param8 returns a required parameter of the fp8 and e8m0 ops.
func param8(p Params, key string) (string, error) {
	v, ok := p[key]
	if !ok {
		return "", fmt.Errorf("missing parameter %q", key)
	}
	return v, nil
}
