// AWQ W4 quantize + pack, the fused kernel of the FORGE pack spec (an
// unpublished spec, written out in docs/rationale/awq-sparse24.md), to
// refimpl/awq's Forge quantizer and AWQ layout.
//
// Contract (the reference's recipe, bit for bit):
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
//   rejects such weights; the Go side turns the flag into an error) and
//   its (group, 8 columns) writes nothing.
//
// The kernel computes exactly these values without a division, through
// the shortcuts below; their proofs follow, and
// backends/cuda/proofs/awq_quantize.c checks the arithmetic of 2 to 4
// exhaustively on the CPU (no mismatch).
//
// Tiling (the spec's "warp per quantization group"): w is [IC, OC]
// row-major, so a group runs down each column. A warp takes one group and
// a 32-column slice: lane l owns the 8 columns of chunk l % 4 (one 16-byte
// load per row) and the rows k = l / 4, l / 4 + 8, ... of the group, so
// each load instruction of the warp reads 8 rows x 64 contiguous bytes.
// Grid {(OC/8 + 31) / 32, IC/G}, block 256 (awqGrid, AWQThreads in
// blocks.go). For groups of up to 128 rows (AWQ_ROWS per lane) the lane
// keeps its rows in registers: the group is read from DRAM once, all of a
// lane's loads are in flight together, and the quantize pass reads the
// registers. Larger groups stream: the max-abs pass, then a second read of
// the group (from L2) for the quantize pass. The four lanes sharing a chunk
// combine their maxima with __shfl_xor_sync (offsets 4, 8, 16); max is
// exact, so its order does not matter and the kernel declares no schedule.
//
// 1. Max-abs with packed fp16 max: |h| = h & 0x7FFF then max.NaN.f16x2
//    (__hmax2_nan, one HMNMX2 per two elements; __vmaxu2 is emulated with
//    about 5 instructions per word on sm_80/sm_90). For finite |h| the fp16
//    order is the integer order of the bits, so the max is the same fp16
//    value (and so the same bits) as an integer max of the bits; .NaN makes
//    any NaN give the canonical NaN 0x7FFF and Inf stays 0x7C00, so "some
//    half >= 0x7C00" flags exactly the groups holding an Inf or NaN.
//    Subnormals are ordered right (no .ftz). The flag test: h + 0x400
//    reaches bit 15 exactly when h >= 0x7C00 (h <= 0x7FFF, so the low half
//    cannot carry into the high one).
//
// 2. Scale without the division: s = fp16_rn(a * RN(1/7)) equals
//    fp16_rn(__fdiv_rn(a, 7)) for every finite fp16 a. Checked exhaustively
//    (all 31744 values), and the reason: a/7 is never an fp16 rounding
//    midpoint and stays at least 2^-13.8 (relative) away from one (a - 7m
//    is a nonzero multiple of half the last bit of a), while both float32
//    quotients are within 2^-22 (relative) of a/7.
//
// 3. q = rint(w / s) exactly, without rint/F2I/compare/select (awq_code):
//      r  = 1/s          (rcp.approx; any r with |r s - 1| <= 2^-20)
//      t  = RN(w r)
//      e  = RN(w - t s)  (fma)
//      x  = RN(t + e r)  (fma)
//      y  = RN(x + (2^23 + 8)),  u = q + 8 = bits(y) - 0x4B000000
//    Proof. Let X = w/s (exact), s = Ms 2^bs with Ms an integer below 2^11
//    (ulp(s) = 2^bs, s < 2^(11+bs)), d = r s - 1, |d| <= 2^-20. Then
//    |t - X| <= |X| (2^-20 + 2^-24) (1 + |d|) < |X| 2^-19.9.
//    (a) e is exact when |X| >= 1/4 (if |X| < 1/4, |t| and |e r| stay so
//        small that |x| < 1/2 whatever the rounding of e, and q = 0):
//        |t| > 1/8, so ulp(t) >= 2^-26 and t s is a multiple of 2^(bs-26);
//        |w| >= s/4 puts w on the grid 2^(bs-2) (for a normal s, |w| >=
//        2^(bs+8); for a subnormal s, bs = -24, the finest fp16 grid); and
//        |w - t s| = s |X - t| < 2^(11+bs) * 10 * 2^-19.9 < 2^(bs-5.5)
//        (|X| <= 10 for every w the kernel quantizes, see (d)): a multiple
//        of 2^(bs-26) below 2^(bs-5.5) has fewer than 24 significant bits,
//        so the fma result is exact.
//    (b) t + e r = t + (X - t) s r = X + (X - t) d, so x = RN(X + eps) with
//        |eps| < |X| 2^-39.9. If X = n + 1/2 for an integer n (a tie), X
//        is a float and |eps| is below half an ulp of X, so x = X exactly,
//        and the round-half-even of the magic add gives the even
//        neighbour, which is rint. Otherwise X is more than 2^-13 from
//        every n + 1/2 (for |X| >= 1/4, w and (n + 1/2) s share the grid
//        2^(bs-2), so a nonzero w - (n + 1/2) s is at least 2^(bs-2), and
//        s < 2^(11+bs); a smaller |X| is far from +-1/2 anyway), while
//        |x - X| <= |eps| + ulp(x)/2 < 2^-36 + 2^-21 (|x| < 16), so x
//        rounds to the same integer as X.
//    (c) Magic add: for x in [-8, 7.5], 2^23 + 8 + x lies in [2^23, 2^24)
//        where float spacing is 1, so y = 2^23 + 8 + rint_half_even(x)
//        (2^23 + 8 is even, so ties go to the same side) and the low bits
//        of y are u = q + 8 in [0, 15] (above bit 23 only 0x4B000000).
//    (d) Range: for a normal scale (s >= 2^-14) |w| <= a and a/s <= 7.0029
//        (exhaustive over every a), so |x| < 7.5 and no clamp is needed. A
//        subnormal nonzero s (amax < ~2^-12) can give |w/s| up to 10: then x
//        is clamped to [-8, 7] before the magic add (rint and clamp to
//        integer bounds commute). The clamp is decided per warp and group
//        (__any_sync over the live lanes' 8 scales, a uniform branch).
//    (e) s == 0 (a <= 3 * 2^-24) passes r = 0: t = 0, e = w, x = +-0,
//        u = 8, as the reference's q = 0.
//    All of (3) is also checked exhaustively on the CPU for every finite
//    fp16 w and every positive fp16 s, clamped for every pair and
//    unclamped for every normal s with rint(w/s) in [-7, 7], with r =
//    RN(1/s) and with r moved by 1, 2 and 4 ulps either way
//    (backends/cuda/proofs/awq_quantize.c): no mismatch.
//
//    The reciprocal: rcp.approx.ftz.f32 is documented (PTX ISA) with a
//    maximum error of 1 ulp over the full range, so |r s - 1| <= 2^-23,
//    well inside the 2^-20 the proof tolerates (and the CPU check covered
//    r off by up to 4 ulps). s >= 2^-24 is a normal float and 1/s <= 2^24,
//    so .ftz changes nothing.
//
// 4. Nibble packing with the magic bits: b_j = 0x4B000000 + u_j, so
//    sum_j b_j 16^pos_j = packed + 0xFB000000 (mod 2^32) (0x4B000000 << 4
//    is 0xB0000000, << 8 and more vanish), no carries between nibbles since
//    u_j <= 15: lo = columns 0,2,4,6 at nibbles 0..3, hi = columns 1,3,5,7,
//    word = lo + (hi << 16) - 0xFB000000 (checked for all 2^32 words).
//
// Why no divisions: a correctly rounded division per element (with a
// __frcp_rn and a tie fix-up) left the kernel issue-bound at 0.63 of a
// device-to-device copy's bandwidth on an H100 (8192x8192 fp16, group
// 128); the form above reaches 0.88-0.90 (docs/rationale/cuda.md has the
// current figures and the alternatives measured).
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

