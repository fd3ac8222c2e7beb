// Package mx is the OCP MX v1.0 block format family as one parameterised
// format: 32 consecutive elements share one E8M0 scale; the element type
// (E2M1, E2M3, E3M2, E4M3, E5M2, INT8) fixes the element's largest normal
// exponent emax and largest value max (OCP MX v1.0 Table 1 and §5.3), the
// scale rule is any e8m0.ScaleMode (the four of torchao's
// ScaleCalculationMode and the rules measured in the wild), and the
// elements are encoded by the scalar reference of their type
// (refimpl/fp4, refimpl/fp8, refimpl/minifloat) under a named profile.
//
// Quantization of one block, whatever the element type:
//
//	amax = largest |x| of the block; NaN if any element is NaN
//	code = 0xFF if amax is NaN or ±Inf, else e8m0.SharedScale(amax, mode, emax, max)
//	q    = x * 2^-(code-127), one correctly rounded float32 product
//	elem = the element type's encoder under its profile, applied to q
//
// A block whose scale is 0xFF encodes every element from the positive
// quiet NaN (OCP makes the whole block NaN whatever its element codes).
// Dequantization is y = float32(value(elem) * 2^(code-127)), NaN for a
// block whose scale is 0xFF. MXFP4 (E2M1) is one member: with the same
// mode and fp4 profile it gives refimpl/mxfp4's bytes (TestMXFP4Member).
//
// Dim0 blocks run along a row (32 consecutive columns, the layout of
// inference and of torchao's to_mx); Dim1 blocks run down a column (32
// consecutive rows, the transposed quantization training uses for the
// backward pass: torchao's to_mx of x.t(), its MXFP8 dim1 cast). A Dim1
// result holds the quantized transpose: codes [cols, rows], scales
// [cols, rows/32].
//
// Libraries that do not follow these steps are reproduced by named
// profiles measured against their runs: Microxcaling is microsoft/
// microxcaling's _quantize_mx (its element profiles
// microxcaling-7bc41952-even and -nearest with the scale mode
// e8m0.Microxcaling7bc41952) and TorchAO is pytorch/ao v0.18.0's to_mx
// (profiles torchao-0.18-<mode>-<cpu|cuda>), each held bit for bit to
// its record in conformance/harness/mx-family/corpus-records by
// TestRecords and TestRecordsTorchAO.
package mx

import (
	"fmt"
	"math"

	"github.com/bitexact/bitexact/refimpl/e8m0"
	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/fp8"
	"github.com/bitexact/bitexact/refimpl/minifloat"
	"github.com/bitexact/bitexact/refimpl/mxfp4"
)

// BlockSize is the number of elements sharing one E8M0 scale.
const BlockSize = 32

// NaNScale is the E8M0 NaN code.
const NaNScale = 0xFF

// Element is one MX element type.
type Element struct {
	// Name is the element's name in op parameters: "e2m1", "e4m3", "int8".
	Name string
	// Bits is the code width (4, 6 or 8).
	Bits int
	// Emax is the exponent of the largest normal value (OCP MX v1.0
	// Table 1): 2 for E2M1 and E2M3, 4 for E3M2, 8 for E4M3, 15 for E5M2,
	// 0 for INT8.
	Emax int
	// Max is the largest finite value: 6, 7.5, 28, 448, 57344, 127/64.
	Max float32
	// Mantissa is the element's mantissa width, which the Even scale rule
	// rounds amax to (torchao's mbits; 6 for INT8, whose values are
	// multiples of 2^-6).
	Mantissa int
	// Profiles are the encoder profiles the element accepts, the default
	// first.
	Profiles []string
	decode   func(uint8) float32
	encoder  func(profile string) (func(float32) uint8, error)
}

var (
	fp6E2M3 = minifloat.Format{ExpBits: 2, ManBits: 3, Bias: 1, Specials: minifloat.Finite}
	fp6E3M2 = minifloat.Format{ExpBits: 3, ManBits: 2, Bias: 3, Specials: minifloat.Finite}
	// fp6Satfinite is nearest even, overflow and ±Inf saturating; NaN (only
	// reached in a NaN block) becomes the sign code 0x20 (-0).
	fp6Satfinite = minifloat.Profile{Name: "satfinite", Saturate: true, NaN: minifloat.NaNToNaN,
		Summary: "nearest even, saturating to ±max; NaN -> 0x20",
		Source:  "OCP MX v1.0 §5.3.2 (FP6 conversions saturate); torchao f32_to_f6_e2m3_unpacked / f32_to_f6_e3m2_unpacked"}
)

