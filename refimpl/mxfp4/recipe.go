package mxfp4

import (
	"fmt"
	"math"
	"strings"

	"github.com/bitexact/bitexact/refimpl/e8m0"
)

// Recipe is one library's MXFP4 quantizer, as data: how it derives the
// E8M0 code from the block amax for each scale mode, how it turns x into
// the float32 it encodes (dividing by the scale, or multiplying by a
// reciprocal, with the library's own substitutions for code 0 and the NaN
// code), how that float32 becomes an E2M1 code, and which NaN the device's
// float32 arithmetic produces. A recipe replaces the element profile of
// Options; the scale mode still selects the library's mode.
//
// Every recipe is a record: conformance/harness/<library> ran the library's
// own code on CPU and CUDA, and internal/conformance/record's tests hold the recipe to
// those outputs.
type Recipe struct {
	// Name is the value of mxfp4.quantize's "profile" parameter:
	// <library>-<version>-<device>, the version being the release whose
	// code it reproduces (or the commit, for an unreleased tree).
	Name string
	// Summary says in one line what the recipe does differently.
	Summary string
	// Source is the code reproduced: repository, path, commit.
	Source string
	style  recipeStyle
	device Device
	// mode is the one scale mode of a library that has one (its Summary
	// names it); empty for torchao, whose recipes take all four.
	mode string
}

type recipeStyle uint8

const (
	// torchao v0.16.0-v0.17.0 to_mx: FLOOR/CEIL/EVEN read the exponent
	// bits (an infinite amax gives code 253, only NaN gives 0xFF) and
	// divide by the scale clamped to 2^-126 (+Inf for 0xFF); RCEIL takes
	// ceil(float32 log2(amax/6)) clamped to [-127, 127] (NaN -> 0xFF) and
	// multiplies by 2^(127-code), by 1.0 where the code is 0.
	torchao017 recipeStyle = iota
	// torchao v0.18.0: as v0.17, except that RCEIL multiplies a 0xFF
	// block by the NaN amax/6 itself and a code-254 block by 2^-127.
	torchao018
	// torchao main (36027d82): FLOOR/CEIL/EVEN give 0xFF for any
	// non-finite amax; every mode multiplies by the reciprocal code
	// 254-code as a float32 (2^-127 for code 254, the signalling NaN
	// 0x7F800001 for 0xFF); RCEIL is e8m0.RCeil on amax*(1/6).
	torchaoMain
	// ModelOpt 5a4242fa MXFP4QTensor.quantize (modelOptQuantize).
	modelOpt
	// microxcaling 7bc41952 quantize_mx_op with round nearest, even,
	// floor (microxcalingQuantize).
	mxNearest
	mxEven
	mxFloor
	// compressed-tensors ac8e2ba8 MXFP4A16 (compressedTensorsQuantize).
	compressedTensors
)

// Device is the NaN a float32 operation returns, the one way CPU and CUDA
// torch differ on these quantizers: x86-64 SSE/AVX (torch CPU) returns the
// first NaN operand made quiet, and the default NaN 0xFFC00000 for an
// invalid operation (Inf/Inf, 0*Inf); CUDA returns 0x7FFFFFFF for every
// NaN result.
type Device uint8

const (
	// CPU is x86-64: operand NaNs propagate quieted, invalid gives 0xFFC00000.
	CPU Device = iota
	// CUDA is NVIDIA GPUs: every NaN result is 0x7FFFFFFF.
	CUDA
)

func (d Device) String() string {
	if d == CUDA {
		return "cuda"
	}
	return "cpu"
}

// nanOf is the NaN the device returns for an operation on a and b whose
// result is NaN.
func (d Device) nanOf(a, b float32) float32 {
	if d == CUDA {
		return math.Float32frombits(0x7FFFFFFF)
	}
	switch {
	case a != a:
		return math.Float32frombits(math.Float32bits(a) | 0x400000)
	case b != b:
		return math.Float32frombits(math.Float32bits(b) | 0x400000)
	}
	return math.Float32frombits(0xFFC00000)
}

// mul is torch's float32 x * y: where both are NaN, torch CPU returns
// y's NaN (recorded: x = 0xFFC00001 times 0x7F800001 gives 0x7FC00001),
// as its vectorized kernel passes the operands swapped.
func (d Device) mul(a, b float32) float32 {
	if r := a * b; r == r {
		return r
	}
	if b != b {
		return d.nanOf(b, a)
	}
	return d.nanOf(a, b)
}

func (d Device) div(a, b float32) float32 {
	if r := a / b; r == r {
		return r
	}
	return d.nanOf(a, b)
}

