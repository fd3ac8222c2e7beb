package diagnose

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/awq"
	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/fp8"
	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/nvfp4"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
	"github.com/bitexact/bitexact/refimpl/unary"
)

// profileDoc describes profile p of op as the behaviour a kernel author
// would recognise: the one-line summaries that refimpl declares for the
// named values p is made of (refimpl/ops Op.Choices), for a profile
// spelled by its value ("nvidia") or by "k=v,k=v"
// ("schedule=sparse-v7-nofma,scale_decode=e4m3fn").
func profileDoc(op, p string) string {
	var docs []string
	if o, err := ops.Lookup(op); err == nil {
		if c, ok := o.Choice("", p); ok {
			docs = append(docs, c.Summary)
		} else {
			for _, kv := range strings.Split(p, ",") {
				if k, v, ok := strings.Cut(kv, "="); ok {
					if c, ok := o.Choice(k, v); ok {
						docs = append(docs, c.Summary)
					}
				}
			}
		}
	}
	if len(docs) == 0 {
		return "behaves as profile " + p
	}
	return strings.Join(docs, "; ") + " (profile " + p + ")"
}

func withParams(base ops.Params, over map[string]string) ops.Params {
	p := ops.Params{}
	for k, v := range base {
		p[k] = v
	}
	for k, v := range over {
		p[k] = v
	}
	return p
}

// Alternatives lists the alternatives tried for suite s when diagnosing
// against profile against.
func Alternatives(s *suite.Suite, against string) []Alternative {
	var alts []Alternative
	// 1. Every other named profile of the suite, on every task: from the
	// golden outputs where the set has them, else through the reference.
	for _, p := range s.Profiles {
		if p == against {
			continue
		}
		p := p
		alts = append(alts, Alternative{Class: "profile:" + p, Doc: profileDoc(s.Op, p),
			Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
				if e, ok := t.Expected[p]; ok {
					return e, true, nil
				}
				out, err := s.Compute(context.Background(), golden.Native{}, t.Task, p, t.Inputs)
				if err != nil {
					return nil, false, nil // the combination does not exist for this task
				}
				return out, true, nil
			}})
	}
	// 2. The claimed or another profile's fp16 or bf16 outputs written as
	// float32: the harness wrote the right numbers in the wrong dtype.
	if has16BitOutputs(s) {
		alts = append(alts, widenedAlternatives(s, against)...)
	}
	if encodesSignedFormat(s.Op) {
		alts = append(alts, unaryAlternatives()...)
		if s.InputDTypes["x"] == "U8" { // a conversion from a peer format's codes
			alts = append(alts, Alternative{Class: "codes-reinterpreted",
				Doc:     "the input codes passed through unchanged: one FP8 format's bits read as the other's (OCP E4M3 bytes used as E4M3FNUZ, or back) instead of converting the value",
				Compute: codesReinterpreted})
		}
	}
	alts = append(alts, Alternative{Class: "ftz-inputs", Doc: "float32 subnormal inputs flushed to zero (FTZ/DAZ) before the reference computation",
		Compute: ftzInputs})
	alts = append(alts, Alternative{Class: "nibble-swap", Doc: "the two E2M1 codes of each byte swapped (element 2i in the high nibble)",
		Compute: nibbleSwap})
	switch s.Op {
	case "nvfp4.quantize":
		alts = append(alts, nvfp4Alternatives(against)...)
	case "mxfp4.quantize":
		alts = append(alts, mxfp4Alternatives()...)
		alts = append(alts, mxfp4StepAlternatives()...)
	case "awq.pack":
		alts = append(alts, awqAlternatives()...)
	case "awq.quantize":
		alts = append(alts, awqQuantizeAlternatives()...)
		alts = append(alts, awqStepAlternatives()...)
	case "sparse24.compress":
		alts = append(alts,
			Alternative{Class: "sparse24-indices-swapped", Doc: "the two 2-bit indices of each metadata nibble swapped (i1 | i0<<2), values in ascending order",
				Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) { return sparseMeta(t, false) }},
			Alternative{Class: "sparse24-descending", Doc: "kept pairs stored in descending index order: metadata indices and value nibbles both swapped",
				Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) { return sparseMeta(t, true) }})
	case "ggml.mxfp4.quantize":
		alts = append(alts, Alternative{Class: "llama-adjacent-pairs", Doc: "block_mxfp4 qs packed as adjacent pairs (q[2j] | q[2j+1]<<4) instead of llama.cpp's split halves (q[j] | q[j+16]<<4)",
			Compute: ggmlAdjacent})
	}
	alts = append(alts, blockAlternatives(s)...)
	alts = append(alts, coverageAlternatives(s)...)
	// Last: a named bug class that reproduces the results (a NaN sign
	// cleared) comes before "the NaNs follow another convention".
	return append(alts, nanAlternatives(s, against)...)
}

