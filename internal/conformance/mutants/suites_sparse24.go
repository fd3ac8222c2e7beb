package mutants

import (
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/sparse24"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// Faulty 2:4 ops the suites' mutants run: metadata reorders with a field
// changed and selection with ties to the later index.

// reorderMeta is sparse24.reorder_meta written out with layout l, one of
// refimpl/sparse24's layouts with a field changed (wide: 32-bit
// metadata).
func reorderMeta(wide bool, l sparse24.MetaReorder) func(ops.Params, ops.Tensors) (ops.Tensors, error) {
	return func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
		m := in["meta"]
		n, k := m.Shape[0], 8*m.Shape[1]
		at := func(r, c int) int { return l.Offset(r, c, n) }
		if wide {
			v, err := sparse24.MetaTo32(m.Data, n, k)
			if err != nil {
				return nil, err
			}
			return ops.Tensors{"meta_reordered": tensor.FromBits32(tensor.I32, []int{n, k / 32}, permuted(v, n, k/32, at))}, nil
		}
		v, err := sparse24.MetaTo16(m.Data, n, k)
		if err != nil {
			return nil, err
		}
		return ops.Tensors{"meta_reordered": tensor.FromBits16(tensor.I16, []int{n, k / 16}, permuted(v, n, k/16, at))}, nil
	}
}

// withoutSwap is layout l without its 2x2 swap.
func withoutSwap(l sparse24.MetaReorder) sparse24.MetaReorder {
	l.Swap = false
	return l
}

// permuted moves element (r, c) of the n x cols row-major v to at(r, c).
func permuted[T uint16 | uint32](v []T, n, cols int, at func(r, c int) int) []T {
	o := make([]T, len(v))
	for r := 0; r < n; r++ {
		for c := 0; c < cols; c++ {
			o[at(r, c)] = v[r*cols+c]
		}
	}
	return o
}

// unreorderNoSwap inverts the 16-bit reorder without the 2x2 swap.
func unreorderNoSwap(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	m := in["meta_reordered"]
	n, cols := m.Shape[0], m.Shape[1]
	v := m.Bits16()
	o := make([]uint16, len(v))
	l := withoutSwap(sparse24.Meta16)
	for r := 0; r < n; r++ {
		for c := 0; c < cols; c++ {
			o[r*cols+c] = v[l.Offset(r, c, n)]
		}
	}
	b, err := sparse24.MetaFrom16(o, n, 16*cols)
	if err != nil {
		return nil, err
	}
	return ops.Tensors{"meta": tensor.FromU8([]int{n, 2 * cols}, b)}, nil
}

// selectTiesHigher is sparse24.select by magnitude where a later index
// wins ties (a >= comparison, or an unstable top-k).
func selectTiesHigher(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	c := in["codes"]
	kept := make([]uint8, len(c.Data))
	meta := make([]uint8, len(c.Data)/4)
	for g := range meta {
		x := c.Data[4*g : 4*g+4]
		idx := []int{0, 1, 2, 3}
		// Stable sort by descending magnitude, then take the last of
		// each run of equals first: sort ascending by (magnitude, index)
		// and keep the top two.
		for i := 1; i < 4; i++ {
			for j := i; j > 0 && x[idx[j-1]]&7 > x[idx[j]]&7; j-- {
				idx[j-1], idx[j] = idx[j], idx[j-1]
			}
		}
		a, b := idx[2], idx[3]
		if a > b {
			a, b = b, a
		}
		kept[4*g+a], kept[4*g+b] = x[a], x[b]
		meta[g] = uint8(a | b<<2)
	}
	k := tensor.FromU8(c.Shape, kept)
	k.Logical = "e2m1"
	shape := append(append([]int{}, c.Shape[:len(c.Shape)-1]...), c.Shape[len(c.Shape)-1]/4)
	return ops.Tensors{"kept": k, "meta": tensor.FromU8(shape, meta)}, nil
}
