package mutants

import (
	"math"

	"github.com/bitexact/bitexact/refimpl/fp8"
	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// Faulty scalar decoders and encoders the suites' mutants run: codes decoded
// by formula, FP8 ties away, bf16 rounding bias without a NaN guard, a
// software fp16 rounder with hipdnn's faults.

// decodeCodes maps the U8 input "codes" to a float32 output "x".
func decodeCodes(f func(ops.Params, uint8) float32) func(ops.Params, ops.Tensors) (ops.Tensors, error) {
	return func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
		c := in["codes"]
		if err := c.Expect("codes", tensor.U8); err != nil {
			return nil, err
		}
		y := make([]float32, len(c.Data))
		for i, b := range c.Data {
			y[i] = f(p, b)
		}
		return ops.Tensors{"x": tensor.FromF32(c.Shape, y)}, nil
	}
}

// formulaDecode decodes a sign-magnitude minifloat code as
// (-1)^s 2^(e-bias) (1 + m/2^M) for every code: no subnormal, zero or
// special-value branch.
func formulaDecode(b uint8, expBits, manBits, bias int) float32 {
	w := 1 + expBits + manBits
	mag := int(b) & (1<<(w-1) - 1)
	e, m := mag>>manBits, mag&(1<<manBits-1)
	v := float32(math.Ldexp(1+float64(m)/float64(int(1)<<manBits), e-bias))
	if b>>(w-1)&1 == 1 {
		v = -v
	}
	return v
}

func fp8Of(p ops.Params) fp8.Format {
	f, err := fp8.LookupFormat(p.Get("format", "e4m3"))
	if err != nil {
		return fp8.E4M3
	}
	return f
}

// fp8TiesAway encodes both FP8 formats by nearest-value search with ties
// to the larger magnitude.
func fp8TiesAway(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	f := fp8Of(p)
	return codes(p.Get("format", "e4m3"), nearestTiesAway(f))(p, in)
}

// bf16Bias is the rounding-bias float32 -> bf16 conversion without a NaN
// guard: (bits + 0x7FFF + lsb) >> 16. A NaN whose payload lies in the low
// 16 bits becomes Inf, and one with a full payload carries into the sign.
func bf16Bias(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	x := in["x"]
	b := x.Bits32()
	o := make([]uint16, len(b))
	for i, v := range b {
		o[i] = uint16((v + 0x7FFF + (v>>16)&1) >> 16)
	}
	return ops.Tensors{"y": tensor.FromBits16(tensor.BF16, x.Shape, o)}, nil
}

// fp16DoubleShift is a software float -> fp16 rounder with the faults of
// hipdnn's float_to_half_bits: a subnormal branch that shifts the mantissa
// twice (every fp16-subnormal result a signed zero), and a NaN payload
// truncated without quieting (a NaN with payload only in the low 13 bits
// becomes Inf).
func fp16DoubleShift(subnormal, nan bool) func(ops.Params, ops.Tensors) (ops.Tensors, error) {
	return func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
		x := in["x"]
		b := x.Bits32()
		o := make([]uint16, len(b))
		for i, v := range b {
			h := half.EncodeFP16(math.Float32frombits(v))
			switch {
			case subnormal && h&0x7C00 == 0:
				h &= 0x8000
			case nan && v&0x7f800000 == 0x7f800000 && v&0x7fffff != 0:
				h = uint16(v>>16)&0x8000 | 0x7C00 | uint16(v>>13)&0x3FF
			}
			o[i] = h
		}
		return ops.Tensors{"y": tensor.FromBits16(tensor.F16, x.Shape, o)}, nil
	}
}
