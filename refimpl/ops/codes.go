package ops

import (
	"encoding/binary"
	"math"
	"sync"

	"github.com/bitexact/bitexact/refimpl/tensor"
	"github.com/bitexact/bitexact/refimpl/unary"
)

// encodeCodes is the body of every float32 -> 8-bit-code op (e2m1.encode,
// fp8.encode, e8m0.encode): it checks that x is F32, encodes each element's
// bit pattern (so a NaN's sign and payload reach the encoder) and returns
// the codes as U8 of x's shape with the given logical format. conv names
// the unary conversion ("format/profile") that enc computes: its codes are
// looked up in a table (codeTable), with enc as the path for a conversion
// unary does not list.
func encodeCodes(x tensor.Tensor, logical, conv string, enc func(float32) uint8) (Tensors, error) {
	if err := x.Expect("x", tensor.F32); err != nil {
		return nil, err
	}
	c := make([]uint8, len(x.Data)/4)
	if table, ok := codeTables[conv]; ok {
		lookupCodes(table(), c, x.Data)
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

// A codeTable holds the code of every float32 pattern of a 4- or 8-bit
// unary conversion as a function of its top 13 bits and of whether its low
// 19 bits are zero: entry 2k+1 is the code of pattern k<<19, entry 2k that
// of every other pattern of bucket k. That such a table gives Encode's code
// for every input is refimpl/unary's invariant (its codeTable, checked
// over all 2^32 inputs by TestEncodeRangeExhaustive and the committed
// digests); this one is filled from the conversion's own EncodeRange of
// the two patterns k<<19 and k<<19 + 1, so it holds the same bytes.
//
// A lookup per element replaces a call of the encoder through a closure
// and its branches: under GOARCH=wasm a call and a taken branch each cost
// more than the lookup.
type codeTable [2 << 13]uint8

// codeTables maps each 4- and 8-bit unary conversion name to its table,
// built on first use.
var codeTables = func() map[string]func() *codeTable {
	m := map[string]func() *codeTable{}
	for _, c := range unary.All() {
		if c.Width() != 1 {
			continue
		}
		m[c.Name] = sync.OnceValue(func() *codeTable {
			t := new(codeTable)
			var two [2]byte
			for k := range len(t) / 2 {
				c.EncodeRange(uint32(k)<<19, two[:])
				t[2*k+1], t[2*k] = two[0], two[1]
			}
			return t
		})
	}
	return m
}()

// lookupCodes writes the code of each little-endian float32 pattern of src
// to dst (len(src) = 4*len(dst)). Eight codes per iteration: Go's wasm
// code pays a br_table dispatch for every loop back-edge, more than a
// lookup costs.
func lookupCodes(t *codeTable, dst []uint8, src []byte) {
	src = src[:4*len(dst)]
	i := 0
	for ; i+8 <= len(dst); i += 8 {
		s := (*[32]byte)(src[4*i:])
		d := (*[8]byte)(dst[i:])
		d[0] = t.lookup(binary.LittleEndian.Uint32(s[0:]))
		d[1] = t.lookup(binary.LittleEndian.Uint32(s[4:]))
		d[2] = t.lookup(binary.LittleEndian.Uint32(s[8:]))
		d[3] = t.lookup(binary.LittleEndian.Uint32(s[12:]))
		d[4] = t.lookup(binary.LittleEndian.Uint32(s[16:]))
		d[5] = t.lookup(binary.LittleEndian.Uint32(s[20:]))
		d[6] = t.lookup(binary.LittleEndian.Uint32(s[24:]))
		d[7] = t.lookup(binary.LittleEndian.Uint32(s[28:]))
	}
	for ; i < len(dst); i++ {
		dst[i] = t.lookup(binary.LittleEndian.Uint32(src[4*i:]))
	}
}

// lookup is the code of float32 pattern b.
func (t *codeTable) lookup(b uint32) uint8 {
	// (b&low - 1) >> 31 is 1 exactly when the low 19 bits are zero.
	return t[(b>>19<<1|(b&(1<<19-1)-1)>>31)&(uint32(len(t))-1)]
}
