// E2M1 encode, nvidia profile, shared by every kernel that produces E2M1
// codes (e2m1.cu certifies it exhaustively; nvfp4.cu and mxfp4.cu use it).
#pragma once
#include "common.cuh"

// Branchless, by rounding rather than by a ladder of seven threshold
// compares (which made the encoder issue-bound: 2^28 conversions took
// 0.458 ms against 0.433 ms for FP8's single cvt, docs/rationale/cuda.md):
//   |x| < 1: the nearest multiple of 0.5, ties to even, is the float32 sum
//     |x| + 2^22 (whose ulp is 0.5) under the hardware's round-to-nearest;
//     its low bits are the code 0, 1 or 2 (0, 0.5, 1). __fadd_rn keeps the
//     compiler from contracting or reordering it, and -ftz=false keeps
//     subnormal |x| (they round to 0).
//   |x| >= 1: round |x|'s bits to one mantissa bit, ties to even (add
//     0x1FFFFF plus the kept bit, as the mantissa's round-half-even
//     carry), then the code is 2*(exponent - 127) + mantissa bit + 2 for
//     1, 1.5, 2, 3, 4, 6, capped at 7: values from 7 (the tie 6|8 goes to
//     8) and +-Inf saturate to 6.
// Both are exact integer or correctly rounded float operations; the result
// equals the threshold ladder 0.25 < |x|, 0.75 <= |x|, 1.25 < |x|,
// 1.75 <= |x|, 2.5 < |x|, 3.5 <= |x|, 5 < |x| on all 2^32 inputs (checked
// on the CPU, and by the exhaustive CUDA sweep against refimpl/fp4's
// `nvidia` profile). -0 and negatives rounding to zero keep the sign (0x8);
// every NaN, whatever its sign, becomes +0x7.
__device__ __forceinline__ u32 e2m1_nvidia_code(float x) {
  u32 bits = __float_as_uint(x);
  u32 ab = bits & 0x7FFFFFFFu;
  u32 lo = __float_as_uint(__fadd_rn(__uint_as_float(ab), 4194304.0f)) - 0x4A800000u;
  u32 r = ab + 0x1FFFFFu + ((ab >> 22) & 1u);
  u32 hi = min((r >> 22) - 252u, 7u);
  u32 mag = ab < 0x3F800000u ? lo : hi;
  u32 sign = (bits >> 28) & 8u;
  return ab > 0x7F800000u ? 0x7u : (sign | mag);
}
