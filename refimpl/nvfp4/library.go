package nvfp4

import (
	"fmt"
	"math"

	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/fp8"
)

// Arith says which machine's float32 arithmetic a recipe reproduces where
// it differs: in the bits of a NaN result. The values of non-NaN results
// are IEEE 754's everywhere.
type Arith uint8

const (
	// CanonicalNaN: every NaN is the positive quiet NaN 0x7FC00000 (the
	// reference recipes; see Canonical).
	CanonicalNaN Arith = iota
	// X86: torch's CPU kernels on x86-64 (SSE/AVX). An operation with a
	// NaN operand returns its first NaN operand, made quiet; an invalid
	// operation (0·Inf, Inf/Inf, 0/0) returns the default NaN 0xFFC00000;
	// torch's vectorized minimum and maximum OR an all-ones compare mask
	// into a NaN result, so they return 0xFFFFFFFF.
	X86
	// CUDA: torch's CUDA kernels. Every float instruction with a NaN result
	// returns 0x7FFFFFFF; minimum, maximum and reductions pass a NaN
	// operand's bits through unchanged (they select, they do not compute).
	CUDA
)

// GlobalRule is how the per-tensor value is computed from the tensor amax
// A (the division the recipe's PerTensor names).
type GlobalRule uint8

const (
	// GlobalDivide: p = A/2688 or g = 2688/A, one correctly rounded
	// division.
	GlobalDivide GlobalRule = iota
	// GlobalMulRcp: p = A·float32(1/2688). torch on CUDA divides a tensor
	// by a Python scalar as a multiplication by the scalar's float32
	// reciprocal (aten div_true_kernel_cuda).
	GlobalMulRcp
)

// CastRule is the E2M1 conversion of the value q a recipe computes for an
// element, where libraries write their own instead of a hardware cast.
type CastRule uint8

const (
	// CastProfile: the recipe's fp4 profile (FP4).
	CastProfile CastRule = iota
	// CastTorchAO: torchao's _f32_to_floatx_unpacked after a clamp to ±6:
	// nearest-even, -0 kept; a NaN's code is computed from its bits by the
	// same integer steps as a normal value's (so 0x7FC00000 → 0x3,
	// 0x7FFFFFFF → 0x4, 0xFFFFFFFF → 0xC).
	CastTorchAO
	// CastModelOpt: ModelOpt NVFP4QTensor._cast_fp4: the index of |q| among
	// the bounds 0.25 0.75 1.25 1.75 2.5 3.5 5 (torch.searchsorted), plus
	// one at exactly e2m1_bounds[[1, 3, 5]] = 0.75, 1.75, 3.5 (its comment
	// says 2.5; the code indexes 3.5); sign from q < 0. That is
	// nearest-even, with -0 written +0, |q| > 5 (Inf included) code 7 and a
	// NaN code 7 (searchsorted puts NaN last).
	CastModelOpt
	// CastMasks: TransformerEngine's cast_to_fp4x2 (interval masks on q
	// clamped to ±6): nearest-even, an exact -0 written +0, a NaN matching
	// no interval left at code 0.
	CastMasks
)

// castE2M1 converts q under the recipe's cast rule.
func (r *Recipe) castE2M1(q float32) uint8 {
	b := math.Float32bits(q)
	switch r.Cast {
	case CastTorchAO:
		if q == q {
			q = min(max(q, -E2M1Max), E2M1Max)
			return r.FP4.Encode(q)
		}
		// torchao's normal branch on a NaN's magnitude bits.
		sign := uint8(b>>31) << 3
		n := int64(b &^ (1 << 31))
		odd := (n >> 22) & 1
		n += ((1 - 127) << 23) + (1<<21 - 1) + odd
		return uint8(n>>22)&0xF | sign
	case CastModelOpt:
		if q != q {
			return 7
		}
		var sign uint8
		if q < 0 {
			sign = 8
		}
		a := float32(math.Abs(float64(q)))
		var c uint8
		for _, bound := range [...]float32{0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5} {
			if bound < a {
				c++
			}
		}
		if a == 0.75 || a == 1.75 || a == 3.5 {
			c++
		}
		return c | sign
	case CastMasks:
		if q != q {
			return 0
		}
		if b == 1<<31 {
			return 0
		}
		return r.FP4.Encode(min(max(q, -E2M1Max), E2M1Max))
	}
	return r.FP4.Encode(q)
}

