// AWQ W4 quantize + pack, the FORGE seed kernel (shared/seeds/
// forge-awq-pack-spec.md), to refimpl/awq's Forge quantizer and AWQ layout:
//
//   per (group g of G input channels, output column n):
//     absmax = max |w| over the group's G rows (exact)
//     s      = fp16_rn(__fdiv_rn(absmax, 7))      stored scale (fp16 bits)
//     q      = s == 0 ? 0 : clamp(rint(__fdiv_rn(w, float(s))), -8, 7)
//              (computed exactly without the division: see q_rint)
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
// a 32-column slice: lane l owns the 8 columns of chunk l % 4 (one 16-byte
// load per row) and the rows k = l / 4, l / 4 + 8, ... of the group, so
// each load instruction of the warp reads 8 rows x 64 contiguous bytes.
// For groups of up to 128 rows (AWQ_ROWS per lane) the lane keeps its rows
// in registers: the group is read from DRAM once, all of a lane's loads
// are in flight together, and the quantize pass reads the registers. Larger
// groups stream: the max-abs pass, then a second read of the group for the
// quantize pass.
//
// Max-abs is taken on the fp16 bits: |h| = h & 0x7FFF orders finite fp16
// values as integers, and every Inf or NaN is at least 0x7C00, so the
// packed __vmaxu2 gives both the block maximum and the non-finite flag.
// The four lanes sharing a chunk combine theirs with __shfl_xor_sync
// (offsets 4, 8, 16); max is exact, so its order does not matter and the
// kernel declares no schedule. The lane then quantizes its rows,
// interleaves the eight nibbles of each row into one word in registers,
// and stores it.
#include "common.cuh"
#include <cuda_fp16.h>

#define AWQ_WARPS 8
#define AWQ_CHUNKS 4  // 8-column chunks per warp: lanes l % 4 (awqGrid in blocks.go assumes 4)
#define AWQ_SLICES (32 / AWQ_CHUNKS)  // row slices per warp: lanes l / 4
#ifndef AWQ_MIN_BLOCKS
#define AWQ_MIN_BLOCKS 2  // resident blocks per SM the register budget targets
#endif
#ifndef AWQ_ROWS
#define AWQ_ROWS 16   // rows per lane held in registers (groups <= 128)
#endif

// Packed |h| of the two fp16 in v, folded into the running maximum m.
__device__ __forceinline__ uint4 absmax8(uint4 m, uint4 v) {
  m.x = __vmaxu2(m.x, v.x & 0x7FFF7FFFu);
  m.y = __vmaxu2(m.y, v.y & 0x7FFF7FFFu);
  m.z = __vmaxu2(m.z, v.z & 0x7FFF7FFFu);
  m.w = __vmaxu2(m.w, v.w & 0x7FFF7FFFu);
  return m;
}

// q_rint is rint(__fdiv_rn(w, s)) for fp16 values w and s > 0, computed
// without the division: a correctly rounded division costs about 20
// instructions with its slow-path branch, and it was the kernel's largest
// cost. The argument that the shortcut is exact:
//   - w = Mw 2^a and s = Ms 2^b with 11-bit integer significands. When
//     w/s is near a half-integer n + 1/2 >= 1/2, |w| >= s/2, so the last
//     bit of w is at least 2^(b-1); w - (n + 1/2) s is then zero or at
//     least 2^(b-1) in magnitude, and w/s is a half-integer exactly or
//     at least 2^(b-1) / s > 2^-12 away from one. The float32 quotient
//     (relative error 2^-24, |w/s| < 8) cannot cross a half-integer, so
//     rint of the rounded quotient is rint of the exact one.
//   - t = w * (1/s), two roundings, is within 2^-20 of w/s, so rint(t) is
//     that same integer except at an exact half-integer, where it may
//     land on either neighbour.
//   - e = w - n s is exact (a single fma; w and n s share the last-bit
//     scale 2^(b-1) and |e| <= s/2), so |e| == s/2 detects the tie, and
//     the tie goes to the even neighbour.
// The caller passes r = __frcp_rn(s); s == 0 is passed as r = 0, which
// gives 0 (w is finite), as the reference's "q = 0 where the scale is 0".
// Branch-free, in integers after the rint.
__device__ __forceinline__ int q_rint(float w, float s, float r) {
  float n = rintf(__fmul_rn(w, r));
  float e = __fmaf_rn(-n, s, w);
  float hs = __fmul_rn(s, 0.5f);  // exact
  int ni = (int)n;
  int step = e > 0.0f ? 1 : -1;
  return (fabsf(e) == hs && (ni & 1)) ? ni + step : ni;
}

