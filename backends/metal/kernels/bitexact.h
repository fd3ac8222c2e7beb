// bitexact Metal kernels: shared definitions.
//
// Float schedule: the kernels are compiled with fast math disabled
// (MTLCompileOptions.mathMode = MTLMathModeSafe, fastMathEnabled = NO on
// older systems). The Metal Shading Language specification lists x + y,
// x * y, x / y and fma as correctly rounded in that mode (the
// single-precision accuracy table of its numerical-compliance chapter;
// with fast math, x / y is only within 2.5 ulp and operations may be
// reassociated). Every float operation whose rounding matters is a single
// operation written out in the source, fma() appears only where a kernel
// declares fused multiply-adds, and conversions are integer bit
// manipulation. Kernels that reduce (the GEMVs) declare their order as a
// `bitexact-schedule:` line, which backends/metal exports as a
// refimpl/gemv.Schedule.
//
// Kernel arguments: buffers in index order; scalars are small structs or
// values in constant memory (setBytes on the host), every field 32 bits,
// little-endian.
#ifndef BITEXACT_METAL_H
#define BITEXACT_METAL_H

#include <metal_stdlib>
using namespace metal;

// ---- E2M1 ----

// E2M1 encode, profile `nvidia` (refimpl/fp4): nearest-even by threshold
// compares, |x| > 6 and +-Inf saturate to sign|7, -0 and negatives rounding
// to zero keep the sign (0x8), every NaN becomes +0x7. Branchless: each
// compare adds one step on the ladder 0, 0.5, 1, 1.5, 2, 3, 4, 6; strict >
// at the midpoints whose lower neighbour has an even mantissa (0.25, 1.25,
// 2.5, 5), >= where the upper one has (0.75, 1.75, 3.5). No float
// arithmetic: |x| is a sign-bit clear, and compares are exact.
inline uint e2m1_nvidia_code(float x) {
  uint bits = as_type<uint>(x);
  float ax = as_type<float>(bits & 0x7FFFFFFFu);
  uint mag = uint(ax > 0.25f) + uint(ax >= 0.75f) + uint(ax > 1.25f) +
             uint(ax >= 1.75f) + uint(ax > 2.5f) + uint(ax >= 3.5f) +
             uint(ax > 5.0f);
  uint sign = (bits >> 28) & 8u;
  bool nan = (bits & 0x7FFFFFFFu) > 0x7F800000u;
  return nan ? 0x7u : (sign | mag);
}

// Exact value of an E2M1 code (code 8 is -0), assembled from bits.
inline float e2m1_value(uint c) {
  uint sign = (c & 8u) << 28;
  uint e = (c >> 1) & 3u, m = c & 1u;
  uint mag = e == 0u ? (m << 24) * 0x3Fu  // 0 or 0.5 (0x3F000000)
                     : ((e + 126u) << 23) | (m << 22);
  return as_type<float>(sign | mag);
}

// ---- E4M3 (FN) ----

// float32 -> E4M3 with PTX cvt.rn.satfinite semantics (refimpl/fp8 profile
// satfinite): nearest even, |x| >= 448 and +-Inf saturate to sign|0x7E,
// every NaN becomes +0x7F, -0 is 0x80. Integer arithmetic only.
inline uint e4m3_satfinite_code(float x) {
  uint b = as_type<uint>(x);
  uint sign = (b >> 24) & 0x80u;
  uint a = b & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return 0x7Fu;
  if (a >= 0x43E00000u) return sign | 0x7Eu;  // 448 = 1.75 * 2^8
  if (a >= 0x3C800000u) {                     // >= 2^-6: normal E4M3
    uint r = a + 0x7FFFFu + ((a >> 20) & 1u);  // round at mantissa bit 20
    return sign | ((((r >> 23) - 120u) << 3) | ((r >> 20) & 7u));
  }
  // Subnormal E4M3: m = |x| / 2^-9 rounded to nearest even (m = 8 is the
  // smallest normal, code 0x08, as the encoding continues).
  uint e = a >> 23;
  if (e < 116u) return sign;  // |x| < 2^-11 < half of 2^-9 (float32 subnormals too)
  uint mant = (a & 0x7FFFFFu) | 0x800000u;
  uint shift = 141u - e;  // value * 2^9 = mant * 2^(e - 141); 21..25
  uint m = mant >> shift;
  uint rem = mant & ((1u << shift) - 1u);
  uint halfway = 1u << (shift - 1u);
  if (rem > halfway || (rem == halfway && (m & 1u))) m++;
  return sign | m;
}

// Exact value of an E4M3 code by integer assembly. NaN (0x7F, 0xFF) is the
// quiet NaN 0x7FC00000 with the code's sign, as refimpl/fp8 decodes it;
// with dgx_lut it is +-480 instead (dgx-vllm sparse_fp4_v7.cu host table).
inline float e4m3_value(uint c, bool dgx_lut) {
  uint sign = (c & 0x80u) << 24;
  uint mag = c & 0x7Fu;
  if (mag == 0x7Fu) return as_type<float>(sign | (dgx_lut ? 0x43F00000u : 0x7FC00000u));
  uint e = mag >> 3, m = mag & 7u;
  if (e != 0u) return as_type<float>(sign | ((e + 120u) << 23) | (m << 20));
  if (m == 0u) return as_type<float>(sign);
  // m * 2^-9 with m in 1..7: leading bit p, exponent p - 9.
  uint p = m >= 4u ? 2u : (m >= 2u ? 1u : 0u);
  return as_type<float>(sign | ((p + 118u) << 23) | ((m << (23u - p)) & 0x7FFFFFu));
}

// ---- E8M0 ----

// floor(log2 a) of non-negative float32 bits a (0 < a < Inf), exactly,
// subnormals included; with up, ceil(log2 a).
inline int log2_bits(uint a, bool up) {
  int e = int(a >> 23) - 127;
  uint m = a & 0x7FFFFFu;
  if (a < 0x800000u) {  // subnormal: a * 2^-149
    int p = 31 - int(clz(a));
    e = p - 149;
    m = a & ((1u << uint(p)) - 1u);
  }
  if (up && m != 0u) e++;
  return e;
}

inline uint e8m0_bias_clamp(int e) {
  if (e < -127) return 0u;
  if (e > 127) return 0xFFu;
  return uint(e + 127);
}

#endif  // BITEXACT_METAL_H
