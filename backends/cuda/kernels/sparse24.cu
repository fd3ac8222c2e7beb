// 2:4 sparse FP4: compress (refimpl/sparse24) and the dgx-vllm v7 sparse
// FP4 GEMV (refimpl/gemv SparseFP4GEMV under the schedule the kernel
// declares, see backends/cuda/gemv.go).
//
// Compress: codes [E][N][K], one E2M1 code per byte. Each group of 4 along
// K keeps two codes chosen by a tie rule (lower-index: the two largest
// magnitudes, the lower index winning ties; signed: the two largest signed
// values; cutlass: lower-index unless fewer than two codes are nonzero,
// then PyTorch's CUTLASS converter positions). comp byte = v(i0) | v(i1)<<4,
// meta nibble = i0 | i1<<2, two groups per meta byte (group 2p low).
// Row-major [E][N][K/4], [E][N][K/8]; transposed [E][K/4][N], [E][K/8][N].
//
// GEMV (v7): grid (ceil(N/512), ceil(K/64/T), A); 128 threads, 4 columns
// each, read as one uint32 per K row (direct coalesced loads); a block
// computes T (1 to 3) consecutive 64-K tiles. Per 8 K: sum = p0, then p =
// fma(a_i, b_i, p) over the 4 kept products (exact: E2M1 x fp16 fits
// float32), scale = __fmul_rn(lut[byte], global[e]) with lut the E4M3
// table, acc = fma(sum, scale, acc) (or __fadd_rn(__fmul_rn(sum, scale),
// acc) when fused == 0). Each 64-K tile's acc is stored as fp16
// (__float2half_rn) into partials [A][K/64][N]; the last block to finish a
// column range reduces its partials in float32 with `width` interleaved
// accumulators (accumulator j starts at tile j and adds tiles j+4, j+8,
// ... in order; then acc0 + acc1 + acc2 + acc3 in order; width 1 is a
// sequential sum), the result rounded to fp16.
//
// Speed notes. None changes a rounding: the float schedule above is
// dgx-vllm v7's, operation for operation.
//  - dgx-vllm reduces the partials with a separate .sum(0); here the last
//    block of each column range does it (a per-range arrival counter, reset
//    by that block), saving a launch and a pass over the partials.
//  - No table is read from constant memory, which serialises a warp whose
//    lanes read different entries (on an H100 that cost more than the
//    loads): the scale table lut[s] * global[e] is built per block in
//    shared memory, lut decoded in registers by the instruction
//    sp24_fill_lut uses (its two overridden entries, 0x7F and 0xFF, read
//    from c_fp8_lut). The product is the same __fmul_rn, once per code
//    instead of once per use.
//  - Products from a table: per tile, the 512 products e2m1(q) * a[k] of
//    the 8 non-negative codes and the tile's 64 activations in shared
//    memory (the code's sign bit flips the product, so that a warp's
//    lookups never conflict), so a kept value costs one lookup (offset
//    formed with shifts and a PRMT) and a sign flip instead of two
//    lookups and a multiply. E2M1 x fp16 products are exact
//    in float32, so fma(e, a, p) == __fadd_rn(e * a, p) == __fadd_rn(P, p):
//    both fused settings run the same chain of adds, and only the scale
//    step depends on `fused`.
//  - Up to three tiles per block, each next tile's loads issued before the
//    current tile's math and the first tile's before the shared tables are
//    built, so that more loads are in flight. Partials stay one per tile.
//    The Go side (v7Tiles in gemv.go) picks the tiles per block per shape.
//  - The reduction's loads go out 32 at a time with no per-load condition
//    (see reduce_tiles), and the count is one acq_rel atomic by one thread
//    after a barrier, with no fence in every thread.
//  - The activation loads go out before the weights' (see v7_body).
//  - scale_k == 16 (the NVFP4 block) has its own path that loads and looks
//    up each scale row once per 16 K; 32-bit index math, with no 64-bit
//    division (the per-step k / scale_k).
//  The measurements behind each of these, and the variants measured and
//  not kept, are in docs/rationale/cuda.md.
//
// Text that conformance/mutants/cuda_packing.go patches: the width-4
// reduce_tiles call in v7_body (cuda-v7-sequential-reduce) and the meta
// byte of sp24t_pair (cuda-sp24-descending, which claims the transposed
// kernel; compress4 now serves only the row-major one). Keep them in step.
#include "common.cuh"
#include "fp8.cuh"
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

// SP24_COMPRESS_THREADS is the block size of both compress kernels.
#define SP24_COMPRESS_THREADS 256