// Packed fp16 max.NaN of two pairs of magnitudes (1).
__device__ __forceinline__ u32 awq_hmax(u32 m, u32 o) {
  __half2 hm = *reinterpret_cast<const __half2 *>(&m);
  __half2 ho = *reinterpret_cast<const __half2 *>(&o);
  __half2 hd = __hmax2_nan(hm, ho);
  return *reinterpret_cast<const u32 *>(&hd);
}
// Running max of |h| over the 8 fp16 of v.
__device__ __forceinline__ uint4 awq_absmax8(uint4 m, uint4 v) {
  m.x = awq_hmax(m.x, v.x & 0x7FFF7FFFu);
  m.y = awq_hmax(m.y, v.y & 0x7FFF7FFFu);
  m.z = awq_hmax(m.z, v.z & 0x7FFF7FFFu);
  m.w = awq_hmax(m.w, v.w & 0x7FFF7FFFu);
  return m;
}

__device__ __forceinline__ float2 awq_h2f2(u32 x) {
  __half2 h = *reinterpret_cast<const __half2 *>(&x);
  return __half22float2(h);
}

// 1/s for an fp16 scale s >= 0 (as float); 0 for s == 0. rcp.approx: at
// most 1 ulp from 1/s (PTX ISA); any r with |r s - 1| <= 2^-20 gives the
// same q (3).
__device__ __forceinline__ float awq_rcp(float s) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(s));
  return s != 0.0f ? r : 0.0f;
}

