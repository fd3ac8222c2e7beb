package diagnose

import (
	"math"
	"strconv"
	"strings"

	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/fp8"
	"github.com/bitexact/bitexact/refimpl/nvfp4"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// Alternatives of NVFP4 quantize: every element and block-scale rule
// recipe, and the quantizer written out step by step with a fault.

var elementRules = map[nvfp4.ElementRule]string{
	nvfp4.DivDequantScale:         "div-dequant-scale: x / float32(s/g)",
	nvfp4.MulRcpRcp:               "mul-rcp: x * (1 / (s * (1/g))), reciprocal multiply",
	nvfp4.MulRcpPerTensorDivScale: "mul-rcp-pertensor: x * ((1/p) / s), reciprocal multiply",
	nvfp4.DivPerTensorTimesScale:  "div-pertensor-times-scale: x / (p * s), division",
}

var blockScaleRules = map[nvfp4.BlockScaleRule]string{
	nvfp4.DivSixMulGlobal:      "div6-mul-global: (amax / 6) * g, division",
	nvfp4.MulRcpSixMulGlobal:   "mul-rcp6-mul-global: g * (amax * (1/6)), reciprocal multiply",
	nvfp4.DivSixDivPerTensor:   "div6-div-pertensor: (amax / 6) / p",
	nvfp4.DivSixTimesPerTensor: "div6-times-pertensor: amax / (6 * p)",
}

func nvfp4Alternatives(against string) []Alternative {
	base, err := nvfp4.LookupRecipe(strings.SplitN(strings.TrimPrefix(against, "recipe="), ",", 2)[0])
	if err != nil {
		base = nvfp4.Canonical
	}
	var alts []Alternative
	add := func(class, doc string, r nvfp4.Recipe) {
		alts = append(alts, Alternative{Class: class, Doc: doc, Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
			return nvfp4Run(t, r)
		}})
	}
	// Element and block-scale rules come in pairs per per-tensor kind
	// (division vs multiplication by a reciprocal).
	pairsE := map[nvfp4.ElementRule]nvfp4.ElementRule{
		nvfp4.DivDequantScale: nvfp4.MulRcpRcp, nvfp4.MulRcpRcp: nvfp4.DivDequantScale,
		nvfp4.MulRcpPerTensorDivScale: nvfp4.DivPerTensorTimesScale, nvfp4.DivPerTensorTimesScale: nvfp4.MulRcpPerTensorDivScale,
	}
	pairsB := map[nvfp4.BlockScaleRule]nvfp4.BlockScaleRule{
		nvfp4.DivSixMulGlobal: nvfp4.MulRcpSixMulGlobal, nvfp4.MulRcpSixMulGlobal: nvfp4.DivSixMulGlobal,
		nvfp4.DivSixDivPerTensor: nvfp4.DivSixTimesPerTensor, nvfp4.DivSixTimesPerTensor: nvfp4.DivSixDivPerTensor,
	}
	r := base
	r.Element = pairsE[base.Element]
	add("element-rule:"+strings.SplitN(elementRules[r.Element], ":", 2)[0], "element scaling "+elementRules[r.Element]+" instead of "+elementRules[base.Element], r)
	r = base
	r.BlockScale = pairsB[base.BlockScale]
	add("block-scale-rule:"+strings.SplitN(blockScaleRules[r.BlockScale], ":", 2)[0], "block scale "+blockScaleRules[r.BlockScale]+" instead of "+blockScaleRules[base.BlockScale], r)
	r = base
	r.Element = pairsE[base.Element]
	r.BlockScale = pairsB[base.BlockScale]
	add("reciprocal-vs-division:both", "both the block-scale and the element path swap division and reciprocal multiplication", r)
	r = base
	if base.ScaleCast.Saturate {
		r.ScaleCast = fp8.NoSat
		add("scale-cast:nosat", "E4M3 block-scale cast without saturation", r)
	} else {
		r.ScaleCast = fp8.Satfinite
		add("scale-cast:satfinite", "E4M3 block-scale cast with saturation", r)
	}
	for _, p := range fp4.Profiles() {
		if p.Name == base.FP4.Name || p.Name == "cutlass" {
			continue // cutlass equals sw-sm121 on every input
		}
		r = base
		r.FP4 = p
		add("e2m1-profile:"+p.Name, "E2M1 elements rounded as "+profileDoc("e2m1.encode", p.Name), r)
	}
	// Two changes the recipe cannot express as data, computed by
	// nvfp4Steps: a block-scale cast that truncates, and the element
	// division x/d done as x*(1/d). nvfp4Steps writes out the reference
	// recipes only: a library recipe (machine NaN bits, the library's own
	// casts) gets the data alternatives above.
	if base.Arith != nvfp4.CanonicalNaN {
		addZeroPositive(base, add)
		return alts
	}
	alts = append(alts,
		Alternative{Class: "scale-cast:rz", Doc: "E4M3 block-scale cast rounding toward zero (truncating) instead of to nearest even; overflow to 448",
			Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) { return nvfp4Steps(t, base, true, false) }})
	if base.Element == nvfp4.DivDequantScale {
		alts = append(alts, Alternative{Class: "element-rule:mul-rcp-d", Doc: "element scaling x * float32(1/d) with d = float32(s/g), instead of x / d",
			Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) { return nvfp4Steps(t, base, false, true) }})
	}
	if base.PerTensor == nvfp4.EncodeScale {
		alts = append(alts, Alternative{Class: "per-tensor-rule:rcp-of-decode", Doc: "per-tensor value 1/float32(amax/2688), the reciprocal of the decode scale, instead of float32(2688/amax)",
			Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
				return nvfp4StepsGlobal(t, base, false, false, func(amax float32) float32 {
					g := 1 / (amax / nvfp4.GlobalNumerator)
					return min(g, math.MaxFloat32)
				})
			}})
	}
	addZeroPositive(base, add)
	return alts
}

