package ops

import (
	"fmt"

	"github.com/bitexact/bitexact/refimpl/awq"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

func init() {
	register(Op{
		Name: "awq.quantize",
		Doc:  "fp16 W [IC,OC] -> AWQ qweight/qzeros/scales (vLLM GEMM layout) under a named quantizer, groups of G along IC",
		Params: map[string]string{
			"quantizer": "forge (default; absmax/7, u = q+8, z = 8) | autoawq (AutoAWQ zero-point quantizer in fp16 and its GEMM repack, as on torch CUDA) | autoawq-x86 (the same on torch CPU x86-64: a repack overflow casts to 0x80000000)",
			"group":     "group size G along IC (default 128; -1 = IC)",
		},
		Defaults: Params{"quantizer": awq.Forge.Name, "group": "128"},
		Choices:  map[string][]Choice{"quantizer": quantizerChoices()},
		Inputs:   []string{"w"},
		Outputs:  []string{"qweight", "qzeros", "scales"},
		Run:      runAWQQuantize,
	})
	register(Op{
		Name: "awq.pack",
		Doc:  "stored nibbles q U8 [IC,OC] (and zero points [IC/G,OC]) -> int32 words of a named layout",
		Params: map[string]string{
			"layout": "awq (default) | awq-gemv | gptq-v1 | gptq-v2 | compressed-tensors",
		},
		Defaults: Params{"layout": awq.AWQ.Name},
		Choices:  map[string][]Choice{"layout": layoutChoices()},
		Inputs:   []string{"q"},
		Outputs:  []string{"qweight", "qzeros"},
		Run:      runAWQPack,
	})
	register(Op{
		Name: "awq.unpack",
		Doc:  "int32 words of a named layout -> stored nibbles q U8 [IC,OC] (and zero points U8 [IC/G,OC] when qzeros is given)",
		Params: map[string]string{
			"layout": "awq (default) | awq-gemv | gptq-v1 | gptq-v2 | compressed-tensors",
			"ic":     "IC (default: from the qweight shape; required for compressed-tensors when IC % 8 != 0)",
			"group":  "group size G (default: IC / rows of qzeros for layouts whose qzeros rows are groups; required for awq-gemv)",
		},
		Defaults: Params{"layout": awq.AWQ.Name},
		Choices:  map[string][]Choice{"layout": layoutChoices()},
		Inputs:   []string{"qweight"},
		Outputs:  []string{"q", "zeros"},
		Run:      runAWQUnpack,
	})
	register(withNaN(Op{
		Name: "awq.dequantize",
		Doc:  "vLLM AWQ dequantization: fp16 (u - z) * s, one round to nearest even, NaN -> 0x7fff (or per the nan convention); a zero product is +0 (CUDA kernel) or keeps its sign (triton kernel)",
		Params: map[string]string{
			"group":  "group size G (default: IC / rows of scales; -1 = IC)",
			"kernel": "cuda (default; vLLM's CUDA kernel, fma with +0: zero -> +0) | triton (vLLM's triton kernel: (u - z) * s, -0 where u = z and s < 0)",
		},
		Defaults: Params{"kernel": awq.KernelCUDA.Name},
		Choices:  map[string][]Choice{"kernel": kernelChoices()},
		Inputs:   []string{"qweight", "qzeros", "scales"},
		Outputs:  []string{"w"},
		Run:      runAWQDequantize,
	}))
}

// awqGroup reads the group parameter; -1 means IC.
func awqGroup(p Params, ic, def int) (int, error) {
	if _, ok := p["group"]; !ok && def <= 0 {
		return 0, fmt.Errorf("missing parameter \"group\" (it cannot be inferred from the shapes)")
	}
	g, err := p.Int("group", def)
	if err != nil {
		return 0, err
	}
	if g == -1 {
		g = ic
	}
	if g <= 0 || ic%g != 0 {
		return 0, fmt.Errorf("parameter group=%d: must be positive and divide IC=%d", g, ic)
	}
	return g, nil
}

func awqRank2(t tensor.Tensor, name string, d tensor.DType) error {
	if err := t.Expect(name, d); err != nil {
		return err
	}
	if len(t.Shape) != 2 || t.Shape[0] == 0 || t.Shape[1] == 0 {
		return fmt.Errorf("tensor %q: shape %v, want a non-empty matrix", name, t.Shape)
	}
	return nil
}

func runAWQQuantize(p Params, in Tensors) (Tensors, error) {
	qz, err := awq.QuantizerByName(p["quantizer"])
	if err != nil {
		return nil, err
	}
	w := in["w"]
	if err := awqRank2(w, "w", tensor.F16); err != nil {
		return nil, err
	}
	ic, oc := w.Shape[0], w.Shape[1]
	g, err := awqGroup(p, ic, 0)
	if err != nil {
		return nil, err
	}
	if err := awq.CheckShape(ic, oc, g); err != nil {
		return nil, fmt.Errorf("tensor \"w\": %w", err)
	}
	q, err := awq.Quantize(w.Bits16(), ic, oc, g, qz)
	if err != nil {
		return nil, err
	}
	var qw []int32
	var qwShape []int
	if qz.Scheme == awq.AsymmetricF16 {
		qw, qwShape, err = q.PackAutoAWQ() // AutoAWQ packs its re-derived nibbles, unmasked
	} else {
		qw, qwShape, err = awq.AWQ.PackWeight(q.Q, ic, oc)
	}
	if err != nil {
		return nil, err
	}
	zw, zwShape, err := awq.AWQ.PackZeros(q.Zeros, ic, oc, g)
	if err != nil {
		return nil, err
	}
	return Tensors{
		"qweight": tensor.FromI32(qwShape, qw),
		"qzeros":  tensor.FromI32(zwShape, zw),
		"scales":  tensor.FromBits16(tensor.F16, []int{ic / g, oc}, q.Scales),
	}, nil
}

func runAWQPack(p Params, in Tensors) (Tensors, error) {
	l, err := awq.LayoutByName(p["layout"])
	if err != nil {
		return nil, err
	}
	q := in["q"]
	if err := awqRank2(q, "q", tensor.U8); err != nil {
		return nil, err
	}
	ic, oc := q.Shape[0], q.Shape[1]
	qw, shape, err := l.PackWeight(q.Data, ic, oc)
	if err != nil {
		return nil, fmt.Errorf("tensor \"q\": %w", err)
	}
	out := Tensors{"qweight": tensor.FromI32(shape, qw)}
	z, ok := in["zeros"]
	if !ok {
		return out, nil
	}
	if err := awqRank2(z, "zeros", tensor.U8); err != nil {
		return nil, err
	}
	if z.Shape[1] != oc || ic%z.Shape[0] != 0 {
		return nil, fmt.Errorf("tensor \"zeros\": shape %v, want [IC/G, %d] with G dividing IC=%d", z.Shape, oc, ic)
	}
	zw, zshape, err := l.PackZeros(z.Data, ic, oc, ic/z.Shape[0])
	if err != nil {
		return nil, fmt.Errorf("tensor \"zeros\": %w", err)
	}
	if zw != nil {
		out["qzeros"] = tensor.FromI32(zshape, zw)
	}
	return out, nil
}

func runAWQUnpack(p Params, in Tensors) (Tensors, error) {
	l, err := awq.LayoutByName(p["layout"])
	if err != nil {
		return nil, err
	}
	qw := in["qweight"]
	if err := awqRank2(qw, "qweight", tensor.I32); err != nil {
		return nil, err
	}
	r, c := qw.Shape[0], qw.Shape[1]
	// Invert the word shape of each packing.
	var ic, oc int
	switch {
	case l.Weight.AlongRows:
		ic, oc = 8*r, c
	case l.Weight.Transpose:
		ic, oc = 8*c, r
	default:
		ic, oc = r, 8*c
	}
	if ic, err = p.Int("ic", ic); err != nil {
		return nil, err
	}
	q, err := l.UnpackWeight(qw.I32(), ic, oc)
	if err != nil {
		return nil, fmt.Errorf("tensor \"qweight\": %w", err)
	}
	out := Tensors{"q": tensor.FromU8([]int{ic, oc}, q)}
	qz, ok := in["qzeros"]
	if !ok {
		return out, nil
	}
	if err := awqRank2(qz, "qzeros", tensor.I32); err != nil {
		return nil, err
	}
	groupsRows := qz.Shape[0]
	if l.Zeros.Packing.Transpose {
		groupsRows = 0 // rows are output columns: G must be given
	}
	def := 0
	if groupsRows > 0 && ic%groupsRows == 0 {
		def = ic / groupsRows
	}
	g, err := awqGroup(p, ic, def)
	if err != nil {
		return nil, err
	}
	z, err := l.UnpackZeros(qz.I32(), ic, oc, g)
	if err != nil {
		return nil, fmt.Errorf("tensor \"qzeros\": %w", err)
	}
	out["zeros"] = tensor.FromU8([]int{ic / g, oc}, z)
	return out, nil
}

func runAWQDequantize(p Params, in Tensors) (Tensors, error) {
	k, err := awq.KernelByName(p["kernel"])
	if err != nil {
		return nil, err
	}
	nan, err := nanConv(p)
	if err != nil {
		return nil, err
	}
	k = k.WithNaN(nan)
	qw, qz, sc := in["qweight"], in["qzeros"], in["scales"]
	if err := awqRank2(qw, "qweight", tensor.I32); err != nil {
		return nil, err
	}
	if err := awqRank2(sc, "scales", tensor.F16); err != nil {
		return nil, err
	}
	ic, oc := qw.Shape[0], 8*qw.Shape[1]
	def := 0
	if ic%sc.Shape[0] == 0 {
		def = ic / sc.Shape[0]
	}
	g, err := awqGroup(p, ic, def)
	if err != nil {
		return nil, err
	}
	if err := sc.Expect("scales", tensor.F16, ic/g, oc); err != nil {
		return nil, err
	}
	if err := qz.Expect("qzeros", tensor.I32, ic/g, oc/8); err != nil {
		return nil, err
	}
	w, err := k.Dequantize(qw.I32(), qz.I32(), sc.Bits16(), ic, oc, g)
	if err != nil {
		return nil, err
	}
	return Tensors{"w": tensor.FromBits16(tensor.F16, []int{ic, oc}, w)}, nil
}