const (
	aoSource  = "pytorch/ao torchao/prototype/mx_formats/mx_tensor.py to_mx and kernels.py f32_to_f4_unpacked"
	aoRunNote = " (run on CPU and CUDA by conformance/harness/torchao/mx.py)"
)

func aoRecipe(name, summary, ref string, style recipeStyle, d Device) Recipe {
	return Recipe{Name: name + "-" + d.String(), Summary: summary + ", " + d.String() + " NaNs",
		Source: aoSource + " at " + ref + aoRunNote, style: style, device: d}
}

// The recipes.
var (
	TorchAO017CPU  = aoRecipe("torchao-0.17", "torchao 0.16/0.17 to_mx: x / scale clamped to 2^-126, Inf amax -> code 253, RCEIL by float32 log2, NaN code 3|4", "v0.17.0 (02105d46; v0.16.0 3c1065ca computes the same)", torchao017, CPU)
	TorchAO017CUDA = aoRecipe("torchao-0.17", "torchao 0.16/0.17 to_mx: x / scale clamped to 2^-126, Inf amax -> code 253, RCEIL by float32 log2, NaN code 3|4", "v0.17.0 (02105d46; v0.16.0 3c1065ca computes the same)", torchao017, CUDA)
	TorchAO018CPU  = aoRecipe("torchao-0.18", "torchao 0.18 to_mx: as 0.17, RCEIL multiplies a NaN block by the NaN amax/6", "v0.18.0 (5f2baf9d)", torchao018, CPU)
	TorchAO018CUDA = aoRecipe("torchao-0.18", "torchao 0.18 to_mx: as 0.17, RCEIL multiplies a NaN block by the NaN amax/6", "v0.18.0 (5f2baf9d)", torchao018, CUDA)
	TorchAOMainCPU = aoRecipe("torchao-36027d82", "torchao main to_mx: x * reciprocal code 254-code (sNaN for 0xFF), any non-finite amax -> 0xFF", "main 36027d82d1ad", torchaoMain, CPU)
	TorchAOMainCUD = aoRecipe("torchao-36027d82", "torchao main to_mx: x * reciprocal code 254-code (sNaN for 0xFF), any non-finite amax -> 0xFF", "main 36027d82d1ad", torchaoMain, CUDA)
)

// The recipes of libraries with one scale rule, claimed with that mode.
var (
	ModelOptCPU = Recipe{Name: "modelopt-5a4242fa-cpu", Summary: "ModelOpt MXFP4QTensor (mode rceil): ceil(max(float32 log2(amax/6), -127)), x / 2^e, ties toward zero, zero -> 0x8, NaN -> 0, cpu casts",
		Source: moSource + " at 5a4242faf414" + moRunNote, style: modelOpt, device: CPU, mode: "rceil"}
	ModelOptCUDA = Recipe{Name: "modelopt-5a4242fa-cuda", Summary: "ModelOpt MXFP4QTensor (mode rceil) on CUDA: amax*(1/6), as the cpu recipe otherwise, cuda casts",
		Source: moSource + " at 5a4242faf414" + moRunNote, style: modelOpt, device: CUDA, mode: "rceil"}
	MicroxcalingNearest = Recipe{Name: "microxcaling-7bc41952-nearest", Summary: "microxcaling quantize_mx_op round=nearest (mode floor): in x's dtype, float32 log2 scale and element exponents, ties away",
		Source: mxSource, style: mxNearest, device: CPU, mode: "floor"}
	MicroxcalingEven = Recipe{Name: "microxcaling-7bc41952-even", Summary: "microxcaling quantize_mx_op round=even (mode floor): as nearest, ties to even",
		Source: mxSource, style: mxEven, device: CPU, mode: "floor"}
	MicroxcalingFloor = Recipe{Name: "microxcaling-7bc41952-floor", Summary: "microxcaling quantize_mx_op round=floor (mode floor): as nearest, elements truncated toward zero",
		Source: mxSource, style: mxFloor, device: CPU, mode: "floor"}
	CompressedTensorsCPU = Recipe{Name: "compressed-tensors-ac8e2ba8-cpu", Summary: "compressed-tensors MXFP4A16 (mode even): scale by a bit carry in x's dtype, x / 2^e in x's dtype, ties to even, cpu casts",
		Source: ctSource, style: compressedTensors, device: CPU, mode: "even"}
	CompressedTensorsCUDA = Recipe{Name: "compressed-tensors-ac8e2ba8-cuda", Summary: "compressed-tensors MXFP4A16 (mode even) on CUDA: as the cpu recipe, cuda NaNs and casts",
		Source: ctSource, style: compressedTensors, device: CUDA, mode: "even"}
)

