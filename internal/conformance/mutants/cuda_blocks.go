package mutants

const (
	nvfp4Claim = "recipe=canonical,swizzle=0"
	mxfp4Claim = "mode=floor,profile=nvidia"
)

// cudaBlockMutants corrupt the block-scaled quantizers (nvfp4.cu,
// mxfp4.cu, and the E2M1 header as compiled into them).
var cudaBlockMutants = []CUDAMutant{
	{Name: "cuda-nvfp4-nibble-swap", Module: "nvfp4", Kernel: "nvfp4_quantize", Suite: "nvfp4", Claim: nvfp4Claim,
		Class: "nibble-swap",
		Doc:   "element 2i packed into the high nibble (shift by 4*(j^1))",
		Find: `      if (j < 8) lo |= c << (4 * j);
      else hi |= c << (4 * (j - 8));`,
		Replace: `      if (j < 8) lo |= c << (4 * (j ^ 1));
      else hi |= c << (4 * ((j - 8) ^ 1));`},
	{Name: "cuda-nvfp4-element-reciprocal", Module: "nvfp4", Kernel: "nvfp4_quantize", Suite: "nvfp4", Claim: nvfp4Claim,
		Class: "element-rule:mul-rcp",
		Doc:   "elements multiplied by the reciprocal 1/(s*(1/g)) (vLLM's order, exact reciprocals) where the canonical recipe divides by s/g",
		Find: `    float d = __fdiv_rn(s, g);
    u32 lo = 0, hi = 0;
#pragma unroll
    for (int j = 0; j < 16; j++) {
      float q = d == 0.0f ? __fmul_rn(xs[j], 0.0f) : __fdiv_rn(xs[j], d);`,
		Replace: `    float o = s == 0.0f ? 0.0f : __frcp_rn(__fmul_rn(s, __frcp_rn(g)));
    u32 lo = 0, hi = 0;
#pragma unroll
    for (int j = 0; j < 16; j++) {
      float q = __fmul_rn(xs[j], o);`},
	{Name: "cuda-nvfp4-scale-reciprocal", Module: "nvfp4", Kernel: "nvfp4_quantize", Suite: "nvfp4", Claim: nvfp4Claim,
		Class: "block-scale-rule:mul-rcp6-mul-global",
		Doc:   "block scale g * (amax * rcp(6)) where the canonical recipe computes (amax / 6) * g",
		Find:  "float t = __fmul_rn(__fdiv_rn(b, 6.0f), g);", Replace: "float t = __fmul_rn(g, __fmul_rn(b, __frcp_rn(6.0f)));"},
	{Name: "cuda-nvfp4-e2m1-ties-away", Module: "nvfp4", File: "e2m1.cuh", Kernel: "nvfp4_quantize", Suite: "nvfp4", Claim: nvfp4Claim,
		Class: "e2m1-profile:ties-away",
		Doc:   "the E2M1 header's ties all rounded up as compiled into the NVFP4 quantizer: elements tie away from zero",
		Find:  e2m1Rounding, Replace: e2m1RoundingAway},
	{Name: "cuda-nvfp4-zero-block-positive", Module: "nvfp4", Kernel: "nvfp4_quantize", Suite: "nvfp4", Claim: nvfp4Claim,
		Class: "",
		Doc: "a block whose dequantization scale is 0 writes the literal 0.0f instead of x*0, losing the sign of negative elements; " +
			"only those blocks change, so no whole-tensor rule (negative-zero-cleared) explains it",
		Find: "float q = d == 0.0f ? __fmul_rn(xs[j], 0.0f) : __fdiv_rn(xs[j], d);", Replace: "float q = d == 0.0f ? 0.0f : __fdiv_rn(xs[j], d);"},
	{Name: "cuda-nvfp4-amax-counts-inf", Module: "nvfp4", Kernel: "nvfp4_quantize", Suite: "nvfp4", Claim: nvfp4Claim,
		Class: "",
		Doc:   "the tensor amax's finite test off by one (a <= 0x7F800000 lets +-Inf in): a tensor holding an infinity gets g = 0 and all codes NaN",
		Find:  "return a < 0x7F800000u ? a : 0u;", Replace: "return a <= 0x7F800000u ? a : 0u;"},
	{Name: "cuda-mxfp4-mode-enum-swapped", Module: "mxfp4", Kernel: "mxfp4_quantize", Suite: "mxfp4", Claim: mxfp4Claim,
		Class: "profile:mode=ceil,profile=nvidia",
		Doc:   "the device's mode enum out of step with the host's numbering (backends/cuda/blocks.go passes 0 for floor): floor runs as ceil",
		Find:  "enum { MODE_FLOOR = 0, MODE_CEIL = 1,", Replace: "enum { MODE_CEIL = 0, MODE_FLOOR = 1,"},
	{Name: "cuda-mxfp4-nibble-swap", Module: "mxfp4", Kernel: "mxfp4_quantize", Suite: "mxfp4", Claim: mxfp4Claim,
		Class: "nibble-swap",
		Doc:   "element 2i packed into the high nibble (shift by 4*((j%8)^1))",
		Find:  "<< (4 * (j % 8));", Replace: "<< (4 * ((j % 8) ^ 1));"},
	{Name: "cuda-mxfp4-nan-ignored", Module: "mxfp4", Kernel: "mxfp4_quantize", Suite: "mxfp4", Claim: mxfp4Claim,
		Class: "",
		Doc: "the block's NaN test dropped: fmaxf skips NaN, so a block holding a NaN gets the scale of its other elements " +
			"instead of 0xFF (all-NaN); outside the library",
		Find: "      nan |= xs[j] != xs[j];\n", Replace: ""},
	{Name: "cuda-mxfp4-e2m1-ties-away", Module: "mxfp4", File: "e2m1.cuh", Kernel: "mxfp4_quantize", Suite: "mxfp4", Claim: mxfp4Claim,
		Class: "mxfp4:mode=floor,profile=ties-away",
		Doc:   "the E2M1 header's ties all rounded up as compiled into the MXFP4 quantizer: elements tie away from zero",
		Find:  e2m1Rounding, Replace: e2m1RoundingAway},
}
