package fp8block

import (
	"fmt"
	"math"
	"strings"

	"github.com/bitexact/bitexact/refimpl/fp8"
)

// Pinned sources the recipes were read from.
const (
	vllmUtils   = "vllm-project/vllm vllm/model_executor/layers/quantization/utils/fp8_utils.py @ 007d50058a06dec0f82472d63c819244d460c40d"
	vllmCUDA    = "vllm-project/vllm csrc/quantization/8bit/fp8/per_token_group_quant.cu @ 619f1cf620a8675cffc530d7171a5e49969e4c10"
	sglangFile  = "sgl-project/sglang python/sglang/srt/layers/quantization/fp8_kernel.py @ 008601fa0ff2e0d398ae143f92172a8f719316f1"
	deepgemmRef = "deepseek-ai/DeepGEMM deep_gemm/utils/math.py @ 54e22612409371d6364144b69086735beb54e98b"
	teRef       = "NVIDIA/TransformerEngine tests/pytorch/references/blockwise_quantizer_reference.py @ 1400f7a07693e64260a7ff5045a142879bd978dd and quantize_scale_calc.py @ 3580212c7d86bb0c2a0b697d7eeebe348a544966"
	triton      = " (run: Triton 3.6.0, torch 2.11.0+cu130, NVIDIA H200; record conformance/harness/fp8block/corpus-records)"
	torchRun    = " (run on CPU and CUDA tensors: torch 2.11.0+cu130, NVIDIA H200; record conformance/harness/fp8block/corpus-records)"
)

func e4m3() (fp8.Format, float32) { return fp8.E4M3, 448 }

