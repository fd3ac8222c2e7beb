package ops

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/internal/codetable"
	"github.com/bitexact/bitexact/refimpl/tensor"
	"github.com/bitexact/bitexact/refimpl/unary"
)

// encodeCodes is the body of every float32 -> 8-bit-code op (e2m1.encode,
// fp8.encode, e8m0.encode): it checks that x is F32 (or, declared by the
// parameter input, F16/BF16, widened first: widenInput), encodes each element's
// bit pattern (so a NaN's sign and payload reach the encoder) and returns
// the codes as U8 of x's shape with the given logical format. conv names
// the unary conversion ("format/profile") that enc computes: its codes are
// looked up in the conversion's code table, with enc as the path for a conversion
// unary does not list.
func encodeCodes(p Params, x tensor.Tensor, logical, conv string, enc func(float32) uint8) (Tensors, error) {
	x, err := widenInput(p, x)
	if err != nil {
		return nil, err
	}
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

// inputParam documents the parameter input of the ops that read float32
// x or, declared, fp16 or bf16 x (widenInput).
const inputParam = "fp32 (default) | fp16 | bf16 | a code format of at most 8 bits (e4m3, e4m3fnuz, ...): the type of x (F32, F16, BF16, or U8 codes " +
	"of that format); x is widened exactly to float32 first"

// widenInput checks x against the parameter input and returns an F16 or
// BF16 x, or U8 codes of a format, as the F32 tensor of their exact
// float32 values: an op on 16-bit
// inputs is defined as the float32 op applied to the widened value, which
// is exact (every fp16 and bf16 value is a float32). A bfloat16 widens by
// its bits shifted left 16 (NaN payloads unchanged); an fp16 NaN keeps its
// sign and payload and is made quiet, as IEEE 754's widening conversion
// and half.DecodeFP16 do. The input type is a parameter, not only the
// tensor's dtype, so that a case on 16-bit inputs names it: a kernel that
// claims the op for float32 x does not claim it.
func widenInput(p Params, x tensor.Tensor) (tensor.Tensor, error) {
	var d tensor.DType
	switch v := p.Get("input", "fp32"); v {
	case "fp32":
		return x, nil // the op's own check names a wrong dtype
	case "fp16":
		d = tensor.F16
	case "bf16":
		d = tensor.BF16
	default:
		f, err := unary.LookupFormat(v)
		if err != nil || f.Fields.Bits() > 8 {
			return x, fmt.Errorf("parameter input=%q: want fp32, fp16, bf16 or a code format of at most 8 bits", v)
		}
		return widenCodes(f, x)
	}
	if x.DType != d {
		return x, fmt.Errorf("tensor %q: dtype %s, but parameter input=%s wants %s", "x", x.DType, p.Get("input", ""), d)
	}
	if err := x.Validate(); err != nil {
		return x, fmt.Errorf("tensor %q: %w", "x", err)
	}
	h := x.Bits16()
	v := make([]uint32, len(h))
	for i, b := range h {
		if x.DType == tensor.BF16 {
			v[i] = uint32(b) << 16
		} else {
			v[i] = math.Float32bits(half.DecodeFP16(b))
		}
	}
	return tensor.FromBits32(tensor.F32, x.Shape, v), nil
}

// widenCodes returns the U8 codes x of format f (one per byte, logical f
// or none) as the F32 tensor of their exact values: the input of a
// conversion between two code formats (OCP and FNUZ FP8).
func widenCodes(f unary.Format, x tensor.Tensor) (tensor.Tensor, error) {
	if err := checkCodesU8(x, "x", f.Name); err != nil {
		return x, err
	}
	v := make([]uint32, len(x.Data))
	for i, c := range x.Data {
		if int(c)>>f.Fields.Bits() != 0 {
			return x, fmt.Errorf("tensor %q: element %d is %#x, not a %d-bit %s code", "x", i, c, f.Fields.Bits(), f.Name)
		}
		v[i] = math.Float32bits(f.Decode(uint32(c)))
	}
	return tensor.FromBits32(tensor.F32, x.Shape, v), nil
}
