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
// lut the E4M3 table (filled into constant memory, staged per block into
// shared memory), acc = fma(sum, scale, acc) (or
// __fadd_rn(__fmul_rn(sum, scale), acc) when fused == 0). Each 64-K tile's
// acc is stored as fp16 (__float2half_rn) into partials [A][K/64][N]; the
// last block to finish a column range reduces its partials in float32 with
// `width` interleaved accumulators (accumulator j starts at tile j and adds
// tiles j+4, j+8, ... in order; then acc0 + acc1 + acc2 + acc3 in order;
// width 1 is a sequential sum), the result rounded to fp16.
//
// Speed notes (none changes a rounding): the seed kept its FP4 table in
// shared memory and its FP8 table in constant memory; constant memory
// serialises a warp whose lanes read different entries, which on an H100
// costs more than the loads, so both tables are staged into shared memory.
// The seed reduced the partials with a separate .sum(0); here the last
// block of each column range does it (a per-range arrival counter, reset
// by that block), saving a launch and a pass over the partials.
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

// select24 returns the meta nibble i0 | i1 << 2 (i0 < i1) of the group of
// four codes in the low nibbles of the bytes of g. Code i is kept when
// fewer than two codes beat it, where j beats i if its rank is higher, or
// equal with j < i (the lower index wins ties). Branch-free, and no
// indexed local array: an array indexed by a runtime value lives in local
// memory, which made this the kernel's bottleneck.
__device__ __forceinline__ u32 select24(u32 g, u32 rule) {
  int r0 = code_rank(g, rule), r1 = code_rank(g >> 8, rule);
  int r2 = code_rank(g >> 16, rule), r3 = code_rank(g >> 24, rule);
  if (rule == TIE_CUTLASS) {
    u32 nz = ((g & 0x07070707u) + 0x7F7F7F7Fu) & 0x80808080u;  // byte has a nonzero magnitude
    if (__popc(nz) <= 1) {
      // PyTorch's CUTLASS converter with at most one nonzero code.
      if (nz == 0x80u) return 0u | 2u << 2;
      if (nz == 0x8000u) return 1u | 2u << 2;
      return 2u | 3u << 2;
    }
  }
  // b_ji: j beats i, for j < i.
  u32 b01 = r0 >= r1, b02 = r0 >= r2, b03 = r0 >= r3;
  u32 b12 = r1 >= r2, b13 = r1 >= r3, b23 = r2 >= r3;
  u32 c0 = (1u - b01) + (1u - b02) + (1u - b03);
  u32 c1 = b01 + (1u - b12) + (1u - b13);
  u32 c2 = b02 + b12 + (1u - b23);
  u32 c3 = b03 + b13 + b23;
  u32 kept = (u32)(c0 < 2u) | (u32)(c1 < 2u) << 1 | (u32)(c2 < 2u) << 2 | (u32)(c3 < 2u) << 3;
  u32 i0 = __ffs(kept) - 1u, i1 = 31u - __clz(kept);
  return i0 | i1 << 2;
}

// sp24_meta_table writes, for every group of four codes g16 (code i in
// bits 4i..4i+3), the meta nibble select24 chooses under rule, two
// groups per byte (even g16 in the low nibble): 32 KB. The compress
// kernels stage it in shared memory, where a lookup costs a few
// instructions against select24's hundred-odd: compress was bound by
// instruction issue, not memory, before the table.
extern "C" __global__ void sp24_meta_table(u32 rule, u8 *__restrict__ table) {
  GRID_STRIDE(i, 32768) {
    u32 lo = (u32)(2 * i), hi = lo + 1;
    // nibbles -> bytes: code i of g16 to byte i
    u32 glo = (lo & 0xFu) | (lo & 0xF0u) << 4 | (lo & 0xF00u) << 8 | (lo & 0xF000u) << 12;
    u32 ghi = (hi & 0xFu) | (hi & 0xF0u) << 4 | (hi & 0xF00u) << 8 | (hi & 0xF000u) << 12;
    table[i] = (u8)(select24(glo, rule) | select24(ghi, rule) << 4);
  }
}

