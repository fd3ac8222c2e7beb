// llama.cpp MXFP4 x Q8_1 GEMV with __dp4a (ggml-cuda mmvq.cu driving
// vecdotq.cuh vec_dot_mxfp4_q8_1, ggml-org/ggml d99724f src/ggml-cuda/),
// to refimpl/gemv MXFP4Q81GEMV under the schedule the kernel declares
// (backends/cuda/gemv.go): MMVQ when fused, MMVQNoFMA otherwise. Also the
// two llama.cpp quantizers feeding it: block_q8_1 (activations) and
// block_mxfp4 (weights).
//
// w: N rows of K/32 block_mxfp4 (17 bytes: e, qs[16]; qs[j] low nibble =
// element j, high nibble = element j+16). act: K/32 block_q8_1 (36 bytes:
// fp16 d, fp16 s, int8 qs[32]).
//
// Float schedule (llama.cpp's, declared as gemv.MMVQ). `rows` consecutive
// rows per block of 128 threads (1..MMVQ_MAX_ROWS), grid ceil(N/rows);
// every row is computed the same way. Half-block h of block b is group
// g = 2b + h (qs bytes 8h..8h+7 with both nibbles: elements 8h..8h+7 and
// 8h+16..8h+23); lane t (0..127) takes groups t, t+128, ... in order:
//   sumi = Σ kvalues[code] * q8   (__dp4a: exact int32, so any order of
//          the 16 products gives the same value)
//   d    = __fmul_rn(2^(e-128), d8)  (E8M0(e) * 0.5 exact; e = 0xFF NaN)
//   acc  = __fmaf_rn(d, (float)sumi, acc)   (fused; else mul then add)
// then, per row, the values of lanes 32w + i for w = 0, 1, 2, 3 are added
// in that order (__fadd_rn) and the sum is reduced with __shfl_xor_sync
// at offsets 16, 8, 4, 2, 1. Warp w reduces row w.
//
// Which thread runs a lane's chain is free (only the chains and the
// reduction order are declared), and this kernel uses that:
//  - Lanes 2u and 2u+1 take the two halves of the same block b in every
//    round (groups 2b, 2b+1 with b = u, u+64, ...), so one thread u (0..63)
//    runs both chains: it loads the block's 17 bytes once, as 5 aligned
//    words (each holds a byte of the block), takes e with one __byte_perm
//    and the 4 qs words with funnel shifts (the byte offset of block
//    u + 64i in its word does not change with i: 64 blocks are 1088 = 4 *
//    272 bytes), and computes d once for both halves (they share e and
//    the q8_1 block). 64 threads cover a row; the 128 threads are two row
//    slots (threads 0-63: rows 0 and 2, threads 64-127: rows 1 and 3).
//  - The block stages its activations in shared memory once per 128
//    q8_1 blocks, already permuted to the lookup's byte order, so a
//    thread's round reads them with 3 16-byte shared loads instead of 9
//    scattered global loads and 8 __byte_perm.
//  - The code -> int8 lookup is two PRMT per 4 codes using PRMT's
//    sign-replicate selector bit (mmvq_dot8), and (float)sumi comes from
//    a __dp4a chain started at the float bits of 1.5 * 2^23 and one exact
//    subtraction (mmvq_sumf) instead of an int-to-float conversion.
//  - The block asks L2 for its whole row range at its start
//    (mmvq_prefetch_l2), and a round's weight loads are issued before the
//    previous round's arithmetic.
// The measurements behind these, and the variants measured and not kept,
// are in docs/rationale/cuda.md.
#include "common.cuh"
#include <cuda_fp16.h>

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

// prmt is PTX prmt.b32 with all four bits of each selector nibble: bit 3
// replicates the sign bit of the byte bits 0-2 pick (0x00 or 0xFF).
// __byte_perm is documented on the low three bits only.
__device__ __forceinline__ u32 prmt(u32 a, u32 b, u32 sel) {
  u32 d;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(sel));
  return d;
}

#define MMVQ_MAX_ROWS 4        // rows per block at most: 2 row slots x 2 rows per thread
#define MMVQ_ACT_CHUNK 128u    // q8_1 blocks of activations staged at a time (a multiple of 64)

