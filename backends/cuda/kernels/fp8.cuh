// FP8 decode by the hardware instruction, shared by fp8.cu (which
// certifies it against refimpl/fp8 for all 256 codes of each format) and
// sparse24.cu (whose v7 GEMV decodes its E4M3 block scales with it).
#pragma once
#include "common.cuh"

// The value of FP8 code c (low byte) as the GPU decodes it:
// cvt.rn.f16x2.{e4m3x2,e5m2x2} (exact: every FP8 value is an f16 value),
// then the exact f16 -> f32 widening. A NaN code gives whatever NaN the
// instruction writes; callers that need a defined NaN replace it.
#define FP8_HW_DECODE(NAME, FMT)                                              \
  __device__ __forceinline__ float NAME(u32 c) {                              \
    u32 h2;                                                                   \
    u16 c2 = (u16)(c & 0xFFu);                                                \
    asm("cvt.rn.f16x2." #FMT " %0, %1;" : "=r"(h2) : "h"(c2));                \
    float f;                                                                  \
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"((u16)(h2 & 0xFFFFu)));          \
    return f;                                                                 \
  }
FP8_HW_DECODE(e4m3_hw_decode, e4m3x2)
FP8_HW_DECODE(e5m2_hw_decode, e5m2x2)
#undef FP8_HW_DECODE
