// 2:4 sparse FP4: compress (refimpl/sparse24) and the dgx-vllm v7 sparse
// FP4 GEMV (refimpl/gemv SparseFP4GEMV under the schedule the kernel
// declares, see native/cuda/sparse.go).
//
// Compress: codes [E][N][K], one E2M1 code per byte. Each group of 4 along
// K keeps two codes chosen by a tie rule (lower-index: the two largest
// magnitudes, the lower index winning ties; signed: the two largest signed
// values; cutlass: lower-index unless fewer than two codes are nonzero,
// then PyTorch's CUTLASS converter positions). comp byte = v(i0) | v(i1)<<4,
// meta nibble = i0 | i1<<2, two groups per meta byte (group 2p low).
// Row-major [E][N][K/4], [E][N][K/8]; transposed [E][K/4][N], [E][K/8][N].
//
// GEMV (v7): grid (ceil(N/512), K/64, A); 128 threads, THREAD_N = 4 columns
// each, read as one uint32 per K row (direct coalesced loads). Per 8 K:
// sum = p0, then p = fma(a_i, b_i, p) over the 4 kept products (exact:
// E2M1 x fp16 fits float32), scale = __fmul_rn(lut[byte], global[e]) with
// lut the E4M3 table in constant memory, acc = fma(sum, scale, acc) (or
// __fadd_rn(__fmul_rn(sum, scale), acc) when fused == 0). Each 64-K tile's
// acc is stored as fp16 (__float2half_rn) into partials [A][K/64][N]; a
// second kernel reduces the partials in float32 with `width` interleaved
// accumulators (accumulator j starts at tile j and adds tiles j+width,
// j+2*width, ... in order; then acc0 + acc1 + ... in order; width 1 is a
// sequential sum), the result rounded to fp16.
#include "common.cuh"
#include <cuda_fp16.h>

// ---- compress ----

enum { TIE_LOWER_INDEX = 0, TIE_CUTLASS = 1, TIE_SIGNED = 2 };

// Rank of a code: magnitude rank (c & 7 orders the E2M1 magnitudes, -0 and
// +0 equal) or signed rank (-6 lowest, both zeros equal, +6 highest).
__device__ __forceinline__ int code_rank(u32 c, u32 rule) {
  c &= 0xFu;
  if (rule == TIE_SIGNED) return c < 8u ? 7 + (int)c : 7 - (int)(c & 7u);
  return (int)(c & 7u);
}

__device__ __forceinline__ u32 select24(u32 g0, u32 g1, u32 g2, u32 g3, u32 rule) {
  u32 g[4] = {g0, g1, g2, g3};
  if (rule == TIE_CUTLASS) {
    u32 mask = 0;
#pragma unroll
    for (int i = 0; i < 4; i++) mask |= ((g[i] & 7u) != 0u) << i;
    if ((mask & (mask - 1u)) == 0u) {
      if (mask == 1u) return 0u | 2u << 2;
      if (mask == 2u) return 1u | 2u << 2;
      return 2u | 3u << 2;
    }
  }
  int b0 = 0, b1 = 1;
  if (code_rank(g[1], rule) > code_rank(g[0], rule)) { b0 = 1; b1 = 0; }
#pragma unroll
  for (int i = 2; i < 4; i++) {
    int r = code_rank(g[i], rule);
    if (r > code_rank(g[b0], rule)) { b1 = b0; b0 = i; }
    else if (r > code_rank(g[b1], rule)) { b1 = i; }
  }
  if (b0 > b1) { int t = b0; b0 = b1; b1 = t; }
  return (u32)b0 | (u32)b1 << 2;
}

// One thread per (expert e, row n, pair of groups p): 8 codes in (one
// 8-byte load), 2 comp bytes and 1 meta byte out. Row-major: p varies
// fastest across threads, so loads and stores are contiguous. Transposed:
// a block stages a tile of 32 rows x 32 pairs through shared memory so
// that both the loads (along p) and the stores (along n) are contiguous.
__device__ __forceinline__ void compress8(uint2 v, u32 rule, u32 *bad,
                                          u32 *k0, u32 *k1, u32 *mb) {
  if ((v.x | v.y) & 0xF0F0F0F0u) atomicOr(bad, 1u);
  u32 c[8];
#pragma unroll
  for (int j = 0; j < 4; j++) {
    c[j] = (v.x >> (8 * j)) & 0xFu;
    c[4 + j] = (v.y >> (8 * j)) & 0xFu;
  }
  u32 m0 = select24(c[0], c[1], c[2], c[3], rule);
  u32 m1 = select24(c[4], c[5], c[6], c[7], rule);
  *k0 = c[m0 & 3u] | c[m0 >> 2] << 4;
  *k1 = c[4 + (m1 & 3u)] | c[4 + (m1 >> 2)] << 4;
  *mb = m0 | m1 << 4;
}