// The recipes. Each names the function it models; the Triton and CUDA
// kernels compute in float32 on the GPU (NaNGPU).
var (
	// VLLMTriton is vLLM's Triton per_token_group_quant_fp8
	// (_per_token_group_quant_fp8 and _colmajor, use_ue8m0 False):
	// amax = tl.maximum(tl.max(tl.abs(y)), eps=1e-10) (tl.max skips
	// NaN), y_s = amax / 448, tl.clamp(y / y_s, -448, 448) (a NaN
	// becomes -448) cast to float8e4nv. Triton lowers float32 `/` to
	// div.full.f32, which is amax * float32(1/448) for the scale (all 690
	// recorded groups) and is modelled as y * float32(1/y_s) for the
	// elements (the records do not tell it from y / y_s). The cast's
	// saturation is never reached: the clamp leaves nothing beyond 448.
	// (On CUDA vLLM prefers its CUDA kernel; the Triton kernel is the
	// fallback.)
	VLLMTriton = Recipe{Name: "vllm-triton",
		Summary: "amax floored at 1e-10, s = amax * f32(1/448), x * f32(1/s) clamped to ±448 (NaN -> -448)",
		Source:  vllmUtils + " _per_token_group_quant_fp8" + triton,
		Eps:     1e-10, AmaxNaN: AmaxIgnoresNaN, ScaleDiv: MulRecipMax, Apply: MulRecip, Clamp: ClampNaNToLow, Cast: fp8.Satfinite, NaN: NaNGPU}
	// VLLMTritonUE8M0 is VLLMTriton with use_ue8m0: y_s =
	// tl.math.exp2(tl.ceil(tl.log2(scale_raw))). tl.log2 agreed with a
	// correctly rounded log2 on every recorded scale, among them scales
	// 1, 2, 8 and 64 ulps above powers of two where Log2Ceil and BitCeil
	// split.
	VLLMTritonUE8M0 = Recipe{Name: "vllm-triton-ue8m0",
		Summary: "vllm-triton with s = exp2(ceil(log2(amax * f32(1/448)))) in float32",
		Source:  vllmUtils + " _per_token_group_quant_fp8 use_ue8m0" + triton,
		Eps:     1e-10, AmaxNaN: AmaxIgnoresNaN, ScaleDiv: MulRecipMax, Pow2: Pow2Log2Ceil, Apply: MulRecip, Clamp: ClampNaNToLow, Cast: fp8.Satfinite, NaN: NaNGPU}
	// VLLMCUDA is vLLM's CUDA per_token_group_quant_8bit_kernel:
	// local_absmax starts at eps and takes fmaxf of |x|, y_s =
	// absmax/max, fminf(fmaxf(x/y_s, min), max) (a NaN becomes -448),
	// __nv_fp8_e4m3(q) (satfinite).
	VLLMCUDA = Recipe{Name: "vllm-cuda",
		Summary: "amax from eps with fmaxf, s = amax/448, fminf(fmaxf(x/s)) (NaN -> -448), satfinite cast",
		Source:  vllmCUDA + " per_token_group_quant_8bit_kernel (read; not run: needs vLLM's extension build)",
		Eps:     1e-10, AmaxNaN: AmaxIgnoresNaN, Apply: Divide, Clamp: ClampNaNToLow, Cast: fp8.Satfinite, NaN: NaNGPU}
	// VLLMCUDAUE8M0 is VLLMCUDA with SCALE_UE8M0: y_s =
	// exp2f(ceilf(log2f(fmaxf(fabsf(y_s), 1e-10f)))).
	VLLMCUDAUE8M0 = Recipe{Name: "vllm-cuda-ue8m0",
		Summary: "vllm-cuda with s = exp2f(ceilf(log2f(s)))",
		Source:  vllmCUDA + " per_token_group_quant_8bit_kernel SCALE_UE8M0 (read; not run)",
		Eps:     1e-10, AmaxNaN: AmaxIgnoresNaN, Pow2: Pow2Log2Ceil, Apply: Divide, Clamp: ClampNaNToLow, Cast: fp8.Satfinite, NaN: NaNGPU}
	// SGLangTriton is sglang's row-major Triton _per_token_group_quant_8bit:
	// y_s = amax / 448, y_s_inv = 1.0 / y_s, tl.clamp(y * y_s_inv): the
	// arithmetic of VLLMTriton (div.full.f32 of 1.0 is the float32
	// reciprocal).
	SGLangTriton = Recipe{Name: "sglang-triton",
		Summary: "amax floored at 1e-10, s = amax * f32(1/448), x * f32(1/s) clamped to ±448 (NaN -> -448)",
		Source:  sglangFile + " _per_token_group_quant_8bit" + triton,
		Eps:     1e-10, AmaxNaN: AmaxIgnoresNaN, ScaleDiv: MulRecipMax, Apply: MulRecip, Clamp: ClampNaNToLow, Cast: fp8.Satfinite, NaN: NaNGPU}
	// SGLangTritonColMajor is sglang's _per_token_group_quant_8bit_colmajor
	// (SCALE_UE8M0 False): y / y_s, div.full.f32 as in VLLMTriton.
	SGLangTritonColMajor = Recipe{Name: "sglang-triton-colmajor",
		Summary: "amax floored at 1e-10, s = amax * f32(1/448), x * f32(1/s) clamped to ±448 (NaN -> -448)",
		Source:  sglangFile + " _per_token_group_quant_8bit_colmajor" + triton,
		Eps:     1e-10, AmaxNaN: AmaxIgnoresNaN, ScaleDiv: MulRecipMax, Apply: MulRecip, Clamp: ClampNaNToLow, Cast: fp8.Satfinite, NaN: NaNGPU}
	// SGLangTritonUE8M0 is the colmajor kernel with SCALE_UE8M0: y_s =
	// tl.exp2(tl.ceil(tl.log2(tl.abs(y_s)))), tl.log2 as in
	// VLLMTritonUE8M0.
	SGLangTritonUE8M0 = Recipe{Name: "sglang-triton-ue8m0",
		Summary: "sglang-triton-colmajor with s = exp2(ceil(log2(s))) in float32",
		Source:  sglangFile + " _per_token_group_quant_8bit_colmajor SCALE_UE8M0" + triton,
		Eps:     1e-10, AmaxNaN: AmaxIgnoresNaN, ScaleDiv: MulRecipMax, Pow2: Pow2Log2Ceil, Apply: MulRecip, Clamp: ClampNaNToLow, Cast: fp8.Satfinite, NaN: NaNGPU}
	// DeepGEMM is DeepGEMM's test helpers per_token_cast_to_fp8 and
	// per_block_cast_to_fp8 (use_ue8m0 False) on CUDA tensors: amax =
	// x.abs().float().amax().clamp(1e-4) (a NaN propagates), sf =
	// amax / 448.0, which torch on CUDA computes as amax * float32(1/448)
	// (a Python scalar divisor becomes a reciprocal), then
	// (x * (1.0/sf)).to(torch.float8_e4m3fn) with no clamp. OnCPU gives
	// the CPU form.
	DeepGEMM = Recipe{Name: "deepgemm",
		Summary: "amax (NaN propagates) floored at 1e-4, s = amax * f32(1/448), x * (1/s), no clamp, torch cast (nosat)",
		Source:  deepgemmRef + " per_token_cast_to_fp8 / per_block_cast_to_fp8" + torchRun,
		Eps:     1e-4, AmaxNaN: AmaxPropagatesNaN, ScaleDiv: MulRecipMax, Apply: MulRecip, Clamp: NoClamp, Cast: fp8.NoSat, NaN: NaNGPU,
		Torch: true}
	// DeepGEMMUE8M0 is DeepGEMM with use_ue8m0: sf = ceil_to_ue8m0(amax/448).
	DeepGEMMUE8M0 = Recipe{Name: "deepgemm-ue8m0",
		Summary: "deepgemm with s = ceil_to_ue8m0(amax * f32(1/448)) (integer exponent ceiling, clamped to 2^-126..2^127)",
		Source:  deepgemmRef + " per_token_cast_to_fp8 / per_block_cast_to_fp8 use_ue8m0, ceil_to_ue8m0" + torchRun,
		Eps:     1e-4, AmaxNaN: AmaxPropagatesNaN, ScaleDiv: MulRecipMax, Pow2: Pow2BitCeil, Apply: MulRecip, Clamp: NoClamp, Cast: fp8.NoSat, NaN: NaNGPU,
		Torch: true}
	// TE is TransformerEngine's blockwise quantizer reference (1x128 and
	// 128x128, pow_2_scales False, eps 0): scale = 448/max(amax, eps), an
	// infinite scale replaced by finfo(x.dtype).max, 1.0 for amax 0;
	// torch.clamp(x * scale, ±448).to(float8); stored scale_inv =
	// 1/scale. torch.div(448.0, amax) divides exactly on CPU and CUDA
	// (the scalar is the dividend). OnCPU gives the CPU form.
	TE = Recipe{Name: "te",
		Summary: "q = 448/amax (Inf -> dtype max, amax 0 -> 1), clamp(x*q) (NaN kept), torch cast, stored 1/q",
		Source:  teRef + torchRun,
		AmaxNaN: AmaxPropagatesNaN, From: QuantScale, Apply: MulScale, Clamp: ClampKeepsNaN, Cast: fp8.NoSat, NaN: NaNGPU,
		InfScale: math.MaxFloat32, Torch: true}
	// TEPow2 is TE with pow_2_scales: q rounded down to a power of two by
	// frexp, 0 for an infinite amax; torch.frexp of a NaN gives exponent
	// 0 on CPU and CUDA (measured), so a NaN amax stores the scale 2.
	TEPow2 = Recipe{Name: "te-pow2",
		Summary: "te with q rounded down to a power of two (frexp), so 1/q is rounded up",
		Source:  teRef + " pow_2_scales" + torchRun,
		AmaxNaN: AmaxPropagatesNaN, From: QuantScale, Pow2: Pow2FrexpFloor, Apply: MulScale, Clamp: ClampKeepsNaN, Cast: fp8.NoSat, NaN: NaNGPU,
		InfScale: math.MaxFloat32, Torch: true}
)

