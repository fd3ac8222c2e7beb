// Package nvfp4 is the reference NVFP4 block format: E2M1 elements, one
// E4M3 scale per 16 consecutive elements of a row, and one float32
// per-tensor scale.
//
// A quantizer is pinned as a Recipe: an exact sequence of correctly rounded
// float32 operations, each named in the Recipe's fields. The canonical
// recipe is this package's contract; the other named recipes reproduce what
// public implementations compute (with exact arithmetic where those use
// approximate hardware instructions, as noted on each).
//
// Layout: x is row-major [rows, cols], cols a multiple of 16. Packed holds
// two E2M1 codes per byte, element 2i in the low nibble (fp4.Pack). Scales
// holds the E4M3 codes row-major [rows, cols/16] (the linear layout); see
// Swizzle for the 128x4 layout that tensor-core GEMMs read.
package nvfp4

import (
	"fmt"
	"math"

	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/fp8"
	"github.com/bitexact/bitexact/refimpl/nanconv"
)

// BlockSize is the number of elements sharing one E4M3 scale.
const BlockSize = 16

// Range constants. Their product 2688 is exact in float32.
const (
	E2M1Max = 6   // largest E2M1 magnitude
	E4M3Max = 448 // largest finite E4M3 magnitude
	// GlobalNumerator is E4M3Max*E2M1Max, the numerator of the encode-side
	// per-tensor scale.
	GlobalNumerator = E4M3Max * E2M1Max
)

// PerTensor says which per-tensor float32 a recipe computes and stores.
type PerTensor uint8

const (
	// EncodeScale stores g = 2688/amax: data is multiplied by it on the way
	// in (vLLM input_global_scale, FlashInfer global_sf) and dequantization
	// divides by it.
	EncodeScale PerTensor = iota
	// DecodeScale stores p = amax/2688: dequantization multiplies by it
	// (torchao per_tensor_scale, modelopt weights_scaling_factor_2).
	DecodeScale
	// StoredAmax stores the tensor amax A itself (TransformerEngine's
	// global_amax): dequantization multiplies by float32(s *
	// float32(1/float32(2688/A))).
	StoredAmax
)

// AmaxRule says how NaN elements enter a block's amax.
type AmaxRule uint8

const (
	// IgnoreNaN: amax is the largest |x| over the block's non-NaN elements
	// (IEEE maxNum, CUDA fmaxf); 0 when all are NaN.
	IgnoreNaN AmaxRule = iota
	// PropagateNaN: amax is NaN when any element is NaN (torch.amax).
	PropagateNaN
)

// BlockScaleRule is the float32 computation of the value t that is cast to
// the E4M3 block scale, from the block amax b and the per-tensor value.
type BlockScaleRule uint8

const (
	// DivSixMulGlobal: t = float32(float32(b/6) * g).
	DivSixMulGlobal BlockScaleRule = iota
	// MulRcpSixMulGlobal: t = float32(g * float32(b * float32(1/6))), the
	// vLLM order with a correctly rounded reciprocal of 6.
	MulRcpSixMulGlobal
	// DivSixDivPerTensor: t = float32(float32(b/6) / p) (torchao).
	DivSixDivPerTensor
	// DivSixTimesPerTensor: t = float32(b / float32(6 * p)) (modelopt).
	DivSixTimesPerTensor
)

// ElementRule is the float32 computation of the value q that is cast to
// E2M1, from the element x, the decoded block scale s and the per-tensor
// value.
type ElementRule uint8

const (
	// DivDequantScale: d = float32(s / g); q = float32(x / d), and q = x*0
	// (a signed zero) when d == 0. The canonical rule: divide by exactly the
	// scale that Dequantize multiplies by.
	DivDequantScale ElementRule = iota
	// MulRcpRcp: o = float32(1 / float32(s * float32(1/g))), o = 0 when
	// s == 0; q = float32(x * o). vLLM's order, with correctly rounded
	// reciprocals where vLLM uses rcp.approx.ftz.f32.
	MulRcpRcp
	// MulRcpPerTensorDivScale: q = float32(x * float32(float32(1/p) / s))
	// (torchao v0.17 and later).
	MulRcpPerTensorDivScale
	// DivPerTensorTimesScale: q = float32(x / float32(p * s)) (torchao up
	// to v0.16, modelopt).
	DivPerTensorTimesScale
)

