package ops

import (
	"fmt"

	"github.com/bitexact/bitexact/refimpl/sparse24"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

func init() {
	register(Op{
		Name: "sparse24.select",
		Doc:  "2:4 selection over E2M1 codes U8 [..., N, K]: kept (dropped entries -> code 0) and one metadata nibble i0|i1<<2 per group of 4",
		Params: map[string]string{
			"tie": "lower-index (default) | cutlass | signed",
		},
		Defaults: Params{"tie": sparse24.LowerIndex.Name},
		Choices:  map[string][]Choice{"tie": tieChoices()},
		Inputs:   []string{"codes"},
		Outputs:  []string{"kept", "meta"},
		Run:      runSparse24Select,
	})
	register(Op{
		Name: "sparse24.compress",
		Doc: "2:4 compression of E2M1 codes U8 [E,N,K] or [N,K]: comp v(i0)|v(i1)<<4 [.,N,K/4], meta [.,N,K/8] " +
			"(transposed: [.,K/4,N], [.,K/8,N]); optional scales [.,N,K/S] are laid out alike and global [E] passes through",
		Params: map[string]string{
			"tie":    "lower-index (default) | cutlass | signed",
			"layout": "rowmajor (default) | transposed",
		},
		Defaults: Params{"tie": sparse24.LowerIndex.Name, "layout": sparse24.RowMajor.String()},
		Choices:  map[string][]Choice{"tie": tieChoices()},
		Inputs:   []string{"codes"},
		Outputs:  []string{"comp", "meta", "scales", "global"},
		Run:      runSparse24Compress,
	})
	register(Op{
		Name: "sparse24.decompress",
		Doc:  "inverse of sparse24.compress: comp and meta -> dense E2M1 codes U8 [.,N,K], code 0 at dropped positions; metadata naming one position twice is an error",
		Params: map[string]string{
			"layout": "rowmajor (default) | transposed",
		},
		Defaults: Params{"layout": sparse24.RowMajor.String()},
		Inputs:   []string{"comp", "meta"},
		Outputs:  []string{"codes"},
		Run:      runSparse24Decompress,
	})
	register(Op{
		Name: "sparse24.reorder_meta",
		Doc:  "row-major metadata U8 [N,K/8] -> CUTLASS/PyTorch reordered metadata, I16 [N,K/16] (16-bit dense operand) or I32 [N,K/32] (int8 operand)",
		Params: map[string]string{
			"dtype": "int16 (default) | int32",
		},
		Defaults: Params{"dtype": "int16"},
		Inputs:   []string{"meta"},
		Outputs:  []string{"meta_reordered"},
		Run:      runSparse24Reorder,
	})
	register(Op{
		Name:    "sparse24.unreorder_meta",
		Doc:     "inverse of sparse24.reorder_meta: I16 [N,K/16] or I32 [N,K/32] -> row-major metadata U8 [N,K/8]",
		Params:  map[string]string{},
		Inputs:  []string{"meta_reordered"},
		Outputs: []string{"meta"},
		Run:     runSparse24Unreorder,
	})
}

// sp24Codes checks a U8 tensor of one E2M1 code per byte.
func sp24Codes(t tensor.Tensor, name string) error {
	if err := t.Expect(name, tensor.U8); err != nil {
		return err
	}
	if t.Logical != "" && t.Logical != "e2m1" {
		return fmt.Errorf("tensor %q: logical format %q, want \"e2m1\" (one code per byte)", name, t.Logical)
	}
	return nil
}

func runSparse24Select(p Params, in Tensors) (Tensors, error) {
	rule, err := sparse24.TieRuleByName(p["tie"])
	if err != nil {
		return nil, err
	}
	c := in["codes"]
	if err := sp24Codes(c, "codes"); err != nil {
		return nil, err
	}
	e, n, k, batched, err := c.SplitBatch("codes")
	if err != nil {
		return nil, err
	}
	kept, meta, err := sparse24.Select(c.Data, e*n, k, rule)
	if err != nil {
		return nil, fmt.Errorf("tensor \"codes\": %w", err)
	}
	out := tensor.FromU8(c.Shape, kept)
	out.Logical = "e2m1"
	return Tensors{"kept": out, "meta": tensor.FromU8(tensor.BatchShape(batched, e, n, k/4), meta)}, nil
}

func sp24Layout(p Params) (sparse24.Layout, error) {
	return sparse24.LayoutByName(p["layout"])
}

func runSparse24Compress(p Params, in Tensors) (Tensors, error) {
	rule, err := sparse24.TieRuleByName(p["tie"])
	if err != nil {
		return nil, err
	}
	layout, err := sp24Layout(p)
	if err != nil {
		return nil, err
	}
	c := in["codes"]
	if err := sp24Codes(c, "codes"); err != nil {
		return nil, err
	}
	e, n, k, batched, err := c.SplitBatch("codes")
	if err != nil {
		return nil, err
	}
	comp, meta, err := sparse24.Compress(c.Data, e, n, k, rule, layout)
	if err != nil {
		return nil, fmt.Errorf("tensor \"codes\": %w", err)
	}
	compShape, metaShape := tensor.BatchShape(batched, e, n, k/4), tensor.BatchShape(batched, e, n, k/8)
	if layout == sparse24.Transposed {
		compShape, metaShape = tensor.BatchShape(batched, e, k/4, n), tensor.BatchShape(batched, e, k/8, n)
	}
	ct := tensor.FromU8(compShape, comp)
	ct.Logical = "e2m1x2"
	out := Tensors{"comp": ct, "meta": tensor.FromU8(metaShape, meta)}
	if s, ok := in["scales"]; ok {
		if err := s.Expect("scales", tensor.U8); err != nil {
			return nil, err
		}
		se, sn, ns, sb, err := s.SplitBatch("scales")
		if err != nil {
			return nil, err
		}
		if sb != batched || se != e || sn != n || k%ns != 0 {
			return nil, fmt.Errorf("tensor \"scales\": shape %v, want %v with S dividing K=%d", s.Shape, tensor.BatchShape(batched, e, n, -1), k)
		}
		st := s
		if layout == sparse24.Transposed {
			data, err := sparse24.Transpose(s.Data, e, n, ns)
			if err != nil {
				return nil, err
			}
			st = tensor.FromU8(tensor.BatchShape(batched, e, ns, n), data)
			st.Logical = s.Logical
		}
		out["scales"] = st
	}
	if g, ok := in["global"]; ok {
		if err := g.Expect("global", tensor.F32, e); err != nil {
			return nil, err
		}
		out["global"] = g
	}
	return out, nil
}

func runSparse24Decompress(p Params, in Tensors) (Tensors, error) {
	layout, err := sp24Layout(p)
	if err != nil {
		return nil, err
	}
	comp, meta := in["comp"], in["meta"]
	if err := comp.Expect("comp", tensor.U8); err != nil {
		return nil, err
	}
	if err := meta.Expect("meta", tensor.U8); err != nil {
		return nil, err
	}
	e, a, b, batched, err := comp.SplitBatch("comp")
	if err != nil {
		return nil, err
	}
	n, k := a, 4*b
	if layout == sparse24.Transposed {
		n, k = b, 4*a
	}
	want := tensor.BatchShape(batched, e, n, k/8)
	if layout == sparse24.Transposed {
		want = tensor.BatchShape(batched, e, k/8, n)
	}
	if err := meta.Expect("meta", tensor.U8, want...); err != nil {
		return nil, err
	}
	codes, err := sparse24.Decompress(comp.Data, meta.Data, e, n, k, layout)
	if err != nil {
		return nil, err
	}
	out := tensor.FromU8(tensor.BatchShape(batched, e, n, k), codes)
	out.Logical = "e2m1"
	return Tensors{"codes": out}, nil
}

func runSparse24Reorder(p Params, in Tensors) (Tensors, error) {
	m := in["meta"]
	if err := m.Expect("meta", tensor.U8); err != nil {
		return nil, err
	}
	if len(m.Shape) != 2 {
		return nil, fmt.Errorf("tensor \"meta\": shape %v, want [N, K/8]", m.Shape)
	}
	n, k := m.Shape[0], 8*m.Shape[1]
	switch d := p["dtype"]; d {
	case "int16":
		v, err := sparse24.MetaTo16(m.Data, n, k)
		if err != nil {
			return nil, fmt.Errorf("tensor \"meta\": %w", err)
		}
		r, err := sparse24.ReorderMeta16(v, n, k/16)
		if err != nil {
			return nil, fmt.Errorf("tensor \"meta\": %w", err)
		}
		return Tensors{"meta_reordered": tensor.FromBits16(tensor.I16, []int{n, k / 16}, r)}, nil
	case "int32":
		v, err := sparse24.MetaTo32(m.Data, n, k)
		if err != nil {
			return nil, fmt.Errorf("tensor \"meta\": %w", err)
		}
		r, err := sparse24.ReorderMeta32(v, n, k/32)
		if err != nil {
			return nil, fmt.Errorf("tensor \"meta\": %w", err)
		}
		return Tensors{"meta_reordered": tensor.FromBits32(tensor.I32, []int{n, k / 32}, r)}, nil
	default:
		return nil, fmt.Errorf("parameter dtype=%q: want int16 or int32", d)
	}
}

func runSparse24Unreorder(_ Params, in Tensors) (Tensors, error) {
	m := in["meta_reordered"]
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("tensor \"meta_reordered\": %w", err)
	}
	if len(m.Shape) != 2 {
		return nil, fmt.Errorf("tensor \"meta_reordered\": shape %v, want a matrix", m.Shape)
	}
	n, c := m.Shape[0], m.Shape[1]
	var meta []uint8
	var err error
	switch m.DType {
	case tensor.I16:
		var v []uint16
		if v, err = sparse24.UnreorderMeta16(m.Bits16(), n, c); err == nil {
			meta, err = sparse24.MetaFrom16(v, n, 16*c)
		}
	case tensor.I32:
		var v []uint32
		if v, err = sparse24.UnreorderMeta32(m.Bits32(), n, c); err == nil {
			meta, err = sparse24.MetaFrom32(v, n, 32*c)
		}
	default:
		return nil, fmt.Errorf("tensor \"meta_reordered\": dtype %s, want I16 or I32", m.DType)
	}
	if err != nil {
		return nil, fmt.Errorf("tensor \"meta_reordered\": %w", err)
	}
	return Tensors{"meta": tensor.FromU8([]int{n, len(meta) / n}, meta)}, nil
}
