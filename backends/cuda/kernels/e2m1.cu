// E2M1 (FP4) encoders, float32 -> 4-bit code in the low nibble of a byte.
//
// Two kernels, both software (the H100 has no E2M1 cvt; see e2m1_hw.cu):
//
//   e2m1_nvidia*: bitexact's implementation of the `nvidia` profile of
//     refimpl/fp4 (the semantics of PTX cvt.rn.satfinite.e2m1x2.f32):
//     nearest-even (e2m1.cuh: a rounding add below 1, a one-bit mantissa
//     round above), |x| > 6 and +-Inf saturate to
//     sign|7, -0 and negatives rounding to zero keep the sign (0x8), and
//     every NaN, whatever its sign, becomes +0x7.
//
//   e2m1_sw_sm121*: the software E2M1 of the dgx-vllm SM121 patch, kept as
//     a third-party kernel under certification. Its function body below is
//     the published one unchanged (Avarok-Cybersecurity/dgx-vllm,
//     patch_nvfp4_utils_sw_e2m1.py, _sw_float_to_e2m1; described in "How We
//     Made vLLM 32x Faster on NVIDIA's Newest Consumer GPU"); only the `__CUDA_ARCH__ == 1210`
//     guard around it is dropped so that it builds for compute_89. It
//     conforms to the `sw-sm121` profile and differs from `nvidia` on
//     exactly the inputs with the sign bit set and a NaN exponent/mantissa
//     (-NaN -> 0xF instead of 0x7).
#include "common.cuh"
#include "e2m1.cuh"

typedef unsigned char uint8_t;

// ---- third-party function, unchanged (see the file comment) ----
__device__ __forceinline__ uint8_t _sw_float_to_e2m1(float x) {
  uint8_t sign = (uint8_t)((__float_as_uint(x) >> 28) & 8u);
  float ax = fabsf(x);
  uint8_t mag;
  if      (ax <= 0.25f)  mag = 0;  // 0.0
  else if (ax <  0.75f)  mag = 1;  // 0.5
  else if (ax <= 1.25f)  mag = 2;  // 1.0
  else if (ax <  1.75f)  mag = 3;  // 1.5
  else if (ax <= 2.5f)   mag = 4;  // 2.0
  else if (ax <  3.5f)   mag = 5;  // 3.0
  else if (ax <= 5.0f)   mag = 6;  // 4.0
  else                    mag = 7;  // 6.0 (satfinite)
  return sign | mag;
}
// ---- end of third-party function ----

__device__ __forceinline__ u32 e2m1_sw_sm121_code(float x) {
  return _sw_float_to_e2m1(x);
}

UNARY_KERNELS(e2m1_nvidia, e2m1_nvidia_code)
UNARY_KERNELS(e2m1_sw_sm121, e2m1_sw_sm121_code)
