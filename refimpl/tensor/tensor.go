// Package tensor is the one array type that crosses package lines in
// bitexact: reference operations take and return it, the wasm guest ABI
// serialises it, golden files store it, and kernel results are read into it.
//
// A Tensor is a storage dtype, a shape and little-endian bytes. Packed
// low-precision data (E2M1 pairs, FP8, E8M0 scales) is stored as U8 with the
// logical element format named in Logical, exactly as it is stored in the
// golden safetensors files.
package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
)

// DType is a storage element type, spelled as safetensors spells it.
type DType string

// Storage dtypes used by bitexact.
const (
	U8   DType = "U8"
	I8   DType = "I8"
	U16  DType = "U16"
	I16  DType = "I16"
	F16  DType = "F16"
	BF16 DType = "BF16"
	U32  DType = "U32"
	I32  DType = "I32"
	F32  DType = "F32"
	U64  DType = "U64"
	F64  DType = "F64"
)

// Size is the element size in bytes, or 0 for an unknown dtype.
func (d DType) Size() int {
	switch d {
	case U8, I8:
		return 1
	case U16, I16, F16, BF16:
		return 2
	case U32, I32, F32:
		return 4
	case U64, F64:
		return 8
	}
	return 0
}

// Tensor is a dense row-major array.
type Tensor struct {
	DType DType
	Shape []int
	// Logical names the element format carried by the storage dtype when it
	// differs from it, for example "e2m1x2" (two E2M1 codes per byte, element
	// 2i in the low nibble), "e4m3", "e5m2", "e8m0". Empty otherwise.
	Logical string
	Data    []byte
}

// Len is the number of elements the shape describes.
func (t Tensor) Len() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Validate checks that the dtype is known, no dimension is negative, and the
// data length matches the shape.
func (t Tensor) Validate() error {
	sz := t.DType.Size()
	if sz == 0 {
		return fmt.Errorf("unknown dtype %q", t.DType)
	}
	n := 1
	for i, d := range t.Shape {
		if d < 0 {
			return fmt.Errorf("dimension %d of shape %v is negative", i, t.Shape)
		}
		if d != 0 && n > math.MaxInt/d {
			return fmt.Errorf("shape %v overflows", t.Shape)
		}
		n *= d
	}
	if n > math.MaxInt/sz || len(t.Data) != n*sz {
		return fmt.Errorf("shape %v of %s needs %d bytes, have %d", t.Shape, t.DType, n*sz, len(t.Data))
	}
	return nil
}

// Equal reports whether two tensors have the same dtype, logical format,
// shape and bytes.
func (t Tensor) Equal(u Tensor) bool {
	if t.DType != u.DType || t.Logical != u.Logical || len(t.Shape) != len(u.Shape) || len(t.Data) != len(u.Data) {
		return false
	}
	for i := range t.Shape {
		if t.Shape[i] != u.Shape[i] {
			return false
		}
	}
	for i := range t.Data {
		if t.Data[i] != u.Data[i] {
			return false
		}
	}
	return true
}

// Expect returns an error naming the tensor when t does not have the given
// dtype, or when shape is non-nil and differs (a -1 entry matches any size).
func (t Tensor) Expect(name string, d DType, shape ...int) error {
	if err := t.Validate(); err != nil {
		return fmt.Errorf("tensor %q: %w", name, err)
	}
	if t.DType != d {
		return fmt.Errorf("tensor %q: dtype %s, want %s", name, t.DType, d)
	}
	if shape == nil {
		return nil
	}
	if len(shape) != len(t.Shape) {
		return fmt.Errorf("tensor %q: shape %v, want rank %d %v", name, t.Shape, len(shape), shape)
	}
	for i, s := range shape {
		if s >= 0 && t.Shape[i] != s {
			return fmt.Errorf("tensor %q: shape %v, want %v", name, t.Shape, shape)
		}
	}
	return nil
}

// FromU8 wraps bytes (copied) as a U8 tensor.
func FromU8(shape []int, v []uint8) Tensor {
	return Tensor{DType: U8, Shape: clone(shape), Data: append([]byte(nil), v...)}
}

// FromBits16 stores 16-bit patterns under dtype d (U16, I16, F16, BF16).
func FromBits16(d DType, shape []int, v []uint16) Tensor {
	b := make([]byte, 2*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint16(b[2*i:], x)
	}
	return Tensor{DType: d, Shape: clone(shape), Data: b}
}

// FromBits32 stores 32-bit patterns under dtype d (U32, I32, F32).
func FromBits32(d DType, shape []int, v []uint32) Tensor {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return Tensor{DType: d, Shape: clone(shape), Data: b}
}

// FromF32 stores float32 values bit for bit (NaN payloads included).
func FromF32(shape []int, v []float32) Tensor {
	u := make([]uint32, len(v))
	for i, x := range v {
		u[i] = math.Float32bits(x)
	}
	return FromBits32(F32, shape, u)
}

// FromI32 stores int32 values.
func FromI32(shape []int, v []int32) Tensor {
	u := make([]uint32, len(v))
	for i, x := range v {
		u[i] = uint32(x)
	}
	return FromBits32(I32, shape, u)
}

// Bits16 returns the 16-bit patterns of a 2-byte tensor.
func (t Tensor) Bits16() []uint16 {
	v := make([]uint16, len(t.Data)/2)
	for i := range v {
		v[i] = binary.LittleEndian.Uint16(t.Data[2*i:])
	}
	return v
}

// Bits32 returns the 32-bit patterns of a 4-byte tensor.
func (t Tensor) Bits32() []uint32 {
	v := make([]uint32, len(t.Data)/4)
	for i := range v {
		v[i] = binary.LittleEndian.Uint32(t.Data[4*i:])
	}
	return v
}

// F32 returns the values of an F32 tensor.
func (t Tensor) F32() []float32 {
	// One pass from the bytes, not through Bits32: the intermediate copy's
	// allocation and pass cost more than the conversion, most of all
	// under GOARCH=wasm.
	v := make([]float32, len(t.Data)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.Data[4*i:]))
	}
	return v
}

// I32 returns the values of an I32 tensor.
func (t Tensor) I32() []int32 {
	v := make([]int32, len(t.Data)/4)
	for i := range v {
		v[i] = int32(binary.LittleEndian.Uint32(t.Data[4*i:]))
	}
	return v
}

func clone(s []int) []int { return append([]int(nil), s...) }

// SplitBatch reads the shape of an optionally batched matrix, [E, A, B] or
// [A, B] (E = 1, batched false), as the expert-batched ops take it. An
// empty dimension or another rank is an error naming the tensor.
func (t Tensor) SplitBatch(name string) (e, a, b int, batched bool, err error) {
	switch len(t.Shape) {
	case 2:
		e, a, b = 1, t.Shape[0], t.Shape[1]
	case 3:
		e, a, b, batched = t.Shape[0], t.Shape[1], t.Shape[2], true
	default:
		return 0, 0, 0, false, fmt.Errorf("tensor %q: shape %v, want [E, ., .] or [., .]", name, t.Shape)
	}
	if e == 0 || a == 0 || b == 0 {
		return 0, 0, 0, false, fmt.Errorf("tensor %q: shape %v has an empty dimension", name, t.Shape)
	}
	return e, a, b, batched, nil
}

// BatchShape is the inverse of SplitBatch for an output: dims, with e in
// front when the input was batched.
func BatchShape(batched bool, e int, dims ...int) []int {
	if batched {
		return append([]int{e}, dims...)
	}
	return dims
}