// Recipe is one NVFP4 quantizer, as data.
type Recipe struct {
	Name, Source string
	// Summary says in one line what the recipe does where public
	// implementations differ (diagnoses and docs show it beside the name).
	Summary    string
	PerTensor  PerTensor
	BlockAmax  AmaxRule
	BlockScale BlockScaleRule
	// ScaleMin, when positive, clamps t to [ScaleMin, 448] before the E4M3
	// cast (a NaN t stays NaN).
	ScaleMin float32
	// ZeroScaleOne replaces t == 0 by 1 before the E4M3 cast.
	ZeroScaleOne bool
	// ScaleCast is the E4M3 overflow rule of the block-scale cast.
	ScaleCast fp8.Profile
	Element   ElementRule
	// FP4 is the E2M1 rounding profile of the element cast.
	FP4 fp4.Profile

	// The fields below reproduce a library run on a machine; their zero
	// values are the reference behaviour above. A recipe with Arith set
	// computes the tensor amax with infinities (a NaN propagating as
	// TensorAmaxNaN and BlockAmaxNaN say), and every NaN with the
	// machine's bits.
	Arith Arith
	// TensorAmaxNaN and BlockAmaxNaN are the bits of the NaN the library's
	// amax reductions return for a tensor or block holding a NaN; 0 means
	// the first NaN element with its sign cleared (abs, then a max that
	// selects it).
	TensorAmaxNaN, BlockAmaxNaN uint32
	// Global is how the per-tensor value is divided out.
	Global GlobalRule
	// SixRcp computes b/6 as b·float32(1/6) (torch on CUDA dividing by a
	// Python scalar).
	SixRcp bool
	// Cast is the element cast when the library writes its own.
	Cast CastRule
	// Algorithm selects a library's whole computation where the fields
	// above cannot describe it.
	Algorithm Algorithm
	// Tile16x16 shares each block scale over a 16x16 tile (16 rows of a
	// 16-column block) instead of one row's 16 elements: TransformerEngine's
	// 2D weight quantization. The scales are still written one per row
	// and block.
	Tile16x16 bool
	// Dequant is how the library dequantizes (DequantizeRecipe).
	Dequant DequantRule
	// RefusesFP16 marks a library that does not quantize fp16 input.
	RefusesFP16 bool
}

// Accepts reports whether the recipe's library quantizes input of dtype in.
func (r Recipe) Accepts(in Input) bool { return !(in == InputFP16 && r.RefusesFP16) }

// Algorithm is the computation a library recipe follows.
type Algorithm uint8

const (
	// AlgoFields: the computation the recipe's fields describe.
	AlgoFields Algorithm = iota
	// AlgoCompressedTensors: compressed-tensors' NVFP4 path (ctQuantize).
	AlgoCompressedTensors
	// AlgoTransformerEngine: TransformerEngine's NVFP4QuantizerRef
	// (teQuantize).
	AlgoTransformerEngine
)

// Canonical is the reference recipe of this package:
//
//	amax   = largest finite |x| of the tensor (NaN and ±Inf ignored)
//	g      = float32(2688 / amax), saturated to MaxFloat32 (so amax == 0
//	         gives MaxFloat32)
//	b      = largest |x| over the block's non-NaN elements (±Inf counts)
//	t      = float32(float32(b / 6) * g)
//	sc     = E4M3 satfinite, nearest-even, of t; s = its value
//	d      = float32(s / g)
//	q      = float32(x / d), or x*0 when d == 0
//	code   = E2M1 nearest-even of q (profile "nvidia")
//
// A NaN q is the positive quiet NaN 0x7FC00000 whatever the operands: GPUs
// return a canonical positive NaN from float32 arithmetic, and pinning it
// keeps Go and wasm results identical.
var Canonical = Recipe{
	Name:       "canonical",
	Summary:    "g = 2688/amax, block scale E4M3 satfinite of (b/6)*g, elements x/(s/g); a NaN does not enter the block amax",
	Source:     "bitexact: docs/rationale/blocks.md",
	PerTensor:  EncodeScale,
	BlockAmax:  IgnoreNaN,
	BlockScale: DivSixMulGlobal,
	ScaleCast:  fp8.Satfinite,
	Element:    DivDequantScale,
	FP4:        fp4.NVIDIA,
}