// mmvq_dot8 returns s + Σ kvalues_mxfp4[code] * act over the 8 codes of q
// (nibble i = code i; alo pairs with nibbles 0..3, ahi with 4..7, each
// byte the activation of that nibble's element). kvalues[c] = T[c] +
// U[c ^ 8] for every code c:
//   T = {0, 2, 3, 4, 5, 7, 9, 13} is looked up by c; for c >= 8 (selector
//       bit 3) it yields the sign of a positive byte, 0;
//   U = {0, -1, -2, -3, -4, -6, -8, -12} is looked up by c ^ 8: U[c - 8]
//       = kvalues[c] for c >= 8; for c < 8 it yields the sign of U[c],
//       0 for c = 0 and -1 for c = 1..7, where T[c] = kvalues[c] + 1.
// Two __dp4a per 4 codes (FMA pipe) and two PRMT, where llama.cpp's
// get_int_from_table_16 shape takes one __dp4a and three PRMT plus the
// selector arithmetic (ALU pipe, half rate).
__device__ __forceinline__ int mmvq_dot8(u32 q, u32 alo, u32 ahi, int s) {
  const u32 x = q ^ 0x88888888u;
  s = __dp4a((int)prmt(0x04030200u, 0x0D090705u, q), (int)alo, s);
  s = __dp4a((int)prmt(0xFDFEFF00u, 0xF4F8FAFCu, x), (int)alo, s);
  s = __dp4a((int)prmt(0x04030200u, 0x0D090705u, q >> 16), (int)ahi, s);
  return __dp4a((int)prmt(0xFDFEFF00u, 0xF4F8FAFCu, x >> 16), (int)ahi, s);
}

// mmvq_sumf is (float)sumi for the 16 codes of qs words q0, q1 and the
// group's permuted activations a (A0..A3). The __dp4a chain starts at
// 0x4B400000, the bits of 1.5 * 2^23, so with |sumi| <= 16 * 12 * 128 <
// 2^22 the chain's int32 is the float 1.5 * 2^23 + sumi, exactly; one
// exact subtraction gives the same float as the int-to-float conversion
// (+0 for sumi = 0).
__device__ __forceinline__ float mmvq_sumf(u32 q0, u32 q1, uint4 a) {
  int s = mmvq_dot8(q0, a.x, a.y, 0x4B400000);
  s = mmvq_dot8(q1, a.z, a.w, s);
  return __fsub_rn(__int_as_float(s), 12582912.0f);
}

// One group's step of a lane's accumulator (the declared schedule).
__device__ __forceinline__ float mmvq_acc(float acc, float d, float sumf, u32 fused) {
  return fused ? __fmaf_rn(d, sumf, acc) : __fadd_rn(__fmul_rn(d, sumf), acc);
}

// mmvq_stage_act writes q8_1 blocks c0 .. c0+cn-1 of act into sa, 3 uint4
// per block: half 0's A0..A3, half 1's A0..A3, d8 (as float bits). A
// group's activation bytes are permuted to the lookup's nibble order:
// for a qs word whose nibbles are elements (j, j+16, j+1, j+17, ...),
// A0/A1 pair with the half's word 0 (elements 8h..8h+3 and +16), A2/A3
// with word 1.
__device__ __forceinline__ void mmvq_stage_act(const u8 *__restrict__ act, u64 c0, u32 cn, uint4 *sa) {
  for (u32 k = threadIdx.x; k < cn; k += blockDim.x) {
    const u32 *ap = reinterpret_cast<const u32 *>(act + (c0 + k) * 36ull);
    u32 q[8];
#pragma unroll
    for (int m = 0; m < 8; m++) q[m] = __ldg(ap + 1 + m);
    sa[3 * k + 0] = make_uint4(__byte_perm(q[0], q[4], 0x5140u), __byte_perm(q[0], q[4], 0x7362u),
                               __byte_perm(q[1], q[5], 0x5140u), __byte_perm(q[1], q[5], 0x7362u));
    sa[3 * k + 1] = make_uint4(__byte_perm(q[2], q[6], 0x5140u), __byte_perm(q[2], q[6], 0x7362u),
                               __byte_perm(q[3], q[7], 0x5140u), __byte_perm(q[3], q[7], 0x7362u));
    const float d8 = __half2float(__ushort_as_half((u16)(__ldg(ap) & 0xFFFFu)));
    sa[3 * k + 2] = make_uint4(__float_as_uint(d8), 0u, 0u, 0u);
  }
}

// mmvq_prefetch_l2 asks L2 for every 128-byte line holding a byte of
// w[start, end), the block's rows (contiguous), one prefetch per line
// spread over the block's threads, each address inside the range, so that
// the later rounds' loads find their bytes in L2 (from DRAM, about 10%
// off the GEMV's time; docs/rationale/cuda.md).
__device__ __forceinline__ void mmvq_prefetch_l2(const u8 *w, u64 start, u64 end) {
  for (u64 o = (start & ~127ull) + 128ull * threadIdx.x; o < end; o += 128ull * blockDim.x)
    asm volatile("prefetch.global.L2 [%0];" ::"l"(w + (o < start ? start : o)));
}

// mmvq_load reads, for each of the thread's rows j < nv, the 5 aligned
// words holding block b of the row: base[j] is the aligned word of block
// u, off = (b - u) * 17 (a multiple of 4).
__device__ __forceinline__ void mmvq_load(const u8 *const (&base)[2], u32 nv, u64 off, u32 (&W)[2][5]) {
#pragma unroll
  for (int j = 0; j < 2; j++) {
    if ((u32)j < nv) {
      const u32 *q = reinterpret_cast<const u32 *>(base[j] + off);
#pragma unroll
      for (int i = 0; i < 5; i++) W[j][i] = __ldg(q + i);
    }
  }
}