// libQuantize is Quantize for a recipe that reproduces a library run on a
// machine (Arith set): NaN bits follow the machine, the tensor amax
// includes infinities and propagates NaN as the library's reduction does,
// and the element cast is the library's. Slow, and only as fast as it
// needs to be.
func libQuantize(x []float32, rows, cols int, r *Recipe, in Input) Quantized {
	a := r.arith()
	amax := float32(0)
	tensorNaN := false
	for _, v := range x {
		if v != v {
			tensorNaN = true
			continue
		}
		amax = max(amax, float32(math.Abs(float64(v))))
	}
	if tensorNaN {
		amax = r.tensorNaN(x, in)
	}
	var global float32
	switch {
	case r.PerTensor == DecodeScale && r.Global == GlobalMulRcp:
		global = a.mul(amax, float32(1.0/GlobalNumerator))
	case r.PerTensor == DecodeScale:
		global = a.div(amax, GlobalNumerator)
	default:
		global = a.div(GlobalNumerator, amax)
	}
	q := Quantized{Rows: rows, Cols: cols, Packed: make([]uint8, len(x)/2), Scales: make([]uint8, len(x)/BlockSize), Global: global}
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
			b = a.reduceNaN(xs, r.BlockAmaxNaN)
		}
		var bs float32
		if r.SixRcp {
			bs = a.mul(b, float32(1.0/E2M1Max))
		} else {
			bs = a.div(b, E2M1Max)
		}
		var t float32
		switch r.BlockScale {
		case DivSixDivPerTensor:
			t = a.div(bs, global)
		case DivSixTimesPerTensor:
			t = a.div(b, a.mul(E2M1Max, global))
		default:
			t = a.mul(bs, global)
		}
		if r.ScaleMin > 0 {
			t = a.clamp(t, r.ScaleMin, E4M3Max)
		}
		if r.ZeroScaleOne && t == 0 {
			t = 1
		}
		sc := fp8.E4M3.Encode(t, r.ScaleCast)
		q.Scales[blk] = sc
		s := e4m3Values[sc]
		if s != s {
			// torch decodes E4M3 NaN (c10 fp8e4m3fn_to_fp32_value) to
			// sign|0x7FF00000 with integer operations, on either device.
			s = math.Float32frombits(uint32(sc&0x80)<<24 | 0x7FF00000)
		}
		var m float32
		div := false
		switch r.Element {
		case MulRcpPerTensorDivScale:
			m = a.div(a.div(1, global), s)
		case DivPerTensorTimesScale:
			m, div = a.mul(global, s), true
		}
		for i := 0; i < BlockSize; i += 2 {
			var c [2]uint8
			for j := range c {
				v := xs[i+j]
				var e float32
				if div {
					e = a.div(v, m)
				} else {
					// torch's CPU kernel for x * r[..., None] keeps r's NaN
					// when both are NaN (measured: torchao's codes).
					e = a.mul(m, v)
				}
				c[j] = r.castE2M1(e)
			}
			q.Packed[(blk*BlockSize+i)/2] = c[0]&0xF | c[1]<<4
		}
	}
	return q
}

func (r *Recipe) arith() arith { return arith(r.Arith) }