// bits(y) = 0x4B000000 + q + 8 for one element (3).
template <bool CLAMP>
__device__ __forceinline__ u32 awq_code(float w, float s, float r) {
  float t = __fmul_rn(w, r);
  float e = __fmaf_rn(-t, s, w);
  float x = __fmaf_rn(e, r, t);
  if (CLAMP) x = fminf(fmaxf(x, -8.0f), 7.0f);
  return __float_as_uint(__fadd_rn(x, 8388616.0f));  // 2^23 + 8
}

// The AWQ word of one row of 8 columns, nibble p = column {0,2,4,6,1,3,5,7}[p] (4).
template <bool CLAMP>
__device__ __forceinline__ u32 awq_pack(uint4 v, const float s[8], const float r[8]) {
  const u32 x[4] = {v.x, v.y, v.z, v.w};
  u32 b[8];
#pragma unroll
  for (int i = 0; i < 4; i++) {
    float2 f = awq_h2f2(x[i]);
    b[2 * i] = awq_code<CLAMP>(f.x, s[2 * i], r[2 * i]);
    b[2 * i + 1] = awq_code<CLAMP>(f.y, s[2 * i + 1], r[2 * i + 1]);
  }
  u32 lo = b[0] + (b[2] << 4) + (b[4] << 8) + (b[6] << 12);
  u32 hi = b[1] + (b[3] << 4) + (b[5] << 8) + (b[7] << 12);
  return lo + (hi << 16) - 0xFB000000u;
}

// Per (group, chunk) bookkeeping after the lane's max-abs m: the reduction
// over the 8 lanes of the chunk, the bad flag, the scales (s and r; every
// lane computes its 8) and, by the chunk's slice-0 lane, the stored fp16
// scales and qzeros at index sc; and the warp-uniform clamp decision.
// Returns whether the lane quantizes (live and no Inf or NaN in the
// group). Every lane of the warp must call it (shuffles and a vote).
__device__ __forceinline__ bool awq_finish(uint4 m, bool live, u32 slice, float s[8], float r[8], bool &clamp,
                                           u32 *bad, __half *scales, u32 *qzeros, u64 sc) {
#pragma unroll
  for (int off = AWQ_CHUNKS; off < 32; off <<= 1) {
    m.x = awq_hmax(m.x, __shfl_xor_sync(0xFFFFFFFFu, m.x, off));
    m.y = awq_hmax(m.y, __shfl_xor_sync(0xFFFFFFFFu, m.y, off));
    m.z = awq_hmax(m.z, __shfl_xor_sync(0xFFFFFFFFu, m.z, off));
    m.w = awq_hmax(m.w, __shfl_xor_sync(0xFFFFFFFFu, m.w, off));
  }
  m.x &= 0x7FFF7FFFu;
  m.y &= 0x7FFF7FFFu;
  m.z &= 0x7FFF7FFFu;
  m.w &= 0x7FFF7FFFu;
  // A half >= 0x7C00 (Inf, NaN): h + 0x400 reaches bit 15 (h <= 0x7FFF, so
  // the low half cannot carry into the high one).
  u32 big = ((m.x + 0x04000400u) | (m.y + 0x04000400u) | (m.z + 0x04000400u) |
             (m.w + 0x04000400u)) & 0x80008000u;
  bool isbad = big != 0u;
  if (live && isbad && slice == 0) atomicOr(bad, 1u);
  const float inv7 = __uint_as_float(0x3E124925u);  // RN(1/7)
  bool sub = false;  // a nonzero subnormal scale: |w/s| may exceed 7.5
  const u32 mw[4] = {m.x, m.y, m.z, m.w};
  u32 sw[4];
#pragma unroll
  for (int i = 0; i < 4; i++) {
    float2 a = awq_h2f2(mw[i]);
    __half2 hs = __floats2half2_rn(__fmul_rn(a.x, inv7), __fmul_rn(a.y, inv7));
    u32 hb = *reinterpret_cast<const u32 *>(&hs);
    sw[i] = hb;
    float2 sf = awq_h2f2(hb);
    s[2 * i] = sf.x;
    s[2 * i + 1] = sf.y;
    r[2 * i] = awq_rcp(sf.x);
    r[2 * i + 1] = awq_rcp(sf.y);
    sub = sub || ((hb & 0xFFFFu) - 1u) < 0x3FFu || ((hb >> 16) - 1u) < 0x3FFu;
  }
  bool doit = live && !isbad;
  clamp = __any_sync(0xFFFFFFFFu, doit && sub);
  if (doit && slice == 0) {
    reinterpret_cast<uint4 *>(scales)[sc] = make_uint4(sw[0], sw[1], sw[2], sw[3]);
    qzeros[sc] = 0x88888888u;
  }
  return doit;
}

