// llama.cpp MXFP4 x Q8_1 GEMV with __dp4a (ggml-cuda mmvq.cu driving
// vecdotq.cuh vec_dot_mxfp4_q8_1; shared/seeds/llamacpp-mxfp4-dp4a-gemv.md),
// to refimpl/gemv MXFP4Q81GEMV under the schedule the kernel declares
// (native/cuda/gemv.go): MMVQ when fused, MMVQNoFMA otherwise.
//
// w: N rows of K/32 block_mxfp4 (17 bytes: e, qs[16]; qs[j] low nibble =
// element j, high nibble = element j+16). act: K/32 block_q8_1 (36 bytes:
// fp16 d, fp16 s, int8 qs[32]).
//
// One block of 128 threads (4 warps) per row. Half-block h of block b is
// group g = 2b + h (qs bytes 8h..8h+7 with both nibbles: elements 8h..8h+7
// and 8h+16..8h+23); thread t takes groups t, t+128, ... in order:
//   sumi = Σ kvalues[code] * q8   (two __dp4a per 4 qs bytes: exact int32)
//   d    = __fmul_rn(2^(e-128), d8)  (E8M0(e) * 0.5 exact; e = 0xFF NaN)
//   acc  = __fmaf_rn(d, (float)sumi, acc)   (fused; else mul then add)
// then warps 1..3 are added into warp 0 in that order (__fadd_rn), and
// warp 0 reduces with __shfl_xor_sync at offsets 16, 8, 4, 2, 1.
#include "common.cuh"
#include <cuda_fp16.h>

__constant__ int c_kvalues_mxfp4[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// Four codes (the low or high nibbles of 4 qs bytes) as 4 packed int8.
__device__ __forceinline__ int kv4(u32 q4, int shift) {
  u32 r = 0;
#pragma unroll
  for (int i = 0; i < 4; i++)
    r |= ((u32)c_kvalues_mxfp4[(q4 >> (8 * i + shift)) & 0xFu] & 0xFFu) << (8 * i);
  return (int)r;
}

__device__ __forceinline__ u32 load_u32_unaligned(const u8 *p) {
  return (u32)p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 | (u32)p[3] << 24;
}

__device__ __forceinline__ float e8m0_half(u32 e) {
  if (e == 0xFFu) return __uint_as_float(0x7FC00000u);
  int k = (int)e - 128;  // 2^(e-127) * 0.5
  return k >= -126 ? __uint_as_float((u32)(k + 127) << 23) : __uint_as_float(1u << (k + 149));
}

extern "C" __global__ void __launch_bounds__(128)
gemv_mxfp4_q8_1(const u8 *__restrict__ w, const u8 *__restrict__ act, u64 N,
                u64 nb, u32 fused, float *__restrict__ y) {
  __shared__ float sh[3][32];
  u64 row = blockIdx.x;
  if (row >= N) return;
  u32 t = threadIdx.x;
  float acc = 0.0f;
  for (u64 g = t; g < 2 * nb; g += 128) {
    u64 b = g / 2;
    u32 h = (u32)(g % 2);
    const u8 *blk = w + (row * nb + b) * 17;
    const u8 *q8b = act + b * 36;
    int sumi = 0;
#pragma unroll
    for (int l = 0; l < 2; l++) {
      u32 q4 = load_u32_unaligned(blk + 1 + 8 * h + 4 * l);
      int lo = *reinterpret_cast<const int *>(q8b + 4 + 8 * h + 4 * l);
      int hi = *reinterpret_cast<const int *>(q8b + 4 + 16 + 8 * h + 4 * l);
      sumi = __dp4a(kv4(q4, 0), lo, sumi);
      sumi = __dp4a(kv4(q4, 4), hi, sumi);
    }
    float d8 = __half2float(*reinterpret_cast<const __half *>(q8b));
    float d = __fmul_rn(e8m0_half(blk[0]), d8);
    acc = fused ? __fmaf_rn(d, (float)sumi, acc) : __fadd_rn(__fmul_rn(d, (float)sumi), acc);
  }
  u32 warp = t / 32, lane = t % 32;
  if (warp > 0) sh[warp - 1][lane] = acc;
  __syncthreads();
  if (warp == 0) {
    acc = __fadd_rn(acc, sh[0][lane]);
    acc = __fadd_rn(acc, sh[1][lane]);
    acc = __fadd_rn(acc, sh[2][lane]);
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
      acc = __fadd_rn(acc, __shfl_xor_sync(0xFFFFFFFFu, acc, off));
    if (lane == 0) y[row] = acc;
  }
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
  u64 warps = (u64)gridDim.x * (blockDim.x / 32);
  for (u64 b = (u64)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32; b < nblocks; b += warps) {
    float v = x[b * 32 + lane];
    float amax = fabsf(v);
    if (amax != amax) amax = 0.0f;
    float sum = v;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
      amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, off));
      sum = __fadd_rn(sum, __shfl_xor_sync(0xFFFFFFFFu, sum, off));
    }
    float d = __fdiv_rn(amax, 127.0f);
    int q = amax == 0.0f ? 0 : (int)roundf(__fdiv_rn(v, d));
    u8 *blk = out + b * 36;
    blk[4 + lane] = (u8)(q & 0xFF);
    if (lane == 0) {
      __half hd = __float2half_rn(d), hs = __float2half_rn(sum);
      // __half_as_ushort, not a pointer cast: reading a __half through a
      // u16* is an aliasing violation the optimiser may exploit.
      u16 db = __half_as_ushort(hd), sb = __half_as_ushort(hs);
      blk[0] = (u8)db; blk[1] = (u8)(db >> 8);
      blk[2] = (u8)sb; blk[3] = (u8)(sb >> 8);
    }
  }
}
