package mutants

import (
	"math"

	"github.com/bitexact/bitexact/refimpl/awq"
	"github.com/bitexact/bitexact/refimpl/e8m0"
	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/fp8"
	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/mxfp4"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/sparse24"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// Two catalogues Catalog appends to its own: coverageCatalog (a mutant or
// more for every suite Catalog's list leaves without one: the decoders,
// dequantizers, layout ops, the AWQ quantizers and the fp16/bf16-input
// suites) and extraCatalog (blind spots of the amax fold, the per-tensor
// formula and special scale codes), with the output and input rewriters
// and numeric helpers they share; the faulty ops they run are in
// suites_*.go. Each Doc names the public code or report that went wrong
// the same way.

// mapF32 rewrites every element of the F32 output name.
func mapF32(name string, f func(uint32) uint32) func(ops.Tensors) ops.Tensors {
	return func(out ops.Tensors) ops.Tensors {
		t := out[name]
		b := t.Bits32()
		for i, v := range b {
			b[i] = f(v)
		}
		y := tensor.FromBits32(tensor.F32, t.Shape, b)
		y.Logical = t.Logical
		out[name] = y
		return out
	}
}

// mapF16 rewrites every element of the F16 output name.
func mapF16(name string, f func(uint16) uint16) func(ops.Tensors) ops.Tensors {
	return func(out ops.Tensors) ops.Tensors {
		t := out[name]
		b := t.Bits16()
		for i, v := range b {
			b[i] = f(v)
		}
		y := tensor.FromBits16(t.DType, t.Shape, b)
		y.Logical = t.Logical
		out[name] = y
		return out
	}
}

// rewriteInput runs op on its inputs with the bytes of one input rewritten:
// the kernel reads that input in another layout.
func rewriteInput(op, name string, f func([]byte) []byte) func(ops.Params, ops.Tensors) (ops.Tensors, error) {
	return func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
		q := ops.Tensors{}
		for k, v := range in {
			q[k] = v
		}
		x := q[name]
		x.Data = f(append([]byte{}, x.Data...))
		q[name] = x
		return ops.Run(op, p, q)
	}
}

func eachByte(f func(byte) byte) func([]byte) []byte {
	return func(d []byte) []byte {
		for i, b := range d {
			d[i] = f(b)
		}
		return d
	}
}

func swapByte(b byte) byte { return b<<4 | b>>4 }

// canonNaN replaces a NaN by 0x7FC00000: a NaN that float arithmetic
// creates (0 * Inf) has a platform-dependent sign (x86-64's default NaN is
// negative, arm64's positive), and the mutants must be the same
// everywhere.
func canonNaN(x float32) float32 {
	if x != x {
		return math.Float32frombits(0x7fc00000)
	}
	return x
}

// f16Product is a float32 product as an fp16 multiply returns it, widened:
// rounded to nearest even, NaN as NVIDIA's canonical fp16 NaN 0x7FFF.
func f16Product(x float32) float32 {
	if x != x {
		return half.DecodeFP16(0x7FFF)
	}
	return half.DecodeFP16(half.EncodeFP16(x))
}

