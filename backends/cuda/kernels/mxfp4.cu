// MXFP4 quantize (OCP MX v1.0): 32 consecutive E2M1 elements of a row share
// one E8M0 scale. refimpl/mxfp4 with the element profile nvidia and the
// four E8M0 scale modes of refimpl/e8m0.SharedScale:
//
//   amax  = largest |x| of the block (+-Inf counts); NaN if any x is NaN
//   scale = 0xFF if amax is NaN or +-Inf, else by mode (integer work on the
//           bits of amax; rceil divides once, __fdiv_rn(amax, 6)):
//             floor: floor(log2 amax) - 2       ceil: ceil(log2 amax) - 2
//             even:  floor(log2 of amax rounded at 1 mantissa bit) - 2
//             rceil: ceil(log2(amax / 6))
//           biased by 127, below -127 -> 0x00, above 127 -> 0xFF
//   q     = __fmul_rn(x, 2^(127 - scale)) (exact except in the subnormal
//           range), NaN x stays NaN; every element of a 0xFF block is NaN
//   code  = E2M1 nvidia profile of q
//
// One thread per block: eight 16-byte loads, one 16-byte store of packed
// codes (element 2i in the low nibble), one scale byte. No reduction order
// matters (max is exact), so the kernel declares no schedule.
#include "common.cuh"
#include "e2m1.cuh"

enum { MODE_FLOOR = 0, MODE_CEIL = 1, MODE_EVEN = 2, MODE_RCEIL = 3 };

// floor(log2 v), or ceil with up, of the non-negative float bits a; -1000
// for zero (which clamps to scale 0).
__device__ __forceinline__ int log2_bits(u32 a, bool up) {
  if (a == 0) return -1000;
  int e = (int)(a >> 23) - 127;
  u32 m = a & 0x7FFFFFu;
  if (a < (1u << 23)) {
    int p = 31 - __clz(m);
    e = p - 149;
    m &= (1u << p) - 1u;
  }
  if (up && m != 0) e++;
  return e;
}

__device__ __forceinline__ u32 bias_clamp(int e) {
  return e < -127 ? 0u : e > 127 ? 0xFFu : (u32)(e + 127);
}

__device__ __forceinline__ u32 e8m0_shared_scale(float amax, u32 mode) {
  u32 a = __float_as_uint(amax) & 0x7FFFFFFFu;
  if (a >= 0x7F800000u) return 0xFFu;
  if (mode == MODE_RCEIL) {
    u32 q = __float_as_uint(__fdiv_rn(__uint_as_float(a), 6.0f)) & 0x7FFFFFFFu;
    if (q >= 0x7F800000u) return 0xFFu;
    return bias_clamp(log2_bits(q, true));
  }
  if (mode == MODE_EVEN) {
    a += 1u << 21;  // half an ulp at E2M1's one mantissa bit; carry allowed
    a &= 0x7F800000u;
    if (a == 0x7F800000u) return 0xFFu;
  }
  return bias_clamp(log2_bits(a, mode == MODE_CEIL) - 2);
}

// 2^k as a float for k in [-149, 127], from its bits.
__device__ __forceinline__ float pow2(int k) {
  return k >= -126 ? __uint_as_float((u32)(k + 127) << 23)
                   : __uint_as_float(1u << (k + 149));
}

extern "C" __global__ void mxfp4_quantize(const float4 *__restrict__ x,
                                          u64 nblocks, u32 mode,
                                          u8 *__restrict__ packed,
                                          u8 *__restrict__ scales) {
  GRID_STRIDE(blk, nblocks) {
    float4 v[8];
#pragma unroll
    for (int j = 0; j < 8; j++) v[j] = x[blk * 8 + j];
    const float *xs = reinterpret_cast<const float *>(v);
    float amax = 0.0f;
    bool nan = false;
#pragma unroll
    for (int j = 0; j < 32; j++) {
      nan |= xs[j] != xs[j];
      amax = fmaxf(amax, fabsf(xs[j]));
    }
    u32 sc = nan ? 0xFFu : e8m0_shared_scale(amax, mode);
    u32 w[4] = {0, 0, 0, 0};
    if (sc == 0xFFu) {
      u32 c = e2m1_nvidia_code(__uint_as_float(0x7FC00000u));
      u32 word = c * 0x11111111u;
      w[0] = w[1] = w[2] = w[3] = word;
    } else {
      float inv = pow2(127 - (int)sc);
#pragma unroll
      for (int j = 0; j < 32; j++)
        w[j / 8] |= e2m1_nvidia_code(__fmul_rn(xs[j], inv)) << (4 * (j % 8));
    }
    reinterpret_cast<uint4 *>(packed)[blk] = make_uint4(w[0], w[1], w[2], w[3]);
    scales[blk] = (u8)sc;
  }
}
