package mutants

import (
	"math"

	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/fp8"
	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// Mutants of the fp16/bf16-input conversion suites and of the bound-mode
// GEMV suites.

// widenX runs run on inputs whose fp16 or bf16 x is widened exactly to
// float32 (NaN payloads included), the contract of the 16-bit-input
// conversion suites.
func widenX(run func(ops.Params, ops.Tensors) (ops.Tensors, error)) func(ops.Params, ops.Tensors) (ops.Tensors, error) {
	return func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
		x := in["x"]
		var dec func(uint16) uint32
		switch x.DType {
		case tensor.F16:
			dec = func(h uint16) uint32 { return math.Float32bits(half.DecodeFP16(h)) }
		case tensor.BF16:
			dec = func(h uint16) uint32 { return uint32(h) << 16 }
		default:
			return run(p, in)
		}
		b := x.Bits16()
		w := make([]uint32, len(b))
		for i, h := range b {
			w[i] = dec(h)
		}
		q := ops.Tensors{}
		for k, v := range in {
			q[k] = v
		}
		q["x"] = tensor.FromBits32(tensor.F32, x.Shape, w)
		return run(p, q)
	}
}

// e5m2TopByte converts fp16 to E5M2 by keeping the fp16's top byte (E5M2
// is fp16 with the low 8 mantissa bits dropped): truncation, with NaN and
// ±Inf encoded as the reference does (the satfinite claim saturates Inf).
func e5m2TopByte(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	ref, err := ops.Run("fp8.encode", p, in)
	if err != nil {
		return nil, err
	}
	x := in["x"].Bits16()
	c := append([]byte{}, ref["codes"].Data...)
	for i, h := range x {
		if h&0x7C00 != 0x7C00 { // finite
			c[i] = byte(h >> 8)
		}
	}
	t := ref["codes"]
	t.Data = c
	return ops.Tensors{"codes": t}, nil
}

// bf16TopOfFP16 converts fp16 to bf16 by truncating the widened float32
// to its top 16 bits, NaN as the reference encodes it.
func bf16TopOfFP16(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	ref, err := ops.Run("bf16.encode", p, in)
	if err != nil {
		return nil, err
	}
	x := in["x"].Bits16()
	y := ref["y"].Bits16()
	for i, h := range x {
		if v := half.DecodeFP16(h); v == v {
			y[i] = uint16(math.Float32bits(v) >> 16)
		}
	}
	return ops.Tensors{"y": tensor.FromBits16(tensor.BF16, ref["y"].Shape, y)}, nil
}

// fp16FlushOutputs is an encoder whose fp16-subnormal results are flushed
// to a signed zero.
func fp16FlushOutputs(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	return transform("fp16.encode", mapF16("y", func(h uint16) uint16 {
		if h&0x7C00 == 0 {
			return h & 0x8000
		}
		return h
	}))(p, in)
}

// gemvAccumulate is a dense GEMV y = W x in K order, acc = float32(w*x) +
// acc; with half, the accumulator is fp16: acc = fp16(acc + fp16(w*x))
// (CUBLAS_COMPUTE_16F, or __hfma2-style accumulation), the result widened
// to float32.
func gemvAccumulate(half16 bool) func(ops.Params, ops.Tensors) (ops.Tensors, error) {
	return func(p ops.Params, in ops.Tensors) (ops.Tensors, error) { return gemvAccumulateWith(half16, in) }
}

func gemvAccumulateWith(half16 bool, in ops.Tensors) (ops.Tensors, error) {
	w, x := in["w"], in["x"]
	read := func(t tensor.Tensor) []float32 {
		switch t.DType {
		case tensor.F16:
			b := t.Bits16()
			v := make([]float32, len(b))
			for i, h := range b {
				v[i] = half.DecodeFP16(h)
			}
			return v
		}
		return t.F32()
	}
	wv, xv := read(w), read(x)
	n, k := w.Shape[0], w.Shape[1]
	y := make([]float32, n)
	for r := 0; r < n; r++ {
		var acc float32
		for j := 0; j < k; j++ {
			if half16 {
				acc = f16Product(acc + f16Product(wv[r*k+j]*xv[j]))
			} else {
				acc = float32(wv[r*k+j]*xv[j]) + acc
			}
		}
		y[r] = acc
	}
	return ops.Tensors{"y": tensor.FromF32([]int{n}, y)}, nil
}