// has16BitOutputs reports whether some golden case of s has an F16 or
// BF16 output.
func has16BitOutputs(s *suite.Suite) bool {
	for _, t := range s.Tasks {
		for _, c := range t.Cases {
			for _, o := range c.Outputs {
				if o.DType == string(tensor.F16) || o.DType == string(tensor.BF16) {
					return true
				}
			}
		}
	}
	return false
}

// widenedAlternatives are the claimed profile's and every other profile's
// outputs with their 16-bit float tensors written as float32.
func widenedAlternatives(s *suite.Suite, against string) []Alternative {
	alts := []Alternative{{Class: "written-as-f32",
		Doc:     "the claimed profile's fp16/bf16 outputs, each value widened to float32: the kernel computes the claim; write the results file's tensor in its 16-bit dtype",
		Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) { return widened(t.Reference) }}}
	for _, p := range s.Profiles {
		if p == against {
			continue
		}
		p := p
		alts = append(alts, Alternative{Class: "written-as-f32:profile:" + p,
			Doc: "the fp16/bf16 outputs of " + profileDoc(s.Op, p) + ", each value widened to float32: the kernel computes that profile; claim it and write the results file's tensor in its 16-bit dtype",
			Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
				out, ok := t.Expected[p]
				if !ok {
					var err error
					if out, err = s.Compute(context.Background(), golden.Native{}, t.Task, p, t.Inputs); err != nil {
						return nil, false, nil
					}
				}
				return widened(out)
			}})
	}
	return alts
}

// widened returns out with every F16 and BF16 tensor converted exactly to
// F32 (same shape), or ok=false when out has none (the alternative would
// then be the profile itself).
func widened(out ops.Tensors) (ops.Tensors, bool, error) {
	w := ops.Tensors{}
	any := false
	for n, x := range out {
		var dec func(uint16) float32
		switch x.DType {
		case tensor.F16:
			dec = half.DecodeFP16
		case tensor.BF16:
			dec = half.DecodeBF16
		}
		if dec != nil {
			b := x.Bits16()
			v := make([]float32, len(b))
			for i, h := range b {
				v[i] = dec(h)
			}
			y := tensor.FromF32(x.Shape, v)
			y.Logical = x.Logical
			x, any = y, true
		}
		w[n] = x
	}
	return w, any, nil
}

// Unary code alternatives, derived from the reference codes and inputs.

// codeFormat describes a sign-magnitude code of up to 16 bits whose
// magnitude codes are ordered by value (true of E2M1, FP8, bf16 and fp16),
// so that one magnitude step is one code step.
type codeFormat struct {
	sign, mag uint16
	// man masks the mantissa: a code with magnitude in 1..man is subnormal.
	man    uint16
	decode func(uint16) float32
	// out is the op's code output; wide codes are 16-bit tensors.
	out  string
	wide bool
}

// formatOf is the code format of a unary encode op's output, from the
// description of the refimpl/unary format whose encode op is op and whose
// fixed parameters p holds (fp8.encode names its format in the required
// "format" parameter; without it there is no format to diagnose in).
func formatOf(op string, p ops.Params) (codeFormat, bool) {
	f, ok := encodedFormat(op, p)
	if !ok || f.Fields.Sign != 1 {
		return codeFormat{}, false
	}
	fl := f.Fields
	return codeFormat{
		sign:   1 << (fl.Exp + fl.Man),
		mag:    1<<(fl.Exp+fl.Man) - 1,
		man:    1<<fl.Man - 1,
		decode: func(c uint16) float32 { return f.Decode(uint32(c)) },
		out:    f.Encode.Output,
		wide:   fl.Bits() > 8,
	}, true
}

// encodedFormat finds the format that op encodes to under parameters p.
func encodedFormat(op string, p ops.Params) (unary.Format, bool) {
	for _, f := range unary.Formats() {
		if f.Encode.Op == op && paramsHold(p, f.Encode.Params) {
			return f, true
		}
	}
	return unary.Format{}, false
}

