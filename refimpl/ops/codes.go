package ops

import (
	"math"

	"github.com/bitexact/bitexact/refimpl/tensor"
)

// encodeCodes is the body of every float32 -> 8-bit-code op (e2m1.encode,
// fp8.encode, e8m0.encode): it checks that x is F32, applies enc to each
// element's bit pattern (so a NaN's sign and payload reach the encoder) and
// returns the codes as U8 of x's shape with the given logical format.
func encodeCodes(x tensor.Tensor, logical string, enc func(float32) uint8) (Tensors, error) {
	if err := x.Expect("x", tensor.F32); err != nil {
		return nil, err
	}
	b := x.Bits32()
	c := make([]uint8, len(b))
	for i, u := range b {
		c[i] = enc(math.Float32frombits(u))
	}
	out := tensor.FromU8(x.Shape, c)
	out.Logical = logical
	return Tensors{"codes": out}, nil
}