// tensorNaN is the NaN the library's tensor amax returns for x holding a
// NaN. A 16-bit tensor's whole-tensor max in torch returns, as measured
// on every such task: on x86, bfloat16 0x7FC0 (c10's scalar
// round_to_nearest_even makes every NaN 0x7FC0) and, for fp16, a value
// that widens to 0x7FFFFFFF (ModelOpt's reduce_amax and TransformerEngine's
// torch.max(torch.abs(x)) alike); on CUDA, 0x7FFF (nan16).
func (r *Recipe) tensorNaN(x []float32, in Input) float32 {
	a := r.arith()
	v := a.reduceNaN(x, r.TensorAmaxNaN)
	switch {
	case in == InputF32:
		return v
	case r.Arith == X86 && in == InputBF16:
		return math.Float32frombits(0x7FC00000)
	case r.Arith == X86:
		return math.Float32frombits(0x7FFFFFFF)
	}
	return a.nan16(v, in)
}

// arith carries out float32 operations with a machine's NaN bits.
type arith Arith

const (
	x86DefaultNaN = 0xFFC00000
	cudaNaN       = 0x7FFFFFFF
	quietBit      = 0x00400000
)

func (a arith) result(z float32, ops ...float32) float32 {
	if z == z {
		return z
	}
	switch Arith(a) {
	case X86:
		for _, o := range ops {
			if o != o {
				return math.Float32frombits(math.Float32bits(o) | quietBit)
			}
		}
		return math.Float32frombits(x86DefaultNaN)
	case CUDA:
		return math.Float32frombits(cudaNaN)
	}
	return canonNaN
}

func (a arith) mul(x, y float32) float32 { return a.result(x*y, x, y) }
func (a arith) div(x, y float32) float32 { return a.result(x/y, x, y) }

// clamp is torch.clamp(t, lo, hi): a NaN passes through (its bits kept).
func (a arith) clamp(t, lo, hi float32) float32 {
	if t != t {
		return t
	}
	return min(max(t, lo), hi)
}

// reduceNaN is the NaN an abs-then-max reduction over xs returns: bits
// when given (torch's vectorized CPU max of a whole tensor ORs a compare
// mask into it: 0xFFFFFFFF), else the first NaN element with its sign
// cleared (abs is a bit operation; a scalar or CUDA max selects the NaN).
func (a arith) reduceNaN(xs []float32, bits uint32) float32 {
	if bits != 0 {
		return math.Float32frombits(bits)
	}
	for _, v := range xs {
		if v != v {
			return math.Float32frombits(math.Float32bits(v) &^ (1 << 31))
		}
	}
	return 0
}

// Library recipes: each reproduces one library's code run on one machine
// (torch 2.11 on an x86-64 CPU or an NVIDIA GPU), measured by the harness
// under conformance/harness/<library>/ and held to its records by go test.

// LibraryRecipes lists the recipes recorded from library runs, named
// <library>-<version or commit>-<cpu|cuda>: a library's arithmetic is
// pinned by its release or commit, and the machine decides NaN bits and
// how torch divides by a Python scalar.
func LibraryRecipes() []Recipe {
	return []Recipe{TorchAO016CPU, TorchAO016CUDA, TorchAO017CPU, TorchAO017CUDA, ModelOptCPU, ModelOptCUDA,
		CompressedTensorsCPU, CompressedTensorsCUDA, TE1x16CPU, TE1x16CUDA, TE16x16CPU, TE16x16CUDA}
}

// TorchAO017CPU is torchao's nvfp4_quantize from v0.17.0 (same outputs at
// v0.18.0 and main 36027d82) on the CPU.
var TorchAO017CPU = Recipe{
	Name:          "torchao-0.17-cpu",
	Summary:       "torchao v0.17+ nvfp4_quantize on x86 torch: p = max|x|/2688 (NaN reaches it), block scale clamp((b/6)/p, 2^-6, 448), data x*((1/p)/s), torchao's E2M1 bit cast",
	Source:        "pytorch/ao: torchao/prototype/mx_formats/nvfp4_tensor.py @ v0.17.0 (per_tensor_amax_to_scale, nvfp4_quantize)",
	PerTensor:     DecodeScale,
	BlockAmax:     PropagateNaN,
	BlockScale:    DivSixDivPerTensor,
	ScaleMin:      0x1p-6,
	ScaleCast:     fp8.NoSat,
	Element:       MulRcpPerTensorDivScale,
	FP4:           fp4.NVIDIA,
	Arith:         X86,
	TensorAmaxNaN: 0xFFFFFFFF,
	Cast:          CastTorchAO,
	Dequant:       DequantPTimesS,
	// nvfp4_quantize asserts its input is bfloat16 or float32.
	RefusesFP16: true,
}

