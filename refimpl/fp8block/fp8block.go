// Package fp8block is the reference for FP8 block scaling as DeepSeek-style
// models ship it: float32 values quantized to E4M3 (or E5M2) in 1xK groups
// along rows (activations, K = 128 by default) or KxK blocks (weights,
// 128x128), each group or block with one scale, a float32 or a power of two
// (UE8M0).
//
// Serving stacks compute the same idea with different arithmetic: the
// epsilon that floors the absolute maximum, whether a NaN reaches it,
// whether amax/448 is a quotient or a product with float32(1/448), how a
// power-of-two scale is rounded up (an integer ceiling of the exponent, or
// exp2(ceil(log2(s))) in float32), whether elements are divided by the scale
// or multiplied by its reciprocal, whether they are clamped before the cast
// and where the clamp sends NaN, and how the cast saturates. Each stack's
// rule is a Recipe, as data, with the source it was read from; torch
// recipes have a CPU form (OnCPU, "name@cpu"). Quantize and QuantizeBlocks
// evaluate a recipe bit for bit, Dequantize inverts the scaling exactly as
// the stacks' dequantizers do (one float32 product).
//
// Every recipe but vLLM's CUDA kernel is a measurement: its stack's own
// code ran on an NVIDIA H200 (torch 2.11, Triton 3.6), on CUDA and for
// torch code on the CPU, and the records in
// conformance/harness/fp8block/corpus-records hold every code and scale;
// go test ./conformance/harness/fp8block/corpus holds each recipe to them.
// docs/rationale/fp8block.md lists what was measured.
//
// Everything is float32 arithmetic Go cannot fuse or reorder (one operation
// per statement, no a*b+c), and NaN results carry the sign the recipe's
// NaNRule gives them, so results are identical on every GOARCH.
package fp8block

import (
	"fmt"
	"math"

	"github.com/bitexact/bitexact/refimpl/fp8"
)

// DefaultGroup is the group length (and weight block edge) of DeepSeek-V3
// style FP8 checkpoints and of every stack's default.
const DefaultGroup = 128

// AmaxNaN says whether a NaN element reaches the group's absolute maximum.
type AmaxNaN uint8

const (
	// AmaxIgnoresNaN: the maximum skips NaN (fmaxf, PTX max.f32, Triton's
	// tl.max): a group with NaN elements is scaled by its other elements.
	AmaxIgnoresNaN AmaxNaN = iota
	// AmaxPropagatesNaN: one NaN makes the maximum NaN (torch amax), and
	// with it the scale.
	AmaxPropagatesNaN
)

// ScaleFrom says which scale is computed from the absolute maximum.
type ScaleFrom uint8

const (
	// DequantScale computes the stored (dequantization) scale first: s =
	// max(amax, Eps) / Max in float32, then rounds it by the Pow2 rule.
	DequantScale ScaleFrom = iota
	// QuantScale is TransformerEngine's order: q = Max / max(amax, Eps),
	// an infinite q replaced by InfScale, rounded by Pow2 (FrexpFloor);
	// a zero amax gives q = 1 and an infinite amax q = 0. The stored
	// scale is the float32 reciprocal 1/q.
	QuantScale
)

// ScaleDiv is how the dequantization scale amax / Max is evaluated
// (DequantScale only).
type ScaleDiv uint8

const (
	// DivideMax is the float32 quotient amax / Max, correctly rounded
	// (IEEE division: torch on the CPU, CUDA's default division).
	DivideMax ScaleDiv = iota
	// MulRecipMax is amax * float32(1/Max): the reciprocal of Max
	// rounded to float32, then one float32 product. torch on CUDA
	// divides a tensor by a Python scalar this way (the reciprocal is
	// taken once on the host), and Triton's float32 division
	// (div.full.f32) gives it for a divisor of 448, as measured. It is
	// up to one ulp above the quotient.
	MulRecipMax
)

// Pow2 is how a scale is made a power of two (a UE8M0 scale), or not.
type Pow2 uint8

const (
	// Pow2None keeps the float32 scale.
	Pow2None Pow2 = iota
	// Pow2BitCeil is DeepGEMM's ceil_to_ue8m0: the float32 exponent field
	// of |s| plus one when the mantissa is non-zero, clamped to [1, 254]:
	// exactly 2^ceil(log2 |s|) for a normal s, 2^-126 for zero and
	// subnormals, 2^127 for Inf and NaN.
	Pow2BitCeil
	// Pow2Log2Ceil is exp2(ceil(log2(s))) evaluated in float32 with a
	// correctly rounded log2: where s is just above a power of two 2^e
	// and log2(s) rounds to the float32 e, the ceiling is e and the scale
	// 2^e is below s (for |e| >= 4; the elements at amax then exceed Max
	// and are clamped). vLLM and sglang write this formula; Triton's
	// tl.log2 matched the correctly rounded log2 on every recorded scale
	// (H200), vLLM's CUDA log2f is not measured. Inf and NaN pass
	// through.
	Pow2Log2Ceil
	// Pow2FrexpFloor rounds a quantization scale q down to 2^floor(log2
	// q) (TransformerEngine: frexp, exponent - 1, ldexp), which rounds the
	// stored scale 1/q up. A NaN q becomes 0.5 (glibc frexp gives exponent
	// 0 for NaN).
	Pow2FrexpFloor
)

