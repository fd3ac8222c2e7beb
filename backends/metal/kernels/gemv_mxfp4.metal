// MXFP4 x Q8_1 GEMV (refimpl gemv.mxfp4_q8_1: llama.cpp block_mxfp4
// weights, block_q8_1 activations) in the SIMD K-split style of llama.cpp's
// ggml-metal kernel_mul_mv_mxfp4_f32 (ggml-org/ggml d99724f
// src/ggml-metal/ggml-metal.metal): lane l of a SIMD group takes
// ix = l/2 (a 32-element block, 16 blocks per pass) and it = l%2 (a half of
// it), the E2M1 table (as llama.cpp's kvalues_mxfp4, twice the E2M1 value)
// lives in threadgroup memory, the E8M0 scale is applied once per half
// block after the dot products, and simd_sum combines the lanes. Each SIMD
// group computes MX_NR0 rows, reusing the activation loads.
//
//   w   [N, K/32, 17]  block_mxfp4: e, qs[16]; qs[j] low nibble = element
//                      j, high nibble = element j + 16
//   act [K/32, 36]     block_q8_1: fp16 d, fp16 s (unused), int8 qs[32]
//   y   [N] float32
//
// Float schedule (declared; refimpl/gemv evaluates the same):
// bitexact-schedule: chunk=16,lanes=32,group=16,fma=1,acc=fp32,partial=fp32,reduce=butterfly32,out=fp32
//
//   - half block it of block b is qs bytes 8it..8it+7 with both nibbles
//     (elements 8it..8it+7 and 16+8it..16+8it+7), chunk 2b+it of the row,
//     taken by lane (2b+it) mod 32 in K order;
//   - its sum of kvalues * q8 is computed with float4 dot(); every product
//     and partial sum is an integer below 2^24 (|sum| <= 16*12*127), so it
//     is exact whatever order or fusion dot() uses, and equals refimpl's
//     int32 sumi;
//   - d = 2^(e-128) * float(d8): 2^(e-128) = E8M0(e) * 0.5 is assembled
//     from bits (exact), the product is one float32 multiplication;
//   - acc = fma(d, sum, acc);
//   - y = simd_sum(acc), declared as the butterfly (xor) tree 16, 8, 4, 2, 1
//     that the Linux emulation runs; Apple does not document the order of
//     simd_sum, so on a GPU a mismatch in this kernel alone may be that
//     order (refimpl's gemv.exact bound is then the verdict to fall back on).
//
// Grid: (ceil(N / (MX_NSG * MX_NR0)), 1, 1) threadgroups of (32, MX_NSG, 1).
#include "bitexact.h"

#define MX_NSG 2
#define MX_NR0 2

constant float mx_kvalues[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// 2^(e-128) = E8M0(e) * 0.5 as float32 bits, exactly (e = 1, 0 are the
// subnormals 2^-127, 2^-128); e = 0xFF is the quiet NaN 0x7FC00000.
inline uint mx_e8m0_half_bits(uint e) {
  if (e == 0xFFu) return 0x7FC00000u;
  if (e >= 2u) return (e - 1u) << 23;
  return e == 1u ? 0x00400000u : 0x00200000u;
}

// An int8 byte as float, sign-extended by integer arithmetic (the
// signedness of plain char differs between C++ hosts).
inline float mx_int8(uchar b) { return float(int(uint(b) ^ 0x80u) - 128); }

struct MXFP4GemvArgs {
  uint n;   // rows
  uint nb;  // K / 32
};

kernel void mxfp4_q8_1_gemv(device const uchar *w [[buffer(0)]],
                            device const uchar *act [[buffer(1)]],
                            device float *y [[buffer(2)]],
                            constant MXFP4GemvArgs &args [[buffer(3)]],
                            uint3 tg [[threadgroup_position_in_grid]],
                            ushort lane [[thread_index_in_simdgroup]],
                            ushort sg [[simdgroup_index_in_threadgroup]]) {
  threadgroup float lut[16];
  if (sg == 0 && lane < 16) lut[lane] = mx_kvalues[lane];
  threadgroup_barrier(mem_flags::mem_threadgroup);

  const uint ix = lane / 2u, it = lane % 2u;
  const uint r0 = (tg.x * MX_NSG + sg) * MX_NR0;
  float acc[MX_NR0];
  for (uint r = 0; r < MX_NR0; r++) acc[r] = 0.0f;

  for (uint ib = ix; ib < args.nb; ib += 16u) {
    device const uchar *ab = act + ib * 36u;
    const float d8 = float(as_type<half>(ushort(uint(ab[0]) | (uint(ab[1]) << 8))));
    device const uchar *q8 = ab + 4u + 8u * it;
    float4 yl[4];
    for (uint v = 0; v < 4u; v++) {
      // v = 0, 1: elements 8it..8it+7; v = 2, 3: elements 16+8it..16+8it+7.
      device const uchar *src = q8 + (v / 2u) * 16u + (v % 2u) * 4u;
      yl[v] = float4(mx_int8(src[0]), mx_int8(src[1]), mx_int8(src[2]), mx_int8(src[3]));
    }
    for (uint r = 0; r < MX_NR0; r++) {
      const uint row = r0 + r;
      if (row >= args.n) continue;
      device const uchar *wb = w + (row * args.nb + ib) * 17u;
      const float d = as_type<float>(mx_e8m0_half_bits(wb[0])) * d8;
      device const uchar *qs = wb + 1u + 8u * it;
      float sum = 0.0f;
      for (uint v = 0; v < 2u; v++) {
        const float4 lo = float4(lut[qs[4u * v] & 15u], lut[qs[4u * v + 1u] & 15u],
                                 lut[qs[4u * v + 2u] & 15u], lut[qs[4u * v + 3u] & 15u]);
        const float4 hi = float4(lut[qs[4u * v] >> 4], lut[qs[4u * v + 1u] >> 4],
                                 lut[qs[4u * v + 2u] >> 4], lut[qs[4u * v + 3u] >> 4]);
        sum = sum + dot(lo, yl[v]);
        sum = sum + dot(hi, yl[2u + v]);
      }
      acc[r] = fma(d, sum, acc[r]);
    }
  }
  for (uint r = 0; r < MX_NR0; r++) {
    const float s = simd_sum(acc[r]);
    const uint row = r0 + r;
    if (lane == 0 && row < args.n) y[row] = s;
  }
}