// TorchAO017CUDA is TorchAO017CPU on CUDA: the divisions by the Python
// scalars 2688 and 6 are multiplications by their float32 reciprocals.
var TorchAO017CUDA = func() Recipe {
	r := TorchAO017CPU
	r.Name = "torchao-0.17-cuda"
	r.Summary = "torchao v0.17+ nvfp4_quantize on CUDA torch: as torchao-0.17-cpu with /2688 and /6 done as multiplications by float32 reciprocals, NaN 0x7FFFFFFF"
	r.Arith, r.TensorAmaxNaN, r.Global, r.SixRcp = CUDA, 0, GlobalMulRcp, true
	return r
}()

// TorchAO016CPU is torchao v0.16.0's nvfp4_quantize on the CPU: data x/(p*s).
var TorchAO016CPU = func() Recipe {
	r := TorchAO017CPU
	r.Name = "torchao-0.16-cpu"
	r.Summary = "torchao v0.16 nvfp4_quantize on x86 torch: as torchao-0.17-cpu with the data scaled as x/(p*s)"
	r.Source = "pytorch/ao: torchao/prototype/mx_formats/nvfp4_tensor.py @ v0.16.0 (per_tensor_amax_to_scale, nvfp4_quantize)"
	r.Element = DivPerTensorTimesScale
	return r
}()

// TorchAO016CUDA is TorchAO016CPU on CUDA.
var TorchAO016CUDA = func() Recipe {
	r := TorchAO016CPU
	r.Name = "torchao-0.16-cuda"
	r.Summary = "torchao v0.16 nvfp4_quantize on CUDA torch: as torchao-0.16-cpu with /2688 and /6 done as multiplications by float32 reciprocals, NaN 0x7FFFFFFF"
	r.Arith, r.TensorAmaxNaN, r.Global, r.SixRcp = CUDA, 0, GlobalMulRcp, true
	return r
}()

// ModelOptCPU is NVIDIA Model Optimizer's NVFP4QTensor.quantize on the CPU.
var ModelOptCPU = Recipe{
	Name:         "modelopt-5a4242f-cpu",
	Summary:      "ModelOpt NVFP4QTensor.quantize on x86 torch: p = amax/2688, block scale b/(6p) with 0 -> 1, torch E4M3 cast, data x/(s*p), searchsorted E2M1 (nearest-even, -0 -> +0, NaN -> 7)",
	Source:       "NVIDIA/Model-Optimizer: modelopt/torch/quantization/qtensor/nvfp4_tensor.py @ 5a4242fa",
	PerTensor:    DecodeScale,
	BlockAmax:    PropagateNaN,
	BlockScale:   DivSixTimesPerTensor,
	ZeroScaleOne: true,
	ScaleCast:    fp8.NoSat,
	Element:      DivPerTensorTimesScale,
	FP4:          fp4.NVIDIA,
	Arith:        X86,
	BlockAmaxNaN: 0xFFFFFFFF,
	Cast:         CastModelOpt,
	Dequant:      DequantSTimesP,
}

// ModelOptCUDA is ModelOptCPU on CUDA.
var ModelOptCUDA = func() Recipe {
	r := ModelOptCPU
	r.Name = "modelopt-5a4242f-cuda"
	r.Summary = "ModelOpt NVFP4QTensor.quantize on CUDA torch: as modelopt-5a4242f-cpu with /2688 done as a multiplication by its float32 reciprocal, NaN 0x7FFFFFFF"
	r.Arith, r.BlockAmaxNaN, r.Global = CUDA, 0, GlobalMulRcp
	return r
}()