// Apply is how an element is scaled before the cast.
type Apply uint8

const (
	// Divide computes x / s in float32.
	Divide Apply = iota
	// MulRecip computes x * float32(1/s).
	MulRecip
	// MulScale computes x * q, q the quantization scale (QuantScale).
	MulScale
)

// Clamp is whether, and how, the scaled element is clamped to [-Max, Max]
// before the cast, and what the clamp does with a NaN.
type Clamp uint8

const (
	// NoClamp casts the scaled element as it is.
	NoClamp Clamp = iota
	// ClampKeepsNaN clamps finite and infinite values; NaN passes
	// (torch.clamp).
	ClampKeepsNaN
	// ClampNaNToLow is fminf(fmaxf(x, -Max), Max): fmaxf returns the
	// non-NaN operand, so NaN becomes -Max.
	ClampNaNToLow
	// ClampNaNToSignedMax is min.xorsign.abs.f32(x, Max) (a clamp to
	// [-Max, Max] folded into one instruction): NaN becomes Max with the
	// NaN's sign.
	ClampNaNToSignedMax
)

// NaNRule is the sign of a NaN that float32 arithmetic produces, which a
// sign-keeping cast (fp8.NoSat) writes into the code.
type NaNRule uint8

const (
	// NaNGPU: every NaN result is the canonical +NaN 0x7fffffff (NVIDIA
	// GPUs, PTX ISA).
	NaNGPU NaNRule = iota
	// NaNHost: x86 SSE/AVX: a NaN operand propagates with its sign; an
	// invalid operation (Inf*0, Inf/Inf, 0/0) gives the default NaN
	// 0xffc00000, negative. Where an element and its group's factor are
	// both NaN, the factor's NaN is the result (torch 2.11's CPU
	// x * factor, measured).
	NaNHost
)

// Recipe is one stack's FP8 block quantization rule, as data.
type Recipe struct {
	Name string
	// Summary says in one line what the recipe computes where stacks
	// differ.
	Summary string
	// Source names the code it was read from (repository, path, pinned
	// commit) and whether it was run.
	Source string
	// Elem is the element format; Max its largest finite value used as
	// the scale target (448 for E4M3, 57344 for E5M2).
	Elem fp8.Format
	Max  float32
	// Eps floors the absolute maximum: max(amax, Eps).
	Eps      float32
	AmaxNaN  AmaxNaN
	From     ScaleFrom
	ScaleDiv ScaleDiv
	Pow2     Pow2
	Apply    Apply
	Clamp    Clamp
	// Cast is the float32 -> FP8 conversion: fp8.Satfinite for PTX
	// cvt.rn.satfinite (CUDA's __nv_fp8_e4m3, Triton's cast on sm_89+),
	// fp8.NoSat for torch's .to(float8_*).
	Cast fp8.Profile
	NaN  NaNRule
	// InfScale replaces an infinite quantization scale (QuantScale only):
	// torch.finfo(x.dtype).max of the input dtype, float32's largest
	// finite value for float32 inputs.
	InfScale float32
	// Torch marks a recipe of torch tensor code, which runs on CPU
	// tensors too (OnCPU).
	Torch bool
}

// String returns the recipe's name.
func (r Recipe) String() string { return r.Name }

// Validate reports whether the recipe's fields are consistent.
func (r Recipe) Validate() error {
	switch {
	case r.Elem != fp8.E4M3 && r.Elem != fp8.E5M2:
		return fmt.Errorf("fp8block: recipe %q: element format %q is not e4m3 or e5m2", r.Name, r.Elem.Name)
	case !(r.Max > 0) || math.IsInf(float64(r.Max), 0):
		return fmt.Errorf("fp8block: recipe %q: Max %g must be positive and finite", r.Name, r.Max)
	case !(r.Eps >= 0):
		return fmt.Errorf("fp8block: recipe %q: Eps %g must be >= 0", r.Name, r.Eps)
	case r.AmaxNaN > AmaxPropagatesNaN || r.From > QuantScale || r.ScaleDiv > MulRecipMax || r.Pow2 > Pow2FrexpFloor ||
		r.Apply > MulScale || r.Clamp > ClampNaNToSignedMax || r.NaN > NaNHost:
		return fmt.Errorf("fp8block: recipe %q: unknown rule value", r.Name)
	case (r.From == QuantScale) != (r.Apply == MulScale):
		return fmt.Errorf("fp8block: recipe %q: MulScale goes with QuantScale and only with it", r.Name)
	case r.Pow2 != Pow2None && (r.From == QuantScale) != (r.Pow2 == Pow2FrexpFloor):
		return fmt.Errorf("fp8block: recipe %q: Pow2FrexpFloor goes with QuantScale and only with it", r.Name)
	case r.From == QuantScale && r.ScaleDiv != DivideMax:
		return fmt.Errorf("fp8block: recipe %q: ScaleDiv applies to DequantScale only", r.Name)
	case r.From == QuantScale && !(r.InfScale > 0):
		return fmt.Errorf("fp8block: recipe %q: QuantScale needs a positive InfScale", r.Name)
	}
	return nil
}