// addZeroPositive adds, through add (which appends to the caller's list),
// the alternative that never writes the -0 code.
func addZeroPositive(base nvfp4.Recipe, add func(class, doc string, r nvfp4.Recipe)) {
	zp := base.FP4
	zp.Name += "-zero-positive"
	zp.Zero = fp4.ZeroPositive
	r := base
	r.FP4 = zp
	add("negative-zero-cleared", "E2M1 elements of magnitude zero always +0 (the -0 code never produced)", r)
}

// nvfp4Run is nvfp4.quantize under a recipe given as data (op outputs).
func nvfp4Run(t Task, r nvfp4.Recipe) (ops.Tensors, bool, error) {
	x, ok := t.Inputs["x"]
	if !ok || x.DType != tensor.F32 || len(x.Shape) != 2 {
		return nil, false, nil
	}
	m, k := x.Shape[0], x.Shape[1]
	var q nvfp4.Quantized
	var err error
	if g, ok := t.Params["global"]; ok {
		f, perr := strconv.ParseFloat(g, 32)
		if perr != nil {
			return nil, false, perr
		}
		q, err = nvfp4.QuantizeWithGlobal(x.F32(), m, k, float32(f), r)
	} else {
		q, err = nvfp4.Quantize(x.F32(), m, k, r)
	}
	if err != nil {
		return nil, false, err
	}
	scales := tensor.FromU8([]int{m, k / nvfp4.BlockSize}, q.Scales)
	if t.Params["swizzle"] == "1" {
		sw, err := nvfp4.Swizzle(q.Scales, m, k/nvfp4.BlockSize)
		if err != nil {
			return nil, false, err
		}
		scales = tensor.FromU8([]int{len(sw)}, sw)
	}
	scales.Logical = "e4m3"
	packed := tensor.FromU8([]int{m, k / 2}, q.Packed)
	packed.Logical = "e2m1x2"
	return ops.Tensors{"packed": packed, "scales": scales, "global": tensor.FromF32([]int{1}, []float32{q.Global})}, true, nil
}

// nvfp4Steps is nvfp4.quantize under recipe r written out step by step
// (the formulas of refimpl/nvfp4's Recipe docs), with the E4M3 block-scale
// cast rounding toward zero (rz) or the DivDequantScale element division
// done as a multiplication by the correctly rounded reciprocal (rcp; a zero
// d still gives x*0, as guarded kernels do). With neither it equals
// nvfp4.QuantizeWithGlobal (a test holds it to that on the golden set).
func nvfp4Steps(t Task, r nvfp4.Recipe, rz, rcp bool) (ops.Tensors, bool, error) {
	return nvfp4StepsGlobal(t, r, rz, rcp, nil)
}

