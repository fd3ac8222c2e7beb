// Package mxfp4 is the reference OCP MX v1.0 MXFP4 format: 32 consecutive
// E2M1 elements of a row share one E8M0 scale.
//
// Quantization of one block (OCP MX v1.0 §6.3, microxcaling):
//
//	amax = largest |x| of the block; NaN if any element is NaN (±Inf counts)
//	code = E8M0 shared scale: NaN/±Inf amax -> 0xFF, otherwise
//	       e8m0.SharedScale(amax, mode, emax=2, max=6)
//	X    = 2^(code-127)
//	q    = x * 2^-(code-127), one correctly rounded float32 product
//	elem = E2M1 of q under an fp4 profile (default "nvidia", nearest even)
//
// q is exact whenever x*2^-E is representable. It is rounded only when the
// exact product is below 2^-126 in magnitude (a float32 subnormal), and
// then it stays far below the smallest E2M1 rounding threshold 0.25 and on
// the same side of zero, so every profile gives the code it would give the
// exact product, except that a product under 2^-150 rounds to a signed
// zero: a profile that takes the sign from x < 0 (modelopt) sees -0 there,
// exactly as a float32 kernel computing x*2^-E does. 2^-E itself is always
// a float32 (E is in [-127, 127]), so multiplying by it and dividing by 2^E
// give the same correctly rounded result.
//
// When the scale code is 0xFF (NaN) every element is encoded from the
// positive quiet NaN: OCP makes the whole block NaN whatever its element
// codes, and the code then depends only on the profile's NaN rule.
//
// Packing: element 2i in the low nibble (fp4.Pack).
package mxfp4

import (
	"fmt"
	"math"

	"github.com/bitexact/bitexact/refimpl/e8m0"
	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/nanconv"
)

// BlockSize is the number of elements sharing one E8M0 scale.
const BlockSize = 32

// E2M1 element constants passed to e8m0.SharedScale.
const (
	EmaxElem = 2 // exponent of the largest normal E2M1 value, 6 = 1.5*2^2
	MaxElem  = 6
)

// NaNScale is the E8M0 NaN code.
const NaNScale = 0xFF

// Options choose the scale rounding and the element profile, or a
// library's recorded recipe (Recipe.Name set), which then replaces FP4.
type Options struct {
	Mode   e8m0.ScaleMode
	FP4    fp4.Profile
	Recipe Recipe
	// Input is x's dtype before widening, which a recipe whose library
	// computes in that dtype needs (F32 for the element profiles).
	Input Input
}

// Default is OCP MX v1.0: floor scale, nearest-even elements with NVIDIA's
// NaN and saturation rules.
var Default = Options{Mode: e8m0.Floor, FP4: fp4.NVIDIA}

// Quantized is an MXFP4 tensor.
type Quantized struct {
	Rows, Cols int
	// Packed is [Rows, Cols/2]: E2M1 codes, element 2i in the low nibble.
	Packed []uint8
	// Scales is [Rows, Cols/32]: E8M0 codes, row-major.
	Scales []uint8
}

var qNaN = math.Float32frombits(0x7FC00000)

func checkShape(n, rows, cols int) error {
	if rows < 0 || cols < 0 {
		return fmt.Errorf("mxfp4: negative shape [%d, %d]", rows, cols)
	}
	if cols%BlockSize != 0 {
		return fmt.Errorf("mxfp4: cols %d is not a multiple of the block size %d", cols, BlockSize)
	}
	if rows != 0 && cols > math.MaxInt/rows || n != rows*cols {
		return fmt.Errorf("mxfp4: %d values do not fill shape [%d, %d]", n, rows, cols)
	}
	return nil
}

// Pow2 returns 2^k as a float32 for k in [-149, 127], built from its bits
// (subnormal for k < -126).
func Pow2(k int) float32 {
	if k >= -126 {
		return math.Float32frombits(uint32(k+127) << 23)
	}
	return math.Float32frombits(1 << uint(k+149))
}

// BlockAmax is the block's largest |x|, NaN when any element is NaN.
func BlockAmax(xs []float32) float32 {
	var m float32
	for _, v := range xs {
		if v != v {
			return qNaN
		}
		if a := float32(math.Abs(float64(v))); a > m {
			m = a
		}
	}
	return m
}