// VLLMModel is a model, not a record: vLLM
// csrc/quantization/fp4/nvfp4_utils.cuh cvt_warp_fp16_to_fp4's order of
// operations with correctly rounded reciprocals in place of
// rcp.approx.ftz.f32, so it agrees with vLLM's kernel only where the
// approximate reciprocal happens to be correctly rounded. Its name says
// so: no vLLM run backs it.
var VLLMModel = Recipe{
	Name:       "vllm-model-exact-rcp",
	Summary:    "a model of vLLM's nvfp4_utils.cuh order with exact reciprocals for rcp.approx (not a record of vLLM): multiplies by reciprocals where canonical divides",
	Source:     "vllm-project/vllm: csrc/quantization/fp4/nvfp4_utils.cuh (rcp.approx replaced by exact 1/x)",
	PerTensor:  EncodeScale,
	BlockAmax:  IgnoreNaN,
	BlockScale: MulRcpSixMulGlobal,
	ScaleCast:  fp8.Satfinite,
	Element:    MulRcpRcp,
	FP4:        fp4.NVIDIA,
}

// Recipes lists the named recipes: the reference ones, then those
// recorded from library runs (LibraryRecipes).
func Recipes() []Recipe {
	return append([]Recipe{Canonical, VLLMModel}, LibraryRecipes()...)
}

// LookupRecipe finds a named recipe.
func LookupRecipe(name string) (Recipe, error) {
	var names []string
	for _, r := range Recipes() {
		if r.Name == name {
			return r, nil
		}
		names = append(names, r.Name)
	}
	return Recipe{}, fmt.Errorf("nvfp4: unknown recipe %q (known: %v)", name, names)
}

// Quantized is an NVFP4 tensor.
type Quantized struct {
	Rows, Cols int
	// Packed is [Rows, Cols/2]: E2M1 codes, element 2i in the low nibble.
	Packed []uint8
	// Scales is [Rows, Cols/16]: E4M3 codes, row-major (linear layout).
	Scales []uint8
	// Global is the recipe's per-tensor value: g for EncodeScale recipes,
	// p for DecodeScale recipes.
	Global float32
}

// canonNaN is the NaN every NaN intermediate is replaced by.
var canonNaN = math.Float32frombits(0x7FC00000)

func canon(x float32) float32 {
	if x != x {
		return canonNaN
	}
	return x
}

func checkShape(n, rows, cols int) error {
	if rows < 0 || cols < 0 {
		return fmt.Errorf("nvfp4: negative shape [%d, %d]", rows, cols)
	}
	if cols%BlockSize != 0 {
		return fmt.Errorf("nvfp4: cols %d is not a multiple of the block size %d", cols, BlockSize)
	}
	if rows != 0 && cols > math.MaxInt/rows || n != rows*cols {
		return fmt.Errorf("nvfp4: %d values do not fill shape [%d, %d]", n, rows, cols)
	}
	return nil
}

// TensorAmax is the largest finite |x| (NaN and ±Inf ignored), 0 when there
// is none.
func TensorAmax(x []float32) float32 {
	// On magnitude bit patterns (sign cleared) the integer order is the
	// float order, and the finite ones are those below 0x7f800000: the
	// loop needs no float compare and no branch, only selects (a taken
	// branch costs Go's wasm code a dispatch).
	var m uint32
	for _, v := range x {
		a := math.Float32bits(v) &^ (1 << 31)
		if a >= 0x7f800000 {
			a = 0
		}
		m = max(m, a)
	}
	return math.Float32frombits(m)
}

// GlobalFromAmax computes the recipe's per-tensor value from a tensor amax:
// EncodeScale: float32(2688/amax) saturated to MaxFloat32; DecodeScale:
// float32(amax/2688).
func GlobalFromAmax(amax float32, r Recipe) float32 {
	if r.PerTensor == DecodeScale {
		return amax / GlobalNumerator
	}
	g := GlobalNumerator / amax
	if g > math.MaxFloat32 {
		g = math.MaxFloat32
	}
	return g
}

// Quantize quantizes a row-major [rows, cols] tensor under r, computing the
// per-tensor value from TensorAmax(x).
func Quantize(x []float32, rows, cols int, r Recipe) (Quantized, error) {
	return QuantizeInput(x, rows, cols, r, InputF32)
}

// QuantizeInput is Quantize of a tensor whose dtype is in, given widened
// exactly to float32 in x. Only library recipes (Arith set) read in: they
// compute in the input's dtype where the library does.
func QuantizeInput(x []float32, rows, cols int, r Recipe, in Input) (Quantized, error) {
	if err := checkShape(len(x), rows, cols); err != nil {
		return Quantized{}, err
	}
	if !r.Accepts(in) {
		return Quantized{}, fmt.Errorf("nvfp4: recipe %s: the library does not quantize %s input", r.Name, in)
	}
	if r.Arith != CanonicalNaN {
		switch r.Algorithm {
		case AlgoCompressedTensors:
			return ctQuantize(x, rows, cols, &r, in), nil
		case AlgoTransformerEngine:
			return teQuantize(x, rows, cols, &r, in), nil
		}
		return libQuantize(x, rows, cols, &r, in), nil
	}
	return QuantizeWithGlobal(x, rows, cols, GlobalFromAmax(TensorAmax(x), r), r)
}