// decodedFormats lists the formats whose decode op is op, with fixed
// parameters that filter holds where filter names them (the fp8-decode
// suite decodes both FP8 formats).
func decodedFormats(op string, filter map[string]string) []unary.Format {
	var fs []unary.Format
	for _, f := range unary.Formats() {
		if f.DecodeOp.Op != op {
			continue
		}
		keep := true
		for k, v := range filter {
			if w, ok := f.DecodeOp.Params[k]; ok && w != v {
				keep = false
			}
		}
		if keep {
			fs = append(fs, f)
		}
	}
	return fs
}

// encodesSignedFormat reports whether op encodes to a sign-magnitude
// format (the unary code alternatives apply to it).
func encodesSignedFormat(op string) bool {
	for _, f := range unary.Formats() {
		if f.Encode.Op == op && f.Fields.Sign == 1 {
			return true
		}
	}
	return false
}

// paramsHold reports whether p has every key of want with its value.
func paramsHold(p ops.Params, want map[string]string) bool {
	for k, v := range want {
		if p[k] != v {
			return false
		}
	}
	return true
}

func isFinite(v float32) bool { return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) }

// mapCodes applies f(x, refCode) to every element of a unary task.
func mapCodes(s *suite.Suite, t Task, f func(cf codeFormat, x float32, c uint16) uint16) (ops.Tensors, bool, error) {
	cf, ok := formatOf(s.Op, t.Params)
	if !ok {
		return nil, false, nil
	}
	x, okx := t.Inputs["x"]
	ref, okr := t.Reference[cf.out]
	if !okx || !okr || ref.Len() != x.Len() || (ref.DType.Size() == 2) != cf.wide {
		return nil, false, nil
	}
	var xs []float32
	switch x.DType {
	case tensor.F32:
		xs = x.F32()
	case tensor.F16, tensor.BF16:
		// A 16-bit input is read as its exactly widened float32 value.
		w, _, _ := widened(ops.Tensors{"x": x})
		xs = w["x"].F32()
	case tensor.U8:
		// Codes of a peer format (the parameter input names it) are
		// read as their exact values.
		src, err := unary.LookupFormat(t.Params.Get("input", ""))
		if err != nil || src.Fields.Bits() > 8 {
			return nil, false, nil
		}
		xs = make([]float32, len(x.Data))
		for i, c := range x.Data {
			xs[i] = src.Decode(uint32(c))
		}
	default:
		return nil, false, nil
	}
	if cf.wide {
		codes := ref.Bits16()
		out := make([]uint16, len(codes))
		for i, c := range codes {
			out[i] = f(cf, xs[i], c)
		}
		r := tensor.FromBits16(ref.DType, ref.Shape, out)
		r.Logical = ref.Logical
		return ops.Tensors{cf.out: r}, true, nil
	}
	out := make([]uint8, len(ref.Data))
	for i, c := range ref.Data {
		out[i] = uint8(f(cf, xs[i], uint16(c)))
	}
	r := tensor.FromU8(ref.Shape, out)
	r.DType = ref.DType
	r.Logical = ref.Logical
	return ops.Tensors{cf.out: r}, true, nil
}

// neighbour returns the code one magnitude step from c (dir +1 or -1),
// same sign, if it is a finite value.
func neighbour(cf codeFormat, c uint16, dir int) (uint16, bool) {
	m := int(c & cf.mag)
	m += dir
	if m < 0 || m > int(cf.mag) {
		return 0, false
	}
	n := c&cf.sign | uint16(m)
	return n, isFinite(cf.decode(n))
}

// tieTo moves an exact midpoint to the neighbour of larger (away) or
// smaller magnitude.
func tieTo(away bool) func(cf codeFormat, x float32, c uint16) uint16 {
	return func(cf codeFormat, x float32, c uint16) uint16 {
		v := cf.decode(c)
		if !isFinite(x) || !isFinite(v) {
			return c
		}
		from := c
		if neg := math.Signbit(float64(x)); neg != (c&cf.sign != 0) {
			if v != 0 || !neg {
				return c
			}
			// A format without -0 (FNUZ) answers a negative input with
			// the zero code 0x00: its neighbours are those of the
			// input's sign.
			from = c | cf.sign
		}
		for _, dir := range []int{-1, 1} {
			n, ok := neighbour(cf, from, dir)
			if !ok {
				continue
			}
			w := cf.decode(n)
			if mid := (math.Abs(float64(v)) + math.Abs(float64(w))) / 2; mid != math.Abs(float64(x)) {
				continue
			}
			if (math.Abs(float64(w)) > math.Abs(float64(v))) == away {
				return n
			}
		}
		return c
	}
}