// coverageCatalog lists a mutant or more for every suite the first
// catalogue left without one.
func coverageCatalog() []Mutant {
	negZeroF32 := func(b uint32) uint32 {
		if b == 0x80000000 {
			return 0
		}
		return b
	}
	return []Mutant{
		// e2m1-unpack
		{Name: "e2m1-unpack-high-first", Suite: "e2m1-unpack", Claim: "default", Class: "nibble-swap",
			Doc: "E2M1 unpack taking element 2i from the high nibble: PTX cvt.rn.satfinite.e2m1x2.f32 d, a, b puts a in d[7:4], so a caller passing (x0, x1) swaps them (PTX ISA, cvt; vLLM passes (hi=f1, lo=f0))",
			Run: rewriteInput("e2m1.unpack", "packed", eachByte(swapByte))},
		// e2m1-decode
		{Name: "e2m1-decode-negative-zero-cleared", Suite: "e2m1-decode", Claim: "default", Class: "negative-zero-cleared",
			Doc: "E2M1 code 0x8 decoded as +0: a signed value table with +0 at index 8, as ggml's kvalues_mxfp4 {0, 1, ..., 0, -1, ...} (ggml/src/ggml-common.h)",
			Run: transform("e2m1.decode", mapF32("x", negZeroF32))},
		{Name: "e2m1-decode-no-subnormal-branch", Suite: "e2m1-decode", Claim: "default", Class: "subnormals-as-normal",
			Doc: "E2M1 codes 0x0, 0x1, 0x8, 0x9 rebased as normal numbers (0x0 -> 0.5, 0x1 -> 0.75): tile-ai/tilelang issue 2704, _tir_u8_to_f4_to_bf16",
			Run: decodeCodes(func(_ ops.Params, b uint8) float32 { return formulaDecode(b&15, 2, 1, 1) })},
		// fp8-decode, e4m3-decode, e5m2-decode
		{Name: "fp8-decode-negative-zero-cleared", Suite: "fp8-decode", Claim: "default", Class: "negative-zero-cleared",
			Doc: "FP8 0x80 decoded as +0: the zero test matched only 0x00 (intel/llm-scaler PR 569, E4M3 signed-zero conversion)",
			Run: transform("fp8.decode", mapF32("x", negZeroF32))},
		{Name: "e4m3-decode-nan-as-480", Suite: "e4m3-decode", Claim: "default", Class: "nan-as-finite",
			Doc: "E4M3 0x7F/0xFF decoded as ±480 by the normal formula: tile-ai/tilelang issue 2702 (_tir_u8_to_f8_e4m3_to_f16), fixed in PR 2710; also dgx-vllm's host scale table",
			Run: decodeCodes(func(p ops.Params, b uint8) float32 {
				if b&0x7f == 0x7f {
					return formulaDecode(b, 4, 3, 7)
				}
				return fp8.E4M3.Decode(b)
			})},
		{Name: "e4m3-decode-no-subnormal-branch", Suite: "e4m3-decode", Claim: "default", Class: "subnormals-as-normal",
			Doc: "E4M3 exponent-0 codes (zeros and subnormals) decoded with the implicit leading 1 (0x00 -> 2^-7): tile-ai/tilelang issue 2702; ooples/AiDotNet.Tensors PR 801 review (Metal decode_e4m3)",
			Run: decodeCodes(func(p ops.Params, b uint8) float32 {
				if b&0x78 == 0 {
					return formulaDecode(b, 4, 3, 7)
				}
				return fp8.E4M3.Decode(b)
			})},
		{Name: "e4m3-decode-nan-sign-cleared", Suite: "e4m3-decode", Claim: "default", Class: "nan-sign-cleared",
			Doc: "E4M3 0xFF decoded as +NaN 0x7FC00000: a decoder returning one canonical NaN constant (ooples/AiDotNet.Tensors PR 801, Metal decode_e4m3: as_type<float>(0x7FC00000u))",
			Run: transform("fp8.decode", mapF32("x", func(b uint32) uint32 {
				if b&0x7fffffff > 0x7f800000 {
					return 0x7fc00000
				}
				return b
			}))},
		{Name: "e5m2-decode-nan-as-finite", Suite: "e5m2-decode", Claim: "default", Class: "nan-as-finite",
			Doc: "E5M2 infinity and NaN codes decoded by the normal formula as finite (0x7C -> 65536): the same missing special-value branch as tile-ai/tilelang issue 2702's E4M3 decoder",
			Run: decodeCodes(func(p ops.Params, b uint8) float32 {
				if b&0x7c == 0x7c {
					return formulaDecode(b, 5, 2, 15)
				}
				return fp8.E5M2.Decode(b)
			})},
		{Name: "e5m2-decode-via-fp16-bits", Suite: "e5m2-decode", Claim: "default", Class: "nan:propagate",
			Doc: "E5M2 decoded as the fp16 with the code as its top byte, widened: exact on numbers, but NaN payloads kept (0x7D -> 0x7FA00000 quieted as 0x7FE00000) where the reference gives the canonical quiet NaN: the propagate NaN convention (torch's E5M2 decode on the CPU), to be claimed as default,nan=propagate",
			Run: decodeCodes(func(p ops.Params, b uint8) float32 { return half.DecodeFP16(uint16(b) << 8) })},
		// e8m0-decode
		{Name: "e8m0-decode-ff-inf", Suite: "e8m0-decode", Claim: "ocp", Class: "profile:ggml",
			Doc: "E8M0 0xFF decoded as 2^128 = +Inf instead of NaN: ggml_e8m0_to_fp32 with its NaN branch commented out (ggml/src/ggml-impl.h)",
			Run: decodeCodes(func(p ops.Params, b uint8) float32 {
				if b == 0xFF {
					return float32(math.Inf(1))
				}
				return e8m0.Decode(b)
			})},
		{Name: "e8m0-decode-zero-code-flushed", Suite: "e8m0-decode", Claim: "ocp", Class: "ftz-outputs",
			Doc: "E8M0 0x00 decoded as +0: the float built as code<<23 without the special case for code 0 (2^-127 is subnormal), which ggml_e8m0_to_fp32 adds (ggml/src/ggml-impl.h); tile-ai/tilelang issue 2748 (1 << Scale)",
			Run: decodeCodes(func(p ops.Params, b uint8) float32 {
				if b == 0 {
					return 0
				}
				return e8m0.Decode(b)
			})},
		// nvfp4-dequantize, mxfp4-dequantize, ggml-mxfp4-dequantize, q8_1-dequantize
		{Name: "nvfp4-dequantize-nibble-swap", Suite: "nvfp4-dequantize", Claim: "canonical", Class: "nibble-swap",
			Doc: "NVFP4 dequantize reading element 2i from the high nibble (the cvt e2m1x2 operand order, see e2m1-unpack-high-first)",
			Run: rewriteInput("nvfp4.dequantize", "packed", eachByte(swapByte))},
		{Name: "nvfp4-dequantize-half-output", Suite: "nvfp4-dequantize", Claim: "canonical", Class: "f16-arithmetic",
			Doc: "NVFP4 dequantized in fp16 (the activation dtype of a dequantize-then-GEMM fallback) and widened to float32 by the harness",
			Run: transform("nvfp4.dequantize", mapF32("y", func(b uint32) uint32 {
				return math.Float32bits(f16Product(math.Float32frombits(b)))
			}))},
		{Name: "mxfp4-dequantize-nibble-swap", Suite: "mxfp4-dequantize", Claim: "default", Class: "nibble-swap",
			Doc: "MXFP4 dequantize reading element 2i from the high nibble",
			Run: rewriteInput("mxfp4.dequantize", "packed", eachByte(swapByte))},
		{Name: "mxfp4-dequantize-bias-125", Suite: "mxfp4-dequantize", Claim: "default", Class: "",
			Doc: "MXFP4 scale decoded with bias 125 (2^(c-125)), the non-standard scale format compressed-tensors wrote before vllm-project/compressed-tensors PR 538: outside the diagnosis library",
			Run: func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
				packed, scales := in["packed"], in["scales"]
				m, k := packed.Shape[0], 2*packed.Shape[1]
				y := make([]float32, m*k)
				for j := range y {
					sc := scales.Data[j/mxfp4.BlockSize]
					if sc == 0xFF {
						y[j] = math.Float32frombits(0x7fc00000)
						continue
					}
					c := packed.Data[j/2] >> (4 * (j % 2)) & 15
					y[j] = canonNaN(fp4.Decode(c) * float32(math.Ldexp(1, int(sc)-125)))
				}
				return ops.Tensors{"y": tensor.FromF32([]int{m, k}, y)}, nil
			}},
		{Name: "ggml-mxfp4-dequantize-adjacent-pairs", Suite: "ggml-mxfp4-dequantize", Claim: "default", Class: "llama-adjacent-pairs",
			Doc: "block_mxfp4 qs read as adjacent pairs instead of split halves (q[j] | q[j+16]<<4, ggml/src/ggml-quants.c dequantize_row_mxfp4)",
			Run: rewriteInput("ggml.mxfp4.dequantize", "blocks", func(d []byte) []byte {
				// The kernel reads q'[2j], q'[2j+1] from qs[j]; the
				// reference reads q[j], q[j+16] from qs[j]: store q' so.
				for off := 0; off+17 <= len(d); off += 17 {
					var q [32]uint8
					for j := 0; j < 16; j++ {
						q[2*j], q[2*j+1] = d[off+1+j]&15, d[off+1+j]>>4
					}
					for j := 0; j < 16; j++ {
						d[off+1+j] = q[j] | q[j+16]<<4
					}
				}
				return d
			})},
		{Name: "ggml-mxfp4-dequantize-full-e8m0", Suite: "ggml-mxfp4-dequantize", Claim: "default", Class: "",
			Doc: "block_mxfp4 scaled by GGML_E8M0_TO_FP32 where the doubled kvalues_mxfp4 table needs GGML_E8M0_TO_FP32_HALF (ggml/src/ggml-impl.h): every value doubled; outside the diagnosis library",
			Run: transform("ggml.mxfp4.dequantize", mapF32("y", func(b uint32) uint32 {
				return math.Float32bits(2 * math.Float32frombits(b))
			}))},
		{Name: "q8_1-dequantize-half-arithmetic", Suite: "q8_1-dequantize", Claim: "default", Class: "f16-arithmetic",
			Doc: "block_q8_1 dequantized as d * q in half precision, as llama.cpp's CUDA block dequantizers do under GGML_CUDA_F16 (ggml/src/ggml-cuda/dequantize.cuh: v = __hmul2(v, {d, d}))",
			Run: func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
				b := in["blocks"]
				y := make([]float32, len(b.Data)/36*32)
				for blk := 0; blk < len(b.Data)/36; blk++ {
					d := half.DecodeFP16(uint16(b.Data[36*blk]) | uint16(b.Data[36*blk+1])<<8)
					for j := 0; j < 32; j++ {
						y[32*blk+j] = f16Product(float32(int8(b.Data[36*blk+4+j])) * d)
					}
				}
				return ops.Tensors{"y": tensor.FromF32([]int{len(y)}, y)}, nil
			}},
		{Name: "q8_1-dequantize-s-as-scale", Suite: "q8_1-dequantize", Claim: "default", Class: "",
			Doc: "block_q8_1 scaled by ds.y (s, the block sum) instead of ds.x (d): the half2 ds fields read in the wrong order; outside the diagnosis library",
			Run: func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
				b := in["blocks"]
				y := make([]float32, len(b.Data)/36*32)
				for blk := 0; blk < len(b.Data)/36; blk++ {
					s := half.DecodeFP16(uint16(b.Data[36*blk+2]) | uint16(b.Data[36*blk+3])<<8)
					for j := 0; j < 32; j++ {
						y[32*blk+j] = canonNaN(float32(int8(b.Data[36*blk+4+j])) * s)
					}
				}
				return ops.Tensors{"y": tensor.FromF32([]int{len(y)}, y)}, nil
			}},
		// bf16, fp16, fp8
		{Name: "bf16-truncation", Suite: "bf16", Claim: "rne", Class: "truncation",
			Doc: "float32 -> bf16 by keeping the top 16 bits (bits >> 16): stillwater-sc/universal issue 1133 (fixed in PR 1134), tenstorrent/tt-metal PR 19882",
			Run: func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
				// NaN inputs keep the reference's encoding: a truncating
				// converter with a NaN guard (as PR 1134's).
				ref, err := ops.Run("bf16.encode", p, in)
				if err != nil {
					return nil, err
				}
				b := in["x"].Bits32()
				o := ref["y"].Bits16()
				for i, v := range b {
					if v&0x7fffffff <= 0x7f800000 {
						o[i] = uint16(v >> 16)
					}
				}
				return ops.Tensors{"y": tensor.FromBits16(tensor.BF16, ref["y"].Shape, o)}, nil
			}},
		{Name: "bf16-rounding-bias-no-nan-guard", Suite: "bf16", Claim: "rne", Class: "",
			Doc: "float32 -> bf16 as (bits + 0x7FFF + lsb) >> 16 without the NaN guard that stillwater-sc/universal PR 1134 adds to the same rounding bias: low-payload NaNs become Inf, full payloads carry into the sign; outside the diagnosis library",
			Run: bf16Bias},
		{Name: "fp16-subnormal-double-shift", Suite: "fp16", Claim: "rne", Class: "ftz-outputs",
			Doc: "float32 -> fp16 whose subnormal branch shifts the mantissa twice, so every fp16-subnormal result is a signed zero: ROCm/rocm-libraries PR 11325 (hipdnn float_to_half_bits); invergent-ai/surogate issue 162",
			Run: fp16DoubleShift(true, false)},
		{Name: "fp16-nan-not-quieted", Suite: "fp16", Claim: "rne", Class: "",
			Doc:  "float32 -> fp16 truncating NaN payloads without quieting, so a NaN with payload only in the low 13 bits becomes Inf (ROCm/rocm-libraries PR 11325): outside the diagnosis library; numpy's cast differs only in turning a zero truncated payload into 1, so the hint names profile:numpy",
			Hint: "profile:numpy",
			Run:  fp16DoubleShift(false, true)},
		{Name: "fp8-ties-away", Suite: "fp8", Claim: "satfinite", Class: "ties-away",
			Doc: "FP8 E4M3 and E5M2 by nearest-value search with ties to the larger magnitude (microsoft/microxcaling round='nearest' is floor(|x|+0.5))",
			Run: fp8TiesAway},
		// sparse24-select, sparse24-decompress, reorder, unreorder
		{Name: "sparse24-select-ties-higher-index", Suite: "sparse24-select", Claim: "lower-index", Class: "sparse24-ties-higher-index",
			Doc: "2:4 selection keeping the later index among equal magnitudes: torch.topk's tie order is unspecified and differs between CPU and CUDA (pytorch/pytorch issue 127196)",
			Run: selectTiesHigher},
		{Name: "sparse24-select-indices-swapped", Suite: "sparse24-select", Claim: "lower-index", Class: "sparse24-indices-swapped",
			Doc: "2:4 metadata nibble written i1 | i0<<2 (torch/sparse/_semi_structured_conversions.py builds idx0 | idx1 << 2)",
			Run: transform("sparse24.select", func(out ops.Tensors) ops.Tensors {
				m := out["meta"]
				m.Data = eachByte(func(b byte) byte { return b&0xF0 | (b&3)<<2 | (b>>2)&3 })(append([]byte{}, m.Data...))
				out["meta"] = m
				return out
			})},
		{Name: "sparse24-select-signed", Suite: "sparse24-select", Claim: "lower-index", Class: "profile:signed",
			Doc: "2:4 selection by signed value where magnitude is claimed, as PyTorch's tile pruner ranks (torch/sparse/_semi_structured_conversions.py _sparse_semi_structured_tile)",
			Run: withParams("sparse24.select", ops.Params{"tie": "signed"})},
		{Name: "sparse24-decompress-meta-nibble-swap", Suite: "sparse24-decompress", Claim: "default", Class: "sparse24-meta-nibble-swap",
			Doc: "2:4 metadata byte read with group 2p in the high nibble (the dgx-vllm v7 layout puts group 2p in bits 0-3)",
			Run: rewriteInput("sparse24.decompress", "meta", eachByte(swapByte))},
		{Name: "sparse24-decompress-values-swapped", Suite: "sparse24-decompress", Claim: "default", Class: "sparse24-indices-swapped",
			Doc: "2:4 kept pair read with v(i0) from the high nibble of comp",
			Run: rewriteInput("sparse24.decompress", "comp", eachByte(swapByte))},
		{Name: "sparse24-reorder-no-2x2-swap", Suite: "sparse24-reorder", Claim: "default", Class: "cutlass-reorder-no-swap",
			Doc: "CUTLASS metadata reorder without the 2x2 swap of (even row, odd column) and (odd row, even column) (torch/sparse/_semi_structured_conversions.py, the topright/bottomleft step)",
			Run: reorderMeta(false, withoutSwap(sparse24.Meta16))},
		{Name: "sparse24-reorder-int32-grouping", Suite: "sparse24-reorder", Claim: "default", Class: "cutlass-reorder-other-grouping",
			Doc: "16-bit metadata reordered with the int8 operand's row grouping (16 rows, interweave 2) instead of 32 and 4 (torch/sparse/_semi_structured_conversions.py picks them by meta dtype)",
			Run: reorderMeta(false, sparse24.Meta32)},
		{Name: "sparse24-reorder-i32-int16-grouping", Suite: "sparse24-reorder-i32", Claim: "default", Class: "cutlass-reorder-other-grouping",
			Doc: "32-bit metadata reordered with the 16-bit operand's row grouping (32 rows, interweave 4)",
			Run: reorderMeta(true, sparse24.Meta16)},
		{Name: "sparse24-unreorder-no-2x2-swap", Suite: "sparse24-unreorder", Claim: "default", Class: "cutlass-reorder-no-swap",
			Doc: "CUTLASS metadata unreorder without the 2x2 swap step",
			Run: unreorderNoSwap},
		// nvfp4-swizzle, nvfp4-unswizzle
		{Name: "nvfp4-swizzle-linear", Suite: "nvfp4-swizzle", Claim: "default", Class: "swizzle-linear",
			Doc: "NVFP4 block scales written linearly (row-major, padded) where the 128x4 swizzle is expected: vllm-project/vllm issue 50084 (V scales in the wrong layout), the inverse fault",
			Run: swizzle(swizzleLinear)},
		{Name: "nvfp4-swizzle-row-major-tile", Suite: "nvfp4-swizzle", Claim: "default", Class: "swizzle-row-major-tile",
			Doc: "128x4 tiles stored row-major (row m at (m%128)*4) instead of the 32x4x4 interleave (m%32)*16 + ((m/32)%4)*4 of torchao to_blocked / CUTLASS",
			Run: swizzle(swizzleTileRowMajor)},
		{Name: "nvfp4-swizzle-tile-count-floor", Suite: "nvfp4-swizzle", Claim: "default", Class: "swizzle-tile-count-floor",
			Doc: "tile count along K as sfCols/4 rounded down where torchao to_blocked uses ceil_div: scale columns not a multiple of 4 overlap the next tile row",
			Run: swizzle(swizzleTilesFloor)},
		{Name: "nvfp4-unswizzle-row-major-tile", Suite: "nvfp4-unswizzle", Claim: "default", Class: "swizzle-row-major-tile",
			Doc: "unswizzle reading 128x4 tiles row-major instead of the 32x4x4 interleave",
			Run: unswizzle(swizzleTileRowMajor)},
		{Name: "nvfp4-unswizzle-tile-count-floor", Suite: "nvfp4-unswizzle", Claim: "default", Class: "swizzle-tile-count-floor",
			Doc: "unswizzle with the tile count along K rounded down (sfCols/4)",
			Run: unswizzle(swizzleTilesFloor)},
		// awq-pack-ct, awq-unpack, awq-quantize, awq-dequantize
		{Name: "awq-pack-ct-awq-order", Suite: "awq-pack-ct", Claim: "compressed-tensors", Class: "awq-nibble-order",
			Doc: "compressed-tensors words packed in AWQ's [0,2,4,6,1,3,5,7] order instead of sequentially (compressed-tensors pack_to_int32 is sequential; mit-han-lab/llm-awq issue 91 on the AWQ order)",
			Run: func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
				l, err := awq.LayoutByName("compressed-tensors")
				if err != nil {
					return nil, err
				}
				l.Weight.Order = awq.OrderAWQ
				q := in["q"]
				w, ws, err := l.PackWeight(q.Data, q.Shape[0], q.Shape[1])
				if err != nil {
					return nil, err
				}
				return ops.Tensors{"qweight": tensor.FromI32(ws, w)}, nil
			}},
		{Name: "awq-unpack-sequential", Suite: "awq-unpack", Claim: "default", Class: "awq-nibble-order",
			Doc: "AWQ words unpacked in sequential nibble order instead of through AWQ_REVERSE_ORDER [0,4,1,5,2,6,3,7] (vLLM awq_triton.py; mit-han-lab/llm-awq issue 91)",
			Run: func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
				out, err := ops.Run("awq.unpack", p, in)
				if err != nil {
					return nil, err
				}
				for _, n := range []string{"q", "zeros"} {
					t := out[n]
					d := append([]byte{}, t.Data...)
					// Column 8j+p comes from nibble p, which holds the
					// reference's column 8j+OrderAWQ[p].
					for i := range d {
						d[i] = t.Data[i-i%8+awq.OrderAWQ[i%8]]
					}
					t.Data = d
					out[n] = t
				}
				return out, nil
			}},
		{Name: "awq-unpack-zeros-plus-one", Suite: "awq-unpack", Claim: "default", Class: "gptq-zero-plus-one",
			Doc: "AWQ zero points unpacked plus one, the GPTQ v1 reader's zeros + 1 (AutoGPTQ qlinear) applied to an AWQ checkpoint",
			Run: transform("awq.unpack", func(out ops.Tensors) ops.Tensors {
				t := out["zeros"]
				t.Data = eachByte(func(b byte) byte { return (b + 1) & 15 })(append([]byte{}, t.Data...))
				out["zeros"] = t
				return out
			})},
		{Name: "awq-quantize-sequential", Suite: "awq-quantize", Claim: "forge", Class: "awq-nibble-order",
			Doc: "AWQ quantizer packing weights and zeros sequentially instead of in the AWQ order (mit-han-lab/llm-awq issue 91)",
			Run: transform("awq.quantize", func(out ops.Tensors) ops.Tensors {
				for _, n := range []string{"qweight", "qzeros"} {
					t := out[n]
					w := t.I32()
					for i, v := range w {
						var o uint32
						for p, c := range awq.OrderAWQ {
							o |= (uint32(v) >> (4 * p) & 15) << (4 * c)
						}
						w[i] = int32(o)
					}
					out[n] = tensor.FromI32(t.Shape, w)
				}
				return out
			})},
		{Name: "awq-quantize-scale-rz", Suite: "awq-quantize", Claim: "forge", Class: "scale-cast:rz",
			Doc: "AWQ fp16 scale absmax/7 cast toward zero (__float2half_rz) where round to nearest is specified",
			Run: awqForge(true, false)},
		{Name: "awq-quantize-mul-rcp", Suite: "awq-quantize", Claim: "forge", Class: "element-rule:mul-rcp-d",
			Doc: "AWQ weights scaled by w * (1/s) where w / s is specified (PyTorch CUDA divides by a scalar as a reciprocal multiply, aten/src/ATen/backends/cuda/BinaryDivTrueKernel.cu)",
			Run: awqForge(false, true)},
		{Name: "awq-dequantize-triton-zero-sign", Suite: "awq-dequantize", Claim: "cuda", Class: "profile:triton",
			Doc: "AWQ dequantize rounding (u - z) * s once to fp16 but keeping a -0 product, where vLLM's CUDA kernel (fma.rn.f16x2 with +0, csrc/quantization/awq/gemm_kernels.cu) is claimed: vLLM's awq_triton.py, or a port computing the product in float32 and converting with __float2half_rn",
			Run: awqDequant(awq.OrderAWQ, 0, true, false)},
		{Name: "awq-dequantize-sequential", Suite: "awq-dequantize", Claim: "cuda", Class: "awq-nibble-order",
			Doc: "AWQ dequantize reading words in sequential nibble order (without AWQ_REVERSE_ORDER, vLLM awq_triton.py)",
			Run: awqDequant(awq.OrderSequential, 0, false, false)},
		{Name: "awq-dequantize-zeros-plus-one", Suite: "awq-dequantize", Claim: "cuda", Class: "gptq-zero-plus-one",
			Doc: "AWQ dequantize adding one to each stored zero point, the GPTQ v1 convention (AutoGPTQ qlinear zeros + 1)",
			Run: awqDequant(awq.OrderAWQ, 1, false, false)},
		{Name: "awq-dequantize-zero-ignored", Suite: "awq-dequantize", Claim: "cuda", Class: "awq-implicit-zero-8",
			Doc: "AWQ dequantize with the implicit zero point 8 instead of the stored one (the uint4b8 convention of Marlin and vLLM moe_wna16 without zero points)",
			Run: awqDequant(awq.OrderAWQ, 0, false, true)},
		// mxfp4 (quantize)
		{Name: "mxfp4-scale-rz", Suite: "mxfp4", Claim: "mode=floor,profile=nvidia", Class: "scale-cast:rz",
			Doc: "MXFP4 scale from amax/6 cast with cvt.rz.satfinite.ue8m0x2 where torchao's RCEIL uses cvt.rp (PTX ISA cvt ue8m0x2; torchao ScaleCalculationMode.RCEIL)",
			Run: mxfp4ScaleRZ},
	}
}

