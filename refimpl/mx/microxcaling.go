package mx

import (
	"fmt"
	"math"

	"github.com/bitexact/bitexact/refimpl/e8m0"
)

// Microxcaling is microsoft/microxcaling's MX emulation, _quantize_mx
// with scale_bits 8, shared_exp_method "max", block_size 32, one axis,
// flush_fp32_subnorms False and custom_cuda False (the pure torch path),
// at commit 7bc41952de39, for the MXFP8, MXFP6 and MXINT8 elements. It
// computes in float32, each torch op rounded once:
//
//	se  = floor(log2(amax or 2^-126 for amax 0)) - emax   (e8m0.Microxcaling7bc41952; NaN above 127, -127 below)
//	A   = x / 2^se
//	pe  = max(floor(log2(|A| or 1 for A 0)), 2 - 2^(ebits-1))   (floats; INT8 has none)
//	t   = A / 2^pe * 2^(mbits-2)
//	t   = sign(t) * floor(|t| + 0.5)              round "nearest" (ties away)
//	t   = sign(t) * (floor(|t| + 0.5) - [(|t| - 0.5) mod 2 == 0])   round "even"
//	v   = clamp(t / 2^(mbits-2) * 2^pe, -max, max)
//	y   = v * 2^se
//
// with mbits the mantissa bits plus sign and implicit bit (E4M3 5, E5M2 4,
// E2M3 5, E3M2 4, INT8 8) and log2 a float32 function. Where it differs
// from the family's OCP encoders:
//   - torch.sign(±0) is +0, so an element whose scaled value A is ±0 (an
//     input zero, or a product x/2^se that underflows) comes out +0, while
//     a negative A that rounds to zero comes out -0 (for INT8 too, which
//     has no -0 code: y is -0 where the code is 0).
//   - |t| + 0.5 is a float32 sum: |t| = 0.5 - 2^-25 (half the smallest
//     element step, less one float32 ulp) sums to 1.0 and rounds up.
//   - a block shorter than 32 along the axis (the axis length not a
//     multiple of 32) is zero-padded (_reshape_to_blocks): its amax is
//     that of the elements it has.
//
// A NaN or infinite amax makes se NaN and every y of the block NaN.
// Microxcaling's y for such a block is a NaN whose bits depend on the
// device (see QDQ); round "even" and "nearest" differ only at
// an element tie.
type Microxcaling struct {
	// Nearest selects round "nearest" (ties away from zero); false is
	// round "even".
	Nearest bool
}

// The two microxcaling roundings, as element profile names.
const (
	MicroxcalingEven    = "microxcaling-7bc41952-even"
	MicroxcalingNearest = "microxcaling-7bc41952-nearest"
)

// MicroxcalingSource is the code the Microxcaling emulation reproduces.
const MicroxcalingSource = "microsoft/microxcaling mx/mx_ops.py _quantize_mx and mx/elemwise_ops.py _quantize_elemwise_core at 7bc41952de39 " +
	"(custom_cuda=False), run on CPU and CUDA by conformance/harness/mx-family/run.py"

// mxcBits gives microxcaling's mbits, mantissa width including sign and implicit bit
// (formats.py _get_format_params), ebits its exponent width (0 for INT8).
func (e Element) mxcBits() (ebits, mbits int, ok bool) {
	switch e.Name {
	case E4M3.Name:
		return 4, 5, true
	case E5M2.Name:
		return 5, 4, true
	case E2M3.Name:
		return 2, 5, true
	case E3M2.Name:
		return 3, 4, true
	case INT8.Name:
		return 0, 8, true
	}
	return 0, 0, false
}

