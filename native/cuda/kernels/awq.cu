// AWQ W4 quantize + pack, the FORGE seed kernel (shared/seeds/
// forge-awq-pack-spec.md), to refimpl/awq's Forge quantizer and AWQ layout:
//
//   per (group g of G input channels, output column n):
//     absmax = max |w| over the group's G rows (exact)
//     s      = fp16_rn(__fdiv_rn(absmax, 7))      stored scale (fp16 bits)
//     q      = s == 0 ? 0 : clamp(rint(__fdiv_rn(w, float(s))), -8, 7)
//     u      = q + 8 (uint4b8), z = 8
//   qweight int32 [IC, OC/8]: word j of row k holds column 8j+ORDER[p] at
//     nibble p, ORDER = {0,2,4,6,1,3,5,7} (vLLM/AutoAWQ order)
//   qzeros  int32 [IC/G, OC/8]: every nibble 8 -> 0x88888888
//   scales  fp16  [IC/G, OC]
//   rint is round half to even. A non-finite weight sets *bad (refimpl
//   rejects such weights; the Go side turns the flag into an error).
//
// Tiling (the seed's "warp per quantization group"): w is [IC, OC]
// row-major, so a group runs down each column. A warp takes one group and
// a 64-column slice: lane l owns the 8 columns of chunk l % 8 (one 16-byte
// load per row) and the rows k = l / 8, l / 8 + 4, l / 8 + 8, ... of the
// group, so each load instruction of the warp reads 4 rows x 128
// contiguous bytes. Each lane takes the max-abs of its rows, and the four
// lanes sharing a chunk combine theirs with __shfl_xor_sync (offsets 8 and
// 16); max is exact, so the order of that reduction does not matter and
// the kernel declares no schedule. The lane then quantizes its rows again
// (the second read of the group's 16 KB hits L2), interleaves the eight
// nibbles of each row into one word in registers, and stores it (8 lanes x
// 4 bytes per row). The only float operations are the two _rn divisions
// and the _rn fp16 conversion above.
#include "common.cuh"
#include <cuda_fp16.h>

#define AWQ_WARPS 8

extern "C" __global__ void __launch_bounds__(32 * AWQ_WARPS)
awq_forge_pack(const uint4 *__restrict__ w, u64 ic, u64 oc, u64 group,
               u32 *__restrict__ qweight, u32 *__restrict__ qzeros,
               __half *__restrict__ scales, u32 *__restrict__ bad) {
  u64 chunks = oc / 8;
  u32 lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  u64 chunk = ((u64)blockIdx.x * AWQ_WARPS + warp) * 8 + lane % 8;
  u32 slice = lane / 8;
  u64 g = blockIdx.y;
  bool live = chunk < chunks;  // dead lanes still take part in the shuffles
  u64 row0 = g * group;
  float amax[8];
#pragma unroll
  for (int j = 0; j < 8; j++) amax[j] = 0.0f;
  u32 nonfinite = 0;
  if (live) {
#pragma unroll 4
    for (u64 k = row0 + slice; k < row0 + group; k += 4) {
      uint4 v = w[k * chunks + chunk];
      const __half2 *h = reinterpret_cast<const __half2 *>(&v);
#pragma unroll
      for (int j = 0; j < 4; j++) {
        float2 f = __half22float2(h[j]);
        nonfinite |= (__float_as_uint(f.x) & 0x7F800000u) == 0x7F800000u;
        nonfinite |= (__float_as_uint(f.y) & 0x7F800000u) == 0x7F800000u;
        amax[2 * j] = fmaxf(amax[2 * j], fabsf(f.x));
        amax[2 * j + 1] = fmaxf(amax[2 * j + 1], fabsf(f.y));
      }
    }
  }
#pragma unroll
  for (int j = 0; j < 8; j++) {
    amax[j] = fmaxf(amax[j], __shfl_xor_sync(0xFFFFFFFFu, amax[j], 8));
    amax[j] = fmaxf(amax[j], __shfl_xor_sync(0xFFFFFFFFu, amax[j], 16));
  }
  if (!live) return;
  if (nonfinite) atomicOr(bad, 1u);
  float sf[8];
  __half sh[8];
#pragma unroll
  for (int j = 0; j < 8; j++) {
    sh[j] = __float2half_rn(__fdiv_rn(amax[j], 7.0f));
    sf[j] = __half2float(sh[j]);
  }
  if (slice == 0) {
    reinterpret_cast<uint4 *>(scales)[g * chunks + chunk] = *reinterpret_cast<uint4 *>(sh);
    qzeros[g * chunks + chunk] = 0x88888888u;
  }
#pragma unroll 4
  for (u64 k = row0 + slice; k < row0 + group; k += 4) {
    uint4 v = w[k * chunks + chunk];
    const __half *h = reinterpret_cast<const __half *>(&v);
    u32 u[8];
#pragma unroll
    for (int j = 0; j < 8; j++) {
      float q = 0.0f;
      if (sf[j] != 0.0f)
        q = fminf(fmaxf(rintf(__fdiv_rn(__half2float(h[j]), sf[j])), -8.0f), 7.0f);
      u[j] = (u32)((int)q + 8);
    }
    // nibble p holds column ORDER[p], ORDER = {0,2,4,6,1,3,5,7}
    u32 word = u[0] | u[2] << 4 | u[4] << 8 | u[6] << 12 | u[1] << 16 |
               u[3] << 20 | u[5] << 24 | u[7] << 28;
    qweight[k * chunks + chunk] = word;
  }
}
