package mutants

const (
	awqClaim      = "forge"
	sp24Claim     = "tie=lower-index,layout=rowmajor"
	sp24TClaim    = "tie=lower-index,layout=transposed"
	v7Claim       = "schedule=sparse-v7,scale_decode=e4m3fn"
	ggmlMXFP4Clm  = "log2=exact,cast=x86-64"
	q81Claim      = "cuda"
	mmvqClaim     = "mmvq"
	awqRowPacking = `  u32 lo = b[0] + (b[2] << 4) + (b[4] << 8) + (b[6] << 12);
  u32 hi = b[1] + (b[3] << 4) + (b[5] << 8) + (b[7] << 12);`
)

// cudaPackingMutants corrupt the AWQ packer, the 2:4 compressor, the
// GEMVs and the llama.cpp quantizers (awq.cu, sparse24.cu,
// gemv_mxfp4.cu).
var cudaPackingMutants = []CUDAMutant{
	{Name: "cuda-awq-sequential-nibbles", Module: "awq", Kernel: "awq_forge_pack", Suite: "awq-quantize", Claim: awqClaim,
		Class: "awq-nibble-order",
		Doc: "weight nibbles packed in column order 0..7 instead of AWQ's 0,2,4,6,1,3,5,7 (the awq-quantize suite's nibble-order " +
			"alternative reproduces it; with forge's zero points all 8, the weight-only nibble order is equivalent on this suite)",
		Find: awqRowPacking,
		Replace: `  u32 lo = b[0] + (b[1] << 4) + (b[2] << 8) + (b[3] << 12);
  u32 hi = b[4] + (b[5] << 4) + (b[6] << 8) + (b[7] << 12);`},
	{Name: "cuda-awq-reciprocal-ties", Module: "awq", Kernel: "awq_forge_pack", Suite: "awq-quantize", Claim: awqClaim,
		Class:   "",
		Doc:     "exact half-integer quotients w/s rounded half up (floor(x + 1/2)) instead of to the even neighbour",
		Find:    "  return __float_as_uint(__fadd_rn(x, 8388616.0f));  // 2^23 + 8",
		Replace: "  return __float_as_uint(__fadd_rd(__fadd_rn(x, 0.5f), 8388616.0f));  // 2^23 + 8"},
	{Name: "cuda-awq-unrounded-scale", Module: "awq", Kernel: "awq_forge_pack", Suite: "awq-quantize", Claim: awqClaim,
		Class: "",
		Doc:   "weights divided by the float32 amax/7 instead of the fp16 scale that is stored, so quantize and dequantize disagree",
		Find:  "    float2 sf = awq_h2f2(hb);", Replace: "    float2 sf = make_float2(__fmul_rn(a.x, inv7), __fmul_rn(a.y, inv7));"},
	{Name: "cuda-sp24-indices-swapped", Module: "sparse24", Kernel: "sp24_compress", Suite: "sparse24", Claim: sp24Claim,
		Class: "sparse24-indices-swapped",
		Doc:   "meta nibble written i1 | i0 << 2 (values still in ascending order)",
		Find:  "  *m = mm;", Replace: "  *m = (mm >> 2) | (mm & 3u) << 2;"},
	{Name: "cuda-sp24-descending", Module: "sparse24", Kernel: "sp24_compress", Suite: "sparse24", Claim: sp24TClaim,
		Class: "sparse24-descending",
		Doc:   "kept pairs stored in descending index order (values and meta indices both swapped), seen through the transposed layout",
		// The transposed kernel picks both groups' kept codes with one
		// __byte_perm from the meta byte m: swapping i0 and i1 in both
		// nibbles before that stores v(i1), v(i0) and meta i1 | i0 << 2.
		Find: "  u32 m = (na & 0x0Fu) | ((nb << 4) & 0xF0u);",
		Replace: `  u32 m = (na & 0x0Fu) | ((nb << 4) & 0xF0u);
  m = ((m >> 2) & 0x33u) | ((m & 0x33u) << 2);`},
	{Name: "cuda-sp24-higher-index-wins", Module: "sparse24", Kernel: "sp24_compress", Suite: "sparse24", Claim: sp24Claim,
		Class: "",
		Doc:   "equal magnitudes resolved toward the higher index (> where the rule has >=), a tie-break no profile uses",
		Find:  "  u32 b01 = r0 >= r1, b02 = r0 >= r2, b03 = r0 >= r3;", Replace: "  u32 b01 = r0 > r1, b02 = r0 > r2, b03 = r0 > r3;"},
	{Name: "cuda-v7-sequential-reduce", Module: "sparse24", Kernel: "sp24_gemv_v7", Suite: "gemv-sparse-fp4", Claim: v7Claim,
		Class: "profile:schedule=sparse-v7-seq,scale_decode=e4m3fn",
		Doc:   "the fp16 partials summed in tile order where the declared schedule interleaves four accumulators",
		Find:  "  if (width == 4) reduce_tiles<4>(p, N32, kt, r);", Replace: "  if (width == 0) reduce_tiles<4>(p, N32, kt, r);"},
	{Name: "cuda-mmvq-unfused", Module: "gemv_mxfp4", Kernel: "gemv_mxfp4_q8_1", Suite: "gemv-mxfp4", Claim: mmvqClaim,
		Class: "profile:mmvq-nofma",
		Doc:   "d*sumi rounded before it is added (the compiler's -fmad=false) where the declared schedule fuses",
		Find:  "  return fused ? __fmaf_rn(", Replace: "  return !fused ? __fmaf_rn("},
	{Name: "cuda-q8_1-ties-even", Module: "gemv_mxfp4", Kernel: "q8_1_quantize", Suite: "q8_1", Claim: q81Claim,
		Class: "",
		Doc:   "x/d rounded half to even (rintf) where llama.cpp's roundf rounds half away from zero",
		Find:  "    int q = amax == 0.0f ? 0 : (int)roundf(__fdiv_rn(v, d));", Replace: "    int q = amax == 0.0f ? 0 : (int)rintf(__fdiv_rn(v, d));"},
	{Name: "cuda-ggml-mxfp4-adjacent-pairs", Module: "gemv_mxfp4", Kernel: "ggml_mxfp4_quantize", Suite: "ggml-mxfp4", Claim: ggmlMXFP4Clm,
		Class: "llama-adjacent-pairs",
		Doc:   "qs[j] packs elements 2j and 2j+1 instead of llama.cpp's split halves j and j+16",
		Find: `    u32 hi = __shfl_down_sync(0xFFFFFFFFu, best, 16);
    u8 *blk = out + b * 17;
    if (lane < 16) blk[1 + lane] = (u8)(best | hi << 4);`,
		Replace: `    u32 hi = __shfl_down_sync(0xFFFFFFFFu, best, 1);
    u8 *blk = out + b * 17;
    if (lane % 2 == 0) blk[1 + lane / 2] = (u8)(best | hi << 4);`},
	{Name: "cuda-ggml-mxfp4-scale-off-by-one", Module: "gemv_mxfp4", Kernel: "ggml_mxfp4_quantize", Suite: "ggml-mxfp4", Claim: ggmlMXFP4Clm,
		Class: "",
		Doc:   "the E8M0 exponent biased by 126 instead of 127 - 2 + 2 (one binade too small a scale)",
		Find:  "      e = (u32)(ex - 2 + 127) & 0xFFu;", Replace: "      e = (u32)(ex - 1 + 127) & 0xFFu;"},
}