func init() {
	// Every recipe here quantizes to E4M3 with Max 448; WithFormat
	// derives E5M2 variants.
	for _, r := range []*Recipe{&VLLMTriton, &VLLMTritonUE8M0, &VLLMCUDA, &VLLMCUDAUE8M0, &SGLangTriton,
		&SGLangTritonColMajor, &SGLangTritonUE8M0, &DeepGEMM, &DeepGEMMUE8M0, &TE, &TEPow2} {
		r.Elem, r.Max = e4m3()
	}
}

// Recipes lists the named recipes.
func Recipes() []Recipe {
	return []Recipe{VLLMTriton, VLLMTritonUE8M0, VLLMCUDA, VLLMCUDAUE8M0, SGLangTriton, SGLangTritonColMajor,
		SGLangTritonUE8M0, DeepGEMM, DeepGEMMUE8M0, TE, TEPow2}
}

// Lookup returns the named recipe; a name with the suffix "@cpu" is that
// recipe on CPU tensors (OnCPU), one with the suffix "/e5m2" that recipe
// quantizing to E5M2 (WithFormat), in that order ("te@cpu/e5m2").
func Lookup(name string) (Recipe, error) {
	base, e5, _ := strings.Cut(name, "/")
	base, dev, cpu := strings.Cut(base, "@")
	for _, r := range Recipes() {
		if r.Name != base || (cpu && dev != "cpu") {
			continue
		}
		if cpu {
			var err error
			if r, err = r.OnCPU(); err != nil {
				return Recipe{}, err
			}
		}
		switch e5 {
		case "":
			return r, nil
		case "e5m2":
			return r.WithFormat(fp8.E5M2), nil
		}
	}
	names := make([]string, 0, 16)
	for _, r := range Recipes() {
		names = append(names, r.Name)
	}
	return Recipe{}, fmt.Errorf("fp8block: unknown recipe %q (known: %s, each optionally with /e5m2, the torch ones with @cpu)", name, strings.Join(names, ", "))
}

// OnCPU returns a torch recipe (Torch set) as torch computes it on CPU
// tensors, named r.Name + "@cpu": x86 NaN results (NaNHost) and an exact
// amax / Max (torch's CPU kernels divide by a Python scalar; only CUDA's
// multiply by its reciprocal). Measured on torch 2.11 for every torch
// recipe here. A recipe of a GPU kernel has no CPU form.
func (r Recipe) OnCPU() (Recipe, error) {
	if !r.Torch {
		return Recipe{}, fmt.Errorf("fp8block: recipe %q is a GPU kernel: it has no CPU form", r.Name)
	}
	if strings.HasSuffix(r.Name, "@cpu") {
		return r, nil
	}
	r.Name += "@cpu"
	r.NaN = NaNHost
	if r.From == DequantScale {
		r.ScaleDiv = DivideMax
	}
	return r, nil
}

// WithFormat returns r quantizing to f, Max its largest finite value
// (448 for E4M3, 57344 for E5M2), named r.Name + "/" + f.Name unless f is
// E4M3. TransformerEngine quantizes to either; the other stacks take the
// largest value from torch.finfo of the output dtype the same way.
func (r Recipe) WithFormat(f fp8.Format) Recipe {
	if f == r.Elem {
		return r
	}
	r.Elem = f
	r.Max = f.Decode(f.MaxFinite())
	if f != fp8.E4M3 {
		r.Name += "/" + f.Name
	}
	return r
}