// QuantizeWithGlobal quantizes with a given per-tensor value, as kernels
// that take the global scale as an argument do. global must be finite and
// not negative.
func QuantizeWithGlobal(x []float32, rows, cols int, global float32, r Recipe) (Quantized, error) {
	if err := checkShape(len(x), rows, cols); err != nil {
		return Quantized{}, err
	}
	if !(global >= 0 && global <= math.MaxFloat32) {
		return Quantized{}, fmt.Errorf("nvfp4: per-tensor scale %v is not finite and >= 0", global)
	}
	if r.Arith != CanonicalNaN {
		return Quantized{}, fmt.Errorf("nvfp4: recipe %s computes its own per-tensor value; it takes no given one", r.Name)
	}
	q := Quantized{
		Rows:   rows,
		Cols:   cols,
		Packed: make([]uint8, len(x)/2),
		Scales: make([]uint8, len(x)/BlockSize),
		Global: global,
	}
	// The loop reads r through a pointer and the E2M1 rule from a local:
	// Recipe holds five strings, and copying it per block is costly, most
	// of all under GOARCH=wasm.
	rp, f := &r, r.FP4
	table, scaleTable := lookupTable(e2m1Tables, f), lookupTable(e4m3Tables, r.ScaleCast)
	for blk := range q.Scales {
		xs := (*[BlockSize]float32)(x[blk*BlockSize : (blk+1)*BlockSize])
		t := rp.blockScaleValue(blockAmax(xs, r.BlockAmax), global)
		var sc uint8
		if scaleTable != nil {
			sc = scaleTable.Code(math.Float32bits(t))
		} else {
			sc = fp8.E4M3.Encode(t, r.ScaleCast)
		}
		q.Scales[blk] = sc
		var v [BlockSize]float32
		rp.elementScale(e4m3Values[sc], global).applyBlock(&v, xs)
		out := (*[BlockSize / 2]uint8)(q.Packed[blk*BlockSize/2 : (blk+1)*BlockSize/2])
		if table != nil {
			for i := 0; i < BlockSize; i += 2 {
				out[i/2] = table.Code(math.Float32bits(v[i]))&0xF | table.Code(math.Float32bits(v[i+1]))<<4
			}
			continue
		}
		for i := 0; i < BlockSize; i += 2 {
			out[i/2] = f.Encode(v[i])&0xF | f.Encode(v[i+1])<<4
		}
	}
	return q, nil
}

// blockAmax is the largest |x| of a block, infinities included; a NaN is
// skipped (IgnoreNaN) or makes the result the canonical NaN
// (PropagateNaN). As in TensorAmax, it compares magnitude bit patterns
// with selects rather than branches.
func blockAmax(xs *[BlockSize]float32, rule AmaxRule) float32 {
	var m, nan uint32
	for _, v := range xs {
		a := math.Float32bits(v) &^ (1 << 31)
		nan |= (0x7f800000 - a) >> 31 // 1 exactly for a NaN
		if a > 0x7f800000 {
			a = 0
		}
		m = max(m, a)
	}
	if nan != 0 && rule == PropagateNaN {
		return canonNaN
	}
	return math.Float32frombits(m)
}

// BlockScaleCode returns the E4M3 block-scale code of a block whose amax is
// b, under per-tensor value global.
func (r Recipe) BlockScaleCode(b, global float32) uint8 { return r.blockScaleCode(b, global) }

func (r *Recipe) blockScaleCode(b, global float32) uint8 {
	return fp8.E4M3.Encode(r.blockScaleValue(b, global), r.ScaleCast)
}

// blockScaleValue is the float32 that blockScaleCode casts to E4M3.
func (r *Recipe) blockScaleValue(b, global float32) float32 {
	var t float32
	switch r.BlockScale {
	case DivSixMulGlobal:
		t = float32(b/E2M1Max) * global
	case MulRcpSixMulGlobal:
		const rcp6 = float32(1.0 / 6.0) // correctly rounded at compile time
		t = global * float32(b*rcp6)
	case DivSixDivPerTensor:
		t = float32(b/E2M1Max) / global
	case DivSixTimesPerTensor:
		t = b / float32(E2M1Max*global)
	}
	t = canon(t)
	if r.ScaleMin > 0 && t == t {
		t = min(max(t, r.ScaleMin), E4M3Max)
	}
	if r.ZeroScaleOne && t == 0 {
		t = 1
	}
	return t
}