// The AWQ word of one row of 8 columns: q = rint(w / s) clamped to
// [-8, 7], u = q + 8, nibble p = column ORDER[p].
__device__ __forceinline__ u32 pack_row(uint4 v, const float sf[8], const float rf[8]) {
  const __half *h = reinterpret_cast<const __half *>(&v);
  u32 u[8];
#pragma unroll
  for (int j = 0; j < 8; j++)
    u[j] = (u32)(min(max(q_rint(__half2float(h[j]), sf[j], rf[j]), -8), 7) + 8);
  // nibble p holds column ORDER[p], ORDER = {0,2,4,6,1,3,5,7}
  return u[0] | u[2] << 4 | u[4] << 8 | u[6] << 12 | u[1] << 16 |
         u[3] << 20 | u[5] << 24 | u[7] << 28;
}

extern "C" __global__ void __launch_bounds__(32 * AWQ_WARPS, AWQ_MIN_BLOCKS)
awq_forge_pack(const uint4 *__restrict__ w, u64 ic, u64 oc, u64 group,
               u32 *__restrict__ qweight, u32 *__restrict__ qzeros,
               __half *__restrict__ scales, u32 *__restrict__ bad) {
  u64 chunks = oc / 8;
  u32 lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  u64 chunk = ((u64)blockIdx.x * AWQ_WARPS + warp) * AWQ_CHUNKS + lane % AWQ_CHUNKS;
  u32 slice = lane / AWQ_CHUNKS;
  u64 g = blockIdx.y;
  bool live = chunk < chunks;  // dead lanes still take part in the shuffles
  bool inreg = group <= (u64)AWQ_SLICES * AWQ_ROWS;  // uniform over the grid
  const uint4 *wg = w + g * group * chunks + chunk;
  uint4 m = make_uint4(0u, 0u, 0u, 0u);
  uint4 v[AWQ_ROWS];
  if (live) {
    if (inreg) {
#pragma unroll
      for (int r = 0; r < AWQ_ROWS; r++) {
        u64 k = slice + (u64)r * AWQ_SLICES;
        v[r] = k < group ? wg[k * chunks] : make_uint4(0u, 0u, 0u, 0u);
      }
#pragma unroll
      for (int r = 0; r < AWQ_ROWS; r++) m = absmax8(m, v[r]);
    } else {
#pragma unroll 4
      for (u64 k = slice; k < group; k += AWQ_SLICES) m = absmax8(m, wg[k * chunks]);
    }
  }
#pragma unroll
  for (int off = AWQ_CHUNKS; off < 32; off <<= 1) {
    m.x = __vmaxu2(m.x, __shfl_xor_sync(0xFFFFFFFFu, m.x, off));
    m.y = __vmaxu2(m.y, __shfl_xor_sync(0xFFFFFFFFu, m.y, off));
    m.z = __vmaxu2(m.z, __shfl_xor_sync(0xFFFFFFFFu, m.z, off));
    m.w = __vmaxu2(m.w, __shfl_xor_sync(0xFFFFFFFFu, m.w, off));
  }
  if (!live) return;
  // Any half of m at or above 0x7C00 is an Inf or NaN of the group.
  if (__vcmpgeu2(m.x, 0x7C007C00u) | __vcmpgeu2(m.y, 0x7C007C00u) |
      __vcmpgeu2(m.z, 0x7C007C00u) | __vcmpgeu2(m.w, 0x7C007C00u)) {
    if (slice == 0) atomicOr(bad, 1u);
    return;  // the Go side rejects the whole input; nothing else is read
  }
  const __half *amax = reinterpret_cast<const __half *>(&m);
  float sf[8], rf[8];
  __half sh[8];
#pragma unroll
  for (int j = 0; j < 8; j++) {
    sh[j] = __float2half_rn(__fdiv_rn(__half2float(amax[j]), 7.0f));
    sf[j] = __half2float(sh[j]);
    rf[j] = sf[j] != 0.0f ? __frcp_rn(sf[j]) : 0.0f;
  }
  if (slice == 0) {
    reinterpret_cast<uint4 *>(scales)[g * chunks + chunk] = *reinterpret_cast<uint4 *>(sh);
    qzeros[g * chunks + chunk] = 0x88888888u;
  }
  u32 *qg = qweight + g * group * chunks + chunk;
  if (inreg) {
#pragma unroll
    for (int r = 0; r < AWQ_ROWS; r++) {
      u64 k = slice + (u64)r * AWQ_SLICES;
      if (k < group) qg[k * chunks] = pack_row(v[r], sf, rf);
    }
  } else {
#pragma unroll 4
    for (u64 k = slice; k < group; k += AWQ_SLICES) qg[k * chunks] = pack_row(wg[k * chunks], sf, rf);
  }
}
