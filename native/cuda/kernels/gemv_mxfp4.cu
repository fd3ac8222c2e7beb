// llama.cpp MXFP4 x Q8_1 GEMV with __dp4a (ggml-cuda mmvq.cu driving
// vecdotq.cuh vec_dot_mxfp4_q8_1; shared/seeds/llamacpp-mxfp4-dp4a-gemv.md),
// to refimpl/gemv MXFP4Q81GEMV under the schedule the kernel declares
// (native/cuda/gemv.go): MMVQ when fused, MMVQNoFMA otherwise. Also the
// two llama.cpp quantizers feeding it: block_q8_1 (activations) and
// block_mxfp4 (weights).
//
// w: N rows of K/32 block_mxfp4 (17 bytes: e, qs[16]; qs[j] low nibble =
// element j, high nibble = element j+16). act: K/32 block_q8_1 (36 bytes:
// fp16 d, fp16 s, int8 qs[32]).
//
// Float schedule. One block of 128 threads (4 warps) per `rows`
// consecutive rows (1..MMVQ_MAX_ROWS), grid ceil(N/rows); every row is
// computed the same way. Half-block h of block b is group g = 2b + h (qs
// bytes 8h..8h+7 with both nibbles: elements 8h..8h+7 and 8h+16..8h+23);
// thread t takes groups t, t+128, ... in order:
//   sumi = Σ kvalues[code] * q8   (four __dp4a per group: exact int32, so
//          any order of the 16 products gives the same value)
//   d    = __fmul_rn(2^(e-128), d8)  (E8M0(e) * 0.5 exact; e = 0xFF NaN)
//   acc  = __fmaf_rn(d, (float)sumi, acc)   (fused; else mul then add)
// then, per row, the lane values of warps 0, 1, 2, 3 are added in that
// order (__fadd_rn) and the sum is reduced with __shfl_xor_sync at offsets
// 16, 8, 4, 2, 1. Warp w reduces row w, and with more than 4 rows also row
// w + 4 (each in exactly that order), so the rows' reductions run side by
// side.
//
// Speed (the float schedule above is unaffected): a 17-byte block puts the
// 8 qs bytes of a group at any alignment, so they are assembled from
// aligned 32-bit loads with __funnelshift_r rather than byte loads. The
// code -> int8 lookup has llama.cpp's get_int_from_table_16 shape: the 8
// codes of a qs word take 6 __byte_perm (the table lives in the
// immediates; indexed constant-memory loads serialise when the lanes of a
// warp read different entries), which yields the int8 values in the
// word's nibble order (elements j, j+16, j+1, j+17, ...); the group's
// activation bytes are permuted once to that order (4 __byte_perm, shared
// by all the block's rows). The previous kernel split every word into its
// low and high nibbles and looked those up 4 codes at a time (about 11
// operations per 4 codes), for every row.
// A block takes up to 8 rows (MMVQRows in schedule.go: 4), sharing the
// activation loads and the per-block overhead; a thread issues the loads
// of all its rows for a group before their arithmetic, and the block asks
// L2 for its whole row range at its start (mmvq_prefetch_l2). Measured on
// an H100 (K = 4096, N = 11776; l2warm: the same weights every launch,
// L2-resident; dram: weights rotated through 160 MB): the previous kernel
// (4 rows, 4 codes per lookup) 17.1 us l2warm; this one 15.7 us l2warm and
// 18.8 us dram with 4 rows (8 rows: 16.0 and 21.5 us), outputs
// bit-identical. Measured slower and not kept: staging the block's or the
// warp's weight bytes in shared memory with cp.async (17.3-21 us), issuing
// every round's loads before any math (registers: 28.7 us dram), L2 size
// hints on the loads, a persistent grid, register caps (spills).
#include "common.cuh"
#include <cuda_fp16.h>

#define MMVQ_MAX_ROWS 8

// ggml's GGML_E8M0_TO_FP32_HALF: 2^(e-128) from bits (e >= 2 normal, e =
// 1, 0 subnormal), with no NaN case: the block_mxfp4 quantizer's d.
__device__ __forceinline__ float e8m0_half(u32 e) {
  return __uint_as_float(e < 2u ? (0x00200000u << e) : ((e - 1u) << 23));
}

// The GEMV's block scale: e8m0_half, and e = 0xFF the NaN that E8M0
// reserves it for.
__device__ __forceinline__ float mmvq_e8m0_half(u32 e) {
  return e == 0xFFu ? __uint_as_float(0x7FC00000u) : e8m0_half(e);
}

