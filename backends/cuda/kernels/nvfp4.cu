// NVFP4 quantize: refimpl/nvfp4's Canonical recipe, every float operation
// an explicitly rounded intrinsic in the recipe's order:
//
//   amax = largest finite |x| of the tensor (NaN, +-Inf ignored)
//   g    = __fdiv_rn(2688, amax), saturated to FLT_MAX (amax 0 -> FLT_MAX);
//          or the caller's per-tensor value
//   b    = largest |x| of the 16-element block, NaN ignored (+-Inf counts)
//   t    = __fmul_rn(__fdiv_rn(b, 6), g)
//   sc   = cvt.rn.satfinite.e4m3x2.f32(t)   (the instruction fp8.cu certifies)
//   s    = exact value of sc;  d = __fdiv_rn(s, g)
//   q    = __fdiv_rn(x, d), or x*0 when d == 0
//   code = E2M1 nvidia profile (e2m1.cuh, the kernel e2m1.cu certifies)
//
// Layout: x row-major [rows, cols], cols % 16 == 0; packed [rows, cols/2]
// with element 2i in the low nibble; scales [rows, cols/16] row-major, or
// the 128x4 tiled ("swizzled") layout of refimpl/nvfp4.SwizzleOffset into
// a zero-filled buffer of SwizzledLen bytes.
//
// Two kernels: nvfp4_amax (a max reduction: exact and order-independent,
// so it declares no schedule) and nvfp4_quantize (one thread per block of
// 16; no reduction across threads).
#include "common.cuh"
#include "e2m1.cuh"

// Finite |x| as an integer: for non-negative floats the bit patterns order
// like the values, so an integer max is the float max. NaN and +-Inf map
// to 0 (ignored).
__device__ __forceinline__ u32 finite_abs_bits(float x) {
  u32 a = __float_as_uint(x) & 0x7FFFFFFFu;
  return a < 0x7F800000u ? a : 0u;
}

extern "C" __global__ void nvfp4_amax(const float4 *__restrict__ x, u64 n4,
                                      u32 *__restrict__ amax) {
  u32 m = 0;
  GRID_STRIDE(i, n4) {
    float4 v = x[i];
    m = max(m, max(max(finite_abs_bits(v.x), finite_abs_bits(v.y)),
                   max(finite_abs_bits(v.z), finite_abs_bits(v.w))));
  }
  m = __reduce_max_sync(0xFFFFFFFFu, m);
  __shared__ u32 warp_max[32];
  if ((threadIdx.x & 31) == 0) warp_max[threadIdx.x >> 5] = m;
  __syncthreads();
  if (threadIdx.x < 32) {
    u32 w = threadIdx.x < (blockDim.x + 31) / 32 ? warp_max[threadIdx.x] : 0u;
    w = __reduce_max_sync(0xFFFFFFFFu, w);
    if (threadIdx.x == 0) atomicMax(amax, w);
  }
}

__device__ __forceinline__ u32 e4m3_satfinite(float t) {
  u16 r;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(0.0f), "f"(t));
  return r & 0xFFu;
}

// Exact value of an E4M3 code by integer assembly (no float arithmetic):
// the decode refimpl/fp8 specifies, NaN (0x7F/0xFF) as a quiet NaN.
__device__ __forceinline__ float e4m3_value(u32 c) {
  u32 sign = (c & 0x80u) << 24;
  u32 mag = c & 0x7Fu;
  if (mag == 0x7Fu) return __uint_as_float(sign | 0x7FC00000u);
  u32 e = mag >> 3, m = mag & 7u;
  if (e == 0) {
    // m * 2^-9: m in 0..7 is exact, and scaling by a power of two is exact.
    return __uint_as_float(sign | __float_as_uint(__fmul_rn((float)m, 0x1p-9f)));
  }
  return __uint_as_float(sign | (e - 7u + 127u) << 23 | m << 20);
}

__device__ __forceinline__ u64 swizzle_offset(u64 m, u64 k, u64 sf_cols) {
  u64 nkt = (sf_cols + 3) / 4;
  return ((m / 128) * nkt + k / 4) * 512 + (m % 32) * 16 + ((m / 32) % 4) * 4 + k % 4;
}

// global_mode 0: compute g from *amax_bits; 1: use global_in.
extern "C" __global__ void nvfp4_quantize(
    const float4 *__restrict__ x, u64 rows, u64 cols,
    const u32 *__restrict__ amax_bits, float global_in, u32 global_mode,
    u8 *__restrict__ packed, u8 *__restrict__ scales, u32 swizzle,
    float *__restrict__ global_out) {
  float g;
  if (global_mode == 0) {
    float amax = __uint_as_float(*amax_bits);
    g = __fdiv_rn(2688.0f, amax);
    if (!(g <= 3.40282347e38f)) g = 3.40282347e38f;  // +Inf (amax 0, tiny amax)
  } else {
    g = global_in;
  }
  u64 sf_cols = cols / 16;
  u64 nblocks = rows * sf_cols;
  if (blockIdx.x == 0 && threadIdx.x == 0) *global_out = g;
  GRID_STRIDE(blk, nblocks) {
    float4 v[4];
#pragma unroll
    for (int j = 0; j < 4; j++) v[j] = x[blk * 4 + j];
    const float *xs = reinterpret_cast<const float *>(v);
    float b = 0.0f;
#pragma unroll
    for (int j = 0; j < 16; j++) b = fmaxf(b, fabsf(xs[j]));  // fmaxf drops NaN
    float t = __fmul_rn(__fdiv_rn(b, 6.0f), g);
    u32 sc = e4m3_satfinite(t);
    float s = e4m3_value(sc);
    float d = __fdiv_rn(s, g);
    u32 lo = 0, hi = 0;
#pragma unroll
    for (int j = 0; j < 16; j++) {
      float q = d == 0.0f ? __fmul_rn(xs[j], 0.0f) : __fdiv_rn(xs[j], d);
      u32 c = e2m1_nvidia_code(q);
      if (j < 8) lo |= c << (4 * j);
      else hi |= c << (4 * (j - 8));
    }
    reinterpret_cast<uint2 *>(packed)[blk] = make_uint2(lo, hi);
    u64 m = blk / sf_cols, k = blk % sf_cols;
    scales[swizzle ? swizzle_offset(m, k, sf_cols) : blk] = (u8)sc;
  }
}