// Element is _quantize_elemwise_core for one scaled element a of e (a
// finite or NaN; see Microxcaling): the element value v, before the
// multiply by 2^se.
func (m Microxcaling) Element(e Element, a float32) float32 {
	ebits, mbits, _ := e.mxcBits()
	if a != a {
		return a
	}
	t := a
	var pe int
	if ebits != 0 {
		abs := float32(math.Abs(float64(a)))
		if a == 0 {
			abs = 1
		}
		pe = int(math.Floor(float64(e8m0.Log2F32(abs))))
		pe = max(pe, 2-(1<<(ebits-1)))
	}
	// a / 2^pe * 2^(mbits-2) is exact: pe <= emax+1 keeps the quotient
	// normal and the scaled value lies below 2^(mbits-1).
	t = a * pow2(mbits-2-pe)
	var sign float32 // torch.sign: +0 for either zero
	switch {
	case t > 0:
		sign = 1
	case t < 0:
		sign = -1
	}
	at := float32(math.Abs(float64(t)))
	r := float32(math.Floor(float64(float32(at + 0.5)))) // a float32 sum, then floor
	if !m.Nearest {
		if d := float32(at - 0.5); d == float32(math.Floor(float64(d))) && math.Mod(float64(d), 2) == 0 {
			r--
		}
	}
	v := float32(sign*r) * pow2(pe-(mbits-2))
	return float32(math.Max(-float64(e.Max), math.Min(float64(e.Max), float64(v))))
}

// QDQ is _quantize_mx of a row-major [rows, cols] matrix with
// blocks along dim (Dim0: along a row, axes=[-1]; Dim1: down a column,
// axes=[0]), returning y in x's [rows, cols] orientation. A NaN result
// (every y of a block whose amax is NaN or infinite) is written as nan:
// what microxcaling writes there is the device's, not the emulation's
// (0x7FFFFFFF on CUDA; on the CPU 0x7FC00000 or 0xFFFFFFFF, as torch's
// scalar or vectorized loop computed the block).
func (m Microxcaling) QDQ(x []float32, rows, cols int, dim Dim, e Element, nan uint32) ([]float32, error) {
	if _, _, ok := e.mxcBits(); !ok {
		return nil, fmt.Errorf("mx: microxcaling emulation: element %q is not one of e4m3, e5m2, e2m3, e3m2, int8", e.Name)
	}
	if rows < 0 || cols < 0 || rows != 0 && cols > math.MaxInt/rows || len(x) != rows*cols {
		return nil, fmt.Errorf("mx: %d values do not fill shape [%d, %d]", len(x), rows, cols)
	}
	if dim != Dim0 && dim != Dim1 {
		return nil, fmt.Errorf("mx: dim %d: want 0 or 1", dim)
	}
	y := make([]float32, len(x))
	// idx(line, k) is the flat index of element k along the block axis of
	// line number line.
	lines, length := rows, cols
	idx := func(l, k int) int { return l*cols + k }
	if dim == Dim1 {
		lines, length = cols, rows
		idx = func(l, k int) int { return k*cols + l }
	}
	nanv := math.Float32frombits(nan)
	for l := 0; l < lines; l++ {
		for b0 := 0; b0 < length; b0 += BlockSize {
			b1 := min(b0+BlockSize, length)
			var amax float32
			for k := b0; k < b1; k++ {
				v := x[idx(l, k)]
				if v != v {
					amax = v
					break
				}
				amax = max(amax, float32(math.Abs(float64(v))))
			}
			se := e8m0.MicroxcalingExp(amax, e.Emax)
			for k := b0; k < b1; k++ {
				i := idx(l, k)
				if se != se {
					y[i] = nanv
					continue
				}
				a := x[i] * pow2(-int(se))
				y[i] = m.Element(e, a) * pow2(int(se))
			}
		}
	}
	return y, nil
}

// microxcalingEncoder is the element profile of a Microxcaling rounding:
// the code of the value Element returns (its sign included; INT8 writes
// -0 as code 0). NaN, reached only in a block whose scale is 0xFF, takes
// the code the element's default profile gives NaN.
func microxcalingEncoder(e Element, m Microxcaling) (func(float32) uint8, error) {
	def, err := e.encoder(e.Profiles[0])
	if err != nil {
		return nil, err
	}
	return func(a float32) uint8 { return def(m.Element(e, a)) }, nil
}