// Quantized is the result of quantizing a rows x cols float32 matrix:
// Codes row-major (rows*cols FP8 codes) and Scales row-major over the
// groups or blocks (the stored, dequantization scales).
type Quantized struct {
	Rows, Cols int
	// GroupRows x GroupCols is the extent of one scale: 1 x K for groups,
	// K x K for blocks.
	GroupRows, GroupCols int
	Codes                []uint8
	Scales               []float32
}

// ScaleRows and ScaleCols are the dimensions of the scale matrix:
// ceil(Rows/GroupRows) x ceil(Cols/GroupCols).
func (q Quantized) ScaleRows() int { return ceilDiv(q.Rows, q.GroupRows) }

// ScaleCols is ceil(Cols/GroupCols).
func (q Quantized) ScaleCols() int { return ceilDiv(q.Cols, q.GroupCols) }

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// Quantize quantizes x (rows x cols, row-major) in 1 x group groups along
// each row under r. A last group shorter than group (cols not a multiple)
// holds the remaining elements, as zero padding (DeepGEMM,
// TransformerEngine) would give.
func Quantize(x []float32, rows, cols, group int, r Recipe) (Quantized, error) {
	return quantize(x, rows, cols, 1, group, r)
}

// QuantizeBlocks quantizes x (rows x cols, row-major) in block x block
// tiles, one scale per tile (weights); edge tiles hold what remains.
func QuantizeBlocks(x []float32, rows, cols, block int, r Recipe) (Quantized, error) {
	return quantize(x, rows, cols, block, block, r)
}

func checkShape(n, rows, cols, gr, gc int) error {
	switch {
	case rows < 0 || cols < 0:
		return fmt.Errorf("fp8block: negative shape %d x %d", rows, cols)
	case gr < 1 || gc < 1:
		return fmt.Errorf("fp8block: group %d x %d must be at least 1 x 1", gr, gc)
	case n != rows*cols:
		return fmt.Errorf("fp8block: %d values for a %d x %d matrix", n, rows, cols)
	}
	return nil
}

func quantize(x []float32, rows, cols, gr, gc int, r Recipe) (Quantized, error) {
	if err := r.Validate(); err != nil {
		return Quantized{}, err
	}
	if err := checkShape(len(x), rows, cols, gr, gc); err != nil {
		return Quantized{}, err
	}
	q := Quantized{Rows: rows, Cols: cols, GroupRows: gr, GroupCols: gc, Codes: make([]uint8, len(x))}
	sr, sc := q.ScaleRows(), q.ScaleCols()
	q.Scales = make([]float32, sr*sc)
	for bi := 0; bi < sr; bi++ {
		r0, r1 := bi*gr, min(rows, (bi+1)*gr)
		for bj := 0; bj < sc; bj++ {
			c0, c1 := bj*gc, min(cols, (bj+1)*gc)
			var a amax
			for i := r0; i < r1; i++ {
				for _, v := range x[i*cols+c0 : i*cols+c1] {
					a.add(v)
				}
			}
			f, stored := r.scales(a.value(r.AmaxNaN))
			q.Scales[bi*sc+bj] = stored
			for i := r0; i < r1; i++ {
				for j := c0; j < c1; j++ {
					q.Codes[i*cols+j] = r.element(x[i*cols+j], f)
				}
			}
		}
	}
	return q, nil
}

// amax accumulates max |v| over a group.
type amax struct {
	m      float32
	hasNaN bool
}

func (a *amax) add(v float32) {
	av := float32(math.Abs(float64(v)))
	if av != av {
		a.hasNaN = true
		return
	}
	if av > a.m {
		a.m = av
	}
}

func (a amax) value(rule AmaxNaN) float32 {
	if a.hasNaN && rule == AmaxPropagatesNaN {
		return float32(math.NaN()) // |NaN|: positive
	}
	return a.m
}

