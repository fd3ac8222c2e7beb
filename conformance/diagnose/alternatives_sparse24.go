package diagnose

import (
	"github.com/bitexact/bitexact/refimpl/ops"
)

// Alternatives of 2:4 compression: metadata indices swapped, kept pairs
// in descending order.

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