// The element types.
var (
	E2M1 = Element{Name: "e2m1", Bits: 4, Emax: 2, Max: 6, Mantissa: 1,
		Profiles: fp4Names(), decode: fp4.Decode, encoder: func(p string) (func(float32) uint8, error) {
			prof, err := fp4.Lookup(p)
			if err != nil {
				return nil, err
			}
			return prof.Encode, nil
		}}
	E2M3 = Element{Name: "e2m3", Bits: 6, Emax: 2, Max: 7.5, Mantissa: 3,
		Profiles: []string{fp6Satfinite.Name, MicroxcalingEven, MicroxcalingNearest}, decode: fp6E2M3.Decode, encoder: minifloatEncoder(fp6E2M3)}
	E3M2 = Element{Name: "e3m2", Bits: 6, Emax: 4, Max: 28, Mantissa: 2,
		Profiles: []string{fp6Satfinite.Name, MicroxcalingEven, MicroxcalingNearest}, decode: fp6E3M2.Decode, encoder: minifloatEncoder(fp6E3M2)}
	E4M3 = Element{Name: "e4m3", Bits: 8, Emax: 8, Max: 448, Mantissa: 3,
		Profiles: append(fp8Names(fp8.E4M3), MicroxcalingEven, MicroxcalingNearest), decode: fp8.E4M3.Decode, encoder: fp8Encoder(fp8.E4M3)}
	E5M2 = Element{Name: "e5m2", Bits: 8, Emax: 15, Max: 57344, Mantissa: 2,
		Profiles: append(fp8Names(fp8.E5M2), MicroxcalingEven, MicroxcalingNearest), decode: fp8.E5M2.Decode, encoder: fp8Encoder(fp8.E5M2)}
	INT8 = Element{Name: "int8", Bits: 8, Emax: 0, Max: 127.0 / 64, Mantissa: 6,
		Profiles: []string{"even", "away", MicroxcalingEven, MicroxcalingNearest}, decode: decodeInt8, encoder: int8Encoder}
)

// Elements lists the element types.
func Elements() []Element { return []Element{E2M1, E2M3, E3M2, E4M3, E5M2, INT8} }

// LookupElement returns the element type with the given name.
func LookupElement(name string) (Element, error) {
	for _, e := range Elements() {
		if e.Name == name {
			return e, nil
		}
	}
	return Element{}, fmt.Errorf("mx: unknown element %q (known: e2m1, e2m3, e3m2, e4m3, e5m2, int8)", name)
}

// Decode returns the exact value of element code c.
func (e Element) Decode(c uint8) float32 { return e.decode(c) }

// Encoder returns the element encoder of the named profile ("" is the
// default, Profiles[0]).
func (e Element) Encoder(profile string) (func(float32) uint8, error) {
	if profile == "" {
		profile = e.Profiles[0]
	}
	if _, _, ok := e.mxcBits(); ok && (profile == MicroxcalingEven || profile == MicroxcalingNearest) {
		return microxcalingEncoder(e, Microxcaling{Nearest: profile == MicroxcalingNearest})
	}
	enc, err := e.encoder(profile)
	if err != nil {
		return nil, fmt.Errorf("mx: element %s: %w", e.Name, err)
	}
	return enc, nil
}

// ScaleCode is the E8M0 shared scale of a block with the given amax under
// mode: 0xFF for a NaN or infinite amax.
//
// The Even rule rounds amax to the element's mantissa width before taking
// the exponent; e8m0.SharedScale reads that width from the significand of
// the max it is passed, which for E4M3 (448 = 1.11b*2^8) and INT8 is not
// the element's. So for Even the max passed is (2 - 2^-Mantissa)*2^Emax,
// whose significand has exactly Mantissa bits (for torchao's EVEN too,
// e8m0.TorchAO017Even, which rounds to torchao's MBITS, the same widths);
// the other rules get Max.
func (e Element) ScaleCode(amax float32, mode e8m0.ScaleMode) uint8 {
	if amax != amax || math.IsInf(float64(amax), 0) {
		return NaNScale
	}
	max := e.Max
	if mode.Name == e8m0.Even.Name || mode.Name == e8m0.TorchAO017Even.Name {
		max = float32(math.Ldexp(2-math.Ldexp(1, -e.Mantissa), e.Emax))
	}
	return e8m0.SharedScale(amax, mode, e.Emax, max)
}

