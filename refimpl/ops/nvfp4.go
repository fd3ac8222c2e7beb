package ops

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/nanconv"
	"github.com/bitexact/bitexact/refimpl/nvfp4"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

func init() {
	register(Op{
		Name: "nvfp4.quantize",
		Doc:  "NVFP4 quantization of x [M,K] (K%16==0; F32, or F16/BF16 with parameter input, widened exactly to float32 first) under a named recipe: E2M1 pairs, E4M3 scales per 16, fp32 per-tensor scale",
		Params: map[string]string{
			"recipe":  "canonical (default); the reference model vllm-model-exact-rcp; or a library recorded on a machine (<library>-<version|commit>-<cpu|cuda>): " + recipeNames(false),
			"swizzle": "0 (default): scales [M,K/16] row-major; 1: scales in the 128x4 layout, flattened",
			"global":  "per-tensor value as a float (decimal or hex, rounded to float32); default: computed from the tensor amax",
			"input":   inputParam,
		},
		Defaults: Params{"recipe": nvfp4.Canonical.Name, "swizzle": "0", "input": "fp32"},
		Choices:  map[string][]Choice{"recipe": recipeChoices()},
		Inputs:   []string{"x"},
		Outputs:  []string{"packed", "scales", "global"},
		Run:      runNVFP4Quantize,
	})
	register(withNaN(Op{
		Name: "nvfp4.dequantize",
		Doc:  "NVFP4 to float32: e2m1(c) * float32(s/g) (encode-scale recipes) or float32(s*p) (decode-scale recipes)",
		Params: map[string]string{
			"recipe":  "the recipe that produced the tensor (selects g or p, and for a library recipe that library's dequantization on its machine): canonical (default), " + recipeNames(true),
			"swizzle": "0 (default) or 1: layout of the scales input",
		},
		Defaults: Params{"recipe": nvfp4.Canonical.Name, "swizzle": "0"},
		Choices:  map[string][]Choice{"recipe": dequantRecipeChoices()},
		Inputs:   []string{"packed", "scales", "global"},
		Outputs:  []string{"y"},
		Run:      runNVFP4Dequantize,
	}))
	register(Op{
		Name:    "nvfp4.swizzle",
		Doc:     "block scales [M,Ksf] to the 128x4 tensor-core layout (zero padded to M%128, Ksf%4), flattened",
		Params:  map[string]string{},
		Inputs:  []string{"scales"},
		Outputs: []string{"swizzled"},
		Run:     runNVFP4Swizzle,
	})
	register(Op{
		Name: "nvfp4.unswizzle",
		Doc:  "inverse of nvfp4.swizzle: flattened 128x4 layout to scales [rows, sf_cols]",
		Params: map[string]string{
			"rows":    "scale rows M (required)",
			"sf_cols": "scale columns Ksf (required)",
		},
		Inputs:  []string{"swizzled"},
		Outputs: []string{"scales"},
		Run:     runNVFP4Unswizzle,
	})
}

// blkLogical rejects a tensor whose logical format is set to something
// other than want.
func blkLogical(name string, t tensor.Tensor, want string) error {
	if t.Logical != "" && t.Logical != want {
		return fmt.Errorf("tensor %q: logical format %q, want %q", name, t.Logical, want)
	}
	return nil
}

func blkSwizzleParam(p Params) (bool, error) {
	switch v := p["swizzle"]; v {
	case "0":
		return false, nil
	case "1":
		return true, nil
	default:
		return false, fmt.Errorf("parameter swizzle=%q, want 0 or 1", v)
	}
}

func blkFP4Profile(p Params) (fp4.Profile, error) {
	return fp4.Lookup(p["profile"])
}

func runNVFP4Quantize(p Params, in Tensors) (Tensors, error) {
	r, err := nvfp4.LookupRecipe(p["recipe"])
	if err != nil {
		return nil, err
	}
	return NVFP4Quantize(r, p, in)
}

