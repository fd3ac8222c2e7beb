// Probe, not part of any build: a kernel with the arithmetic of ggml-cuda
// quantize_q8_1 (one warp per 32-element block, fmaxf and xor-butterfly
// reductions, d = amax/127, q = roundf(x/d), make_half2(d, sum)) run on
// 2^21 blocks and compared with a host computation in IEEE float32. It
// writes the first 256 blocks (32 float32 inputs, then the 36-byte GPU
// block) to DIR/first.bin and mismatching blocks to DIR/mism.bin.
// q8_1_cuda_h100.bin is first.bin from the IEEE build on an H100 (CUDA
// 13.0); TestQ8_1CUDAOnH100 reads it. See docs/rationale/blocks.md.
//
//   nvcc -O3 -arch=sm_90 -o probe q8_1_probe.cu && ./probe DIR
//   nvcc -O3 -use_fast_math -arch=sm_90 ...   (as ggml-cuda is built)
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <cmath>
#include <cuda_fp16.h>

__global__ void q81(const float *x, unsigned char *y, long n) {
  long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float xi = x[i], amax = fabsf(xi), sum = xi;
  for (int o = 16; o > 0; o >>= 1) {
    amax = fmaxf(amax, __shfl_xor_sync(0xffffffff, amax, o, 32));
    sum += __shfl_xor_sync(0xffffffff, sum, o, 32);
  }
  const float d = amax / 127.0f;
  const int8_t q = amax == 0.0f ? 0 : roundf(xi / d);
  unsigned char *p = y + (i / 32) * 36;
  p[4 + i % 32] = (unsigned char)q;
  if (i % 32 == 0) *reinterpret_cast<half2 *>(p) = make_half2(d, sum);
}

static uint32_t s = 12345;
static uint32_t lcg() { return s = s * 1664525u + 1013904223u; }
static float fb(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }

__global__ void h2probe(unsigned *out) {
  half2 a = make_half2(1.0f, 67.49f);
  out[0] = *reinterpret_cast<unsigned *>(&a);
  __half h = __float2half_rn(1.0f);
  out[1] = *reinterpret_cast<unsigned short *>(&h);
}

int main(int argc, char **argv) {
  unsigned *dp, hp[2];
  cudaMalloc(&dp, 8);
  h2probe<<<1, 1>>>(dp);
  cudaMemcpy(hp, dp, 8, cudaMemcpyDeviceToHost);
  printf("make_half2(1, 67.49) = %08x, __float2half_rn(1) = %04x\n", hp[0], hp[1]);
  const long B = 1 << 21, n = B * 32;
  float *x = (float *)malloc(n * 4);
  unsigned char *y = (unsigned char *)malloc(B * 36);
  for (long b = 0; b < B; b++) {
    float *v = x + b * 32;
    int kind = b % 4;
    float amax = ldexpf(1.0f + (lcg() >> 9) / 8388608.0f, (int)(lcg() % 40) - 20);
    float d = amax / 127.0f;
    for (int j = 0; j < 32; j++) {
      if (kind == 0) v[j] = fb((lcg() & 0x807fffff) | ((100 + lcg() % 56) << 23));
      else {
        float t = ((int)(lcg() % 255) - 127 + 0.5f) * d;
        int k = (int)(lcg() % 5) - 2;
        for (; k > 0; k--) t = nextafterf(t, INFINITY);
        for (; k < 0; k++) t = nextafterf(t, -INFINITY);
        v[j] = fabsf(t) < amax ? t : 0.0f;
      }
    }
    if (kind) v[lcg() % 32] = (lcg() & 1) ? amax : -amax;
  }
  // The first blocks are the named cases of TestQuantizeQ8_1.
  memset(x, 0, 8 * 32 * 4);
  const float c0[6] = {127, 0.5f, -0.5f, 2.5f, -63.5f, 1.49f};
  memcpy(x, c0, sizeof c0);
  x[32] = fb(0x415EE148); x[33] = fb(0x4016ED36);
  x[96] = fb(0x7FC00000); x[97] = 127;
  x[128] = 0x1p-140f;
  x[160] = fb(0x00000001); x[161] = 1.0f;  // subnormal input
  x[192] = 0x1p-126f; x[193] = -0x1p-127f; // subnormal d under ftz
  float *dx; unsigned char *dy;
  cudaMalloc(&dx, n * 4); cudaMalloc(&dy, B * 36);
  cudaMemcpy(dx, x, n * 4, cudaMemcpyHostToDevice);
  q81<<<n / 256, 256>>>(dx, dy, n);
  cudaMemcpy(y, dy, B * 36, cudaMemcpyDeviceToHost);
  long bad[3] = {0, 0, 0}, nm = 0;
  char path[512];
  snprintf(path, sizeof path, "%s/first.bin", argv[1]);
  FILE *f1 = fopen(path, "wb");
  snprintf(path, sizeof path, "%s/mism.bin", argv[1]);
  FILE *f2 = fopen(path, "wb");
  for (long b = 0; b < B; b++) {
    float *v = x + b * 32; unsigned char *p = y + b * 36;
    float amax = 0, t[32];
    for (int j = 0; j < 32; j++) { amax = fmaxf(amax, fabsf(v[j])); t[j] = v[j]; }
    for (int o = 16; o > 0; o >>= 1) for (int l = 0; l < o; l++) t[l] = t[l] + t[l + o];
    volatile float d = amax / 127.0f;
    int bq = 0, bd = 0;
    for (int j = 0; j < 32; j++) {
      float r = roundf(v[j] / d);
      int8_t q = amax == 0 ? 0 : (int8_t)fmaxf(-128.f, fminf(127.f, r));
      if ((int8_t)p[4 + j] != q) bq = 1;
    }
    half2 ds = __floats2half2_rn(d, t[0]);
    if (memcmp(p, &ds, 4)) bd = 1;
    if (b < 8) bq = bd = 0; // named cases: compared in Go only
    bad[0] += bq; bad[1] += bd; bad[2] += bq | bd;
    if (b < 256) { fwrite(v, 4, 32, f1); fwrite(p, 1, 36, f1); }
    if ((bq | bd) && nm < 20000) { fwrite(v, 4, 32, f2); fwrite(p, 1, 36, f2); nm++; }
  }
  fclose(f1); fclose(f2);
  printf("blocks %ld: q mismatches %ld, ds mismatches %ld, any %ld\n", B, bad[0], bad[1], bad[2]);
  return 0;
}