const (
	moSource  = "NVIDIA/Model-Optimizer modelopt/torch/quantization/qtensor/mxfp4_tensor.py MXFP4QTensor.quantize"
	moRunNote = " (run on CPU and CUDA by conformance/harness/modelopt/mx.py)"
	mxSource  = "microsoft/microxcaling mx/mx_ops.py _quantize_mx and mx/elemwise_ops.py _quantize_elemwise_core at 7bc41952de39 (run on CPU and CUDA by conformance/harness/microxcaling/run.py; the devices agree)"
	ctSource  = "vllm-project/compressed-tensors quantization/utils/helpers.py calculate_qparams, mxfp_utils.py, lifecycle/forward_helpers.py _quantize, compressors/nvfp4/helpers.py pack_fp4_to_uint8 at ac8e2ba82f4e (run on CPU and CUDA by conformance/harness/compressed-tensors/mx.py)"
)

var recipes = []Recipe{TorchAO017CPU, TorchAO017CUDA, TorchAO018CPU, TorchAO018CUDA, TorchAOMainCPU, TorchAOMainCUD,
	ModelOptCPU, ModelOptCUDA, MicroxcalingNearest, MicroxcalingEven, MicroxcalingFloor, CompressedTensorsCPU, CompressedTensorsCUDA}

// HasMode reports whether the recipe takes scale mode m.
func (r Recipe) HasMode(m e8m0.ScaleMode) bool {
	for _, x := range r.Modes() {
		if x.Name == m.Name {
			return true
		}
	}
	return false
}

// Modes lists the scale modes the recipe takes: its library's one rule,
// or all four for torchao, whose to_mx has a scale mode parameter.
func (r Recipe) Modes() []e8m0.ScaleMode {
	if r.mode == "" {
		return e8m0.ScaleModes()
	}
	m, _ := e8m0.LookupScaleMode(r.mode)
	return []e8m0.ScaleMode{m}
}

// Recipes lists the recorded library recipes.
func Recipes() []Recipe { return append([]Recipe(nil), recipes...) }

// LookupRecipe returns the recipe with the given name.
func LookupRecipe(name string) (Recipe, bool) {
	for _, r := range recipes {
		if r.Name == name {
			return r, true
		}
	}
	return Recipe{}, false
}

// String returns the recipe's name.
func (r Recipe) String() string { return r.Name }

// scaleCode is the E8M0 code the recipe's library computes for a block
// amax (max |x|, NaN if any element is NaN) under mode.
func (r Recipe) scaleCode(amax float32, mode e8m0.ScaleMode) uint8 {
	a := math.Float32bits(amax) &^ (1 << 31)
	if a > 0x7F800000 {
		return NaNScale
	}
	if mode.Name == e8m0.RCeil.Name {
		if r.style == torchaoMain {
			return e8m0.SharedScale(amax, e8m0.RCeil, EmaxElem, MaxElem)
		}
		// torch.ceil(torch.log2(amax / 6)) clamped to [-127, 127].
		q := math.Float32frombits(a) / MaxElem
		l := float32(math.Log2(float64(q)))
		c := math.Ceil(float64(l))
		c = math.Max(-127, math.Min(127, c))
		return uint8(int(c) + 127)
	}
	if mode.Name == e8m0.Even.Name && r.style != torchaoMain && (a+1<<21)&0x7F800000 == 0x7F800000 {
		// Even's rounding carries into the exponent field 255, which
		// to_mx reads as a finite exponent (only a NaN amax is masked).
		return uint8(128 - EmaxElem + 127)
	}
	if a == 0x7F800000 {
		if r.style == torchaoMain {
			return NaNScale
		}
		// The exponent field 255 read as a finite exponent: 128 - emax
		// for floor and even (even's rounding carries into the mantissa
		// only), and ceil's mantissa is zero.
		return uint8(128 - EmaxElem + 127)
	}
	return e8m0.SharedScale(amax, mode, EmaxElem, MaxElem)
}