func unaryAlternatives() []Alternative {
	wrap := func(f func(cf codeFormat, x float32, c uint16) uint16) func(*suite.Suite, Task) (ops.Tensors, bool, error) {
		return func(s *suite.Suite, t Task) (ops.Tensors, bool, error) { return mapCodes(s, t, f) }
	}
	return []Alternative{
		{Class: "ties-away", Doc: "exact midpoints rounded away from zero instead of to even", Compute: wrap(tieTo(true))},
		{Class: "ties-toward-zero", Doc: "exact midpoints rounded toward zero instead of to even", Compute: wrap(tieTo(false))},
		{Class: "truncation", Doc: "round toward zero (truncation, e.g. the top 16 bits of a float32 for bf16) instead of to nearest", Compute: wrap(func(cf codeFormat, x float32, c uint16) uint16 {
			v := cf.decode(c)
			// A finite input that rounded to infinity truncates to the
			// largest finite code, as IEEE round-toward-zero overflows.
			if !isFinite(x) || math.IsNaN(float64(v)) || math.Abs(float64(v)) <= math.Abs(float64(x)) {
				return c
			}
			if n, ok := neighbour(cf, c, -1); ok {
				return n
			}
			return c
		})},
		{Class: "nan-sign-kept", Doc: "a negative NaN keeps its sign in the code", Compute: wrap(func(cf codeFormat, x float32, c uint16) uint16 {
			if x != x && math.Signbit(float64(x)) {
				return c | cf.sign
			}
			return c
		})},
		{Class: "nan-sign-cleared", Doc: "every NaN encodes with the sign bit clear", Compute: wrap(func(cf codeFormat, x float32, c uint16) uint16 {
			if x != x {
				return c &^ cf.sign
			}
			return c
		})},
		{Class: "ftz-outputs", Doc: "subnormal results flushed to zero of the same sign (FTZ on the output)", Compute: wrap(func(cf codeFormat, x float32, c uint16) uint16 {
			if m := c & cf.mag; m != 0 && m <= cf.man {
				return c & cf.sign
			}
			return c
		})},
		{Class: "negative-zero-cleared", Doc: "results of magnitude zero always +0 (the -0 code never produced)", Compute: wrap(func(cf codeFormat, x float32, c uint16) uint16 {
			if c == cf.sign {
				return 0
			}
			return c
		})},
	}
}

// ftzInputs reruns the reference profile on inputs whose float32
// subnormals are flushed to zero of the same sign.
func ftzInputs(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
	in := ops.Tensors{}
	flushed := false
	for n, x := range t.Inputs {
		if x.DType == tensor.F32 {
			b := x.Bits32()
			for i, v := range b {
				if v&0x7f800000 == 0 && v&0x007fffff != 0 {
					b[i] = v & 0x80000000
					flushed = true
				}
			}
			y := tensor.FromBits32(tensor.F32, x.Shape, b)
			y.Logical = x.Logical
			x = y
		}
		in[n] = x
	}
	if !flushed {
		// FTZ is the identity on a task without subnormals: it predicts
		// the reference there (not "does not apply", which would keep the
		// class from being exact over a suite whose other tasks lack
		// subnormals).
		return t.Reference, true, nil
	}
	out, err := ops.Run(s.Op, t.Params, in)
	if err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// nibbleSwap swaps the nibbles of every packed-E2M1 output; an op without
// one that reads packed E2M1 (unpack, dequantize) is rerun on inputs with
// their nibbles swapped.
func nibbleSwap(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
	if out, ok, err := nibbleSwapOutputs(t); ok || err != nil {
		return out, ok, err
	}
	in := ops.Tensors{}
	any := false
	for n, x := range t.Inputs {
		if x.Logical == "e2m1x2" {
			x, any = mapBytes(x, func(b byte) byte { return b<<4 | b>>4 }), true
		}
		in[n] = x
	}
	if !any {
		return nil, false, nil
	}
	out, err := ops.Run(s.Op, t.Params, in)
	if err != nil {
		return nil, false, nil
	}
	return out, true, nil
}

func nibbleSwapOutputs(t Task) (ops.Tensors, bool, error) {
	out := ops.Tensors{}
	any := false
	for n, r := range t.Reference {
		if r.Logical == "e2m1x2" {
			d := make([]byte, len(r.Data))
			for i, b := range r.Data {
				d[i] = b<<4 | b>>4
			}
			r = tensor.Tensor{DType: r.DType, Shape: r.Shape, Logical: r.Logical, Data: d}
			any = true
		}
		out[n] = r
	}
	return out, any, nil
}

// NVFP4: the scale and element arithmetic of the reference recipe varied
// one rule at a time, and its E2M1 profile replaced by each other profile.

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

// MXFP4: every named mode x E2M1 profile through the registered op.
func mxfp4Alternatives() []Alternative {
	var alts []Alternative
	for _, mode := range []string{"floor", "ceil", "even", "rceil"} {
		for _, p := range []string{"nvidia", "sw-sm121", "ml_dtypes", "ties-away", "ties-toward-zero", "ggml"} {
			mode, p := mode, p
			alts = append(alts, Alternative{Class: fmt.Sprintf("mxfp4:mode=%s,profile=%s", mode, p),
				Doc: fmt.Sprintf("E8M0 scale mode %s with E2M1 elements as profile %s", mode, p),
				Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
					out, err := ops.Run(s.Op, withParams(ops.Params(t.Task.Params), map[string]string{"mode": mode, "profile": p}), t.Inputs)
					if err != nil {
						return nil, false, nil
					}
					return out, true, nil
				}})
		}
	}
	return alts
}

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

