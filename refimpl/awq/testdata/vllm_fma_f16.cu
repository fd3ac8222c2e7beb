// Produces the table hashed in torch_test.go (h100Digest):
//   nvcc -O2 -arch=sm_90 -o deq vllm_fma_f16.cu && ./deq deq.bin && sha256sum deq.bin
// Run on an NVIDIA H100, CUDA 13.0, 2026-11-22.
// vLLM AWQ dequant arithmetic: sub.f16x2 (u - z) then fma.rn.f16x2 (d, s, +0),
// for every d in [-16, 15] and every fp16 scale bit pattern.
#include <cstdio>
#include <cstdint>
#include <cuda_fp16.h>
__global__ void k(uint16_t* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;  // over 32 * 65536
  if (i >= 32 * 65536) return;
  int d = i / 65536 - 16;
  uint32_t s = i % 65536;
  int u = d >= 0 ? d : 0, z = d >= 0 ? 0 : -d;
  __half hu = __int2half_rn(u), hz = __int2half_rn(z);
  uint32_t a = (uint32_t)__half_as_ushort(hu) | ((uint32_t)__half_as_ushort(hu) << 16);
  uint32_t b = (uint32_t)__half_as_ushort(hz) | ((uint32_t)__half_as_ushort(hz) << 16);
  uint32_t sc = s | (s << 16);
  uint32_t zero = 0;
  asm volatile("sub.f16x2 %0, %1, %2;\n" : "=r"(a) : "r"(a), "r"(b));
  asm volatile("fma.rn.f16x2 %0, %1, %2, %3;\n" : "=r"(a) : "r"(a), "r"(sc), "r"(zero));
  out[i] = (uint16_t)(a & 0xFFFF);
  if ((a >> 16) != (a & 0xFFFF)) out[i] = 0xDEAD;
}
int main(int argc, char** argv) {
  uint16_t* d; size_t n = 32 * 65536;
  cudaMalloc(&d, n * 2);
  k<<<(n + 255) / 256, 256>>>(d);
  uint16_t* h = (uint16_t*)malloc(n * 2);
  cudaMemcpy(h, d, n * 2, cudaMemcpyDeviceToHost);
  FILE* f = fopen(argv[1], "wb"); fwrite(h, 2, n, f); fclose(f);
  printf("done %s\n", cudaGetErrorString(cudaGetLastError()));
}
