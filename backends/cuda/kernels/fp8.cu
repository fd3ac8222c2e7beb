// FP8 E4M3 / E5M2 conversions through the hardware cvt instructions of
// sm_89+ (PTX ISA 7.8):
//
//   encode: cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 d, a, b
//           d (.b16) = {cvt(a) in bits 8..15, cvt(b) in bits 0..7};
//           round to nearest even, finite overflow and +-Inf saturate to
//           +-max finite (.satfinite), NaN -> NaN. This certifies the GPU's
//           instruction against refimpl/fp8's `satfinite` profile.
//   decode: cvt.rn.f16x2.{e4m3x2,e5m2x2} d, a (exact: every FP8 value is
//           an f16 value), then cvt.f32.f16 (exact). A NaN code then gets
//           the payload of the reference's decode contract, the quiet NaN
//           0x7fc00000 with the code's sign, because the f16 NaN the
//           instruction produces carries a payload of its own that no
//           specification fixes (refimpl/ops fp8.decode documents the
//           contract).
#include "common.cuh"
#include "fp8.cuh"

__device__ __forceinline__ u32 e4m3x2(float hi, float lo) {
  u16 r;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
  return r;
}

__device__ __forceinline__ u32 e5m2x2(float hi, float lo) {
  u16 r;
  asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
  return r;
}

// Range kernels: pairs converted with one instruction each (the
// instruction's own use); a tail input goes in the low half with +0 high.
#define FP8_RANGE(NAME, X2)                                                   \
  extern "C" __global__ void NAME##_range(u32 start, u8 *__restrict__ out,    \
                                          u64 n) {                            \
    u64 words = n / 4;                                                        \
    GRID_STRIDE(w, words) {                                                   \
      u32 base = start + (u32)(w * 4);                                        \
      u32 lo = X2(__uint_as_float(base + 1u), __uint_as_float(base));         \
      u32 hi = X2(__uint_as_float(base + 3u), __uint_as_float(base + 2u));    \
      reinterpret_cast<u32 *>(out)[w] = (lo & 0xFFFFu) | hi << 16;            \
    }                                                                         \
    u64 tail = words * 4 + (u64)blockIdx.x * blockDim.x + threadIdx.x;        \
    if (tail < n) out[tail] = (u8)(X2(0.0f, __uint_as_float(start + (u32)tail)) & 0xFFu); \
  }

FP8_RANGE(fp8_e4m3_satfinite, e4m3x2)
FP8_RANGE(fp8_e5m2_satfinite, e5m2x2)

// Tensor forms: 4 inputs per thread (one 16-byte load), two paired cvts,
// one 32-bit store; in 16-byte and out 4-byte aligned.
#define FP8_TENSOR(NAME, X2)                                                  \
  extern "C" __global__ void NAME(const float *__restrict__ in,               \
                                  u8 *__restrict__ out, u64 n) {              \
    u64 words = n / 4;                                                        \
    GRID_STRIDE(w, words) {                                                   \
      float4 v = reinterpret_cast<const float4 *>(in)[w];                     \
      u32 lo = X2(v.y, v.x), hi = X2(v.w, v.z);                               \
      reinterpret_cast<u32 *>(out)[w] = (lo & 0xFFFFu) | hi << 16;            \
    }                                                                         \
    u64 tail = words * 4 + (u64)blockIdx.x * blockDim.x + threadIdx.x;        \
    if (tail < n) out[tail] = (u8)(X2(0.0f, in[tail]) & 0xFFu);               \
  }

FP8_TENSOR(fp8_e4m3_satfinite, e4m3x2)
FP8_TENSOR(fp8_e5m2_satfinite, e5m2x2)

// nan_canonical replaces a NaN result by 0x7fc00000 with the sign of code c.
__device__ __forceinline__ float nan_canonical(float f, u8 c) {
  return f != f ? __uint_as_float(((u32)(c & 0x80u) << 24) | 0x7FC00000u) : f;
}

__device__ __forceinline__ float e4m3_decode(u8 c) { return nan_canonical(e4m3_hw_decode(c), c); }
__device__ __forceinline__ float e5m2_decode(u8 c) { return nan_canonical(e5m2_hw_decode(c), c); }

extern "C" __global__ void fp8_e4m3_decode(const u8 *__restrict__ in,
                                           float *__restrict__ out, u64 n) {
  GRID_STRIDE(i, n) { out[i] = e4m3_decode(in[i]); }
}

extern "C" __global__ void fp8_e5m2_decode(const u8 *__restrict__ in,
                                           float *__restrict__ out, u64 n) {
  GRID_STRIDE(i, n) { out[i] = e5m2_decode(in[i]); }
}