func fp4Names() []string {
	var n []string
	for _, p := range fp4.Profiles() {
		n = append(n, p.Name)
	}
	return n
}

func fp8Names(f fp8.Format) []string {
	var n []string
	for _, p := range fp8.Profiles() {
		if p.Has(f.Name) {
			n = append(n, p.Name)
		}
	}
	return n
}

func fp8Encoder(f fp8.Format) func(string) (func(float32) uint8, error) {
	return func(name string) (func(float32) uint8, error) {
		p, err := fp8.LookupProfile(name)
		if err != nil {
			return nil, err
		}
		if !p.Has(f.Name) {
			return nil, fmt.Errorf("fp8 profile %s is not defined for %s", p.Name, f.Name)
		}
		return func(x float32) uint8 { return f.Encode(x, p) }, nil
	}
}

func minifloatEncoder(f minifloat.Format) func(string) (func(float32) uint8, error) {
	return func(name string) (func(float32) uint8, error) {
		if name != fp6Satfinite.Name {
			return nil, fmt.Errorf("unknown profile %q (known: %s)", name, fp6Satfinite.Name)
		}
		return func(x float32) uint8 { return f.Encode(x, fp6Satfinite) }, nil
	}
}

// MXINT8 elements (OCP MX v1.0 §5.3.3): two's complement with an implicit
// scale of 2^-6, value c/64. Encoders saturate to ±127 (the code -128 is
// never produced, as in microxcaling) and send NaN to 0. Profile "even"
// rounds q*64 to nearest even; "away" rounds half away from zero,
// microxcaling's round="nearest" (floor(|x|+0.5) with the sign kept).
func decodeInt8(c uint8) float32 { return float32(int8(c)) / 64 }

func int8Encoder(name string) (func(float32) uint8, error) {
	var away bool
	switch name {
	case "even":
	case "away":
		away = true
	default:
		return nil, fmt.Errorf("unknown profile %q (known: even, away)", name)
	}
	return func(x float32) uint8 {
		if x != x {
			return 0
		}
		// x*64 is exact for every float32 that does not overflow; the
		// rounding below works in float64, where every float32 is exact.
		v := float64(x) * 64
		var r float64
		if away {
			r = math.Copysign(math.Floor(math.Abs(v)+0.5), v)
		} else {
			r = math.RoundToEven(v)
		}
		r = math.Max(-127, math.Min(127, r))
		return uint8(int8(r))
	}, nil
}

// Dim is the axis a block runs along.
type Dim int

// The block directions.
const (
	Dim0 Dim = 0 // along a row: scales [rows, cols/32]
	Dim1 Dim = 1 // down a column: the transpose is quantized, scales [cols, rows/32]
)

// Options choose the element type, its encoder profile and the scale rule.
type Options struct {
	Element Element
	// Profile names the element encoder ("" for the element's default).
	Profile string
	Mode    e8m0.ScaleMode
}

// Quantized is an MX tensor: one element code per byte (unpacked; see
// fp4.Pack and FP6Packing for the packed forms) and E8M0 scales in
// row-major [Rows, Cols/32] order (blocklayout places them otherwise).
type Quantized struct {
	Element Element
	Dim     Dim
	// Rows and Cols are the shape of the quantized matrix: the input's
	// for Dim0, its transpose's for Dim1.
	Rows, Cols int
	Codes      []uint8
	Scales     []uint8
}

var qNaN = math.Float32frombits(0x7FC00000)

// pow2 is 2^k as a float32 for k in [-149, 127] (refimpl/mxfp4's, the
// family's E2M1 member, until that package is rebuilt on this one).
func pow2(k int) float32 { return mxfp4.Pow2(k) }

