package diagnose

import (
	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/sparse24"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// Layout classes of the metadata reorder, the scale swizzle and the AWQ
// zero point, each a plausible misreading of the layout the reference
// pins (torch/sparse/_semi_structured_conversions.py for the reorder;
// torchao to_blocked and CUTLASS for the 128x4 swizzle; vLLM's AWQ
// kernels for the zero point).

func layoutAlternatives(s *suite.Suite) []Alternative {
	switch s.Op {
	case "sparse24.reorder_meta":
		return []Alternative{
			{Class: "cutlass-reorder-no-swap", Doc: "the CUTLASS metadata reorder without its 2x2 swap of (even row, odd column) and (odd row, even column) elements",
				Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) { return reorderAs(t, false, false) }},
			{Class: "cutlass-reorder-other-grouping", Doc: "the metadata reordered with the other operand width's row grouping (16 rows, interweave 2 for 16-bit metadata; 32 and 4 for 32-bit)",
				Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) { return reorderAs(t, true, true) }},
		}
	case "sparse24.unreorder_meta":
		return []Alternative{
			{Class: "cutlass-reorder-no-swap", Doc: "the inverse CUTLASS metadata reorder without its 2x2 swap",
				Compute: unreorderNoSwap},
		}
	case "nvfp4.swizzle", "nvfp4.unswizzle":
		var alts []Alternative
		for _, v := range []struct{ class, doc string }{
			{"swizzle-linear", "block scales row-major (rows padded to 128, columns to 4) where the 128x4 swizzle is expected, or read that way"},
			{"swizzle-row-major-tile", "each 128x4 tile row-major (row m at (m%128)*4) instead of the 32x4x4 interleave (m%32)*16 + ((m/32)%4)*4"},
			{"swizzle-column-major-tile", "each 128x4 tile transposed (column k at (k%4)*128 + m%128)"},
			{"swizzle-tile-count-floor", "the tile count along K taken as sfCols/4 rounded down instead of up: columns past the last whole group of 4 overlap the next tile row"},
		} {
			v := v
			alts = append(alts, Alternative{Class: v.class, Doc: v.doc,
				Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) { return swizzleAs(s, t, v.class) }})
		}
		return alts
	case "awq.dequantize":
		return []Alternative{
			{Class: "awq-implicit-zero-8", Doc: "the stored zero points ignored for the implicit zero point 8 (the uint4b8 convention of Marlin and vLLM's moe_wna16 without zero points)",
				Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) { return awqZerosAll(s, t, 0x88888888) }},
			{Class: "awq-zero-not-subtracted", Doc: "w = u * s: the zero point never subtracted",
				Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) { return awqZerosAll(s, t, 0) }},
		}
	}
	return nil
}

// reorderAs is sparse24.reorder_meta with the 2x2 swap (swap) and the row
// grouping of the other metadata width (other).
func reorderAs(t Task, swap, other bool) (ops.Tensors, bool, error) {
	m, ok := t.Inputs["meta"]
	if !ok || m.DType != tensor.U8 || len(m.Shape) != 2 {
		return nil, false, nil
	}
	n, k := m.Shape[0], 8*m.Shape[1]
	wide := t.Params.Get("dtype", "int16") == "int32"
	// The layout of refimpl/sparse24 with the fault: another width's
	// grouping, or the swap left out.
	l := sparse24.Meta16
	if wide != other {
		l = sparse24.Meta32
	}
	l.Swap = swap
	if n%l.Group != 0 {
		return nil, false, nil
	}
	if wide {
		v, err := sparse24.MetaTo32(m.Data, n, k)
		if err != nil {
			return nil, false, nil
		}
		cols := k / 32
		if cols%2 != 0 {
			return nil, false, nil
		}
		o := make([]uint32, len(v))
		for r := 0; r < n; r++ {
			for c := 0; c < cols; c++ {
				o[l.Offset(r, c, n)] = v[r*cols+c]
			}
		}
		return ops.Tensors{"meta_reordered": tensor.FromBits32(tensor.I32, []int{n, cols}, o)}, true, nil
	}
	v, err := sparse24.MetaTo16(m.Data, n, k)
	if err != nil {
		return nil, false, nil
	}
	cols := k / 16
	if cols%2 != 0 {
		return nil, false, nil
	}
	o := make([]uint16, len(v))
	for r := 0; r < n; r++ {
		for c := 0; c < cols; c++ {
			o[l.Offset(r, c, n)] = v[r*cols+c]
		}
	}
	return ops.Tensors{"meta_reordered": tensor.FromBits16(tensor.I16, []int{n, cols}, o)}, true, nil
}