// rows: 1..MMVQ_MAX_ROWS (larger values are capped: the block computes
// its first MMVQ_MAX_ROWS rows only, so the Go side never passes more).
extern "C" __global__ void __launch_bounds__(128)
gemv_mxfp4_q8_1(const u8 *__restrict__ w, const u8 *__restrict__ act, u64 N,
                u64 nb, u32 fused, u32 rows, float *__restrict__ y) {
  __shared__ __align__(16) float sh[MMVQ_MAX_ROWS * 128];
  __shared__ __align__(16) uint4 sa[3 * MMVQ_ACT_CHUNK];
  const u32 t = threadIdx.x, u = t & 63u, slot = t >> 6;
  const u32 rcap = rows < (u32)MMVQ_MAX_ROWS ? rows : (u32)MMVQ_MAX_ROWS;
  const u64 row0 = (u64)blockIdx.x * rows;
  if (row0 >= N) return;  // uniform over the block
  const u32 nrows = (N - row0) < (u64)rcap ? (u32)(N - row0) : rcap;
  mmvq_prefetch_l2(w, row0 * nb * 17ull, (row0 + nrows) * nb * 17ull);
  // This thread's rows: slot + 2j for j < nv. Per row, the aligned word
  // of block u and the byte selector / shift that extract e and the qs
  // words from the 5 words (the same in every round).
  const u32 nv = nrows > slot ? (nrows - slot + 1u) / 2u : 0u;
  const u8 *base[2];
  u32 esel[2], shv[2];
#pragma unroll
  for (int j = 0; j < 2; j++) {
    const u64 a = (u64)w + ((row0 + slot + 2u * (u32)j) * nb + u) * 17ull;
    const u32 s = (u32)(a & 3ull);
    base[j] = reinterpret_cast<const u8 *>(a & ~3ull);
    esel[j] = s + 4u;      // __byte_perm(0, V0, esel): byte s of V0
    shv[j] = 8u * s + 8u;  // qs word k: (V[k+1]:V[k]) >> shv, clamped at 32
  }
  float acc[2][2] = {{0.0f, 0.0f}, {0.0f, 0.0f}};
  u32 W[2][5] = {};
  u64 b = u;
  if (b < nb) mmvq_load(base, nv, 0ull, W);
  for (u64 c0 = 0; c0 < nb; c0 += MMVQ_ACT_CHUNK) {
    const u64 cend = nb - c0 < MMVQ_ACT_CHUNK ? nb : c0 + MMVQ_ACT_CHUNK;
    if (c0) __syncthreads();  // the previous chunk's readers are done
    mmvq_stage_act(act, c0, (u32)(cend - c0), sa);
    __syncthreads();
    for (; b < cend; b += 64) {
      const uint4 *ap = sa + 3u * (u32)(b - c0);
      const uint4 h0 = ap[0], h1 = ap[1];
      const float d8 = __uint_as_float(ap[2].x);
#pragma unroll
      for (int j = 0; j < 2; j++) {
        if ((u32)j < nv) {
          const u32 e = __byte_perm(0u, W[j][0], esel[j]);
          const float d = __fmul_rn(mmvq_e8m0_half(e), d8);  // shared by both halves
          const u32 q0 = __funnelshift_rc(W[j][0], W[j][1], shv[j]), q1 = __funnelshift_rc(W[j][1], W[j][2], shv[j]);
          const u32 q2 = __funnelshift_rc(W[j][2], W[j][3], shv[j]), q3 = __funnelshift_rc(W[j][3], W[j][4], shv[j]);
          acc[j][0] = mmvq_acc(acc[j][0], d, mmvq_sumf(q0, q1, h0), fused);
          acc[j][1] = mmvq_acc(acc[j][1], d, mmvq_sumf(q2, q3, h1), fused);
        }
      }
      if (b + 64 < nb) mmvq_load(base, nv, (b + 64 - u) * 17ull, W);
    }
  }
  // Lanes 2u and 2u+1 of row r go to sh[128 r + lane]; warp w reduces row
  // w in the declared order: lanes i, 32 + i, 64 + i, 96 + i, then the xor
  // butterfly.
#pragma unroll
  for (int j = 0; j < 2; j++) {
    const u32 r = slot + 2u * (u32)j;
    if (r < nrows) reinterpret_cast<float2 *>(sh + r * 128u)[u] = make_float2(acc[j][0], acc[j][1]);
  }
  __syncthreads();
  const u32 r = t >> 5, lane = t & 31u;
  if (r < nrows) {
    float v = sh[r * 128u + lane];
    v = __fadd_rn(v, sh[r * 128u + 32u + lane]);
    v = __fadd_rn(v, sh[r * 128u + 64u + lane]);
    v = __fadd_rn(v, sh[r * 128u + 96u + lane]);
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v = __fadd_rn(v, __shfl_xor_sync(0xFFFFFFFFu, v, off));
    if (lane == 0) y[row0 + r] = v;
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