// BlockAmax is the block's largest |x|, NaN when any element is NaN: the
// OCP amax every element type shares (refimpl/mxfp4.BlockAmax).
func BlockAmax(xs []float32) float32 { return mxfp4.BlockAmax(xs) }

func checkShape(n, rows, cols int, d Dim) error {
	if rows < 0 || cols < 0 {
		return fmt.Errorf("mx: negative shape [%d, %d]", rows, cols)
	}
	if rows != 0 && cols > math.MaxInt/rows || n != rows*cols {
		return fmt.Errorf("mx: %d values do not fill shape [%d, %d]", n, rows, cols)
	}
	switch d {
	case Dim0:
		if cols%BlockSize != 0 {
			return fmt.Errorf("mx: dim0 blocks: cols %d is not a multiple of the block size %d", cols, BlockSize)
		}
	case Dim1:
		if rows%BlockSize != 0 {
			return fmt.Errorf("mx: dim1 blocks: rows %d is not a multiple of the block size %d", rows, BlockSize)
		}
	default:
		return fmt.Errorf("mx: dim %d: want 0 or 1", d)
	}
	return nil
}

// Transpose returns the [cols, rows] transpose of a row-major [rows, cols]
// matrix.
func Transpose[T any](x []T, rows, cols int) []T {
	t := make([]T, len(x))
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			t[c*rows+r] = x[r*cols+c]
		}
	}
	return t
}

// Quantize quantizes a row-major [rows, cols] float32 matrix with blocks
// along dim.
func Quantize(x []float32, rows, cols int, dim Dim, o Options) (Quantized, error) {
	if err := checkShape(len(x), rows, cols, dim); err != nil {
		return Quantized{}, err
	}
	if o.Element.encoder == nil {
		return Quantized{}, fmt.Errorf("mx: no element type given")
	}
	enc, err := o.Element.Encoder(o.Profile)
	if err != nil {
		return Quantized{}, err
	}
	if dim == Dim1 {
		x, rows, cols = Transpose(x, rows, cols), cols, rows
	}
	q := Quantized{Element: o.Element, Dim: dim, Rows: rows, Cols: cols,
		Codes: make([]uint8, len(x)), Scales: make([]uint8, len(x)/BlockSize)}
	for blk := range q.Scales {
		xs := x[blk*BlockSize : (blk+1)*BlockSize]
		out := q.Codes[blk*BlockSize : (blk+1)*BlockSize]
		sc := o.Element.ScaleCode(BlockAmax(xs), o.Mode)
		q.Scales[blk] = sc
		if sc == NaNScale {
			c := enc(qNaN)
			for i := range out {
				out[i] = c
			}
			continue
		}
		inv := pow2(127 - int(sc))
		for i, v := range xs {
			if v != v {
				v = qNaN // a GPU's float32 multiply returns the canonical NaN
			} else {
				v *= inv
			}
			out[i] = enc(v)
		}
	}
	return q, nil
}

// Dequantize expands q to row-major float32 in the orientation of the
// matrix that was quantized ([rows, cols] of the input, for Dim1 too):
// y = float32(value(c) * 2^(scale-127)), NaN for a block whose scale is
// 0xFF.
func Dequantize(q Quantized) ([]float32, error) {
	if q.Element.decode == nil {
		return nil, fmt.Errorf("mx: no element type given")
	}
	if err := checkShape(q.Rows*q.Cols, q.Rows, q.Cols, Dim0); err != nil {
		return nil, err
	}
	n := q.Rows * q.Cols
	if len(q.Codes) != n {
		return nil, fmt.Errorf("mx: %d codes, want %d for [%d, %d]", len(q.Codes), n, q.Rows, q.Cols)
	}
	if len(q.Scales) != n/BlockSize {
		return nil, fmt.Errorf("mx: %d scales, want %d for [%d, %d]", len(q.Scales), n/BlockSize, q.Rows, q.Cols)
	}
	y := make([]float32, n)
	for j, c := range q.Codes {
		sc := q.Scales[j/BlockSize]
		if sc == NaNScale {
			y[j] = qNaN
			continue
		}
		y[j] = q.Element.decode(c) * pow2(int(sc)-127)
	}
	if q.Dim == Dim1 {
		y = Transpose(y, q.Rows, q.Cols)
	}
	return y, nil
}