// Copies the meta table into shared memory: every thread of the block
// (SP24_COMPRESS_THREADS of them, thread index tid) issues all its loads
// before its first store, so a block does not wait out one load latency
// per 16 bytes at its start. Callers __syncthreads() after.
__device__ __forceinline__ void load_table(u8 *s_tab, const u8 *__restrict__ table, u32 tid) {
  constexpr int PER = SP24_TABLE_BYTES / 16 / SP24_COMPRESS_THREADS;
  uint4 t[PER];
  const uint4 *src = reinterpret_cast<const uint4 *>(table);
#pragma unroll
  for (int k = 0; k < PER; k++) t[k] = src[tid + SP24_COMPRESS_THREADS * k];
#pragma unroll
  for (int k = 0; k < PER; k++) reinterpret_cast<uint4 *>(s_tab)[tid + SP24_COMPRESS_THREADS * k] = t[k];
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
extern "C" __global__ void __launch_bounds__(SP24_COMPRESS_THREADS)
sp24_compress(const uint2 *__restrict__ codes, u64 E, u64 N, u64 K,
              const u8 *__restrict__ table, u8 *__restrict__ comp,
              u8 *__restrict__ meta, u32 *__restrict__ bad) {
  __shared__ __align__(16) u8 s_tab[SP24_TABLE_BYTES];
  load_table(s_tab, table, threadIdx.x);
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

// Transposed: block (32, 8); tiles of SP24T_PT pairs x SP24T_RT rows,
// taken in turn by a grid of a few blocks per SM (any grid size is
// correct; the table is staged once per block). A tile is compressed into
// shared memory, then written out along n, four bytes per store when N is
// a multiple of 4. Outputs are byte for byte those of this file's earlier
// version (32-pair tiles, compress8 per pair, byte stores into the tile);
// 8192x8192 on an H100, table + compress: 52.4 us for that, 39.5 us for
// this one. The differences all cut instructions per pair or keep more
// loads in flight:
//  - a thread takes 4 consecutive rows of a pair (2 runs per tile), so its
//    transposed bytes pack into 32-bit words: 3 conflict-free shared stores
//    per 4 pairs instead of 12 byte stores;
//  - one __byte_perm picks the 4 kept codes of a pair of groups (selector
//    spread from the meta byte) and one mask-and-shift packs them, where
//    compress8 made two compress4 calls;
//  - codes above 0xF are OR-ed into a register, one atomicOr per thread at
//    the end, instead of a test per pair;
//  - tile indices in 32 bits, advanced incrementally (no 64-bit div/mod);
//  - the first tile's loads are issued before the table is staged, and the
//    next tile's before the current tile is stored;
//  - the shared output tile is double-buffered: one __syncthreads per tile.
#define SP24T_PT 16                               // pairs per tile
#define SP24T_RT 128                              // rows (n) per tile
#define SP24T_H (32 / SP24T_PT)                   // row groups in a warp (lane / PT)
#define SP24T_RW (SP24T_RT / 8)                   // rows per warp
#define SP24T_NI (SP24T_RW / (4 * SP24T_H))       // runs of 4 rows per thread
#define SP24T_NP (4 * SP24T_NI)                   // pairs per thread per tile
#define SP24T_S (SP24T_RT / 4 + SP24T_H)          // shared row stride in words (S / H odd: conflict-free)
#define SP24T_W (SP24T_RT / 4)                    // words per output row
#define SP24T_TOTAL (3 * SP24T_PT * SP24T_W)      // words per tile output

// g16 (code i in bits 4i) of the 4 codes in the low nibbles of x's bytes.
__device__ __forceinline__ u32 sp24t_g16(u32 x) {
  u32 t = (x & 0x0F0F0F0Fu) | ((x >> 4) & 0xF0F0F0F0u);  // byte0 c0|c1<<4, byte2 c2|c3<<4
  return __byte_perm(t, 0u, 0x4420);
}

// Meta nibble of g16 in bits 0..3 (bits 4..7 may hold the neighbour nibble).
__device__ __forceinline__ u32 sp24t_nib(const u8 *s_tab, u32 g16) {
  return (u32)s_tab[g16 >> 1] >> ((g16 & 1u) << 2);
}

// One pair (8 codes, raw bytes): returns a word whose byte 0 is the comp
// byte of group 2p and byte 2 the comp byte of group 2p+1 (bytes 1, 3
// garbage); *mb = the meta byte. The same bytes as compress8.
__device__ __forceinline__ u32 sp24t_pair(uint2 v, const u8 *s_tab, u32 *mb) {
  u32 na = sp24t_nib(s_tab, sp24t_g16(v.x));
  u32 nb = sp24t_nib(s_tab, sp24t_g16(v.y));
  u32 m = (na & 0x0Fu) | ((nb << 4) & 0xF0u);
  // selector i0a | i1a << 4 | (4 + i0b) << 8 | (4 + i1b) << 12
  u32 s1 = (m | (m << 4)) & 0x0F0Fu;
  u32 sel = ((s1 | (s1 << 2)) & 0x3333u) | 0x4400u;
  u32 p = __byte_perm(v.x, v.y, sel);  // v(i0a), v(i1a), v(i0b), v(i1b)
  *mb = m;
  return (p & 0x0F0F0F0Fu) | ((p >> 4) & 0xF0F0F0F0u);
}

// Loads a thread's SP24T_NP pairs of tile (e, n0, p0): pair p0 + q, rows
// n0 + rbase + 4H*i + j. Out-of-range slots (or !live) read as zero.
__device__ __forceinline__ void sp24t_load(uint2 (&v)[SP24T_NP], const uint2 *__restrict__ codes, u64 N,
                                           u64 P, bool live, u32 e, u32 n0, u32 p0, u32 rbase, u32 q) {
  if (!live) {
#pragma unroll
    for (int k = 0; k < SP24T_NP; k++) v[k] = make_uint2(0u, 0u);
    return;
  }
  u64 p = (u64)p0 + q, nb = (u64)n0 + rbase;
  const uint2 *src = codes + ((u64)e * N + nb) * P + p;
  if ((u64)p0 + SP24T_PT <= P && (u64)n0 + SP24T_RT <= N) {
#pragma unroll
    for (int i = 0; i < SP24T_NI; i++)
#pragma unroll
      for (int j = 0; j < 4; j++) v[4 * i + j] = src[(u64)(4 * SP24T_H * i + j) * P];
  } else {
    bool pv = p < P;
#pragma unroll
    for (int i = 0; i < SP24T_NI; i++)
#pragma unroll
      for (int j = 0; j < 4; j++) {
        u64 n = nb + (u64)(4 * SP24T_H * i + j);
        v[4 * i + j] = pv && n < N ? src[(u64)(4 * SP24T_H * i + j) * P] : make_uint2(0u, 0u);
      }
  }
}

// Compresses a thread's pairs into the shared output tile s[3*PT][S]:
// rows 0..PT-1 comp rows 2p, PT..2PT-1 comp rows 2p+1, 2PT.. meta rows p;
// word c of a row holds tile rows 4c..4c+3 (byte j = row 4c+j). acc
// collects the raw codes for the bad check.
__device__ __forceinline__ void sp24t_compress(const uint2 (&v)[SP24T_NP], const u8 *s_tab,
                                               u32 (*s)[SP24T_S], u32 q, u32 wbase, u32 &acc) {
#pragma unroll
  for (int i = 0; i < SP24T_NI; i++) {
    u32 c[4], m[4];
#pragma unroll
    for (int j = 0; j < 4; j++) {
      uint2 x = v[4 * i + j];
      acc |= x.x | x.y;
      c[j] = sp24t_pair(x, s_tab, &m[j]);
    }
    u32 r01 = __byte_perm(c[0], c[1], 0x6240), r23 = __byte_perm(c[2], c[3], 0x6240);
    u32 ev = __byte_perm(r01, r23, 0x5410), od = __byte_perm(r01, r23, 0x7632);
    u32 mw = __byte_perm(__byte_perm(m[0], m[1], 0x0040), __byte_perm(m[2], m[3], 0x0040), 0x5410);
    u32 wi = wbase + SP24T_H * i;
    s[q][wi] = ev;
    s[SP24T_PT + q][wi] = od;
    s[2 * SP24T_PT + q][wi] = mw;
  }
}

// Writes the shared output tile of (e, n0, p0) along n.
__device__ __forceinline__ void sp24t_store(u32 (*s)[SP24T_S], u8 *__restrict__ comp, u8 *__restrict__ meta,
                                            u64 N, u64 K, u64 P, u32 e, u32 n0, u32 p0, u32 tid) {
  u64 prow = P - p0 < (u64)SP24T_PT ? P - p0 : (u64)SP24T_PT;
#pragma unroll
  for (int it = 0; it < (SP24T_TOTAL + SP24_COMPRESS_THREADS - 1) / SP24_COMPRESS_THREADS; it++) {
    u32 idx = tid + SP24_COMPRESS_THREADS * it;
    if (SP24T_TOTAL % SP24_COMPRESS_THREADS != 0 && idx >= (u32)SP24T_TOTAL) break;
    u32 row = idx / SP24T_W, c = idx % SP24T_W;
    u32 kind = row / SP24T_PT, pr = row % SP24T_PT;
    u64 n = (u64)n0 + 4u * c;
    if (pr >= prow || n >= N) continue;
    u64 p = (u64)p0 + pr;
    u8 *o = kind == 2u ? meta + ((u64)e * P + p) * N + n
                       : comp + ((u64)e * (K / 4) + 2 * p + kind) * N + n;
    u32 val = s[row][c];
    if ((N & 3u) == 0) {
      *reinterpret_cast<u32 *>(o) = val;
    } else {
      for (u32 j = 0; j < 4 && n + j < N; j++) o[j] = (u8)(val >> (8 * j));
    }
  }
}

// Next tile: digits (a, b, e) in bases (A, B, -) advanced by the grid size
// (da, db, de its digits).
__device__ __forceinline__ void sp24t_next(u32 &a, u32 &b, u32 &e, u32 A, u32 B, u32 da, u32 db, u32 de) {
  a += da;
  u32 c = a >= A ? 1u : 0u;
  if (c) a -= A;
  b += db + c;
  c = b >= B ? 1u : 0u;
  if (c) b -= B;
  e += de + c;
}

extern "C" __global__ void __launch_bounds__(SP24_COMPRESS_THREADS, 4)
sp24_compress_t(const uint2 *__restrict__ codes, u64 E, u64 N, u64 K,
                const u8 *__restrict__ table, u8 *__restrict__ comp,
                u8 *__restrict__ meta, u32 *__restrict__ bad) {
  __shared__ __align__(16) u8 s_tab[SP24_TABLE_BYTES];
  __shared__ u32 s_out[2][3 * SP24T_PT][SP24T_S];
  u32 tid = threadIdx.y * blockDim.x + threadIdx.x;  // block (32, 8)
  u32 lane = tid & 31u, w = tid >> 5;
  u32 q = lane % SP24T_PT, h = lane / SP24T_PT;
  u32 rbase = w * SP24T_RW + 4u * h, wbase = rbase / 4u;
  u64 P = K / 8;
  // tile t = (e * tn + b) * tp + a: pair tile a, row tile b, matrix e
  u32 tp = (u32)((P + SP24T_PT - 1) / SP24T_PT), tn = (u32)((N + SP24T_RT - 1) / SP24T_RT);
  if (tp == 0u || tn == 0u) return;
  u32 G = gridDim.x, bx = blockIdx.x;
  u32 a = bx % tp, rr = bx / tp, b = rr % tn, e = rr / tn;
  u32 da = G % tp, g2 = G / tp, db = g2 % tn, de = g2 / tn;
  u32 acc = 0u;
  bool live = (u64)e < E;
  uint2 cur[SP24T_NP];
  sp24t_load(cur, codes, N, P, live, e, b * SP24T_RT, a * SP24T_PT, rbase, q);
  load_table(s_tab, table, tid);
  __syncthreads();
  u32 buf = 0;
  while (live) {
    u32 n0 = b * SP24T_RT, p0 = a * SP24T_PT;
    u32 na = a, nb = b, ne = e;
    sp24t_next(na, nb, ne, tp, tn, da, db, de);
    bool nlive = (u64)ne < E;
    sp24t_compress(cur, s_tab, s_out[buf], q, wbase, acc);
    sp24t_load(cur, codes, N, P, nlive, ne, nb * SP24T_RT, na * SP24T_PT, rbase, q);
    // s_out[buf] is complete; s_out[buf ^ 1] was stored out before any
    // thread passed this barrier in the previous tile.
    __syncthreads();
    sp24t_store(s_out[buf], comp, meta, N, K, P, e, n0, p0, tid);
    buf ^= 1u;
    a = na;
    b = nb;
    e = ne;
    live = nlive;
  }
  if (acc & 0xF0F0F0F0u) atomicOr(bad, 1u);
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

// Fills out[256] with the E4M3 values through e4m3_hw_decode (fp8.cuh, the
// instruction fp8.cu certifies); mode 1 gives
// the dgx-vllm host table, which reads 0x7F/0xFF as +-480 instead of NaN.
// The Go side copies the result into c_fp8_lut. 0x7F/0xFF are the only
// entries that differ from e4m3_hw_decode, which sp24_gemv_v7 relies on.
extern "C" __global__ void sp24_fill_lut(float *__restrict__ out, u32 mode) {
  u32 c = threadIdx.x;
  if (c >= 256) return;
  float f = e4m3_hw_decode(c);
  if ((c & 0x7Fu) == 0x7Fu) f = mode == 1 ? ((c & 0x80u) ? -480.0f : 480.0f)
                                          : __uint_as_float(((c & 0x80u) << 24) | 0x7FC00000u);
  out[c] = f;
}

#define V7_THREADS 128  // 4 columns a thread: a block covers 512 columns
#define V7_TILE_K 64    // K per fp16 partial (16 comp rows, 8 meta rows)
#define V7_MAX_TILES 3  // 64-K tiles per block: 1 to 3 (Go: V7MaxTiles)
#ifndef V7_MIN_BLOCKS
#define V7_MIN_BLOCKS 4  // resident blocks per SM the register budget targets
#endif
// Floats of a tile's product table: 16 groups x 8 non-negative codes x 4
// positions (see v7_tile).
#define V7_PTAB (V7_TILE_K / 4 * 8 * 4)

// The value of non-negative E2M1 code q (0 to 7), by its bits: the
// product tables hold these codes only (a code's sign bit flips the
// looked-up product, see v7_product).
__device__ __forceinline__ float e2m1_magnitude(u32 q) {
  u32 e = (q >> 1) & 3u, m = q & 1u;
  return __uint_as_float(e ? (((e + 126u) << 23) | (m << 22)) : (m ? 0x3F000000u : 0u));
}

// Byte j of x, zero-extended (one PRMT).
__device__ __forceinline__ u32 byte_of(u32 x, int j) {
  return __byte_perm(x, 0u, 0x4440u + (u32)j);
}

// h4 unpacks 4 fp16 (little-endian in v) to float.
__device__ __forceinline__ void h4(uint2 v, float f[4]) {
  f[0] = __half2float(__ushort_as_half((u16)v.x));
  f[1] = __half2float(__ushort_as_half((u16)(v.x >> 16)));
  f[2] = __half2float(__ushort_as_half((u16)v.y));
  f[3] = __half2float(__ushort_as_half((u16)(v.y >> 16)));
}

// pack_h4 rounds 4 floats to fp16 (__float2half_rn), little-endian.
__device__ __forceinline__ uint2 pack_h4(const float (&v)[4]) {
  u32 lo = (u32)__half_as_ushort(__float2half_rn(v[0])) | (u32)__half_as_ushort(__float2half_rn(v[1])) << 16;
  u32 hi = (u32)__half_as_ushort(__float2half_rn(v[2])) | (u32)__half_as_ushort(__float2half_rn(v[3])) << 16;
  return make_uint2(lo, hi);
}

// Loads one 64-K tile for a thread's 4 columns: 16 comp rows, 8 meta rows
// and the scale row of each 8 K (k = tile start + 8 it; soff, the scale
// row's offset, and rem, k mod sk, carry it from tile to tile). SK16:
// sk == 16, so only the even steps load a row (the odd ones share it).
template <bool SK16>
__device__ __forceinline__ void v7_load(u32 (&c)[16], u32 (&m)[8], u32 (&s)[8], const u8 *B, const u8 *M,
                                        const u8 *S, u32 N, u32 &soff, u32 &rem, u32 sk) {
#pragma unroll
  for (int r = 0; r < 16; r++) c[r] = __ldg(reinterpret_cast<const unsigned int *>(B + (u32)r * N));
#pragma unroll
  for (int r = 0; r < 8; r++) m[r] = __ldg(reinterpret_cast<const unsigned int *>(M + (u32)r * N));
#pragma unroll
  for (int it = 0; it < 8; it++) {
    if (SK16) {
      if (it % 2 == 0) {
        s[it] = __ldg(reinterpret_cast<const unsigned int *>(S + soff));
        soff += N;
      }
    } else {
      s[it] = __ldg(reinterpret_cast<const unsigned int *>(S + soff));
      rem += 8u;
      if (rem == sk) {
        rem = 0u;
        soff += N;
      }
    }
  }
}

// v7_product is the kept value's product looked up at byte offset byte j
// of X in the group table G, which holds the 8 non-negative codes only:
// bit 8j+7 of S (the code's sign bit) flips the product, which is exact:
// e2m1(q | 8) * a == -(e2m1(q) * a), -0 included, and a NaN's sign never
// reaches an output (the adds and the fma return the canonical NaN). The
// sign reaches bit 31 by a shift (none for j = 3), which the compiler
// merges with the shift that formed S: fewer instructions than a PRMT
// sign-replicate per product (about 4% off 4096 x 11776 from DRAM).
__device__ __forceinline__ float v7_product(const char *G, u32 X, u32 S, int j) {
  const float v = *reinterpret_cast<const float *>(G + byte_of(X, j));
  return __uint_as_float(__float_as_uint(v) ^ ((S << (24 - 8 * j)) & 0x80000000u));
}

// One tile's 8 steps for 4 columns: acc = the tile's float sum per
// column. tab is the tile's product table, P[g][q][i] (byte offset 128 g
// + 16 q + 4 i) = e2m1(q) * a[4g + i] for the 8 non-negative codes q;
// sc_tab[s] = lut[s] * g. The 4 kept products of an 8-K step are added in
// dgx-vllm v7's order, p = P0, then p = P + p: the same value as fma(e, a,
// p), the product being exact, so one chain serves both fused settings.
// The 32 words of a group's table fill the 32 shared-memory banks once, so
// a warp's lookups never conflict; a table of all 16 codes (64 words)
// cost random weights 2.1 wavefronts per lookup (Nsight Compute), paid
// for by the sign's shift and LOP3 (constant benchmark bytes make every
// lookup a broadcast and hide the conflicts; docs/rationale/cuda.md has
// the figures for both).
template <bool FUSED, bool SK16>
__device__ __forceinline__ void v7_tile(const u32 (&c)[16], const u32 (&m)[8], const u32 (&s)[8],
                                        const float *tab, const float *sc_tab, float (&acc)[4]) {
  constexpr u32 QM = 0x70707070u;  // magnitude bits of the code, the offset's bits 4-6
  constexpr int GB = 128;          // bytes per group table
  float scv[4];
#pragma unroll
  for (int j = 0; j < 4; j++) acc[j] = 0.0f;
#pragma unroll
  for (int it = 0; it < 8; it++) {
    const u32 C0 = c[2 * it], C1 = c[2 * it + 1], Mb = m[it];
    float p[4];
    // byte j of Xi: (code & 7) << 4 | pos << 2, the byte offset of
    // P[code][pos] in its group, for the 4 kept values (group 2it: X0, X1;
    // 2it+1: X2, X3); bit 8j+7 of C0 << 4, C0, C1 << 4, C1 is the same
    // value's sign bit
    const u32 S0 = C0 << 4, S2 = C1 << 4;
    const u32 X0 = (S0 & QM) | ((Mb << 2) & 0x0C0C0C0Cu);
    const u32 X1 = (C0 & QM) | (Mb & 0x0C0C0C0Cu);
    const u32 X2 = (S2 & QM) | ((Mb >> 2) & 0x0C0C0C0Cu);
    const u32 X3 = (C1 & QM) | ((Mb >> 4) & 0x0C0C0C0Cu);
    const char *G0 = reinterpret_cast<const char *>(tab) + 2 * GB * it;  // group 2it
    const char *G1 = G0 + GB;                                            // group 2it+1
#pragma unroll
    for (int j = 0; j < 4; j++) {
      float q = v7_product(G0, X0, S0, j);
      q = __fadd_rn(v7_product(G0, X1, C0, j), q);
      q = __fadd_rn(v7_product(G1, X2, S2, j), q);
      q = __fadd_rn(v7_product(G1, X3, C1, j), q);
      p[j] = q;
    }
    if (!SK16 || it % 2 == 0) {
      const u32 Sb = s[it];
#pragma unroll
      for (int j = 0; j < 4; j++) scv[j] = sc_tab[byte_of(Sb, j)];
    }
#pragma unroll
    for (int j = 0; j < 4; j++)
      acc[j] = FUSED ? __fmaf_rn(p[j], scv[j], acc[j]) : __fadd_rn(__fmul_rn(p[j], scv[j]), acc[j]);
  }
}

// reduce_batch loads tiles t0 .. t0+B-1 (t0 a multiple of W), every load
// before any add, and adds tile t0+i into accumulator i % W.
template <int B, int W, class Add>
__device__ __forceinline__ void reduce_batch(const uint2 *q, u32 s, u32 t0, Add &add) {
  uint2 v[B];
#pragma unroll
  for (int i = 0; i < B; i++) v[i] = __ldcg(q + (u64)(t0 + i) * s);
#pragma unroll
  for (int i = 0; i < B; i++) add(v[i], t0 + i, i % W);
}

// reduce_tiles sums the kt fp16 partials of 4 adjacent columns (p: tile 0
// of those columns, tiles N apart) with W interleaved accumulators (W = 4:
// accumulator j takes tiles j, j+4, ...; W = 1: in tile order), then adds
// the accumulators in order. Loads go through L2 (__ldcg: other blocks
// wrote them; L1 is not coherent), 32 tiles at a time with no per-load
// condition, then 8 at a time, then one by one: with a condition on each
// load the compiler issued them a few at a time, and the reduction, which
// only the last block of a column range runs and nothing overlaps, took
// 2.3 us for 64 tiles (measured with per-block globaltimer stamps).
template <int W>
__device__ __forceinline__ void reduce_tiles(const __half *p, u32 N, u32 kt, float (&r)[4]) {
  float acc[W][4];
  const uint2 *q = reinterpret_cast<const uint2 *>(p);
  const u32 s = N / 4u;  // uint2 per tile
  // add takes tile t into accumulator j = t % W (j a constant after
  // unrolling, so acc stays in registers)
  auto add = [&](uint2 v, u32 t, int j) {
    float f[4];
    h4(v, f);
#pragma unroll
    for (int c = 0; c < 4; c++) acc[j][c] = t < (u32)W ? f[c] : __fadd_rn(acc[j][c], f[c]);
  };
  u32 t0 = 0;
  for (; t0 + 32u <= kt; t0 += 32u) reduce_batch<32, W>(q, s, t0, add);
  for (; t0 + 8u <= kt; t0 += 8u) reduce_batch<8, W>(q, s, t0, add);
  for (; t0 < kt; t0++) {
    const uint2 v = __ldcg(q + (u64)t0 * s);
    const u32 j = t0 % (u32)W;
    if (j == 0) add(v, t0, 0);
    else if (j == 1) add(v, t0, 1 % W);
    else if (j == 2) add(v, t0, 2 % W);
    else add(v, t0, 3 % W);
  }
#pragma unroll
  for (int c = 0; c < 4; c++) r[c] = acc[0][c];
#pragma unroll
  for (int j = 1; j < W; j++)
    if ((u32)j < kt)
#pragma unroll
      for (int c = 0; c < 4; c++) r[c] = __fadd_rn(r[c], acc[j][c]);
}

static_assert(V7_THREADS == 128 && V7_PTAB == 4 * V7_THREADS,
              "v7_body stages the 256 scale entries two per thread and a tile's product "
              "table in 4 passes of 128 entries");

// The kernel body for one (most tiles per block, fused, scale_k == 16)
// combination; see sp24_gemv_v7. The block computes tpb <= MAXT tiles.
template <int MAXT, bool FUSED, bool SK16>
__device__ __forceinline__ void v7_body(float *sh_tab, float *sh_sc, u32 *sh_flag,
                                        const u8 *__restrict__ comp, const u8 *__restrict__ meta,
                                        const u8 *__restrict__ scales, const float *__restrict__ global,
                                        const __half *__restrict__ act, u64 act_stride,
                                        const int *__restrict__ experts, u64 K, u64 N, u64 scale_k,
                                        u64 width, __half *__restrict__ partials,
                                        u32 *__restrict__ counters, __half *__restrict__ y, u32 tpb) {
  const u32 tid = threadIdx.x, a = blockIdx.z;
  const u32 N32 = (u32)N, K32 = (u32)K, sk = (u32)scale_k, kt = K32 / V7_TILE_K;
  const u32 t_begin = blockIdx.y * tpb;
  const u32 nt = t_begin >= kt ? 0u : (kt - t_begin < tpb ? kt - t_begin : tpb);
  const u32 n0 = (blockIdx.x * V7_THREADS + tid) * 4u;
  const bool live = n0 < N32;
  // Load order: the expert first (the weight addresses wait for it), the
  // activations while it is in flight, then the first tile's weights;
  // the shared tables are built while those are in flight. With the
  // weights first, the activation loads queued behind them and the tables
  // waited for DRAM. 4096 x 11776 from DRAM (standalone harness, one
  // process): weights first 16.2 us, activations first 15.8, the expert
  // then the activations 15.4.
  const u32 e = (u32)experts[a];
  // Product tables: entry w = tid + 128 r is tile w / 512, group (w / 32)
  // % 16, code (tid / 4) % 8, position tid % 4.
  const __half *arow = act + (u64)a * act_stride;
  constexpr int R = MAXT * V7_PTAB / V7_THREADS;
  __half ah[R];
#pragma unroll
  for (int r = 0; r < R; r++) {
    const u32 w = tid + V7_THREADS * (u32)r, tt = w >> 9;
    ah[r] = tt < nt ? arow[(t_begin + tt) * V7_TILE_K + ((w >> 5) & 15u) * 4u + (w & 3u)] : __ushort_as_half(0);
  }
  const u8 *B = comp + ((u64)e * (K32 / 4u) + (u64)t_begin * 16u) * N + n0;
  const u8 *M = meta + ((u64)e * (K32 / 8u) + (u64)t_begin * 8u) * N + n0;
  const u8 *S = scales + (u64)e * (K32 / sk) * N + n0;
  const u32 k_base = t_begin * V7_TILE_K;
  const u32 srow = k_base / sk;
  u32 rem = k_base - srow * sk;
  u32 soff = srow * N32;
  u32 c[16], m[8], s[8];
  if (live && nt > 0u) v7_load<SK16>(c, m, s, B, M, S, N32, soff, rem, sk);
  const float ev = e2m1_magnitude((tid >> 2) & 7u);
#pragma unroll
  for (int r = 0; r < R; r++) sh_tab[tid + V7_THREADS * r] = __fmul_rn(ev, __half2float(ah[r]));
  // Scale table, lut[s] * global[e]. lut is decoded in registers (constant
  // memory serialises the 32 different addresses of a warp); only the two
  // entries sp24_fill_lut overrides come from c_fp8_lut (uniform reads).
  const float g = global[e];
  const float l7f = c_fp8_lut[0x7F], lff = c_fp8_lut[0xFF];
  float f0 = e4m3_hw_decode(tid), f1 = e4m3_hw_decode(tid + 128u);
  if (tid == 0x7Fu) {
    f0 = l7f;
    f1 = lff;
  }
  sh_sc[tid] = __fmul_rn(f0, g);
  sh_sc[tid + 128u] = __fmul_rn(f1, g);
  __syncthreads();
  if (live) {
    __half *P = partials + ((u64)a * kt + t_begin) * N + n0;
#pragma unroll
    for (int tt = 0; tt < MAXT; tt++) {
      if ((u32)tt >= nt) break;
      // the next tile's loads go out before this tile's math
      u32 c2[16], m2[8], s2[8];
      if (tt + 1 < MAXT && (u32)tt + 1 < nt) {
        B += 16u * N32;
        M += 8u * N32;
        v7_load<SK16>(c2, m2, s2, B, M, S, N32, soff, rem, sk);
      }
      float acc[4];
      v7_tile<FUSED, SK16>(c, m, s, sh_tab + tt * V7_PTAB, sh_sc, acc);
      *reinterpret_cast<uint2 *>(P + (u64)tt * N) = pack_h4(acc);
      if (tt + 1 < MAXT) {
#pragma unroll
        for (int r = 0; r < 16; r++) c[r] = c2[r];
#pragma unroll
        for (int r = 0; r < 8; r++) {
          m[r] = m2[r];
          s[r] = s2[r];
        }
      }
    }
  }
  // The last of the gridDim.y blocks of this column range to arrive
  // reduces it. The barrier orders every thread's partial stores before
  // thread 0's count, an acq_rel atomic: its release publishes them (the
  // barrier makes them precede it, as in cooperative groups' grid sync)
  // and its acquire orders the reducer's loads after the other blocks'
  // releases (the block's other threads through the second barrier). One
  // fence.acq_rel instead of a __threadfence (fence.sc) in every thread.
  __syncthreads();
  u32 *counter = counters + a * gridDim.x + blockIdx.x;
  if (tid == 0) {
    u32 before;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(before) : "l"(counter) : "memory");
    *sh_flag = before == gridDim.y - 1u ? 1u : 0u;
  }
  __syncthreads();
  if (!*sh_flag) return;
  if (tid == 0) *counter = 0u;  // ready for the next launch
  if (!live) return;
  float r[4];
  const __half *p = partials + (u64)a * kt * N + n0;
  if (width == 4) reduce_tiles<4>(p, N32, kt, r);
  else reduce_tiles<1>(p, N32, kt, r);
  *reinterpret_cast<uint2 *>(y + (u64)a * N + n0) = pack_h4(r);
}

// comp [E][K/4][N], meta [E][K/8][N], scales [E][K/scale_k][N] (E4M3),
// global [E] f32, act fp16 [A][K] (act_stride K) or [K] (act_stride 0),
// experts [A] i32; partials fp16 [A][K/64][N]; counters u32
// [A][ceil(N/512)], zero before the first launch and left zero by every
// launch; y fp16 [A][N]. width is 4 or 1; scale_k a multiple of 8. Grid
// (ceil(N/512), ceil(K/64/T), A) for T tiles per block, 1 to
// V7_MAX_TILES (a larger T traps). Offsets within an expert's
// matrices are 32-bit: N < 2^28 and (K/scale_k)*N < 2^32 (the Go side
// checks).
#define V7_ARGS                                                                                    \
  sh_tab, sh_sc, &sh_flag, comp, meta, scales, global, act, act_stride, experts, K, N, scale_k, width, \
      partials, counters, y, tpb
extern "C" __global__ void __launch_bounds__(V7_THREADS, V7_MIN_BLOCKS)
sp24_gemv_v7(const u8 *__restrict__ comp, const u8 *__restrict__ meta,
             const u8 *__restrict__ scales, const float *__restrict__ global,
             const __half *__restrict__ act, u64 act_stride,
             const int *__restrict__ experts, u64 K, u64 N, u64 scale_k,
             u32 fused, u64 width, __half *__restrict__ partials,
             u32 *__restrict__ counters, __half *__restrict__ y) {
  __shared__ __align__(16) float sh_tab[V7_MAX_TILES * V7_PTAB];
  __shared__ float sh_sc[256];
  __shared__ u32 sh_flag;
  // Tiles per block: the grid's y extent is ceil(kt / T) for the T (1 to
  // V7_MAX_TILES) the Go side picked, so T' = ceil(kt / gridDim.y) <= T
  // covers every tile. One tile per block has its own body, its tables
  // and loads sized for one tile (the MoE step from DRAM: 8.4 us when it
  // ran the 3-tile body, 7.7 us); 2 and 3 tiles share the 3-tile body.
  const u32 kt = (u32)K / V7_TILE_K, tpb = (kt + gridDim.y - 1u) / gridDim.y;
  if (tpb > (u32)V7_MAX_TILES) __trap();
#define V7_CALL(T)                                         \
  if (scale_k == 16) {                                     \
    if (fused) v7_body<T, true, true>(V7_ARGS);            \
    else v7_body<T, false, true>(V7_ARGS);                 \
  } else {                                                 \
    if (fused) v7_body<T, true, false>(V7_ARGS);           \
    else v7_body<T, false, false>(V7_ARGS);                \
  }
  if (tpb <= 1u) {
    V7_CALL(1)
  } else {
    V7_CALL(3)
  }
#undef V7_CALL
}
#undef V7_ARGS
