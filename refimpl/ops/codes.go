package ops

import (
	"encoding/binary"
	"math"

	"github.com/bitexact/bitexact/refimpl/internal/codetable"
	"github.com/bitexact/bitexact/refimpl/tensor"
	"github.com/bitexact/bitexact/refimpl/unary"
)

// encodeCodes is the body of every float32 -> 8-bit-code op (e2m1.encode,
// fp8.encode, e8m0.encode): it checks that x is F32, encodes each element's
// bit pattern (so a NaN's sign and payload reach the encoder) and returns
// the codes as U8 of x's shape with the given logical format. conv names
// the unary conversion ("format/profile") that enc computes: its codes are
// looked up in the conversion's code table, with enc as the path for a conversion
// unary does not list.
func encodeCodes(x tensor.Tensor, logical, conv string, enc func(float32) uint8) (Tensors, error) {
	if err := x.Expect("x", tensor.F32); err != nil {
		return nil, err
	}
	c := make([]uint8, len(x.Data)/4)
	var t *codetable.Table
	if table, ok := codeTables[conv]; ok {
		t = table()
	}
	if t != nil {
		lookupCodes(t, c, x.Data)
	} else {
		for i := range c {
			c[i] = enc(math.Float32frombits(binary.LittleEndian.Uint32(x.Data[4*i:])))
		}
	}
	if len(c) == 0 {
		c = nil // as tensor.FromU8 leaves it
	}
	// c is new: no copy through tensor.FromU8.
	out := tensor.Tensor{DType: tensor.U8, Shape: append([]int(nil), x.Shape...), Logical: logical, Data: c}
	return Tensors{"codes": out}, nil
}

// codeTables maps each 4- and 8-bit unary conversion name to its
// code table. A lookup per element replaces a call of the encoder
// through a closure and its branches: under GOARCH=wasm a call and a taken
// branch each cost more than the lookup.
var codeTables = func() map[string]func() *codetable.Table {
	m := map[string]func() *codetable.Table{}
	for _, c := range unary.All() {
		if c.Width() == 1 {
			m[c.Name] = c.Table
		}
	}
	return m
}()

// lookupCodes writes the code of each little-endian float32 pattern of src
// to dst (len(src) = 4*len(dst)). Eight codes per iteration: Go's wasm
// code pays a br_table dispatch for every loop back-edge, more than a
// lookup costs.
func lookupCodes(t *codetable.Table, dst []uint8, src []byte) {
	src = src[:4*len(dst)]
	i := 0
	for ; i+8 <= len(dst); i += 8 {
		s := (*[32]byte)(src[4*i:])
		d := (*[8]byte)(dst[i:])
		d[0] = t.Code(binary.LittleEndian.Uint32(s[0:]))
		d[1] = t.Code(binary.LittleEndian.Uint32(s[4:]))
		d[2] = t.Code(binary.LittleEndian.Uint32(s[8:]))
		d[3] = t.Code(binary.LittleEndian.Uint32(s[12:]))
		d[4] = t.Code(binary.LittleEndian.Uint32(s[16:]))
		d[5] = t.Code(binary.LittleEndian.Uint32(s[20:]))
		d[6] = t.Code(binary.LittleEndian.Uint32(s[24:]))
		d[7] = t.Code(binary.LittleEndian.Uint32(s[28:]))
	}
	for ; i < len(dst); i++ {
		dst[i] = t.Code(binary.LittleEndian.Uint32(src[4*i:]))
	}
}