// unreorderNoSwap inverts the 16-bit or 32-bit reorder without the swap.
func unreorderNoSwap(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
	m, ok := t.Inputs["meta_reordered"]
	if !ok || len(m.Shape) != 2 {
		return nil, false, nil
	}
	n, cols := m.Shape[0], m.Shape[1]
	var meta []uint8
	var err error
	noSwap16, noSwap32 := sparse24.Meta16, sparse24.Meta32
	noSwap16.Swap, noSwap32.Swap = false, false
	switch m.DType {
	case tensor.I16:
		if n%32 != 0 {
			return nil, false, nil
		}
		v := m.Bits16()
		o := make([]uint16, len(v))
		for r := 0; r < n; r++ {
			for c := 0; c < cols; c++ {
				o[r*cols+c] = v[noSwap16.Offset(r, c, n)]
			}
		}
		meta, err = sparse24.MetaFrom16(o, n, 16*cols)
	case tensor.I32:
		if n%16 != 0 {
			return nil, false, nil
		}
		v := m.Bits32()
		o := make([]uint32, len(v))
		for r := 0; r < n; r++ {
			for c := 0; c < cols; c++ {
				o[r*cols+c] = v[noSwap32.Offset(r, c, n)]
			}
		}
		meta, err = sparse24.MetaFrom32(o, n, 32*cols)
	default:
		return nil, false, nil
	}
	if err != nil {
		return nil, false, nil
	}
	return ops.Tensors{"meta": tensor.FromU8([]int{n, len(meta) / n}, meta)}, true, nil
}

// swizzleOffsetAs is the byte offset of scale (m, k) under a swizzle
// class; the reference is
// ((m/128)*ceil(cols/4) + k/4)*512 + (m%32)*16 + ((m/32)%4)*4 + k%4.
func swizzleOffsetAs(class string, m, k, cols int) int {
	nKt := (cols + 3) / 4
	switch class {
	case "swizzle-linear":
		return m*nKt*4 + k
	case "swizzle-tile-count-floor":
		nKt = cols / 4
	}
	tile := ((m/128)*nKt + k/4) * 512
	switch class {
	case "swizzle-row-major-tile":
		return tile + (m%128)*4 + k%4
	case "swizzle-column-major-tile":
		return tile + (k%4)*128 + m%128
	}
	return tile + (m%32)*16 + ((m/32)%4)*4 + k%4
}

// swizzleAs is nvfp4.swizzle or nvfp4.unswizzle under a swizzle class. A
// write past the buffer is dropped and a read past it gives 0, as a
// bounds-checked kernel does.
func swizzleAs(s *suite.Suite, t Task, class string) (ops.Tensors, bool, error) {
	if s.Op == "nvfp4.swizzle" {
		x, ok := t.Inputs["scales"]
		if !ok || x.DType != tensor.U8 || len(x.Shape) != 2 {
			return nil, false, nil
		}
		rows, cols := x.Shape[0], x.Shape[1]
		out := make([]uint8, (rows+127)/128*128*((cols+3)/4*4))
		for m := 0; m < rows; m++ {
			for k := 0; k < cols; k++ {
				if o := swizzleOffsetAs(class, m, k, cols); o < len(out) {
					out[o] = x.Data[m*cols+k]
				}
			}
		}
		y := tensor.FromU8([]int{len(out)}, out)
		y.Logical = x.Logical
		return ops.Tensors{"swizzled": y}, true, nil
	}
	x, ok := t.Inputs["swizzled"]
	rows, err1 := t.Params.Int("rows", -1)
	cols, err2 := t.Params.Int("sf_cols", -1)
	if !ok || x.DType != tensor.U8 || err1 != nil || err2 != nil || rows < 0 || cols < 0 {
		return nil, false, nil
	}
	out := make([]uint8, rows*cols)
	for m := 0; m < rows; m++ {
		for k := 0; k < cols; k++ {
			if o := swizzleOffsetAs(class, m, k, cols); o < len(x.Data) {
				out[m*cols+k] = x.Data[o]
			}
		}
	}
	y := tensor.FromU8([]int{rows, cols}, out)
	y.Logical = x.Logical
	return ops.Tensors{"scales": y}, true, nil
}

// awqZerosAll reruns the reference with every stored zero word replaced.
func awqZerosAll(s *suite.Suite, t Task, word uint32) (ops.Tensors, bool, error) {
	z, ok := t.Inputs["qzeros"]
	if !ok || z.DType != tensor.I32 {
		return nil, false, nil
	}
	in := ops.Tensors{}
	for k, v := range t.Inputs {
		in[k] = v
	}
	w := make([]int32, z.Len())
	for i := range w {
		w[i] = int32(word)
	}
	in["qzeros"] = tensor.FromI32(z.Shape, w)
	out, err := ops.Run(s.Op, t.Params, in)
	if err != nil {
		return nil, false, nil
	}
	return out, true, nil
}