// mmvq_lut8: the 8 codes of q (nibble i = code i) to llama.cpp's
// kvalues_mxfp4 {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}
// as int8: x = values of nibbles 0..3 (bytes 0..3), y = nibbles 4..7.
// __byte_perm picks byte (selector & 7) of {hi, lo}: the magnitude and
// negated tables are looked up with the codes masked to 3 bits, and the
// sign (code bit 3, moved to selector bit 2) picks the negated byte
// through the third __byte_perm.
__device__ __forceinline__ void mmvq_lut8(u32 q, u32 &x, u32 &y) {
  const u32 qm = q & 0x77777777u;
  const u32 sel = ((q >> 1) & 0x44444444u) | 0x32103210u;
  const u32 lo0 = __byte_perm(0x03020100u, 0x0C080604u, qm);
  const u32 hi0 = __byte_perm(0xFDFEFF00u, 0xF4F8FAFCu, qm);
  const u32 lo1 = __byte_perm(0x03020100u, 0x0C080604u, qm >> 16);
  const u32 hi1 = __byte_perm(0xFDFEFF00u, 0xF4F8FAFCu, qm >> 16);
  x = __byte_perm(lo0, hi0, sel);
  y = __byte_perm(lo1, hi1, sel >> 16);
}

// Activations of group (b, h), bytes permuted to the lookup's order: for a
// qs word whose nibbles are elements (j, j+16, j+1, j+17, j+2, ...), A0/A1
// pair with word 0 (elements 8h..8h+3 and +16), A2/A3 with word 1.
struct MmvqAct {
  u32 A0, A1, A2, A3;
  float d8;
};

__device__ __forceinline__ MmvqAct mmvq_act(const u8 *__restrict__ act, u64 b, u32 h) {
  const int *q8 = reinterpret_cast<const int *>(act + b * 36 + 4 + 8 * h);
  const u32 a0 = (u32)__ldg(q8), a1 = (u32)__ldg(q8 + 4), a2 = (u32)__ldg(q8 + 1), a3 = (u32)__ldg(q8 + 5);
  MmvqAct r;
  r.A0 = __byte_perm(a0, a1, 0x5140u);
  r.A1 = __byte_perm(a0, a1, 0x7362u);
  r.A2 = __byte_perm(a2, a3, 0x5140u);
  r.A3 = __byte_perm(a2, a3, 0x7362u);
  r.d8 = __half2float(__ldg(reinterpret_cast<const __half *>(act + b * 36)));
  return r;
}

// Exact int32 dot product of the 16 codes of q (8 qs bytes) with the
// group's q8 values.
__device__ __forceinline__ int mmvq_sumi(uint2 q, const MmvqAct &a) {
  u32 x0, y0, x1, y1;
  mmvq_lut8(q.x, x0, y0);
  mmvq_lut8(q.y, x1, y1);
  int s = __dp4a((int)x0, (int)a.A0, 0);
  s = __dp4a((int)y0, (int)a.A1, s);
  s = __dp4a((int)x1, (int)a.A2, s);
  return __dp4a((int)y1, (int)a.A3, s);
}

// One group's step of a row's accumulator (the declared schedule).
__device__ __forceinline__ float mmvq_step(float acc, int sumi, u32 e, float d8, u32 fused) {
  const float d = __fmul_rn(mmvq_e8m0_half(e), d8);
  return fused ? __fmaf_rn(d, (float)sumi, acc) : __fadd_rn(__fmul_rn(d, (float)sumi), acc);
}

// load8 reads the 8 bytes at p (any alignment) as two little-endian words
// from aligned loads. The third aligned word is read only when p is
// unaligned, and then it holds a byte of the 8, so no load leaves the
// 8-byte range's aligned cover.
__device__ __forceinline__ uint2 load8(const u8 *p) {
  unsigned long long a = (unsigned long long)p;
  const u32 *w = reinterpret_cast<const u32 *>(a & ~3ull);
  u32 sh = (u32)(a & 3u) * 8u;
  u32 w0 = __ldg(w), w1 = __ldg(w + 1), w2 = sh ? __ldg(w + 2) : 0u;
  return make_uint2(__funnelshift_r(w0, w1, sh), __funnelshift_r(w1, w2, sh));
}

// mmvq_prefetch_l2 asks L2 for every 128-byte line holding a byte of
// w[start, end), the block's rows (contiguous), one prefetch per line
// spread over the block's threads, each address inside the range. A
// thread takes its groups round by round (t, t + 128, ...), and a round's
// loads are issued only after the previous round's math; with the whole
// row range requested from DRAM at the block's start, the later rounds
// find their bytes in L2. Measured on an H100 (K=4096, N=11776, 4 rows
// per block): weights from DRAM 21.0 -> 18.8 us, L2-resident 16.0 -> 15.7
// us. (Issuing every round's loads before any math instead needs about 90
// registers, halves the resident blocks and was slower: 28.7 us.)
__device__ __forceinline__ void mmvq_prefetch_l2(const u8 *w, u64 start, u64 end) {
  for (u64 o = (start & ~127ull) + 128ull * threadIdx.x; o < end; o += 128ull * blockDim.x)
    asm volatile("prefetch.global.L2 [%0];" ::"l"(w + (o < start ? start : o)));
}

