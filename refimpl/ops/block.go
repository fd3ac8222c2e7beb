package ops

import (
	"fmt"
	"sort"
	"strings"

	"github.com/bitexact/bitexact/refimpl/block"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// The ops of the block formats described in refimpl/block: one op per
// distinct op name of the descriptions (gguf.quantize, gguf.dequantize,
// gemv.gguf), whose fixed parameters select the format and whose profile
// parameter the rule. Nothing here names a format.
func init() {
	type opFormats struct {
		quant, dequant []block.Format
		dots           []block.Dot
	}
	byOp := map[string]*opFormats{}
	get := func(name string) *opFormats {
		if byOp[name] == nil {
			byOp[name] = &opFormats{}
		}
		return byOp[name]
	}
	for _, f := range block.Formats() {
		if f.Quantize != nil {
			get(f.Quantize.Op).quant = append(get(f.Quantize.Op).quant, f)
		}
		get(f.Dequantize.Op).dequant = append(get(f.Dequantize.Op).dequant, f)
	}
	for _, d := range block.Dots() {
		get(d.Op).dots = append(get(d.Op).dots, d)
	}
	names := make([]string, 0, len(byOp))
	for n := range byOp {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		o := byOp[name]
		switch {
		case len(o.quant) > 0 && len(o.dequant)+len(o.dots) == 0:
			register(blockQuantizeOp(name, o.quant))
		case len(o.dequant) > 0 && len(o.quant)+len(o.dots) == 0:
			register(blockDequantizeOp(name, o.dequant))
		case len(o.dots) > 0 && len(o.quant)+len(o.dequant) == 0:
			register(blockDotOp(name, o.dots))
		default:
			panic("ops: block op " + name + " is declared as more than one kind of operation")
		}
	}
}

// blockParams builds the parameter table, defaults and choices of a block
// op: each fixed key with the values the formats give it, and the profile
// key with every format's profiles.
func blockParams(op string, fixed []map[string]string, key string, profiles [][]block.Profile) (map[string]string, Params, map[string][]Choice) {
	params := map[string]string{}
	for _, k := range block.FixedKeys(op) {
		var vals []string
		seen := map[string]bool{}
		for _, f := range fixed {
			if v, ok := f[k]; ok && !seen[v] {
				seen[v] = true
				vals = append(vals, v)
			}
		}
		params[k] = "required: " + strings.Join(vals, ", ")
	}
	var cs []Choice
	seen := map[string]bool{}
	for _, ps := range profiles {
		for _, p := range ps {
			if !seen[p.Name] {
				seen[p.Name] = true
				cs = append(cs, Choice{p.Name, p.Summary, p.Source})
			}
		}
	}
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Name
	}
	params[key] = strings.Join(names, ", ") + " (default " + cs[0].Name + ")"
	return params, Params{key: cs[0].Name}, map[string][]Choice{key: cs}
}

func findFormat(fs []block.Format, p Params, fixed func(block.Format) map[string]string) (block.Format, error) {
	for _, f := range fs {
		if block.Match(p, fixed(f)) {
			return f, nil
		}
	}
	var want []string
	for _, f := range fs {
		want = append(want, fmt.Sprint(fixed(f)))
	}
	return block.Format{}, fmt.Errorf("parameters %v select no block format (one of %s)", map[string]string(p), strings.Join(want, " "))
}

func blockQuantizeOp(name string, fs []block.Format) Op {
	var fixed []map[string]string
	var profs [][]block.Profile
	for _, f := range fs {
		fixed = append(fixed, f.Quantize.Params)
		profs = append(profs, f.Profiles)
	}
	key := fs[0].ProfileParam
	params, defaults, choices := blockParams(name, fixed, key, profs)
	sel := func(f block.Format) map[string]string { return f.Quantize.Params }
	return Op{Name: name,
		Doc:    "block quantize (refimpl/block): x F32 [n], a whole number of blocks -> blocks U8 [n/BlockElems, BlockBytes] of the format the fixed parameters select",
		Params: params, Defaults: defaults, Choices: choices,
		Inputs: []string{"x"}, Outputs: []string{"blocks"},
		Run: func(p Params, in Tensors) (Tensors, error) {
			f, err := findFormat(fs, p, sel)
			if err != nil {
				return nil, err
			}
			x := in["x"]
			if x.DType != tensor.F32 {
				return nil, fmt.Errorf("tensor \"x\": dtype %s, want F32", x.DType)
			}
			if x.Len()%f.BlockElems != 0 {
				return nil, fmt.Errorf("tensor \"x\": %d values are not a whole number of %d-value %s blocks", x.Len(), f.BlockElems, f.Name)
			}
			b, err := f.Quantize.Run(x.F32(), p[key])
			if err != nil {
				return nil, err
			}
			out := tensor.FromU8([]int{len(b) / f.BlockBytes, f.BlockBytes}, b)
			out.Logical = f.Suite
			return Tensors{"blocks": out}, nil
		}}
}

