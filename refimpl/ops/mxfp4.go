package ops

import (
	"fmt"

	"github.com/bitexact/bitexact/refimpl/e8m0"
	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/mxfp4"
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
		Name:    "mxfp4.dequantize",
		Doc:     "MXFP4 to float32: e2m1(c) * 2^(scale-127), NaN blocks for scale 0xFF (bits per the nan convention)",
		Params:  map[string]string{},
		Inputs:  []string{"packed", "scales"},
		Outputs: []string{"y"},
		Run:     runMXFP4Dequantize,
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
	nan, err := nanConv(p)
	if err != nil {
		return nil, err
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
	y, err := mxfp4.DequantizeNaN(mxfp4.Quantized{Rows: m, Cols: k, Packed: packed.Data, Scales: scales.Data}, nan)
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