// NVFP4Quantize is the nvfp4.quantize op with its recipe given instead of
// named by the "recipe" parameter (which it ignores): a caller holding a
// modified recipe, such as the mutant catalog, gets the op's validation,
// parameters and output layout unchanged.
func NVFP4Quantize(r nvfp4.Recipe, p Params, in Tensors) (Tensors, error) {
	p = p.withDefaults(registry["nvfp4.quantize"].Defaults)
	sw, err := blkSwizzleParam(p)
	if err != nil {
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
	if k%nvfp4.BlockSize != 0 {
		return nil, fmt.Errorf("tensor \"x\": K = %d is not a multiple of %d", k, nvfp4.BlockSize)
	}
	var q nvfp4.Quantized
	if g, ok := p["global"]; ok {
		f, perr := strconv.ParseFloat(g, 32)
		if perr != nil {
			return nil, fmt.Errorf("parameter global=%q is not a float", g)
		}
		q, err = nvfp4.QuantizeWithGlobal(x.F32(), m, k, float32(f), r)
	} else {
		q, err = nvfp4.QuantizeInput(x.F32(), m, k, r, nvfp4Input(p))
	}
	if err != nil {
		return nil, err
	}
	scales := tensor.FromU8([]int{m, k / nvfp4.BlockSize}, q.Scales)
	if sw {
		s, err := nvfp4.Swizzle(q.Scales, m, k/nvfp4.BlockSize)
		if err != nil {
			return nil, err
		}
		scales = tensor.FromU8([]int{len(s)}, s)
	}
	scales.Logical = "e4m3"
	packed := tensor.FromU8([]int{m, k / 2}, q.Packed)
	packed.Logical = "e2m1x2"
	return Tensors{"packed": packed, "scales": scales, "global": tensor.FromF32([]int{1}, []float32{q.Global})}, nil
}

// recipeNames lists the recipes other than canonical, comma-separated;
// dequant keeps those whose library dequantizes.
func recipeNames(dequant bool) string {
	var names []string
	for _, r := range nvfp4.Recipes() {
		if r.Name != nvfp4.Canonical.Name && (!dequant || r.Dequantizes()) {
			names = append(names, r.Name)
		}
	}
	return strings.Join(names, ", ")
}

// nvfp4Input is the dtype the parameter input names (widenInput has
// checked it).
func nvfp4Input(p Params) nvfp4.Input {
	switch p.Get("input", "fp32") {
	case "bf16":
		return nvfp4.InputBF16
	case "fp16":
		return nvfp4.InputFP16
	}
	return nvfp4.InputF32
}

func runNVFP4Dequantize(p Params, in Tensors) (Tensors, error) {
	r, err := nvfp4.LookupRecipe(p["recipe"])
	if err != nil {
		return nil, err
	}
	nan, err := nanConv(p)
	if err != nil {
		return nil, err
	}
	sw, err := blkSwizzleParam(p)
	if err != nil {
		return nil, err
	}
	packed, scales, global := in["packed"], in["scales"], in["global"]
	if err := packed.Expect("packed", tensor.U8, -1, -1); err != nil {
		return nil, err
	}
	if err := blkLogical("packed", packed, "e2m1x2"); err != nil {
		return nil, err
	}
	if err := global.Expect("global", tensor.F32, 1); err != nil {
		return nil, err
	}
	m, k := packed.Shape[0], 2*packed.Shape[1]
	if k%nvfp4.BlockSize != 0 {
		return nil, fmt.Errorf("tensor \"packed\": K = 2*%d is not a multiple of %d", packed.Shape[1], nvfp4.BlockSize)
	}
	ksf := k / nvfp4.BlockSize
	if err := blkLogical("scales", scales, "e4m3"); err != nil {
		return nil, err
	}
	sc := scales.Data
	if sw {
		if err := scales.Expect("scales", tensor.U8, nvfp4.SwizzledLen(m, ksf)); err != nil {
			return nil, err
		}
		if sc, err = nvfp4.Unswizzle(sc, m, ksf); err != nil {
			return nil, err
		}
	} else if err := scales.Expect("scales", tensor.U8, m, ksf); err != nil {
		return nil, err
	}
	q := nvfp4.Quantized{Rows: m, Cols: k, Packed: packed.Data, Scales: sc, Global: global.F32()[0]}
	var y []float32
	switch {
	case r.Dequant == nvfp4.DequantReference:
		y, err = nvfp4.DequantizeNaN(q, r.PerTensor, nan)
	case nan != nanconv.Canonical:
		// A library recipe's dequantizer is a record of that library on one
		// device, NaN bits included: no other convention applies to it.
		return nil, fmt.Errorf("recipe %s is recorded with its own NaN bits: nan=%s does not apply to it", r.Name, nan.Name)
	default:
		y, err = nvfp4.DequantizeRecipe(q, r)
	}
	if err != nil {
		return nil, err
	}
	return Tensors{"y": tensor.FromF32([]int{m, k}, y)}, nil
}

func runNVFP4Swizzle(p Params, in Tensors) (Tensors, error) {
	s := in["scales"]
	if err := s.Expect("scales", tensor.U8, -1, -1); err != nil {
		return nil, err
	}
	out, err := nvfp4.Swizzle(s.Data, s.Shape[0], s.Shape[1])
	if err != nil {
		return nil, err
	}
	t := tensor.FromU8([]int{len(out)}, out)
	t.Logical = s.Logical
	return Tensors{"swizzled": t}, nil
}

func runNVFP4Unswizzle(p Params, in Tensors) (Tensors, error) {
	rows, err := blkRequiredInt(p, "rows")
	if err != nil {
		return nil, err
	}
	cols, err := blkRequiredInt(p, "sf_cols")
	if err != nil {
		return nil, err
	}
	s := in["swizzled"]
	if err := s.Expect("swizzled", tensor.U8, -1); err != nil {
		return nil, err
	}
	out, err := nvfp4.Unswizzle(s.Data, rows, cols)
	if err != nil {
		return nil, err
	}
	t := tensor.FromU8([]int{rows, cols}, out)
	t.Logical = s.Logical
	return Tensors{"scales": t}, nil
}

func blkRequiredInt(p Params, key string) (int, error) {
	if _, ok := p[key]; !ok {
		return 0, fmt.Errorf("parameter %s is required", key)
	}
	n, err := p.Int(key, 0)
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, fmt.Errorf("parameter %s=%d is negative", key, n)
	}
	return n, nil
}
