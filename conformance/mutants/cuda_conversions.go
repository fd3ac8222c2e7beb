package mutants

// The E2M1 encoder's compare ladder, as e2m1.cuh writes it: strict > at the
// midpoints whose lower neighbour has an even mantissa, >= at the others.
const e2m1Ladder = `  u32 mag = (u32)(ax > 0.25f) + (u32)(ax >= 0.75f) + (u32)(ax > 1.25f) +
            (u32)(ax >= 1.75f) + (u32)(ax > 2.5f) + (u32)(ax >= 3.5f) +
            (u32)(ax > 5.0f);`

// e2m1LadderAway: every midpoint compared with >=, so every tie goes up.
const e2m1LadderAway = `  u32 mag = (u32)(ax >= 0.25f) + (u32)(ax >= 0.75f) + (u32)(ax >= 1.25f) +
            (u32)(ax >= 1.75f) + (u32)(ax >= 2.5f) + (u32)(ax >= 3.5f) +
            (u32)(ax >= 5.0f);`

// e2m1LadderDown: every midpoint compared with >, so every tie goes down.
const e2m1LadderDown = `  u32 mag = (u32)(ax > 0.25f) + (u32)(ax > 0.75f) + (u32)(ax > 1.25f) +
            (u32)(ax > 1.75f) + (u32)(ax > 2.5f) + (u32)(ax > 3.5f) +
            (u32)(ax > 5.0f);`

// cudaConversionMutants corrupt the E2M1 encoder (e2m1.cuh, certified
// through the e2m1_nvidia kernel) and the FP8 conversions (fp8.cu).
var cudaConversionMutants = []CUDAMutant{
	{Name: "cuda-e2m1-ties-away", Module: "e2m1", File: "e2m1.cuh", Kernel: "e2m1_nvidia", Suite: "e2m1", Claim: "nvidia",
		Class: "ties-away",
		Doc:   "every midpoint compare written >= (the ladder made uniform): ties round away from zero",
		Find:  e2m1Ladder, Replace: e2m1LadderAway},
	{Name: "cuda-e2m1-ties-toward-zero", Module: "e2m1", File: "e2m1.cuh", Kernel: "e2m1_nvidia", Suite: "e2m1", Claim: "nvidia",
		Class: "ties-toward-zero",
		Doc:   "every midpoint compare written > : ties round toward zero",
		Find:  e2m1Ladder, Replace: e2m1LadderDown},
	{Name: "cuda-e2m1-one-tie-up", Module: "e2m1", File: "e2m1.cuh", Kernel: "e2m1_nvidia", Suite: "e2m1", Claim: "nvidia",
		Class: "",
		Doc:   "one compare of the ladder off (ax >= 2.5f): 2.5 rounds to 3, the other midpoints still to even; no single rule of the library explains it",
		Find:  "(u32)(ax > 2.5f)", Replace: "(u32)(ax >= 2.5f)"},
	{Name: "cuda-e2m1-nan-sign-kept", Module: "e2m1", File: "e2m1.cuh", Kernel: "e2m1_nvidia", Suite: "e2m1", Claim: "nvidia",
		Class: "nan-sign-kept",
		Doc:   "the sign ORed in after the NaN select: -NaN -> 0xF where the instruction gives 0x7",
		Find:  "return nan ? 0x7u : (sign | mag);", Replace: "return sign | (nan ? 0x7u : mag);"},
	{Name: "cuda-e2m1-negative-zero-cleared", Module: "e2m1", File: "e2m1.cuh", Kernel: "e2m1_nvidia", Suite: "e2m1", Claim: "nvidia",
		Class: "negative-zero-cleared",
		Doc:   "sign applied only to a nonzero magnitude (\"no -0\"): -0 and small negatives encode as +0",
		Find:  "u32 sign = (bits >> 28) & 8u;", Replace: "u32 sign = mag ? (bits >> 28) & 8u : 0u;"},
	{Name: "cuda-e2m1-inf-as-nan", Module: "e2m1", File: "e2m1.cuh", Kernel: "e2m1_nvidia", Suite: "e2m1", Claim: "nvidia",
		Class: "",
		Doc:   "NaN test off by one (>= 0x7F800000 also takes +-Inf): -Inf -> 0x7 instead of -6 (0xF); outside the library",
		Find:  "bool nan = (bits & 0x7FFFFFFFu) > 0x7F800000u;", Replace: "bool nan = (bits & 0x7FFFFFFFu) >= 0x7F800000u;"},
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