// CompressedTensorsCPU is compressed-tensors' NVFP4 weight compression
// (with llm-compressor's min-max observer) on the CPU; see ctQuantize.
var CompressedTensorsCPU = Recipe{
	Name:         "compressed-tensors-0.18-cpu",
	Summary:      "compressed-tensors 0.18 NVFP4 on x86 torch: g = (1/amax)*2688 in the weight's dtype (NaN or Inf -> 1), block scale g*(b/6) clamped to 448, 0 -> 0.125, stored in the weight's dtype, data x/(s/g), -0 and NaN -> code 0",
	Source:       "vllm-project/compressed-tensors: src/compressed_tensors/quantization/utils/helpers.py (generate_gparam, calculate_qparams), quantization/lifecycle/forward.py, compressors/nvfp4 @ ac8e2ba8 (0.18.0); llm-compressor observers/min_max.py",
	PerTensor:    EncodeScale,
	BlockAmax:    PropagateNaN,
	ScaleCast:    fp8.NoSat,
	FP4:          fp4.NVIDIA,
	Arith:        X86,
	BlockAmaxNaN: 0xFFFFFFFF,
	Algorithm:    AlgoCompressedTensors,
	Dequant:      DequantSDivG,
}

// CompressedTensorsCUDA is CompressedTensorsCPU on CUDA.
var CompressedTensorsCUDA = func() Recipe {
	r := CompressedTensorsCPU
	r.Name = "compressed-tensors-0.18-cuda"
	r.Summary = "compressed-tensors 0.18 NVFP4 on CUDA torch: as compressed-tensors-0.18-cpu with /6 done as a multiplication by float32(1/6), NaN 0x7FFFFFFF"
	r.Arith, r.BlockAmaxNaN, r.SixRcp = CUDA, 0, true
	return r
}()

// TE1x16CPU is TransformerEngine's NVFP4QuantizerRef, 1x16 blocks, on the
// CPU; see teQuantize.
var TE1x16CPU = Recipe{
	Name:          "te-d0067d0-1x16-cpu",
	Summary:       "TransformerEngine NVFP4QuantizerRef 1x16 on x86 torch: stores amax; ge = 2688/amax (0 -> 1), block scale b*(ge*(1/6)), data x*(1/(s/ge)) with a zero scale encoding by FLT_MAX, interval-mask E2M1 (-0 and NaN -> 0)",
	Source:        "NVIDIA/TransformerEngine: transformer_engine/pytorch/custom_recipes/reference_nvfp4.py @ d0067d0d (NVFP4QuantizerRef._quantize_blockwise_reference)",
	PerTensor:     StoredAmax,
	BlockAmax:     PropagateNaN,
	ScaleCast:     fp8.NoSat,
	FP4:           fp4.NVIDIA,
	Arith:         X86,
	BlockAmaxNaN:  0xFFFFFFFF,
	TensorAmaxNaN: 0xFFFFFFFF,
	Cast:          CastMasks,
	Algorithm:     AlgoTransformerEngine,
	Dequant:       DequantNone,
}

// TE1x16CUDA is TE1x16CPU on CUDA.
var TE1x16CUDA = func() Recipe {
	r := TE1x16CPU
	r.Name = "te-d0067d0-1x16-cuda"
	r.Summary = "TransformerEngine NVFP4QuantizerRef 1x16 on CUDA torch: as te-d0067d0-1x16-cpu, NaN 0x7FFFFFFF"
	// torch.max(torch.abs(x)) over the whole tensor returned 0x7FFFFFFF.
	r.Arith, r.BlockAmaxNaN, r.TensorAmaxNaN = CUDA, 0, 0x7FFFFFFF
	return r
}()

// TE16x16CPU is TE1x16CPU with one scale per 16x16 tile (TE's 2D weight
// quantization).
var TE16x16CPU = func() Recipe {
	r := TE1x16CPU
	r.Name = "te-d0067d0-16x16-cpu"
	r.Summary = "TransformerEngine NVFP4QuantizerRef 16x16 on x86 torch: as te-d0067d0-1x16-cpu with the block amax over each 16x16 tile"
	r.Tile16x16 = true
	return r
}()