#define SP24_TABLE_BYTES 32768

// Copies the meta table into shared memory (every thread of the block
// takes part; callers __syncthreads() after).
__device__ __forceinline__ void load_table(u8 *s_tab, const u8 *__restrict__ table) {
  u32 nthreads = blockDim.x * blockDim.y, t = threadIdx.y * blockDim.x + threadIdx.x;
  for (u32 i = t; i < SP24_TABLE_BYTES / 16; i += nthreads)
    reinterpret_cast<uint4 *>(s_tab)[i] = reinterpret_cast<const uint4 *>(table)[i];
}

// compress4 compresses the 2:4 group in the bytes of g (codes <= 0xF): the
// comp byte v(i0) | v(i1) << 4 and the meta nibble, from the table.
__device__ __forceinline__ void compress4(u32 g, const u8 *s_tab, u32 *k, u32 *m) {
  u32 t = g | g >> 4;  // byte 0: codes 0,1 as nibbles; byte 2: codes 2,3
  u32 g16 = (t & 0xFFu) | ((t >> 8) & 0xFF00u);
  u32 mm = (s_tab[g16 >> 1] >> ((g16 & 1u) * 4u)) & 0xFu;
  u32 p = __byte_perm(g, 0u, (mm & 3u) | (mm >> 2) << 4);  // bytes v(i0), v(i1)
  *k = (p & 0xFu) | (p >> 4 & 0xF0u);
  *m = mm;
}

// compress8 takes 8 codes (one pair of groups): 2 comp bytes (k0 | k1 <<
// 8) and one meta byte. A code above 0xF sets *bad (the Go side rejects
// the input) and is masked so that the lookup stays in the table.
__device__ __forceinline__ void compress8(uint2 v, const u8 *s_tab, u32 *bad, u32 *k, u32 *mb) {
  if ((v.x | v.y) & 0xF0F0F0F0u) atomicOr(bad, 1u);
  u32 k0, k1, m0, m1;
  compress4(v.x & 0x0F0F0F0Fu, s_tab, &k0, &m0);
  compress4(v.y & 0x0F0F0F0Fu, s_tab, &k1, &m1);
  *k = k0 | k1 << 8;
  *mb = m0 | m1 << 4;
}

// Row-major: the layout is one flat run of pairs over (e, n, p) in and
// out, so a thread takes 4 consecutive pairs (32 codes: two 16-byte
// loads) and stores 8 comp bytes and 4 meta bytes with one store each;
// the last few pairs, if the count is not a multiple of 4, go one by one.
// The grid is a few blocks per SM (grid-stride), so that the table is
// staged once per block.
extern "C" __global__ void __launch_bounds__(256)
sp24_compress(const uint2 *__restrict__ codes, u64 E, u64 N, u64 K,
              const u8 *__restrict__ table, u8 *__restrict__ comp,
              u8 *__restrict__ meta, u32 *__restrict__ bad) {
  __shared__ __align__(16) u8 s_tab[SP24_TABLE_BYTES];
  load_table(s_tab, table);
  __syncthreads();
  u64 T = E * N * (K / 8);
  GRID_STRIDE(i, T / 4) {
    uint4 a = reinterpret_cast<const uint4 *>(codes)[2 * i];
    uint4 b = reinterpret_cast<const uint4 *>(codes)[2 * i + 1];
    u32 k0, k1, k2, k3, m0, m1, m2, m3;
    compress8(make_uint2(a.x, a.y), s_tab, bad, &k0, &m0);
    compress8(make_uint2(a.z, a.w), s_tab, bad, &k1, &m1);
    compress8(make_uint2(b.x, b.y), s_tab, bad, &k2, &m2);
    compress8(make_uint2(b.z, b.w), s_tab, bad, &k3, &m3);
    reinterpret_cast<uint2 *>(comp)[i] = make_uint2(k0 | k1 << 16, k2 | k3 << 16);
    reinterpret_cast<u32 *>(meta)[i] = m0 | m1 << 8 | m2 << 16 | m3 << 24;
  }
  u64 i = T / 4 * 4 + (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < T) {
    u32 k, mb;
    compress8(codes[i], s_tab, bad, &k, &mb);
    comp[2 * i] = (u8)k;
    comp[2 * i + 1] = (u8)(k >> 8);
    meta[i] = (u8)mb;
  }
}