// dropLastActBlock runs op with the activations' last Q8_1 block zeroed:
// a split-K kernel that loses its tail block.
func dropLastActBlock(op string, over ops.Params) func(ops.Params, ops.Tensors) (ops.Tensors, error) {
	return func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
		q := ops.Tensors{}
		for k, v := range in {
			q[k] = v
		}
		a := in["act"]
		d := append([]byte{}, a.Data...)
		for i := len(d) - 36; i < len(d); i++ {
			d[i] = 0
		}
		a.Data = d
		q["act"] = a
		return withParams(op, over)(p, q)
	}
}

// onlyY keeps the output y (a bound-mode result holds y alone).
func onlyY(run func(ops.Params, ops.Tensors) (ops.Tensors, error)) func(ops.Params, ops.Tensors) (ops.Tensors, error) {
	return func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
		out, err := run(p, in)
		if err != nil {
			return nil, err
		}
		return ops.Tensors{"y": out["y"]}, nil
	}
}

func halfBoundCatalog() []Mutant {
	nv := fp4.NVIDIA
	tiesAway := nv
	tiesAway.Tie = fp4.TieAway
	zeroPos := nv
	zeroPos.Zero = fp4.ZeroPositive
	return []Mutant{
		// fp16/bf16-input conversions
		{Name: "e2m1-from-fp16-ties-away", Suite: "e2m1-from-fp16", Claim: "nvidia", Class: "ties-away",
			Doc: "fp16 -> E2M1 with midpoints rounded away from zero (microsoft/microxcaling round='nearest' is floor(|x|+0.5))",
			Run: widenX(codes("e2m1", tiesAway.Encode))},
		{Name: "e2m1-from-bf16-negative-zero-cleared", Suite: "e2m1-from-bf16", Claim: "nvidia", Class: "negative-zero-cleared",
			Doc: "bf16 -> E2M1 with zero results always +0 (modelopt's _cast_fp4 takes the sign from x < 0)",
			Run: widenX(codes("e2m1", zeroPos.Encode))},
		{Name: "e4m3-from-fp16-no-saturation", Suite: "e4m3-from-fp16", Claim: "satfinite", Class: "profile:nosat",
			Doc: "fp16 -> E4M3 overflowing to NaN where satfinite is claimed (cvt.rn.e4m3x2.f16x2 without .satfinite)",
			Run: withParams("fp8.encode", ops.Params{"profile": "nosat"})},
		{Name: "e4m3-from-bf16-nan-sign-kept", Suite: "e4m3-from-bf16", Claim: "satfinite", Class: "nan-sign-kept",
			Doc: "bf16 -> E4M3 saturating, but -NaN -> 0xFF (torch eager and ml_dtypes keep the NaN sign)",
			Run: widenX(codes("e4m3", func(x float32) uint8 {
				return fp8.E4M3.Encode(x, fp8.Profile{Name: "m", Saturate: true, NaNKeepsSign: true})
			}))},
		{Name: "e5m2-from-fp16-top-byte", Suite: "e5m2-from-fp16", Claim: "satfinite", Class: "truncation",
			Doc: "fp16 -> E5M2 as the fp16's top byte (E5M2 is fp16 with 8 fewer mantissa bits): truncation instead of rounding",
			Run: e5m2TopByte},
		{Name: "e5m2-from-bf16-ties-away", Suite: "e5m2-from-bf16", Claim: "satfinite", Class: "ties-away",
			Doc: "bf16 -> E5M2 by nearest-value search with ties to the larger magnitude",
			Run: widenX(codes("e5m2", nearestTiesAway(fp8.E5M2)))},
		{Name: "e8m0-from-fp16-rz-for-rp", Suite: "e8m0-from-fp16", Claim: "rp", Class: "profile:rz",
			Doc: "fp16 -> E8M0 rounded toward zero where round-up is claimed (cvt.rz vs cvt.rp .ue8m0x2)",
			Run: withParams("e8m0.encode", ops.Params{"rounding": "rz"})},
		{Name: "e8m0-from-bf16-torch-for-rp", Suite: "e8m0-from-bf16", Claim: "rp", Class: "profile:torch",
			Doc: "bf16 -> E8M0 with torch's float8_e8m0fnu rounding (half up on the mantissa, overflow to NaN) where cvt.rp is claimed",
			Run: withParams("e8m0.encode", ops.Params{"rounding": "torch"})},
		{Name: "fp16-from-bf16-ftz", Suite: "fp16-from-bf16", Claim: "rne", Class: "ftz-outputs",
			Doc: "bf16 -> fp16 flushing fp16-subnormal results to signed zero (ROCm/rocm-libraries PR 11325's double shift)",
			Run: fp16FlushOutputs},
		{Name: "bf16-from-fp16-truncation", Suite: "bf16-from-fp16", Claim: "rne", Class: "truncation",
			Doc: "fp16 -> bf16 as the top 16 bits of the widened float32 (stillwater-sc/universal issue 1133)",
			Run: bf16TopOfFP16},
		// NVFP4 and MXFP4 quantizers of fp16/bf16 activations
		{Name: "nvfp4-from-fp16-nibble-swap", Suite: "nvfp4-from-fp16", Claim: "recipe=canonical,swizzle=0", Class: "nibble-swap",
			Doc: "NVFP4 quantize of fp16 activations with element 2i stored in the high nibble",
			Run: transform("nvfp4.quantize", swapNibbles("packed"))},
		{Name: "nvfp4-from-bf16-modelopt-for-canonical", Suite: "nvfp4-from-bf16", Claim: "recipe=canonical,swizzle=0", Class: "profile:recipe=modelopt-5a4242f-cpu,swizzle=0",
			Doc: "NVFP4 quantize of bf16 activations under ModelOpt's recipe where the canonical one is claimed",
			Run: withParams("nvfp4.quantize", ops.Params{"recipe": "modelopt-5a4242f-cpu"})},
		{Name: "mxfp4-from-fp16-nibble-swap", Suite: "mxfp4-from-fp16", Claim: "mode=floor,profile=nvidia", Class: "nibble-swap",
			Doc: "MXFP4 quantize of fp16 activations with element 2i stored in the high nibble",
			Run: transform("mxfp4.quantize", swapNibbles("packed"))},
		{Name: "mxfp4-from-bf16-ceil-for-floor", Suite: "mxfp4-from-bf16", Claim: "mode=floor,profile=nvidia", Class: "profile:mode=ceil,profile=nvidia",
			Doc: "MXFP4 quantize of bf16 activations with the scale rounded up where floor is claimed",
			Run: withParams("mxfp4.quantize", ops.Params{"mode": "ceil"})},
		// bound-mode GEMVs
		{Name: "gemv-bound-half-accumulation", Suite: "gemv-bound", Claim: "mul32=1,round16=0,out=fp32", Class: "",
			Doc: "float32 GEMV accumulating in fp16 (a half-precision accumulator, CUBLAS_COMPUTE_16F): far outside the float32 bound; bound mode has no diagnosis",
			Run: gemvAccumulate(true)},
		{Name: "gemv-f16-bound-half-accumulation", Suite: "gemv-f16-bound", Claim: "mul32=0,round16=0,out=fp32", Class: "",
			Doc: "fp16 GEMV accumulating in fp16 (__hfma2-style half2 accumulation, as llama.cpp's GGML_CUDA_F16 paths) where float32 accumulation is declared",
			Run: gemvAccumulate(true)},
		{Name: "gemv-mxfp4-bound-tail-dropped", Suite: "gemv-mxfp4-bound", Claim: "mul32=2,round16=0,out=fp32", Class: "",
			Doc: "MXFP4 GEMV whose split-K loses the last K block (a lost tail block): the mmvq order on activations with the last block zeroed",
			Run: onlyY(dropLastActBlock("gemv.mxfp4_q8_1", ops.Params{"schedule": "mmvq"}))},
		{Name: "gemv-awq-bound-half-accumulation", Suite: "gemv-awq-bound", Claim: "mul32=0,round16=0,out=fp32", Class: "",
			Doc: "AWQ GEMV accumulating in fp16 where a float32 accumulator is declared",
			Run: onlyY(withParams("gemv.awq", ops.Params{"schedule": "chunk=0,lanes=0,group=1,fma=0,acc=fp16,partial=fp16,reduce=seq,out=fp32"}))},
		{Name: "gemv-sparse-fp4-bound-dgx-lut", Suite: "gemv-sparse-fp4-bound", Claim: "mul32=2,round16=1,out=fp16,scale_decode=e4m3fn", Class: "",
			Doc: "sparse FP4 GEMV decoding E4M3 scales with dgx-vllm's host table (0x7F = 480) where the e4m3fn decode (NaN) is declared",
			Run: onlyY(withParams("gemv.sparse_fp4", ops.Params{"schedule": "sparse-v7", "scale_decode": "dgx_lut"}))},
	}
}