// TE16x16CUDA is TE16x16CPU on CUDA.
var TE16x16CUDA = func() Recipe {
	r := TE1x16CUDA
	r.Name = "te-d0067d0-16x16-cuda"
	r.Summary = "TransformerEngine NVFP4QuantizerRef 16x16 on CUDA torch: as te-d0067d0-1x16-cuda with the block amax over each 16x16 tile"
	r.Tile16x16 = true
	return r
}()

// DequantRule is how a library expands NVFP4 to float32.
type DequantRule uint8

const (
	// DequantReference: Dequantize(q, r.PerTensor), the reference rule.
	DequantReference DequantRule = iota
	// DequantPTimesS: y = e2m1(c) * float32(p * s) (torchao
	// NVFP4Tensor.dequantize: per_tensor_scale * scale, then data * it).
	DequantPTimesS
	// DequantSTimesP: y = v(c) * float32(s * p), where code 8 decodes to +0
	// (ModelOpt NVFP4QTensor.dequantize: e2m1_values[8] is 0). Where s and
	// p are both NaN, x86 returns p's NaN: torch's CPU kernel for a tensor
	// times a 0-dim tensor keeps the 0-dim operand's NaN, as it keeps r's
	// for x * r[..., None] (measured: ModelOpt's CPU output for a NaN
	// per-tensor value 0x7FC00000 under the E4M3 NaN scale 0x7F is
	// 0x7FC00000, not the scale's 0x7FF00000).
	DequantSTimesP
	// DequantSDivG: y = e2m1(c) * float32(s / g) (compressed-tensors
	// _dequantize: scale / global_scale, then x_q * it).
	DequantSDivG
	// DequantNone: the library has no NVFP4 dequantizer
	// (TransformerEngine's reference quantizer says supports_dequantize
	// False).
	DequantNone
)

// Dequantizes reports whether the recipe's library has a dequantizer.
func (r Recipe) Dequantizes() bool { return r.Dequant != DequantNone }

// DequantizeRecipe expands q as the library of recipe r does, with its
// machine's NaN bits (an E4M3 NaN scale decodes to sign|0x7FF00000, as
// torch's c10 conversion does); for a reference recipe it is
// Dequantize(q, r.PerTensor).
func DequantizeRecipe(q Quantized, r Recipe) ([]float32, error) {
	if r.Dequant == DequantNone {
		return nil, fmt.Errorf("nvfp4: recipe %s: the library has no NVFP4 dequantizer", r.Name)
	}
	if r.Dequant == DequantReference {
		return Dequantize(q, r.PerTensor)
	}
	if err := checkShape(q.Rows*q.Cols, q.Rows, q.Cols); err != nil {
		return nil, err
	}
	n := q.Rows * q.Cols
	if len(q.Packed) != n/2 || len(q.Scales) != n/BlockSize {
		return nil, fmt.Errorf("nvfp4: packed %d and scales %d bytes do not fit [%d, %d]", len(q.Packed), len(q.Scales), q.Rows, q.Cols)
	}
	a := r.arith()
	y := make([]float32, n)
	for blk, sc := range q.Scales {
		s := e4m3Values[sc]
		if s != s {
			s = math.Float32frombits(uint32(sc&0x80)<<24 | 0x7FF00000)
		}
		var d float32
		switch r.Dequant {
		case DequantPTimesS:
			d = a.mul(q.Global, s)
		case DequantSTimesP:
			// The 0-dim operand's NaN wins (see DequantSTimesP).
			d = a.mul(q.Global, s)
		case DequantSDivG:
			d = a.div(s, q.Global)
		}
		for i := 0; i < BlockSize; i++ {
			c := q.Packed[(blk*BlockSize+i)/2] >> (4 * (i % 2)) & 0xF
			v := fp4.Decode(c)
			if c == 8 && r.Dequant == DequantSTimesP {
				v = 0
			}
			y[blk*BlockSize+i] = a.mul(v, d)
		}
	}
	return y, nil
}