// Transposed: block (32, 8); tiles of 32 pairs x SP24_TN rows, taken in
// turn by a grid of a few blocks per SM (the table is staged once per
// block). A tile is compressed into shared memory (loads along p, 16 rows
// per thread, all issued first), then its 2*32 comp rows and 32 meta rows are written along
// n, four bytes per store when N is a multiple of 4.
#define SP24_TN 128
extern "C" __global__ void __launch_bounds__(256)
sp24_compress_t(const uint2 *__restrict__ codes, u64 E, u64 N, u64 K,
                const u8 *__restrict__ table, u8 *__restrict__ comp,
                u8 *__restrict__ meta, u32 *__restrict__ bad) {
  __shared__ __align__(16) u8 s_tab[SP24_TABLE_BYTES];
  __shared__ u32 sc[96][SP24_TN / 4 + 1];  // rows 0..63: comp 2p, 2p+1; 64..95: meta p
  u8 (*sb)[4 * (SP24_TN / 4 + 1)] = reinterpret_cast<u8 (*)[4 * (SP24_TN / 4 + 1)]>(sc);
  load_table(s_tab, table);
  u64 P = K / 8;
  u64 tp = (P + 31) / 32, tn = (N + SP24_TN - 1) / SP24_TN;
  u32 tx = threadIdx.x, ty = threadIdx.y;
  for (u64 tile = blockIdx.x; tile < E * tn * tp; tile += gridDim.x) {
    u64 p0 = (tile % tp) * 32, n0 = (tile / tp % tn) * SP24_TN, e = tile / (tp * tn);
    __syncthreads();  // the table is in; the previous tile's stores are done
    // load: rows n0 + ty + 8i, pair p0 + tx. All of a thread's loads are
    // issued before any compress, so each thread has 16 in flight rather
    // than one (the block count is capped by the table's shared memory).
    uint2 v[SP24_TN / 8];
    u64 p = p0 + tx;
#pragma unroll
    for (int i = 0; i < SP24_TN / 8; i++) {
      u64 n = n0 + ty + 8 * i;
      v[i] = n < N && p < P ? codes[(e * N + n) * P + p] : make_uint2(0u, 0u);
    }
#pragma unroll
    for (int i = 0; i < SP24_TN / 8; i++) {
      u32 r = ty + 8 * i;
      if (n0 + r < N && p < P) {
        u32 k, mb;
        compress8(v[i], s_tab, bad, &k, &mb);
        sb[2 * tx][r] = (u8)k;
        sb[2 * tx + 1][r] = (u8)(k >> 8);
        sb[64 + tx][r] = (u8)mb;
      }
    }
    __syncthreads();
    u64 rows_c = 2 * (P - p0 < 32 ? P - p0 : 32);
    for (u32 row = ty; row < 96; row += 8) {  // store: tile row `row`, columns n0 + 4tx..
      u64 orow;
      u8 *dst;
      if (row < 64) {
        if (row >= rows_c) continue;
        orow = e * (K / 4) + 2 * p0 + row;
        dst = comp;
      } else {
        if (row - 64 >= rows_c / 2) continue;
        orow = e * P + p0 + (row - 64);
        dst = meta;
      }
      u64 n = n0 + 4 * tx;
      if (n >= N) continue;
      u8 *o = dst + orow * N + n;
      if (N % 4 == 0) {
        *reinterpret_cast<u32 *>(o) = sc[row][tx];
      } else {
        for (u32 j = 0; j < 4 && n + j < N; j++) o[j] = sb[row][4 * tx + j];
      }
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
#ifndef V7_MIN_BLOCKS
#define V7_MIN_BLOCKS 4  // resident blocks per SM the register budget targets
#endif

// h4 unpacks 4 fp16 (little-endian in v) to float.
__device__ __forceinline__ void h4(uint2 v, float f[4]) {
  f[0] = __half2float(__ushort_as_half((u16)v.x));
  f[1] = __half2float(__ushort_as_half((u16)(v.x >> 16)));
  f[2] = __half2float(__ushort_as_half((u16)v.y));
  f[3] = __half2float(__ushort_as_half((u16)(v.y >> 16)));
}

// reduce_tiles sums the kt fp16 partials of 4 adjacent columns (p: tile 0
// of those columns, tiles N apart) with W interleaved accumulators (W = 4:
// accumulator j takes tiles j, j+4, ...; W = 1: in tile order), then adds
// the accumulators in order. Loads go V7_REDUCE_BATCH tiles at a time
// through L2 (__ldcg: other blocks wrote them; L1 is not coherent).
#ifndef V7_REDUCE_BATCH
#define V7_REDUCE_BATCH 16  // a multiple of 4
#endif
template <int W>
__device__ __forceinline__ void reduce_tiles(const __half *p, u64 N, u64 kt, float r[4]) {
  float acc[W][4];
  for (u64 t0 = 0; t0 < kt; t0 += V7_REDUCE_BATCH) {
    uint2 v[V7_REDUCE_BATCH];
#pragma unroll
    for (int i = 0; i < V7_REDUCE_BATCH; i++)
      v[i] = t0 + i < kt ? __ldcg(reinterpret_cast<const uint2 *>(p + (t0 + i) * N)) : make_uint2(0u, 0u);
#pragma unroll
    for (int i = 0; i < V7_REDUCE_BATCH; i++) {
      if (t0 + i >= kt) break;
      float f[4];
      h4(v[i], f);
#pragma unroll
      for (int c = 0; c < 4; c++)
        acc[i % W][c] = t0 + i < (u64)W ? f[c] : __fadd_rn(acc[i % W][c], f[c]);
    }
  }
#pragma unroll
  for (int c = 0; c < 4; c++) r[c] = acc[0][c];
#pragma unroll
  for (int j = 1; j < W; j++)
    if ((u64)j < kt)
#pragma unroll
      for (int c = 0; c < 4; c++) r[c] = __fadd_rn(r[c], acc[j][c]);
}

// comp [E][K/4][N], meta [E][K/8][N], scales [E][K/scale_k][N] (E4M3),
// global [E] f32, act fp16 [A][K] (act_stride K) or [K] (act_stride 0),
// experts [A] i32; partials fp16 [A][K/64][N]; counters u32
// [A][ceil(N/512)], zero before the first launch and left zero by every
// launch; y fp16 [A][N]. width is 4 or 1.
extern "C" __global__ void __launch_bounds__(V7_THREADS, V7_MIN_BLOCKS)
sp24_gemv_v7(const u8 *__restrict__ comp, const u8 *__restrict__ meta,
             const u8 *__restrict__ scales, const float *__restrict__ global,
             const __half *__restrict__ act, u64 act_stride,
             const int *__restrict__ experts, u64 K, u64 N, u64 scale_k,
             u32 fused, u64 width, __half *__restrict__ partials,
             u32 *__restrict__ counters, __half *__restrict__ y) {
  __shared__ float sh_a[V7_TILE_K];
  __shared__ float sh_fp8[256];
  __shared__ float sh_e2m1[16];
  __shared__ bool sh_last;
  u64 a = blockIdx.z;
  u64 tile = blockIdx.y;
  u64 kt = K / V7_TILE_K;
  u64 k_base = tile * V7_TILE_K;
  const __half *arow = act + a * act_stride;
  for (u32 i = threadIdx.x; i < V7_TILE_K; i += V7_THREADS)
    sh_a[i] = __half2float(arow[k_base + i]);
  for (u32 i = threadIdx.x; i < 256; i += V7_THREADS) sh_fp8[i] = c_fp8_lut[i];
  if (threadIdx.x < 16) sh_e2m1[threadIdx.x] = c_e2m1[threadIdx.x];
  __syncthreads();
  u64 n0 = ((u64)blockIdx.x * V7_THREADS + threadIdx.x) * V7_THREAD_N;
  bool live = n0 < N;
  if (live) {
    u64 e = (u64)experts[a];
    float g = global[e];
    const u8 *B = comp + e * (K / 4) * N + n0;
    const u8 *M = meta + e * (K / 8) * N + n0;
    const u8 *S = scales + e * (K / scale_k) * N + n0;
    u32 c0_4[8], c1_4[8], m_4[8], s_4[8];
#pragma unroll
    for (int it = 0; it < 8; it++) {
      u64 k = k_base + 8 * it, gi = k / 4;
      c0_4[it] = *reinterpret_cast<const u32 *>(B + gi * N);
      c1_4[it] = *reinterpret_cast<const u32 *>(B + (gi + 1) * N);
      m_4[it] = *reinterpret_cast<const u32 *>(M + (gi / 2) * N);
      s_4[it] = *reinterpret_cast<const u32 *>(S + (k / scale_k) * N);
    }
    float acc[V7_THREAD_N] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int it = 0; it < 8; it++) {
      const float *A = sh_a + 8 * it;
#pragma unroll
      for (int j = 0; j < V7_THREAD_N; j++) {
        u32 c0 = (c0_4[it] >> (8 * j)) & 0xFFu, c1 = (c1_4[it] >> (8 * j)) & 0xFFu;
        u32 m = (m_4[it] >> (8 * j)) & 0xFFu;
        float scale = __fmul_rn(sh_fp8[(s_4[it] >> (8 * j)) & 0xFFu], g);
        float p = __fmul_rn(sh_e2m1[c0 & 0xFu], A[m & 3u]);
        if (fused) {
          p = __fmaf_rn(sh_e2m1[c0 >> 4], A[(m >> 2) & 3u], p);
          p = __fmaf_rn(sh_e2m1[c1 & 0xFu], A[4 + ((m >> 4) & 3u)], p);
          p = __fmaf_rn(sh_e2m1[c1 >> 4], A[4 + ((m >> 6) & 3u)], p);
          acc[j] = __fmaf_rn(p, scale, acc[j]);
        } else {
          p = __fadd_rn(__fmul_rn(sh_e2m1[c0 >> 4], A[(m >> 2) & 3u]), p);
          p = __fadd_rn(__fmul_rn(sh_e2m1[c1 & 0xFu], A[4 + ((m >> 4) & 3u)]), p);
          p = __fadd_rn(__fmul_rn(sh_e2m1[c1 >> 4], A[4 + ((m >> 6) & 3u)]), p);
          acc[j] = __fadd_rn(__fmul_rn(p, scale), acc[j]);
        }
      }
    }
    u32 lo = (u32)__half_as_ushort(__float2half_rn(acc[0])) | (u32)__half_as_ushort(__float2half_rn(acc[1])) << 16;
    u32 hi = (u32)__half_as_ushort(__float2half_rn(acc[2])) | (u32)__half_as_ushort(__float2half_rn(acc[3])) << 16;
    *reinterpret_cast<uint2 *>(partials + (a * kt + tile) * N + n0) = make_uint2(lo, hi);
  }
  // The last of the kt blocks of this column range to arrive reduces it.
  __threadfence();
  __syncthreads();
  u32 *counter = counters + a * gridDim.x + blockIdx.x;
  if (threadIdx.x == 0) sh_last = atomicAdd(counter, 1u) == (u32)(kt - 1);
  __syncthreads();
  if (!sh_last) return;
  __threadfence();
  if (threadIdx.x == 0) *counter = 0u;  // ready for the next launch
  if (!live) return;
  float r[4];
  const __half *p = partials + a * kt * N + n0;
  if (width == 4) reduce_tiles<4>(p, N, kt, r);
  else reduce_tiles<1>(p, N, kt, r);
  u32 lo = (u32)__half_as_ushort(__float2half_rn(r[0])) | (u32)__half_as_ushort(__float2half_rn(r[1])) << 16;
  u32 hi = (u32)__half_as_ushort(__float2half_rn(r[2])) | (u32)__half_as_ushort(__float2half_rn(r[3])) << 16;
  *reinterpret_cast<uint2 *>(y + a * N + n0) = make_uint2(lo, hi);
}