// elem is the float32 the recipe encodes for element x of a block with
// code c and amax amax.
func (r Recipe) elem(x, amax float32, c uint8, mode e8m0.ScaleMode) float32 {
	d := r.device
	rceil := mode.Name == e8m0.RCeil.Name
	switch {
	case r.style == torchaoMain:
		rc := uint8(254 - int(c))
		var inv float32
		switch rc {
		case 0:
			inv = math.Float32frombits(0x00400000)
		case 255:
			inv = math.Float32frombits(0x7F800001)
		default:
			inv = math.Float32frombits(uint32(rc) << 23)
		}
		return d.mul(x, inv)
	case rceil:
		var s float32
		switch {
		case c == 0:
			s = 1
		case c == NaNScale && r.style == torchao018:
			s = d.div(amax, MaxElem)
		case c == 254 && r.style == torchao018:
			s = Pow2(-127)
		default:
			s = Pow2(127 - int(c))
		}
		return d.mul(x, s) // the clamp to ±6 changes no code
	}
	s := math.Float32frombits(uint32(c) << 23)
	if c == 0 {
		s = Pow2(-126)
	}
	return d.div(x, s)
}

// floatxE2M1 is torchao's _f32_to_floatx_unpacked for E2M1 (ebits 2,
// mbits 1), integer for integer: saturate at |x| >= 6, the denormal branch
// below 1 (adding 2^22 in float32 rounds to a multiple of 0.5), the
// normal branch by adding the rounding bias to the bits; a NaN takes the
// normal branch, so its code is 2 + a carry out of its mantissa (3 for a
// quiet NaN with a small payload, 4 for 0x7FFFFFFF), with its sign.
func floatxE2M1(x float32) uint8 {
	b := math.Float32bits(x)
	sign := uint8(b>>28) & 8
	a := b &^ (1 << 31)
	v := math.Float32frombits(a)
	var c uint8
	switch {
	case v >= 6:
		c = 7
	case v < 1:
		c = uint8(math.Float32bits(v+(1<<22)) - 149<<23)
	default:
		n := int32(a) + (-126 << 23) + (1<<21 - 1) + int32(a>>22&1)
		c = uint8(n >> 22)
	}
	return c | sign
}

// Quantize quantizes a row-major float32 [rows, cols] tensor as the
// recipe's library does under scale mode mode.
func (r Recipe) Quantize(x []float32, rows, cols int, mode e8m0.ScaleMode) (Quantized, error) {
	return r.QuantizeInput(x, rows, cols, mode, F32)
}

// QuantizeInput quantizes x, the exact float32 widening of a tensor of
// dtype in, as the recipe's library does under scale mode mode.
func (r Recipe) QuantizeInput(x []float32, rows, cols int, mode e8m0.ScaleMode, in Input) (Quantized, error) {
	if err := checkShape(len(x), rows, cols); err != nil {
		return Quantized{}, err
	}
	if !r.HasMode(mode) {
		names := []string{}
		for _, m := range r.Modes() {
			names = append(names, m.Name)
		}
		return Quantized{}, fmt.Errorf("mxfp4: recipe %s has no scale mode %q (its modes: %s)", r.Name, mode.Name, strings.Join(names, ", "))
	}
	q := Quantized{Rows: rows, Cols: cols, Packed: make([]uint8, len(x)/2), Scales: make([]uint8, len(x)/BlockSize)}
	for blk := range q.Scales {
		xs := x[blk*BlockSize : (blk+1)*BlockSize]
		out := q.Packed[blk*BlockSize/2 : (blk+1)*BlockSize/2]
		switch r.style {
		case modelOpt:
			r.modelOptQuantize(xs, out, q.Scales[blk:blk+1])
			continue
		case mxNearest, mxEven, mxFloor:
			r.microxcalingQuantize(xs, out, q.Scales[blk:blk+1], in)
			continue
		case compressedTensors:
			r.compressedTensorsQuantize(xs, out, q.Scales[blk:blk+1], in, blk, len(q.Scales))
			continue
		}
		amax := r.blockAmax(xs)
		c := r.scaleCode(amax, mode)
		q.Scales[blk] = c
		for i := 0; i < BlockSize; i += 2 {
			lo := floatxE2M1(r.elem(xs[i], amax, c, mode))
			hi := floatxE2M1(r.elem(xs[i+1], amax, c, mode))
			out[i/2] = lo&0xF | hi<<4
		}
	}
	return q, nil
}

// blockAmax is torch.amax(torch.abs(x)): NaN if any element is NaN (on
// the CPU the first NaN, sign cleared; on CUDA 0x7FFFFFFF).
func (r Recipe) blockAmax(xs []float32) float32 {
	var m float32
	for _, v := range xs {
		if v != v {
			if r.device == CUDA {
				return math.Float32frombits(0x7FFFFFFF)
			}
			return math.Float32frombits(math.Float32bits(v) &^ (1 << 31))
		}
		if a := float32(math.Abs(float64(v))); a > m {
			m = a
		}
	}
	return m
}
