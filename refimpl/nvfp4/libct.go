package nvfp4

import (
	"math"

	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/fp8"
)

// ctQuantize is compressed-tensors' NVFP4 weight path (llm-compressor's
// min-max observer, generate_gparam, calculate_qparams, quantize,
// pack_fp4_to_uint8), computed in the input's dtype where the library
// computes in the weight's dtype:
//
//	A  = max(|min(x)|, |max(x)|), at least finfo(dtype).tiny
//	g  = dtype(dtype(1/A) * 2688) (Python's 2688/A is reciprocal(A)*2688);
//	     a NaN or infinite g is 1; stored as float32
//	b  = the block's max |x| in dtype (NaN propagates)
//	t  = g * dtype(b/6), clamped to ±448, cast to E4M3; 0 becomes 0.125
//	s  = t as dtype (the weight_scale tensor), then its E4M3 code
//	q  = x / (s/g), clamped to ±6; code = sign | nearest-even |q|, where
//	     the sign is that of q times torch.sign(q) (so -0 is +0, and a NaN,
//	     made positive by abs, is code 0)
func ctQuantize(x []float32, rows, cols int, r *Recipe, in Input) Quantized {
	a := r.arith()
	amax := float32(0)
	nan := false
	for _, v := range x {
		if v != v {
			nan = true
		}
		amax = max(amax, float32(math.Abs(float64(v))))
	}
	g := float32(1)
	if !nan {
		amax = max(amax, in.tiny())
		g = in.round(in.round(1/amax, a)*GlobalNumerator, a)
		if math.IsInf(float64(g), 0) {
			g = 1
		}
	}
	q := Quantized{Rows: rows, Cols: cols, Packed: make([]uint8, len(x)/2), Scales: make([]uint8, len(x)/BlockSize), Global: g}
	for blk := range q.Scales {
		xs := x[blk*BlockSize : (blk+1)*BlockSize]
		b := float32(0)
		blockNaN := false
		for _, v := range xs {
			if v != v {
				blockNaN = true
				continue
			}
			b = max(b, float32(math.Abs(float64(v))))
		}
		if blockNaN {
			b = in.round(a.reduceNaN(xs, r.BlockAmaxNaN), a)
		}
		var b6 float32
		if r.SixRcp {
			b6 = in.round(a.mul(b, float32(1.0/E2M1Max)), a)
		} else {
			b6 = in.round(a.div(b, E2M1Max), a)
		}
		t := a.clamp(a.mul(g, b6), -E4M3Max, E4M3Max)
		sc := fp8.E4M3.Encode(t, fp8.NoSat)
		s := e4m3Values[sc]
		if s != s {
			s = math.Float32frombits(uint32(sc&0x80)<<24 | 0x7FF00000)
		} else if s == 0 {
			s = 0.125
		}
		s = in.round(s, a) // the weight_scale tensor has the weight's dtype
		if s != s {
			sc = uint8(math.Float32bits(s)>>24)&0x80 | 0x7F
		} else {
			sc = fp8.E4M3.Encode(s, fp8.NoSat)
		}
		q.Scales[blk] = sc
		d := a.div(s, g)
		for i := 0; i < BlockSize; i += 2 {
			var c [2]uint8
			for j := range c {
				c[j] = ctCast(a.clamp(a.div(xs[i+j], d), -E2M1Max, E2M1Max), in, a)
			}
			q.Packed[(blk*BlockSize+i)/2] = c[0]&0xF | c[1]<<4
		}
	}
	return q
}

// ctCast is compressed-tensors' cast_to_fp4, the cast of its result to
// the input's dtype, then pack_fp4_to_uint8: the magnitude rounded by
// interval masks (nearest-even), times torch.sign(q), so -0 is +0. A NaN
// leaves cast_to_fp4 positive (abs); its code is 0, or 8 where the cast to
// the input's dtype makes it negative (bfloat16 on x86: 0xFFFF).
func ctCast(q float32, in Input, a arith) uint8 {
	if q != q {
		return uint8(math.Float32bits(a.nan16(canonNaN, in))>>31) << 3
	}
	if q == 0 {
		return 0
	}
	c := fp4.NVIDIA.Encode(float32(math.Abs(float64(q))))
	if q < 0 {
		c |= 8
	}
	return c
}