extern "C" __global__ void sp24_compress(const uint2 *__restrict__ codes,
                                         u64 E, u64 N, u64 K, u32 rule,
                                         u8 *__restrict__ comp,
                                         u8 *__restrict__ meta,
                                         u32 *__restrict__ bad) {
  u64 P = K / 8;
  GRID_STRIDE(i, E * N * P) {
    u32 k0, k1, mb;
    compress8(codes[i], rule, bad, &k0, &k1, &mb);
    reinterpret_cast<u16 *>(comp)[i] = (u16)(k0 | k1 << 8);
    meta[i] = (u8)mb;
  }
}

// Transposed: grid (ceil(P/32), ceil(N/32), E), block (32, 8).
extern "C" __global__ void sp24_compress_t(const uint2 *__restrict__ codes,
                                           u64 E, u64 N, u64 K, u32 rule,
                                           u8 *__restrict__ comp,
                                           u8 *__restrict__ meta,
                                           u32 *__restrict__ bad) {
  __shared__ u8 sc[64][33];  // comp rows 2p, 2p+1 of the tile, by n
  __shared__ u8 sm[32][33];  // meta row p of the tile, by n
  u64 P = K / 8;
  u64 e = blockIdx.z;
  u64 p0 = (u64)blockIdx.x * 32, n0 = (u64)blockIdx.y * 32;
  u32 tx = threadIdx.x, ty = threadIdx.y;
  for (u32 r = ty; r < 32; r += 8) {  // load: row n0+r, pair p0+tx
    u64 n = n0 + r, p = p0 + tx;
    if (n < N && p < P) {
      u32 k0, k1, mb;
      compress8(codes[(e * N + n) * P + p], rule, bad, &k0, &k1, &mb);
      sc[2 * tx][r] = (u8)k0;
      sc[2 * tx + 1][r] = (u8)k1;
      sm[tx][r] = (u8)mb;
    }
  }
  __syncthreads();
  for (u32 r = ty; r < 32; r += 8) {  // store: pair p0+r, row n0+tx
    u64 n = n0 + tx, p = p0 + r;
    if (n < N && p < P) {
      comp[(e * (K / 4) + 2 * p) * N + n] = sc[2 * r][tx];
      comp[(e * (K / 4) + 2 * p + 1) * N + n] = sc[2 * r + 1][tx];
      meta[(e * P + p) * N + n] = sm[r][tx];
    }
  }
}

// Byte transpose of E matrices [R][C] -> [C][R] (scales -> scales_T).
extern "C" __global__ void sp24_transpose_u8(const u8 *__restrict__ in, u64 E,
                                             u64 R, u64 C, u8 *__restrict__ out) {
  GRID_STRIDE(i, E * R * C) {
    u64 r = i % R, c = (i / R) % C, e = i / (R * C);
    out[(e * C + c) * R + r] = in[(e * R + r) * C + c];
  }
}

// ---- v7 GEMV ----

__constant__ float c_fp8_lut[256];

__device__ __constant__ float c_e2m1[16] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f,
                                           -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

// Fills out[256] with the E4M3 values through the hardware decode (the
// instruction fp8.cu certifies); mode 1 gives the dgx-vllm host table,
// which reads 0x7F/0xFF as +-480 instead of NaN. The Go side copies the
// result into c_fp8_lut.
extern "C" __global__ void sp24_fill_lut(float *__restrict__ out, u32 mode) {
  u32 c = threadIdx.x;
  if (c >= 256) return;
  u32 h2;
  u16 c2 = (u16)c;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"(c2));
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"((u16)(h2 & 0xFFFFu)));
  if ((c & 0x7Fu) == 0x7Fu) f = mode == 1 ? ((c & 0x80u) ? -480.0f : 480.0f)
                                          : __uint_as_float(((c & 0x80u) << 24) | 0x7FC00000u);
  out[c] = f;
}

#define V7_THREADS 128
#define V7_THREAD_N 4
#define V7_TILE_K 64