func blockDequantizeOp(name string, fs []block.Format) Op {
	var fixed []map[string]string
	var profs [][]block.Profile
	for _, f := range fs {
		fixed = append(fixed, f.Dequantize.Params)
		profs = append(profs, f.Profiles)
	}
	key := fs[0].ProfileParam
	params, defaults, choices := blockParams(name, fixed, key, profs)
	sel := func(f block.Format) map[string]string { return f.Dequantize.Params }
	return Op{Name: name,
		Doc:    "block dequantize (refimpl/block): blocks U8 [nb, BlockBytes] of the format the fixed parameters select -> y F32 [nb*BlockElems]",
		Params: params, Defaults: defaults, Choices: choices,
		Inputs: []string{"blocks"}, Outputs: []string{"y"},
		Run: func(p Params, in Tensors) (Tensors, error) {
			f, err := findFormat(fs, p, sel)
			if err != nil {
				return nil, err
			}
			b := in["blocks"]
			if err := b.Expect("blocks", tensor.U8, -1, f.BlockBytes); err != nil {
				return nil, err
			}
			if err := blkLogical("blocks", b, f.Suite); err != nil {
				return nil, err
			}
			y, err := f.Dequantize.Run(b.Data, p[key])
			if err != nil {
				return nil, err
			}
			return Tensors{"y": tensor.FromF32([]int{len(y)}, y)}, nil
		}}
}

func blockDotOp(name string, ds []block.Dot) Op {
	var fixed []map[string]string
	var profs [][]block.Profile
	for _, d := range ds {
		fixed = append(fixed, d.Params)
		profs = append(profs, d.Profiles)
	}
	key := ds[0].ProfileParam
	params, defaults, choices := blockParams(name, fixed, key, profs)
	return Op{Name: name,
		Doc:    "block GEMV (refimpl/block): w U8 [N, K/W.BlockElems, W.BlockBytes], act U8 [K/Act.BlockElems, Act.BlockBytes] (activations already quantized) -> y F32 [N], bit-exact under the dot product's declared schedule",
		Params: params, Defaults: defaults, Choices: choices,
		Inputs: []string{"w", "act"}, Outputs: []string{"y"},
		Run: func(p Params, in Tensors) (Tensors, error) {
			var d block.Dot
			found := false
			for _, c := range ds {
				if block.Match(p, c.Params) {
					d, found = c, true
				}
			}
			if !found {
				return nil, fmt.Errorf("parameters %v select no dot product", map[string]string(p))
			}
			wf, _ := block.Lookup(d.W)
			af, _ := block.Lookup(d.Act)
			w, a := in["w"], in["act"]
			if err := w.Expect("w", tensor.U8, -1, -1, wf.BlockBytes); err != nil {
				return nil, err
			}
			if err := a.Expect("act", tensor.U8, -1, af.BlockBytes); err != nil {
				return nil, err
			}
			if k := w.Shape[1] * wf.BlockElems; a.Shape[0]*af.BlockElems != k {
				return nil, fmt.Errorf("tensor \"act\": %d activations for rows of %d weights", a.Shape[0]*af.BlockElems, k)
			}
			y, err := d.Run(w.Data, a.Data, w.Shape[0], p[key])
			if err != nil {
				return nil, err
			}
			return Tensors{"y": tensor.FromF32([]int{len(y)}, y)}, nil
		}}
}