// rows: 1..MMVQ_MAX_ROWS (larger values are capped: the block computes
// its first MMVQ_MAX_ROWS rows only, so the Go side never passes more).
extern "C" __global__ void __launch_bounds__(128)
gemv_mxfp4_q8_1(const u8 *__restrict__ w, const u8 *__restrict__ act, u64 N,
                u64 nb, u32 fused, u32 rows, float *__restrict__ y) {
  __shared__ float sh[MMVQ_MAX_ROWS * 4 * 32];
  const u32 t = threadIdx.x;
  const u32 rcap = rows < (u32)MMVQ_MAX_ROWS ? rows : (u32)MMVQ_MAX_ROWS;
  const u64 row0 = (u64)blockIdx.x * rows;
  if (row0 >= N) return;  // uniform over the block
  const u32 nrows = (N - row0) < (u64)rcap ? (u32)(N - row0) : rcap;
  mmvq_prefetch_l2(w, row0 * nb * 17ull, (row0 + nrows) * nb * 17ull);
  float acc[MMVQ_MAX_ROWS];
#pragma unroll
  for (int r = 0; r < MMVQ_MAX_ROWS; r++) acc[r] = 0.0f;
  for (u64 g = t; g < 2 * nb; g += 128) {
    const u64 b = g >> 1;
    const u32 h = (u32)(g & 1u);
    const MmvqAct a = mmvq_act(act, b, h);
    uint2 q[MMVQ_MAX_ROWS];
    u32 e[MMVQ_MAX_ROWS];
#pragma unroll
    for (int r = 0; r < MMVQ_MAX_ROWS; r++) {
      if ((u32)r >= nrows) break;
      const u8 *blk = w + ((row0 + r) * nb + b) * 17;
      q[r] = load8(blk + 1 + 8 * h);
      e[r] = __ldg(blk);
    }
#pragma unroll
    for (int r = 0; r < MMVQ_MAX_ROWS; r++) {
      if ((u32)r >= nrows) break;
      acc[r] = mmvq_step(acc[r], mmvq_sumi(q[r], a), e[r], a.d8, fused);
    }
  }
  // Row r is reduced by warp r % 4 in the declared order: its lane values
  // from warps 0, 1, 2, 3 added in that order, then the xor butterfly.
  const u32 warp = t >> 5, lane = t & 31u;
#pragma unroll
  for (int r = 0; r < MMVQ_MAX_ROWS; r++) sh[(r * 4 + warp) * 32 + lane] = acc[r];
  __syncthreads();
#pragma unroll
  for (int rr = 0; rr < MMVQ_MAX_ROWS; rr += 4) {
    const u32 r = (u32)rr + warp;
    if (r < nrows) {
      float v = sh[(r * 4 + 0) * 32 + lane];
      v = __fadd_rn(v, sh[(r * 4 + 1) * 32 + lane]);
      v = __fadd_rn(v, sh[(r * 4 + 2) * 32 + lane]);
      v = __fadd_rn(v, sh[(r * 4 + 3) * 32 + lane]);
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) v = __fadd_rn(v, __shfl_xor_sync(0xFFFFFFFFu, v, off));
      if (lane == 0) y[row0 + r] = v;
    }
  }
}

// Both llama.cpp quantizers below: one warp per 32-element block, the
// blocks taken grid-stride; WARP_BLOCKS(b) loops b over this warp's blocks.
#define WARP_BLOCKS(b, nblocks)                                               \
  for (u64 b = (u64)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;        \
       b < (nblocks); b += (u64)gridDim.x * (blockDim.x / 32))

// warp_amax is the largest |v| over the warp's lanes, NaN skipped (fmaxf
// returns the other operand; 0 when every lane is NaN). Max is exact, so
// the shuffle order does not matter.
__device__ __forceinline__ float warp_amax(float v) {
  float amax = fabsf(v);
  if (amax != amax) amax = 0.0f;
#pragma unroll
  for (int off = 16; off > 0; off >>= 1)
    amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, off));
  return amax;
}