// ScaleCode is the E8M0 shared scale of a block with the given amax.
func ScaleCode(amax float32, mode e8m0.ScaleMode) uint8 {
	if amax != amax || math.IsInf(float64(amax), 0) {
		return NaNScale
	}
	return e8m0.SharedScale(amax, mode, EmaxElem, MaxElem)
}

// Quantize quantizes a row-major [rows, cols] tensor.
func Quantize(x []float32, rows, cols int, o Options) (Quantized, error) {
	if o.Recipe.Name != "" {
		return o.Recipe.QuantizeInput(x, rows, cols, o.Mode, o.Input)
	}
	if err := checkShape(len(x), rows, cols); err != nil {
		return Quantized{}, err
	}
	q := Quantized{Rows: rows, Cols: cols, Packed: make([]uint8, len(x)/2), Scales: make([]uint8, len(x)/BlockSize)}
	for blk := range q.Scales {
		xs := x[blk*BlockSize : (blk+1)*BlockSize]
		sc := ScaleCode(BlockAmax(xs), o.Mode)
		q.Scales[blk] = sc
		out := q.Packed[blk*BlockSize/2 : (blk+1)*BlockSize/2]
		if sc == NaNScale {
			c := o.FP4.Encode(qNaN) & 0xF
			for i := range out {
				out[i] = c | c<<4
			}
			continue
		}
		inv := Pow2(127 - int(sc))
		for i := 0; i < BlockSize; i += 2 {
			lo := o.FP4.Encode(scaleElem(xs[i], inv))
			hi := o.FP4.Encode(scaleElem(xs[i+1], inv))
			out[i/2] = lo&0xF | hi<<4
		}
	}
	return q, nil
}

// scaleElem is x*inv with a NaN x kept as the positive quiet NaN, the value
// a GPU's float32 multiply returns.
func scaleElem(x, inv float32) float32 {
	if x != x {
		return qNaN
	}
	return x * inv
}

// Dequantize expands q to row-major float32: y = float32(e2m1(c) *
// 2^(scale-127)), NaN for a whole block whose scale is 0xFF.
func Dequantize(q Quantized) ([]float32, error) {
	return DequantizeNaN(q, nanconv.Canonical)
}

// DequantizeNaN is Dequantize with the NaN blocks under convention nan:
// the scale 0xFF decodes to nanconv.CarriedE8M0, which the multiply by
// e2m1(c) carries made quiet. Under nanconv.Canonical it is Dequantize.
func DequantizeNaN(q Quantized, nan nanconv.Convention) ([]float32, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	y := make([]float32, q.Rows*q.Cols)
	nanScale := nan.NaN(math.Float32bits(qNaN), nanconv.CarriedE8M0|nanconv.Quiet)
	for blk, sc := range q.Scales {
		for i := 0; i < BlockSize; i++ {
			j := blk*BlockSize + i
			if sc == NaNScale {
				y[j] = nanScale
				continue
			}
			y[j] = fp4.Decode(q.code(j)) * Pow2(int(sc)-127)
		}
	}
	return y, nil
}

// check reports a shape, packed or scales length that do not agree.
func (q Quantized) check() error {
	if err := checkShape(q.Rows*q.Cols, q.Rows, q.Cols); err != nil {
		return err
	}
	n := q.Rows * q.Cols
	if len(q.Packed) != n/2 {
		return fmt.Errorf("mxfp4: packed has %d bytes, want %d for [%d, %d]", len(q.Packed), n/2, q.Rows, q.Cols)
	}
	if len(q.Scales) != n/BlockSize {
		return fmt.Errorf("mxfp4: scales has %d bytes, want %d for [%d, %d]", len(q.Scales), n/BlockSize, q.Rows, q.Cols)
	}
	return nil
}

// code is element j's E2M1 code (element 2i in the low nibble).
func (q Quantized) code(j int) uint8 {
	b := q.Packed[j/2]
	if j%2 == 1 {
		return b >> 4
	}
	return b & 0xF
}
