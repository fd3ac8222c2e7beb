package ops

import (
	"fmt"
	"strings"

	"github.com/bitexact/bitexact/refimpl/e8m0"
	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/mxfp4"
	"github.com/bitexact/bitexact/refimpl/nanconv"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

func init() {
	register(Op{
		Name: "mxfp4.quantize",
		Doc:  "OCP MX v1.0 MXFP4 quantization of x [M,K] (K%32==0; F32, or F16/BF16 with parameter input, widened exactly to float32 first): E2M1 pairs and E8M0 scales per 32",
		Params: map[string]string{
			"mode":    "E8M0 scale rounding: floor (default, OCP), ceil, even, rceil",
			"profile": "E2M1 element profile: nvidia (default), sw-sm121, ml_dtypes, cutlass, ties-away, ties-toward-zero, ggml; or a recorded library recipe that replaces the element arithmetic: torchao-0.17-cpu, torchao-0.17-cuda, torchao-0.18-cpu, torchao-0.18-cuda, torchao-36027d82-cpu, torchao-36027d82-cuda (any mode); modelopt-5a4242fa-cpu, modelopt-5a4242fa-cuda (mode rceil); microxcaling-7bc41952-nearest, microxcaling-7bc41952-even, microxcaling-7bc41952-floor (mode floor); compressed-tensors-ac8e2ba8-cpu, compressed-tensors-ac8e2ba8-cuda (mode even)",
			"input":   inputParam,
		},
		Defaults: Params{"mode": e8m0.Floor.Name, "profile": fp4.NVIDIA.Name, "input": "fp32"},
		Choices:  map[string][]Choice{"mode": scaleModeChoices(), "profile": mxfp4ProfileChoices()},
		Inputs:   []string{"x"},
		Outputs:  []string{"packed", "scales"},
		Run:      runMXFP4Quantize,
	})
	register(withNaN(Op{
		Name: "mxfp4.dequantize",
		Doc:  "MXFP4 to float32: e2m1(c) * 2^(scale-127), NaN blocks for scale 0xFF (bits per the nan convention), or a recorded library's dequantize",
		Params: map[string]string{
			"profile": "the dequantizer: default (the reference), or a library's recorded on one device, NaN bits included (no nan convention applies): " + mxfp4DequantNames(),
		},
		Defaults: Params{"profile": mxfp4.DequantDefault.Name},
		Choices:  map[string][]Choice{"profile": mxfp4DequantChoices()},
		Inputs:   []string{"packed", "scales"},
		Outputs:  []string{"y"},
		Run:      runMXFP4Dequantize,
	}))
}

func runMXFP4Quantize(p Params, in Tensors) (Tensors, error) {
	mode, err := e8m0.LookupScaleMode(p["mode"])
	if err != nil {
		return nil, err
	}
	opt := mxfp4.Options{Mode: mode}
	if r, ok := mxfp4.LookupRecipe(p["profile"]); ok {
		opt.Recipe = r
		opt.Input, _ = mxfp4.LookupInput(p.Get("input", "fp32")) // widenInput checks it
	} else if opt.FP4, err = blkFP4Profile(p); err != nil {
		return nil, err
	}
	x, err := widenInput(p, in["x"])
	if err != nil {
		return nil, err
	}
	if err := x.Expect("x", tensor.F32, -1, -1); err != nil {
		return nil, err
	}
	m, k := x.Shape[0], x.Shape[1]
	if k%mxfp4.BlockSize != 0 {
		return nil, fmt.Errorf("tensor \"x\": K = %d is not a multiple of %d", k, mxfp4.BlockSize)
	}
	q, err := mxfp4.Quantize(x.F32(), m, k, opt)
	if err != nil {
		return nil, err
	}
	packed := tensor.FromU8([]int{m, k / 2}, q.Packed)
	packed.Logical = "e2m1x2"
	scales := tensor.FromU8([]int{m, k / mxfp4.BlockSize}, q.Scales)
	scales.Logical = "e8m0"
	return Tensors{"packed": packed, "scales": scales}, nil
}

func runMXFP4Dequantize(p Params, in Tensors) (Tensors, error) {
	name := p.Get("profile", mxfp4.DequantDefault.Name)
	dq, ok := mxfp4.LookupDequantizer(name)
	if !ok {
		return nil, fmt.Errorf("unknown profile %q (profiles: default, %s)", name, mxfp4DequantNames())
	}
	nan, err := nanConv(p)
	if err != nil {
		return nil, err
	}
	if dq.Recorded() && nan != nanconv.Canonical {
		// A library's dequantizer is a record of that library on one
		// device, NaN bits included: no other convention applies to it.
		return nil, fmt.Errorf("profile %s is recorded with its own NaN bits: nan=%s does not apply to it", dq.Name, nan.Name)
	}
	packed, scales := in["packed"], in["scales"]
	if err := packed.Expect("packed", tensor.U8, -1, -1); err != nil {
		return nil, err
	}
	if err := blkLogical("packed", packed, "e2m1x2"); err != nil {
		return nil, err
	}
	m, k := packed.Shape[0], 2*packed.Shape[1]
	if k%mxfp4.BlockSize != 0 {
		return nil, fmt.Errorf("tensor \"packed\": K = 2*%d is not a multiple of %d", packed.Shape[1], mxfp4.BlockSize)
	}
	if err := scales.Expect("scales", tensor.U8, m, k/mxfp4.BlockSize); err != nil {
		return nil, err
	}
	if err := blkLogical("scales", scales, "e8m0"); err != nil {
		return nil, err
	}
	q := mxfp4.Quantized{Rows: m, Cols: k, Packed: packed.Data, Scales: scales.Data}
	var y []float32
	if dq.Recorded() {
		y, err = dq.Dequantize(q)
	} else {
		y, err = mxfp4.DequantizeNaN(q, nan)
	}
	if err != nil {
		return nil, err
	}
	return Tensors{"y": tensor.FromF32([]int{m, k}, y)}, nil
}

// mxfp4ProfileChoices are the E2M1 element profiles and the recorded
// library recipes.
func mxfp4ProfileChoices() []Choice {
	cs := fp4Choices()
	for _, r := range mxfp4.Recipes() {
		cs = append(cs, Choice{r.Name, r.Summary, r.Source})
	}
	return cs
}

// mxfp4DequantChoices are mxfp4.dequantize's profiles.
func mxfp4DequantChoices() []Choice {
	var cs []Choice
	for _, d := range mxfp4.Dequantizers() {
		cs = append(cs, Choice{d.Name, d.Summary, d.Source})
	}
	return cs
}

// mxfp4DequantNames lists the recorded library dequantizers' names.
func mxfp4DequantNames() string {
	var v []string
	for _, d := range mxfp4.Dequantizers() {
		if d.Recorded() {
			v = append(v, d.Name)
		}
	}
	return strings.Join(v, ", ")
}