// Quantize the register tile's rows and store them.
template <bool CLAMP>
__device__ __forceinline__ void awq_rows(const uint4 (&v)[AWQ_ROWS], const float s[8], const float r[8],
                                         u32 *qg, u64 chunks, u32 slice, u64 group) {
#pragma unroll
  for (int i = 0; i < AWQ_ROWS; i++) {
    u64 k = slice + (u64)i * AWQ_SLICES;
    u32 word = awq_pack<CLAMP>(v[i], s, r);
    if (k < group) qg[k * chunks] = word;
  }
}

extern "C" __global__ void __launch_bounds__(32 * AWQ_WARPS, AWQ_MIN_BLOCKS)
awq_forge_pack(const uint4 *__restrict__ w, u64 ic, u64 oc, u64 group,
               u32 *__restrict__ qweight, u32 *__restrict__ qzeros,
               __half *__restrict__ scales, u32 *__restrict__ bad) {
  (void)ic;
  const u64 chunks = oc / 8;
  const u32 lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const u64 chunk = ((u64)blockIdx.x * AWQ_WARPS + warp) * AWQ_CHUNKS + lane % AWQ_CHUNKS;
  const u32 slice = lane / AWQ_CHUNKS;
  const u64 g = blockIdx.y;
  const bool live = chunk < chunks;  // dead lanes still take part in the shuffles and the vote
  const u64 off = g * group * chunks + chunk;
  const uint4 *wg = w + off;
  u32 *qg = qweight + off;
  const u64 sc = g * chunks + chunk;  // the chunk's scales/qzeros index
  float s[8], r[8];
  bool clamp;
  if (group <= (u64)AWQ_SLICES * AWQ_ROWS) {  // uniform over the grid
    uint4 v[AWQ_ROWS];
#pragma unroll
    for (int i = 0; i < AWQ_ROWS; i++) {
      u64 k = slice + (u64)i * AWQ_SLICES;
      v[i] = (live && k < group) ? __ldg(wg + k * chunks) : make_uint4(0u, 0u, 0u, 0u);
    }
    uint4 m = make_uint4(0u, 0u, 0u, 0u);
#pragma unroll
    for (int i = 0; i < AWQ_ROWS; i++) m = awq_absmax8(m, v[i]);
    // A bad group: the Go side rejects the input; nothing else is written.
    if (!awq_finish(m, live, slice, s, r, clamp, bad, scales, qzeros, sc)) return;
    if (clamp)
      awq_rows<true>(v, s, r, qg, chunks, slice, group);
    else
      awq_rows<false>(v, s, r, qg, chunks, slice, group);
  } else {  // large groups: max-abs pass, then a second read (from L2)
    uint4 m = make_uint4(0u, 0u, 0u, 0u);
    if (live) {
#pragma unroll 4
      for (u64 k = slice; k < group; k += AWQ_SLICES) m = awq_absmax8(m, __ldg(wg + k * chunks));
    }
    if (!awq_finish(m, live, slice, s, r, clamp, bad, scales, qzeros, sc)) return;
    if (clamp) {
#pragma unroll 4
      for (u64 k = slice; k < group; k += AWQ_SLICES)
        qg[k * chunks] = awq_pack<true>(__ldg(wg + k * chunks), s, r);
    } else {
#pragma unroll 4
      for (u64 k = slice; k < group; k += AWQ_SLICES)
        qg[k * chunks] = awq_pack<false>(__ldg(wg + k * chunks), s, r);
    }
  }
}
