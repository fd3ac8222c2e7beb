// 2:4-sparse NVFP4 MoE GEMV (refimpl gemv.sparse_fp4) over the dgx-vllm v7
// transposed layout, written in the SIMD K-split style of llama.cpp's
// ggml-metal kernel_mul_mv_mxfp4_f32 (ggml-org/ggml d99724f
// src/ggml-metal/ggml-metal.metal): the 32 lanes of a SIMD group
// split K, the E2M1 table lives in threadgroup memory, and simd_sum
// combines the lanes.
//
//   comp   [E, K/4, N]  v(i0) | v(i1) << 4 of K-group q (4 elements)
//   meta   [E, K/8, N]  i0 | i1 << 2 of group 2p, << 4 of group 2p+1
//   scales [E, K/S, N]  E4M3, one per S K-elements (S % 16 == 0)
//   global [E] float32, act [A, K] or [K] fp16, experts [A] int32
//   y      [A, N] float32
//
// Float schedule (declared; refimpl/gemv evaluates the same):
// bitexact-schedule: chunk=16,lanes=32,group=16,fma=1,acc=fp32,partial=fp32,reduce=butterfly32,out=fp32
//
//   - K is cut into 16-element blocks; block b belongs to lane b mod 32,
//     which takes its blocks in K order into one float32 accumulator from +0;
//   - a block's 8 kept products E2M1 * act are chained in metadata order
//     (low nibble, then high nibble, group by group): p = a0*b0, then
//     p = fma(ai, bi, p). Every product is exact in float32 (2 by 11
//     significant bits), so fused and unfused chains agree;
//   - scale = E4M3(byte) * glob[e], one float32 multiplication;
//   - acc = fma(p, scale, acc);
//   - y = simd_sum(acc): the lane sums are combined by simd_sum,
//     declared as the butterfly (xor) tree 16, 8, 4, 2, 1 that the Linux
//     emulation runs; Apple does not document the order of simd_sum, so on
//     a GPU a mismatch in this kernel alone may be that order (refimpl's
//     gemv.exact bound is then the verdict to fall back on).
//
// The result stays float32 (the dgx-vllm kernel stores fp16): rounded to
// fp16, butterfly and sequential lane sums agreed on all 1024 outputs of
// the golden inputs, so an fp16 output would hide the order this kernel
// declares; in float32 they differ, and the check sees the order.
//
// Grid: (ceil(N / (SP_NSG * SP_NR0)), A, 1) threadgroups of (32, SP_NSG, 1)
// threads; SIMD group sg of threadgroup x computes columns
// (x * SP_NSG + sg) * SP_NR0 + r, r < SP_NR0, reusing each activation load.
#include "bitexact.h"

#define SP_NSG 2
#define SP_NR0 2

struct SparseFP4Args {
  uint k, n;
  uint scale_k;     // S: K elements per scale
  uint act_stride;  // K for act [A, K], 0 for act [K]
  uint dgx_lut;     // 1: E4M3 0x7F/0xFF decode to +-480 (dgx-vllm host table)
};

kernel void sparse_fp4_gemv(device const uchar *comp [[buffer(0)]],
                            device const uchar *meta [[buffer(1)]],
                            device const uchar *scales [[buffer(2)]],
                            device const float *glob [[buffer(3)]],
                            device const half *act [[buffer(4)]],
                            device const int *experts [[buffer(5)]],
                            device float *y [[buffer(6)]],
                            constant SparseFP4Args &args [[buffer(7)]],
                            uint3 tg [[threadgroup_position_in_grid]],
                            ushort lane [[thread_index_in_simdgroup]],
                            ushort sg [[simdgroup_index_in_threadgroup]]) {
  threadgroup float lut[16];
  if (sg == 0 && lane < 16) lut[lane] = e2m1_value(lane);
  threadgroup_barrier(mem_flags::mem_threadgroup);

  const uint K = args.k, N = args.n;
  const uint a = tg.y;
  const uint e = uint(experts[a]);
  const uint n0 = (tg.x * SP_NSG + sg) * SP_NR0;
  device const half *x = act + a * args.act_stride;
  device const uchar *ce = comp + e * (K / 4u) * N;
  device const uchar *me = meta + e * (K / 8u) * N;
  device const uchar *se = scales + e * (K / args.scale_k) * N;
  const float g = glob[e];
  const bool dgx = args.dgx_lut != 0u;

  float acc[SP_NR0];
  for (uint r = 0; r < SP_NR0; r++) acc[r] = 0.0f;

  for (uint blk = lane; blk < K / 16u; blk += 32u) {
    for (uint r = 0; r < SP_NR0; r++) {
      const uint n = n0 + r;
      if (n >= N) continue;
      float p = 0.0f;
      for (uint q = 0; q < 4u; q++) {
        const uint t = blk * 4u + q;  // K-group of 4
        const uint c = ce[t * N + n];
        const uint m = uint(me[(t / 2u) * N + n]) >> (4u * (t & 1u));
        const float x0 = float(x[4u * t + (m & 3u)]);
        const float x1 = float(x[4u * t + ((m >> 2) & 3u)]);
        if (q == 0u)
          p = lut[c & 15u] * x0;
        else
          p = fma(lut[c & 15u], x0, p);
        p = fma(lut[c >> 4], x1, p);
      }
      const float scale = e4m3_value(se[((blk * 16u) / args.scale_k) * N + n], dgx) * g;
      acc[r] = fma(p, scale, acc[r]);
    }
  }
  for (uint r = 0; r < SP_NR0; r++) {
    const float s = simd_sum(acc[r]);
    const uint n = n0 + r;
    if (lane == 0 && n < N) y[a * N + n] = s;
  }
}