// comp [E][K/4][N], meta [E][K/8][N], scales [E][K/scale_k][N] (E4M3),
// global [E] f32, act fp16 [A][K] (act_stride K) or [K] (act_stride 0),
// experts [A] i32; partials fp16 [A][K/64][N].
extern "C" __global__ void __launch_bounds__(V7_THREADS)
sp24_gemv_v7(const u8 *__restrict__ comp, const u8 *__restrict__ meta,
             const u8 *__restrict__ scales, const float *__restrict__ global,
             const __half *__restrict__ act, u64 act_stride,
             const int *__restrict__ experts, u64 K, u64 N, u64 scale_k,
             u32 fused, __half *__restrict__ partials) {
  __shared__ float sh_a[V7_TILE_K];
  u64 a = blockIdx.z;
  u64 tile = blockIdx.y;
  u64 kt = K / V7_TILE_K;
  u64 k_base = tile * V7_TILE_K;
  const __half *arow = act + a * act_stride;
  for (u32 i = threadIdx.x; i < V7_TILE_K; i += V7_THREADS)
    sh_a[i] = __half2float(arow[k_base + i]);
  __syncthreads();
  u64 n0 = ((u64)blockIdx.x * V7_THREADS + threadIdx.x) * V7_THREAD_N;
  if (n0 >= N) return;
  u64 e = (u64)experts[a];
  float g = global[e];
  const u8 *B = comp + e * (K / 4) * N;
  const u8 *M = meta + e * (K / 8) * N;
  const u8 *S = scales + e * (K / scale_k) * N;
  float acc[V7_THREAD_N] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (u64 k = 0; k < V7_TILE_K; k += 8) {
    u64 gi = (k_base + k) / 4;
    u32 c0_4 = *reinterpret_cast<const u32 *>(B + gi * N + n0);
    u32 c1_4 = *reinterpret_cast<const u32 *>(B + (gi + 1) * N + n0);
    u32 m_4 = *reinterpret_cast<const u32 *>(M + (gi / 2) * N + n0);
    u32 s_4 = *reinterpret_cast<const u32 *>(S + ((k_base + k) / scale_k) * N + n0);
#pragma unroll
    for (int j = 0; j < V7_THREAD_N; j++) {
      u32 c0 = (c0_4 >> (8 * j)) & 0xFFu, c1 = (c1_4 >> (8 * j)) & 0xFFu;
      u32 m = (m_4 >> (8 * j)) & 0xFFu;
      float scale = __fmul_rn(c_fp8_lut[(s_4 >> (8 * j)) & 0xFFu], g);
      float p = __fmul_rn(c_e2m1[c0 & 0xFu], sh_a[k + (m & 3u)]);
      if (fused) {
        p = __fmaf_rn(c_e2m1[c0 >> 4], sh_a[k + ((m >> 2) & 3u)], p);
        p = __fmaf_rn(c_e2m1[c1 & 0xFu], sh_a[k + 4 + ((m >> 4) & 3u)], p);
        p = __fmaf_rn(c_e2m1[c1 >> 4], sh_a[k + 4 + ((m >> 6) & 3u)], p);
        acc[j] = __fmaf_rn(p, scale, acc[j]);
      } else {
        p = __fadd_rn(__fmul_rn(c_e2m1[c0 >> 4], sh_a[k + ((m >> 2) & 3u)]), p);
        p = __fadd_rn(__fmul_rn(c_e2m1[c1 & 0xFu], sh_a[k + 4 + ((m >> 4) & 3u)]), p);
        p = __fadd_rn(__fmul_rn(c_e2m1[c1 >> 4], sh_a[k + 4 + ((m >> 6) & 3u)]), p);
        acc[j] = __fadd_rn(__fmul_rn(p, scale), acc[j]);
      }
    }
  }
  __half *out = partials + (a * kt + tile) * N + n0;
#pragma unroll
  for (int j = 0; j < V7_THREAD_N; j++) out[j] = __float2half_rn(acc[j]);
}

// y[a][n] = fp16(strided sum over the K tiles of partials[a][.][n]).
extern "C" __global__ void sp24_reduce(const __half *__restrict__ partials,
                                       u64 A, u64 KT, u64 N, u64 width,
                                       __half *__restrict__ y) {
  GRID_STRIDE(i, A * N) {
    u64 n = i % N, a = i / N;
    const __half *p = partials + a * KT * N + n;
    u64 w = width < KT ? width : KT;
    float acc[8];
    for (u64 j = 0; j < w; j++) acc[j] = __half2float(p[j * N]);
    for (u64 t = w; t < KT; t++) acc[t % w] = __fadd_rn(acc[t % w], __half2float(p[t * N]));
    float r = acc[0];
    for (u64 j = 1; j < w; j++) r = __fadd_rn(r, acc[j]);
    y[i] = __float2half_rn(r);
  }
}