// e4m3Values[c] is fp8.E4M3.Decode(c), looked up once per block.
var e4m3Values = func() (v [256]float32) {
	for c := range v {
		v[c] = fp8.E4M3.Decode(uint8(c))
	}
	return v
}()

// elemScale maps an element to the value cast to E2M1 for one block: q =
// x*m when mul, else x/m (x*0 when m == 0 under DivDequantScale).
type elemScale struct {
	m        float32
	mul      bool
	zeroMult bool
}

// applyBlock sets v[i] to the value of xs[i] cast to E2M1, choosing the
// case once per block rather than per element (a taken branch costs Go's
// wasm code a dispatch).
func (e elemScale) applyBlock(v, xs *[BlockSize]float32) {
	switch {
	case e.zeroMult:
		for i, x := range xs {
			v[i] = canon(x * 0)
		}
	case e.mul:
		for i, x := range xs {
			v[i] = canon(x * e.m)
		}
	default:
		for i, x := range xs {
			v[i] = canon(x / e.m)
		}
	}
}

// elementScale builds the element map of a block whose decoded scale is s.
func (r *Recipe) elementScale(s, global float32) elemScale {
	switch r.Element {
	case MulRcpRcp:
		var o float32
		if s != 0 {
			o = canon(1 / float32(s*float32(1/global)))
		}
		return elemScale{m: o, mul: true}
	case MulRcpPerTensorDivScale:
		return elemScale{m: canon(float32(1/global) / s), mul: true}
	case DivPerTensorTimesScale:
		return elemScale{m: canon(global * s)}
	default: // DivDequantScale
		d := canon(s / global)
		return elemScale{m: d, zeroMult: d == 0}
	}
}

// DequantScale is the float32 that Dequantize multiplies a block's E2M1
// values by: float32(s/g) for EncodeScale recipes, float32(s*p) for
// DecodeScale recipes, where s is the decoded E4M3 scale.
func DequantScale(scaleCode uint8, global float32, pt PerTensor) float32 {
	s := fp8.E4M3.Decode(scaleCode)
	if pt == DecodeScale {
		return canon(s * global)
	}
	return canon(s / global)
}

// Dequantize expands q to row-major float32: y = float32(e2m1(c) *
// DequantScale(scale, Global, pt)).
func Dequantize(q Quantized, pt PerTensor) ([]float32, error) {
	return DequantizeNaN(q, pt, nanconv.Canonical)
}

// DequantizeNaN is Dequantize with its NaN results under convention nan: a
// NaN scale code carries its E4M3 bits into s/g (or s*g) and on into
// e2m1(c)*d, an invalid step (0/0, 0*Inf) carries x86-64's default NaN.
// Under nanconv.Canonical it is Dequantize.
func DequantizeNaN(q Quantized, pt PerTensor, nan nanconv.Convention) ([]float32, error) {
	if err := checkShape(q.Rows*q.Cols, q.Rows, q.Cols); err != nil {
		return nil, err
	}
	n := q.Rows * q.Cols
	if len(q.Packed) != n/2 {
		return nil, fmt.Errorf("nvfp4: packed has %d bytes, want %d for [%d, %d]", len(q.Packed), n/2, q.Rows, q.Cols)
	}
	if len(q.Scales) != n/BlockSize {
		return nil, fmt.Errorf("nvfp4: scales has %d bytes, want %d for [%d, %d]", len(q.Scales), n/BlockSize, q.Rows, q.Cols)
	}
	y := make([]float32, n)
	canonBits := math.Float32bits(canonNaN)
	for blk, sc := range q.Scales {
		s := fp8.E4M3.Decode(sc)
		if fp8.E4M3.IsNaN(sc) {
			s = math.Float32frombits(nanconv.CarriedFP8(sc, fp8.E4M3.ManBits))
		}
		d := nan.Div(s, q.Global, canonBits)
		if pt == DecodeScale {
			d = nan.Mul(s, q.Global, canonBits)
		}
		for i := 0; i < BlockSize; i++ {
			b := q.Packed[(blk*BlockSize+i)/2]
			c := b & 0xF
			if i%2 == 1 {
				c = b >> 4
			}
			y[blk*BlockSize+i] = nan.Mul(fp4.Decode(c), d, canonBits)
		}
	}
	return y, nil
}