// extraCatalog lists the mutants of blind spots the other catalogues
// missed (NaN in the amax fold, the per-tensor formula, special scale
// codes).
func extraCatalog() []Mutant {
	return []Mutant{
		{Name: "gemv-mxfp4-e8m0-ff-finite", Suite: "gemv-mxfp4", Claim: "seq", Class: "",
			Doc: "MXFP4 x Q8_1 GEMV decoding the weight scale with GGML_E8M0_TO_FP32_HALF, which has no NaN (0xFF -> 2^127; ggml/src/ggml-impl.h, the CPU vec_dot_mxfp4_q8_0 path), where the reference follows CUDA >= 12.8's __nv_cvt_e8m0_to_bf16raw (0xFF -> NaN): outside the diagnosis library",
			Run: gemvMXFP4Seq(true)},
		{Name: "q8_1-cuda-round-half-even", Suite: "q8_1", Claim: "cuda", Class: "",
			Doc: "block_q8_1 quants rounded half to even where quantize_q8_1 uses roundf (ties away), as ggml's AVX2 quantize_row_q8_1 rounds with _mm256_round_ps(v, _MM_ROUND_NEAREST) (ggml-quants.c, now ggml/src/ggml-cpu/arch/x86/quants.c): outside the diagnosis library",
			Run: q81CUDA(math.RoundToEven)},
		{Name: "nvfp4-swizzle-tile-column-major", Suite: "nvfp4-swizzle", Claim: "default", Class: "swizzle-column-major-tile",
			Doc: "each 128x4 swizzle tile stored transposed (column-major: column k at (k%4)*128 + m%128)",
			Run: swizzle(swizzleTileColMajor)},
		{Name: "awq-dequantize-zero-not-subtracted", Suite: "awq-dequantize", Claim: "cuda", Class: "awq-zero-not-subtracted",
			Doc: "AWQ dequantize as u * s, the zero point never subtracted (a symmetric-kernel path applied to an asymmetric checkpoint)",
			Run: func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
				q := ops.Tensors{}
				for k, v := range in {
					q[k] = v
				}
				z := in["qzeros"]
				q["qzeros"] = tensor.FromI32(z.Shape, make([]int32, z.Len()))
				return ops.Run("awq.dequantize", p, q)
			}},
		{Name: "nvfp4-amax-nan-first-only", Suite: "nvfp4", Claim: "recipe=canonical,swizzle=0", Class: "",
			Doc: "NVFP4 block amax folded as m = |x0|, then a > m ? a : m: a NaN is noticed only in the block's first position (NaN handled by an amax fold at one position); outside the diagnosis library",
			Run: nvfp4ByHand(amaxSeededFirst, globalEncode)},
		{Name: "nvfp4-global-reciprocal-of-decode", Suite: "nvfp4", Claim: "recipe=canonical,swizzle=0", Class: "per-tensor-rule:rcp-of-decode",
			Doc: "NVFP4 per-tensor value 1/(amax/2688) where 2688/amax is the recipe: the reciprocal of torchao's per_tensor_scale (torchao NVFP4Tensor), which rounds differently for about a quarter of amax values (issue 17 §2)",
			Run: nvfp4ByHand(amaxIgnoreNaN, globalViaDecode)},
		{Name: "mxfp4-dequantize-ff-as-2^128", Suite: "mxfp4-dequantize", Claim: "default", Class: "",
			Doc: "MXFP4 scale 0xFF decoded as 2^128 = +Inf instead of NaN (a decoder building the float from code<<23, as ggml_e8m0_to_fp32 does with its NaN branch commented out): outside the diagnosis library",
			Run: func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
				packed, scales := in["packed"], in["scales"]
				m, k := packed.Shape[0], 2*packed.Shape[1]
				y := make([]float32, m*k)
				for j := range y {
					sc := scales.Data[j/mxfp4.BlockSize]
					c := packed.Data[j/2] >> (4 * (j % 2)) & 15
					s := e8m0.Decode(sc)
					if sc == 0xFF {
						s = float32(math.Inf(1))
					}
					y[j] = canonNaN(fp4.Decode(c) * s)
				}
				return ops.Tensors{"y": tensor.FromF32([]int{m, k}, y)}, nil
			}},
		{Name: "nvfp4-dequantize-dgx-lut", Suite: "nvfp4-dequantize", Claim: "canonical", Class: "",
			Doc: "NVFP4 block scale 0x7F/0xFF decoded as ±480 (dgx-vllm's host E4M3 table, sparse_fp4_v7.cu) instead of NaN: outside the diagnosis library",
			Run: func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
				out, err := ops.Run("nvfp4.dequantize", p, in)
				if err != nil {
					return nil, err
				}
				packed, scales, g := in["packed"], in["scales"], in["global"].F32()[0]
				y := out["y"].F32()
				for j := range y {
					sc := scales.Data[j/16]
					if sc&0x7f != 0x7f {
						continue
					}
					s := float32(480)
					if sc == 0xFF {
						s = -480
					}
					c := packed.Data[j/2] >> (4 * (j % 2)) & 15
					y[j] = canonNaN(fp4.Decode(c) * float32(s/g))
				}
				return ops.Tensors{"y": tensor.FromF32(out["y"].Shape, y)}, nil
			}},
		{Name: "gemv-sparse-fp4-dgx-lut", Suite: "gemv-sparse-fp4", Claim: "schedule=sparse-v7,scale_decode=e4m3fn", Class: "profile:schedule=sparse-v7,scale_decode=dgx_lut",
			Doc: "sparse FP4 GEMV decoding E4M3 scales with dgx-vllm's host table (0x7F = 480, 0xFF = -480) where e4m3fn (NaN) is claimed",
			Run: withParams("gemv.sparse_fp4", ops.Params{"scale_decode": "dgx_lut"})},
	}
}