// Scales returns the scale a group with absolute maximum amax gets under
// r: the factor its elements are scaled by (s for Divide, float32(1/s)
// for MulRecip, q for MulScale) and the stored dequantization scale.
func (r Recipe) Scales(amax float32) (factor, stored float32) { return r.scales(amax) }

func (r Recipe) scales(am float32) (factor, stored float32) {
	am = float32(math.Abs(float64(am)))
	if am != am {
		am = posNaN
	} else if am < r.Eps {
		am = r.Eps
	}
	if r.From == QuantScale {
		q := r.div(r.Max, am)
		if math.IsInf(float64(q), 1) {
			q = r.InfScale
		}
		if r.Pow2 == Pow2FrexpFloor {
			q = frexpFloor(q)
			if math.IsInf(float64(am), 1) {
				q = 0
			}
		}
		if am == 0 {
			q = 1
		}
		return q, r.div(1, q)
	}
	var s float32
	if r.ScaleDiv == MulRecipMax {
		one := float32(1)
		s = r.mul(am, one/r.Max)
	} else {
		s = r.div(am, r.Max)
	}
	switch r.Pow2 {
	case Pow2BitCeil:
		s = BitCeil(s)
	case Pow2Log2Ceil:
		s = Log2Ceil(s)
	}
	if r.Apply == MulRecip {
		return r.div(1, s), s
	}
	return s, s
}

// Element quantizes one value v with its group's factor f (the first
// result of Scales).
func (r Recipe) Element(v, f float32) uint8 { return r.element(v, f) }

func (r Recipe) element(v, f float32) uint8 {
	var t float32
	if r.Apply == Divide {
		t = r.div(v, f)
	} else {
		t = r.mul(f, v) // the factor first: its NaN wins over the element's (NaNHost)
	}
	if t != t {
		switch r.Clamp {
		case ClampNaNToLow:
			t = -r.Max
		case ClampNaNToSignedMax:
			t = float32(math.Copysign(float64(r.Max), float64(t)))
		}
	} else if r.Clamp != NoClamp {
		t = min(max(t, -r.Max), r.Max)
	}
	return r.Elem.Encode(t, r.Cast)
}

var (
	posNaN = math.Float32frombits(0x7fc00000)
	negNaN = math.Float32frombits(0xffc00000)
)

// nanOf returns the NaN a float32 operation on a and b (one of them NaN)
// gives under the recipe's NaN rule.
func (r Recipe) nanOf(a, b float32) float32 {
	if r.NaN == NaNGPU {
		return math.Float32frombits(0x7fffffff)
	}
	if a != a {
		return math.Float32frombits(math.Float32bits(a) | 0x00400000)
	}
	return math.Float32frombits(math.Float32bits(b) | 0x00400000)
}

func (r Recipe) invalid() float32 {
	if r.NaN == NaNGPU {
		return math.Float32frombits(0x7fffffff)
	}
	return negNaN
}

// div is a/b rounded to float32 with the recipe's NaN results.
func (r Recipe) div(a, b float32) float32 {
	switch {
	case a != a || b != b:
		return r.nanOf(a, b)
	case a == 0 && b == 0, math.IsInf(float64(a), 0) && math.IsInf(float64(b), 0):
		return r.invalid()
	}
	return a / b
}

// mul is a*b rounded to float32 with the recipe's NaN results.
func (r Recipe) mul(a, b float32) float32 {
	switch {
	case a != a || b != b:
		return r.nanOf(a, b)
	case a == 0 && math.IsInf(float64(b), 0), b == 0 && math.IsInf(float64(a), 0):
		return r.invalid()
	}
	return a * b
}

// Dequantize returns the float32 values code * scale (one float32
// product, the dequantizer of every stack here) of q, row-major. A NaN
// result is written as 0x7fc00000: its sign is not modelled.
func Dequantize(q Quantized, f fp8.Format) ([]float32, error) {
	if err := checkShape(len(q.Codes), q.Rows, q.Cols, q.GroupRows, q.GroupCols); err != nil {
		return nil, err
	}
	if len(q.Scales) != q.ScaleRows()*q.ScaleCols() {
		return nil, fmt.Errorf("fp8block: %d scales, want %d x %d", len(q.Scales), q.ScaleRows(), q.ScaleCols())
	}
	out := make([]float32, len(q.Codes))
	sc := q.ScaleCols()
	for i := 0; i < q.Rows; i++ {
		for j := 0; j < q.Cols; j++ {
			s := q.Scales[(i/q.GroupRows)*sc+j/q.GroupCols]
			v := f.Decode(q.Codes[i*q.Cols+j]) * s
			if v != v {
				v = posNaN // the NaN's sign and payload are not modelled
			}
			out[i*q.Cols+j] = v
		}
	}
	return out, nil
}