// nvfp4StepsGlobal is nvfp4Steps with the per-tensor value computed from
// the tensor amax by global, when not nil and the task does not fix it.
func nvfp4StepsGlobal(t Task, r nvfp4.Recipe, rz, rcp bool, global func(amax float32) float32) (ops.Tensors, bool, error) {
	x, ok := t.Inputs["x"]
	if !ok || x.DType != tensor.F32 || len(x.Shape) != 2 || x.Shape[1]%nvfp4.BlockSize != 0 {
		return nil, false, nil
	}
	m, k := x.Shape[0], x.Shape[1]
	xs := x.F32()
	var g float32
	if gs, ok := t.Params["global"]; ok {
		f, err := strconv.ParseFloat(gs, 32)
		if err != nil {
			return nil, false, err
		}
		g = float32(f)
	} else if global != nil {
		g = global(nvfp4.TensorAmax(xs))
	} else {
		g = nvfp4.GlobalFromAmax(nvfp4.TensorAmax(xs), r)
	}
	canon := func(v float32) float32 {
		if v != v {
			return math.Float32frombits(0x7fc00000)
		}
		return v
	}
	scales := make([]uint8, len(xs)/nvfp4.BlockSize)
	packed := make([]uint8, len(xs)/2)
	for blk := range scales {
		bx := xs[blk*nvfp4.BlockSize : (blk+1)*nvfp4.BlockSize]
		var b float32
		nan := false
		for _, v := range bx {
			a := float32(math.Abs(float64(v)))
			if v != v {
				nan = true
				continue
			}
			b = max(b, a)
		}
		if nan && r.BlockAmax == nvfp4.PropagateNaN {
			b = canon(float32(math.NaN()))
		}
		var tv float32
		switch r.BlockScale {
		case nvfp4.DivSixMulGlobal:
			tv = float32(b/nvfp4.E2M1Max) * g
		case nvfp4.MulRcpSixMulGlobal:
			tv = g * float32(b*float32(1.0/6.0))
		case nvfp4.DivSixDivPerTensor:
			tv = float32(b/nvfp4.E2M1Max) / g
		case nvfp4.DivSixTimesPerTensor:
			tv = b / float32(nvfp4.E2M1Max*g)
		}
		tv = canon(tv)
		if r.ScaleMin > 0 && tv == tv {
			tv = min(max(tv, r.ScaleMin), nvfp4.E4M3Max)
		}
		if r.ZeroScaleOne && tv == 0 {
			tv = 1
		}
		sc := fp8.E4M3.Encode(tv, r.ScaleCast)
		if rz && tv == tv && !math.IsInf(float64(tv), 0) {
			// Round toward zero: step down from a code above |t|; a
			// finite t past the range truncates to 448.
			if v := fp8.E4M3.Decode(sc); v != v {
				sc = sc&0x80 | 0x7e
			} else if float32(math.Abs(float64(v))) > float32(math.Abs(float64(tv))) {
				sc--
			}
		}
		scales[blk] = sc
		s := fp8.E4M3.Decode(sc)
		var q [nvfp4.BlockSize]float32
		for i, v := range bx {
			switch r.Element {
			case nvfp4.MulRcpRcp:
				var o float32
				if s != 0 {
					o = canon(1 / float32(s*float32(1/g)))
				}
				q[i] = canon(v * o)
			case nvfp4.MulRcpPerTensorDivScale:
				q[i] = canon(v * canon(float32(1/g)/s))
			case nvfp4.DivPerTensorTimesScale:
				q[i] = canon(v / canon(g*s))
			default:
				d := canon(s / g)
				switch {
				case d == 0:
					q[i] = canon(v * 0)
				case rcp:
					q[i] = canon(v * canon(1/d))
				default:
					q[i] = canon(v / d)
				}
			}
		}
		for i := 0; i < nvfp4.BlockSize; i += 2 {
			packed[(blk*nvfp4.BlockSize+i)/2] = r.FP4.Encode(q[i])&0xF | r.FP4.Encode(q[i+1])<<4
		}
	}
	sct := tensor.FromU8([]int{m, k / nvfp4.BlockSize}, scales)
	if t.Params["swizzle"] == "1" {
		sw, err := nvfp4.Swizzle(scales, m, k/nvfp4.BlockSize)
		if err != nil {
			return nil, false, err
		}
		sct = tensor.FromU8([]int{len(sw)}, sw)
	}
	sct.Logical = "e4m3"
	pt := tensor.FromU8([]int{m, k / 2}, packed)
	pt.Logical = "e2m1x2"
	return ops.Tensors{"packed": pt, "scales": sct, "global": tensor.FromF32([]int{1}, []float32{g})}, true, nil
}