// Q8_1 activation quantize as llama.cpp's CUDA quantize_q8_1 computes it
// (refimpl/ggml profile "cuda"): one warp per 32-element block, lane j owns
// x[j]:
//   amax = max |x| (NaN ignored), by __shfl_xor_sync max (exact)
//   sum  = Σ x by __shfl_xor_sync adds at offsets 16, 8, 4, 2, 1 (__fadd_rn;
//          the tree the reference's Q8_1CUDA evaluates)
//   d    = __fdiv_rn(amax, 127)
//   q    = amax == 0 ? 0 : (int8)(int)roundf(__fdiv_rn(x, d))  (round half
//          away; out-of-range and NaN as the saturating cvt.rzi.s32.f32,
//          then the low byte)
//   block = fp16 d, fp16 sum (__float2half_rn: NaN -> 0x7FFF), int8 q[32]
extern "C" __global__ void q8_1_quantize(const float *__restrict__ x, u64 nblocks,
                                         u8 *__restrict__ out) {
  u32 lane = threadIdx.x % 32;
  WARP_BLOCKS(b, nblocks) {
    float v = x[b * 32 + lane];
    float amax = warp_amax(v);
    float sum = v;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
      sum = __fadd_rn(sum, __shfl_xor_sync(0xFFFFFFFFu, sum, off));
    float d = __fdiv_rn(amax, 127.0f);
    int q = amax == 0.0f ? 0 : (int)roundf(__fdiv_rn(v, d));
    u8 *blk = out + b * 36;
    blk[4 + lane] = (u8)(q & 0xFF);
    if (lane == 0) {
      // One 32-bit store of d | s << 16 (blocks are 36 bytes, so 4-byte
      // aligned). Storing the two fp16 byte by byte from their 16-bit
      // registers lost the low byte of fp16-subnormal results on an H100
      // (CUDA 13.0 driver JIT; TestGGMLQuantizeScaleSweep shows it).
      u32 db = __half_as_ushort(__float2half_rn(d));
      u32 sb = __half_as_ushort(__float2half_rn(sum));
      *reinterpret_cast<u32 *>(blk) = db | sb << 16;
    }
  }
}

// llama.cpp block_mxfp4 quantize, quantize_row_mxfp4_ref (ggml/src/
// ggml-quants.c) as refimpl/ggml QuantizeMXFP4 models it with the options
// log2 "exact" and cast "x86-64" (the kernel claims exactly those):
//   amax = max |x| over the block, NaN skipped (the C loop
//          "if (amax < fabsf(v)) amax = fabsf(v)"; fmaxf also skips NaN)
//   e    = amax > 0 ? (uint8_t)(floor(log2 amax) - 2 + 127) : 0, where
//          floor(log2 amax) is the exact exponent of amax's bits (log2
//          "exact": a GPU log2f is not correctly rounded, so the C
//          expression's log2f rounding is not what a kernel computes) and
//          the cast is x86-64's: the low byte of the int32 (negative for
//          amax < 2^-125), and 0 for amax = +Inf (cvttss2si's 0x80000000)
//   d    = 2^(e-128) (GGML_E8M0_TO_FP32_HALF, from bits; subnormal for
//          e < 2)
//   code = first i minimising fabsf(__fsub_rn(kvalues[i] * d, x)) under
//          strict <; the products are exact, NaN and +-Inf x give 0
// One warp per block, lane j owns x[j]; lanes j < 16 write qs[j] = code(j)
// | code(j + 16) << 4, lane 0 writes e.
__constant__ float c_kvalues_mxfp4_f[16] = {0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 6.0f, 8.0f, 12.0f,
                                            0.0f, -1.0f, -2.0f, -3.0f, -4.0f, -6.0f, -8.0f, -12.0f};

extern "C" __global__ void ggml_mxfp4_quantize(const float *__restrict__ x, u64 nblocks,
                                               u8 *__restrict__ out) {
  u32 lane = threadIdx.x % 32;
  WARP_BLOCKS(b, nblocks) {
    float v = x[b * 32 + lane];
    float amax = warp_amax(v);
    u32 e = 0;
    u32 a = __float_as_uint(amax);
    if (a == 0x7F800000u) {
      e = 0;  // (uint8_t)(+Inf) on x86-64: cvttss2si gives 0x80000000
    } else if (a != 0) {
      int ex = (int)(a >> 23) - 127;
      if (a < (1u << 23)) ex = (31 - __clz(a)) - 149;  // subnormal
      e = (u32)(ex - 2 + 127) & 0xFFu;
    }
    float d = e8m0_half(e);
    u32 best = 0;
    float best_err = fabsf(__fsub_rn(__fmul_rn(c_kvalues_mxfp4_f[0], d), v));
#pragma unroll
    for (int i = 1; i < 16; i++) {
      float err = fabsf(__fsub_rn(__fmul_rn(c_kvalues_mxfp4_f[i], d), v));
      if (err < best_err) { best = (u32)i; best_err = err; }
    }
    u32 hi = __shfl_down_sync(0xFFFFFFFFu, best, 16);
    u8 *blk = out + b * 17;
    if (lane < 16) blk[1 + lane] = (u8)(best | hi << 4);
    if (lane == 0) blk[0] = (u8)e;
  }
}
