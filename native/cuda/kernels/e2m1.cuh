// E2M1 encode, nvidia profile, shared by every kernel that produces E2M1
// codes (e2m1.cu certifies it exhaustively; nvfp4.cu and mxfp4.cu use it).
#pragma once
#include "common.cuh"

// Branchless: each compare contributes one step up the magnitude ladder
// 0, 0.5, 1, 1.5, 2, 3, 4, 6. Strict > at midpoints whose lower neighbour
// has an even mantissa (0.25, 1.25, 2.5, 5) and >= where the upper one
// does (0.75, 1.75, 3.5) give round-half-to-even. Every compare is false
// for NaN, so NaN is selected separately. No float arithmetic: fabsf is a
// sign-bit clear, and compares are exact.
__device__ __forceinline__ u32 e2m1_nvidia_code(float x) {
  u32 bits = __float_as_uint(x);
  float ax = fabsf(x);
  u32 mag = (u32)(ax > 0.25f) + (u32)(ax >= 0.75f) + (u32)(ax > 1.25f) +
            (u32)(ax >= 1.75f) + (u32)(ax > 2.5f) + (u32)(ax >= 3.5f) +
            (u32)(ax > 5.0f);
  u32 sign = (bits >> 28) & 8u;
  bool nan = (bits & 0x7FFFFFFFu) > 0x7F800000u;
  return nan ? 0x7u : (sign | mag);
}