// sparseMeta swaps the two indices of every metadata nibble and, for the
// descending order, the two value nibbles of every kept pair.
func sparseMeta(t Task, values bool) (ops.Tensors, bool, error) {
	meta, ok := t.Reference["meta"]
	comp, okc := t.Reference["comp"]
	if !ok || !okc {
		return nil, false, nil
	}
	sw := func(n uint8) uint8 { return (n&3)<<2 | (n>>2)&3 }
	m := make([]byte, len(meta.Data))
	for i, b := range meta.Data {
		m[i] = sw(b&15) | sw(b>>4)<<4
	}
	c := comp.Data
	if values {
		c = make([]byte, len(comp.Data))
		for i, b := range comp.Data {
			c[i] = b<<4 | b>>4
		}
	}
	return ops.Tensors{
		"meta": {DType: meta.DType, Shape: meta.Shape, Logical: meta.Logical, Data: m},
		"comp": {DType: comp.DType, Shape: comp.Shape, Logical: comp.Logical, Data: c},
	}, true, nil
}

// ggmlAdjacent repacks block_mxfp4 qs from split halves to adjacent pairs.
func ggmlAdjacent(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
	b, ok := t.Reference["blocks"]
	if !ok || len(b.Data)%17 != 0 {
		return nil, false, nil
	}
	d := append([]byte{}, b.Data...)
	for off := 0; off < len(d); off += 17 {
		var q [32]uint8
		for j := 0; j < 16; j++ {
			q[j] = b.Data[off+1+j] & 15
			q[j+16] = b.Data[off+1+j] >> 4
		}
		for j := 0; j < 16; j++ {
			d[off+1+j] = q[2*j] | q[2*j+1]<<4
		}
	}
	return ops.Tensors{"blocks": {DType: b.DType, Shape: b.Shape, Logical: b.Logical, Data: d}}, true, nil
}

// Classes lists every class name Alternatives can produce for s, sorted
// (for documentation and tests).
func Classes(s *suite.Suite, against string) []string {
	var n []string
	for _, a := range Alternatives(s, against) {
		n = append(n, a.Class)
	}
	sort.Strings(n)
	return n
}

// codesReinterpreted is a conversion between code formats that copies the
// input bytes: it applies to a task whose x is U8 codes and whose output
// is U8 codes of the same shape.
func codesReinterpreted(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
	cf, ok := formatOf(s.Op, t.Params)
	x, okx := t.Inputs["x"]
	if !ok || !okx || x.DType != tensor.U8 || cf.wide {
		return nil, false, nil
	}
	ref, ok := t.Reference[cf.out]
	if !ok || ref.DType != tensor.U8 || ref.Len() != x.Len() {
		return nil, false, nil
	}
	r := tensor.FromU8(ref.Shape, append([]uint8(nil), x.Data...))
	r.Logical = ref.Logical
	return ops.Tensors{cf.out: r}, true, nil
}
