// One float32 -> code conversion of the H100 per build: -DBX_OP=n picks
// it (see OPS in sweep.py). Each op is its own shared library so that an
// op this nvcc does not accept leaves the others measurable.
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_fp4.h>
#include <stdint.h>

__global__ void bx_kernel(const float* in, void* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = in[i];
    uint16_t* o16 = (uint16_t*)out;
    uint8_t* o8 = (uint8_t*)out;
    unsigned short r;
#if BX_OP == 1
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(x));
    o16[i] = r;
#elif BX_OP == 2
    asm("cvt.rn.satfinite.f16.f32 %0, %1;" : "=h"(r) : "f"(x));
    o16[i] = r;
#elif BX_OP == 3
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(x));
    o16[i] = r;
#elif BX_OP == 4
    asm("cvt.rn.satfinite.bf16.f32 %0, %1;" : "=h"(r) : "f"(x));
    o16[i] = r;
#elif BX_OP == 5
    // d = {a -> upper byte, b -> lower byte}; both are x.
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(x), "f"(x));
    o8[i] = (uint8_t)(r & 0xff);
#elif BX_OP == 6
    asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(r) : "f"(x), "f"(x));
    o8[i] = (uint8_t)(r & 0xff);
#elif BX_OP == 7
    o16[i] = __half_as_ushort(__float2half_rn(x));
#elif BX_OP == 8
    o16[i] = __bfloat16_as_ushort(__float2bfloat16_rn(x));
#elif BX_OP == 9
    o8[i] = (uint8_t)__nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest);
#elif BX_OP == 10
    o8[i] = (uint8_t)__nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cudaRoundZero);
#elif BX_OP == 11
    o8[i] = (uint8_t)__nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cudaRoundPosInf);
#elif BX_OP == 12
    o8[i] = (uint8_t)__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
#elif BX_OP == 13
    o8[i] = (uint8_t)__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2);
#else
#error "unknown BX_OP"
#endif
}

// bx_run converts n floats at device address in into codes at device
// address out and waits; it returns the CUDA error code (0 on success).
extern "C" int bx_run(const void* in, void* out, int n) {
    bx_kernel<<<(n + 255) / 256, 256>>>((const float*)in, out, n);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return (int)e;
    return (int)cudaDeviceSynchronize();
}
