package mutants

// The E2M1 encoder's rounding, as e2m1.cuh writes it: below 1 a float32 add
// of 2^22 (round to a multiple of 0.5, ties to even), from 1 up the bits
// rounded to one mantissa bit, ties to even (the kept bit as carry).
const e2m1Rounding = `  u32 lo = __float_as_uint(__fadd_rn(__uint_as_float(ab), 4194304.0f)) - 0x4A800000u;
  u32 r = ab + 0x1FFFFFu + ((ab >> 22) & 1u);`

// e2m1RoundingAway: every tie goes up (>= at 0.25 and 0.75, round half up
// on the bits): the outputs of the threshold ladder written >= throughout
// (checked equal on all 2^32 inputs when the encoder changed).
const e2m1RoundingAway = `  u32 lo = (u32)(ab >= 0x3E800000u) + (u32)(ab >= 0x3F400000u);
  u32 r = ab + 0x200000u;`

// e2m1RoundingDown: every tie goes down (> at 0.25 and 0.75, round half
// down on the bits): the ladder written > throughout.
const e2m1RoundingDown = `  u32 lo = (u32)(ab > 0x3E800000u) + (u32)(ab > 0x3F400000u);
  u32 r = ab + 0x1FFFFFu;`

const e2m1Select = "return ab > 0x7F800000u ? 0x7u : (sign | mag);"

// cudaConversionMutants corrupt the E2M1 encoder (e2m1.cuh, certified
// through the e2m1_nvidia kernel) and the FP8 conversions (fp8.cu).
var cudaConversionMutants = []CUDAMutant{
	{Name: "cuda-e2m1-ties-away", Module: "e2m1", File: "e2m1.cuh", Kernel: "e2m1_nvidia", Suite: "e2m1", Claim: "nvidia",
		Class: "ties-away",
		Doc:   "every tie rounded up (>= at the midpoints below 1, half up on the bits above): ties round away from zero",
		Find:  e2m1Rounding, Replace: e2m1RoundingAway},
	{Name: "cuda-e2m1-ties-toward-zero", Module: "e2m1", File: "e2m1.cuh", Kernel: "e2m1_nvidia", Suite: "e2m1", Claim: "nvidia",
		Class: "ties-toward-zero",
		Doc:   "every tie rounded down (> at the midpoints below 1, half down on the bits above): ties round toward zero",
		Find:  e2m1Rounding, Replace: e2m1RoundingDown},
	{Name: "cuda-e2m1-one-tie-up", Module: "e2m1", File: "e2m1.cuh", Kernel: "e2m1_nvidia", Suite: "e2m1", Claim: "nvidia",
		Class: "",
		Doc:   "ties in [2, 4) rounded up (exponent 128 forces the carry): 2.5 rounds to 3, the other midpoints still to even; no single rule of the library explains it",
		Find:  "u32 r = ab + 0x1FFFFFu + ((ab >> 22) & 1u);", Replace: "u32 r = ab + 0x1FFFFFu + (((ab >> 22) & 1u) | (u32)((ab >> 23) == 128u));"},
	{Name: "cuda-e2m1-nan-sign-kept", Module: "e2m1", File: "e2m1.cuh", Kernel: "e2m1_nvidia", Suite: "e2m1", Claim: "nvidia",
		Class: "nan-sign-kept",
		Doc:   "the sign ORed in after the NaN select: -NaN -> 0xF where the instruction gives 0x7",
		Find:  e2m1Select, Replace: "return sign | (ab > 0x7F800000u ? 0x7u : mag);"},
	{Name: "cuda-e2m1-negative-zero-cleared", Module: "e2m1", File: "e2m1.cuh", Kernel: "e2m1_nvidia", Suite: "e2m1", Claim: "nvidia",
		Class: "negative-zero-cleared",
		Doc:   "sign applied only to a nonzero magnitude (\"no -0\"): -0 and small negatives encode as +0",
		Find:  "u32 sign = (bits >> 28) & 8u;", Replace: "u32 sign = mag ? (bits >> 28) & 8u : 0u;"},
	{Name: "cuda-e2m1-inf-as-nan", Module: "e2m1", File: "e2m1.cuh", Kernel: "e2m1_nvidia", Suite: "e2m1", Claim: "nvidia",
		Class: "",
		Doc:   "NaN test off by one (>= 0x7F800000 also takes +-Inf): -Inf -> 0x7 instead of -6 (0xF); outside the library",
		Find:  e2m1Select, Replace: "return ab >= 0x7F800000u ? 0x7u : (sign | mag);"},
	{Name: "cuda-e4m3-pair-swap", Module: "fp8", Kernel: "fp8_e4m3_satfinite", Suite: "e4m3", Claim: "satfinite",
		Class: "",
		Doc: "cvt.rn.satfinite.e4m3x2.f32 given its operands in memory order, but the first operand fills the high byte: " +
			"each pair of codes stored swapped; outside the library",
		Find: "u32 lo = X2(v.y, v.x), hi = X2(v.w, v.z);", Replace: "u32 lo = X2(v.x, v.y), hi = X2(v.z, v.w);"},
	{Name: "cuda-e4m3-nan-sign-kept", Module: "fp8", Kernel: "fp8_e4m3_satfinite", Suite: "e4m3", Claim: "satfinite",
		Class: "nan-sign-kept",
		Doc:   "sign-magnitude conversion (cvt of |x|, sign bit ORed back): -NaN -> 0xFF where the instruction gives 0x7F",
		Find: `  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
  return r;`,
		Replace: `  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(fabsf(hi)), "f"(fabsf(lo)));
  return r | (__float_as_uint(hi) >> 31) << 15 | (__float_as_uint(lo) >> 31) << 7;`},
	{Name: "cuda-e5m2-e4m3-instruction", Module: "fp8", Kernel: "fp8_e5m2_satfinite", Suite: "e5m2", Claim: "satfinite",
		Class: "",
		Doc:   "copy-paste: the E5M2 tensor kernel instantiated with the E4M3 conversion; outside the library",
		Find:  "FP8_TENSOR(fp8_e5m2_satfinite, e5m2x2)", Replace: "FP8_TENSOR(fp8_e5m2_satfinite, e4m3x2)"},
}
