package nvfp4

import (
	"math"

	"github.com/bitexact/bitexact/refimpl/fp8"
)

// teQuantize is TransformerEngine's NVFP4QuantizerRef rowwise, without the
// random Hadamard transform (_quantize, _quantize_blockwise_reference):
//
//	A    = max |x| of the tensor, infinities included, stored as the
//	       per-tensor value
//	ge   = min(2688/A, MaxFloat32), 1 when it is 0; gd = 1/ge
//	b    = the block's (or 16x16 tile's) max |x|
//	t    = min(b * float32(ge * float32(1/6)), MaxFloat32), clamped to
//	       ±448, cast to E4M3 (s its value)
//	e    = min(1 / float32(s * gd), MaxFloat32), so a zero scale encodes
//	       with MaxFloat32
//	code = interval masks on clamp(x * e, ±6) (CastMasks)
func teQuantize(x []float32, rows, cols int, r *Recipe, in Input) Quantized {
	a := r.arith()
	amax := float32(0)
	nan := false
	for _, v := range x {
		if v != v {
			nan = true
			continue
		}
		amax = max(amax, float32(math.Abs(float64(v))))
	}
	if nan {
		amax = r.tensorNaN(x, in)
	}
	ge := a.minMax(a.div(GlobalNumerator, amax))
	if ge == 0 {
		ge = 1
	}
	gd := a.div(1, ge)
	mult := a.mul(ge, float32(1.0/E2M1Max))
	q := Quantized{Rows: rows, Cols: cols, Packed: make([]uint8, len(x)/2), Scales: make([]uint8, len(x)/BlockSize), Global: amax}
	bpr := cols / BlockSize
	for blk := range q.Scales {
		row, bc := blk/bpr, blk%bpr
		var tile []float32
		if r.Tile16x16 {
			r0 := row / 16 * 16
			for i := r0; i < min(r0+16, rows); i++ {
				tile = append(tile, x[i*cols+bc*BlockSize:i*cols+(bc+1)*BlockSize]...)
			}
		} else {
			tile = x[blk*BlockSize : (blk+1)*BlockSize]
		}
		b := float32(0)
		blockNaN := false
		for _, v := range tile {
			if v != v {
				blockNaN = true
				continue
			}
			b = max(b, float32(math.Abs(float64(v))))
		}
		if blockNaN {
			b = a.reduceNaN(tile, r.BlockAmaxNaN)
		}
		t := a.clamp(a.minMax(a.mul(b, mult)), -E4M3Max, E4M3Max)
		sc := fp8.E4M3.Encode(t, fp8.NoSat)
		q.Scales[blk] = sc
		s := e4m3Values[sc]
		if s != s {
			s = math.Float32frombits(uint32(sc&0x80)<<24 | 0x7FF00000)
		}
		e := a.minMax(a.div(1, a.mul(s, gd)))
		xs := x[blk*BlockSize : (blk+1)*BlockSize]
		for i := 0; i < BlockSize; i += 2 {
			var c [2]uint8
			for j := range c {
				c[j] = r.castE2M1(a.mul(xs[i+j], e))
			}
			q.Packed[(blk*BlockSize+i)/2] = c[0]&0xF | c[1]<<4
		}
	}
	return q
}

// minMax is torch.min(v, MaxFloat32), torch's binary minimum: on x86 its
// vectorized kernel ORs an all-ones compare mask into a NaN result
// (0xFFFFFFFF); on CUDA it returns the NaN operand.
func (a arith) minMax(v float32) float32 {
	if v != v {
		if Arith(a) == X86 {
			return math.Float32frombits(0xFFFFFFFF)
		}
		return v
	}
	return min(v, math.MaxFloat32)
}
