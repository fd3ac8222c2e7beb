// ggml MMVQ MXFP4 GEMV against bitexact's gemv_mxfp4_q8_1, one process.
//
// ggml's side is ggml's own source, unmodified: build.sh cuts
// src/ggml-cuda/mmvq.cu before its MoE kernel (everything up to and
// including the mul_mat_vec_q template) and src/ggml-cuda/quantize.cu
// after quantize_q8_1, and this file includes both, so only the two kernels
// that llama.cpp runs for a one-token MXFP4 matrix-vector product are
// compiled (the whole of mmvq.cu instantiates every quant type). The launch
// shapes and arguments are the ones ggml_cuda_mul_mat_vec_q computes for a
// contiguous [K, N] MXFP4 weight, one f32 activation column, no ids and no
// fusion, on an NVIDIA device of compute capability 9.0 (table GENERIC: 4
// warps, 1 row per block; K=4096 is not small_k). The kernels are launched
// with <<<>>>, not ggml_cuda_kernel_launch, so without programmatic
// dependent launch; each kernel here follows a finished one anyway.
//
// bitexact's side is backends/cuda/ptx/gemv_mxfp4.ptx, the module the Go
// engine loads, loaded with cuModuleLoadData as the engine does and
// launched with the engine's arguments (backends/cuda/gemv.go
// runMXFP4GEMV: 4 rows per block, 128 threads, fused).
//
// Usage: bench PTX OUTDIR [ncu]. With "ncu" it only launches each kernel a
// few times (for `ncu --cache-control all`); otherwise it checks the
// outputs and times the kernels with CUDA events.
#include "ggml_mmvq_kernel.cuh"
#include "ggml_quantize_kernel.cuh"

#include <cuda.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// Host functions that the included ggml code references and that ggml.c or
// ggml-cuda.cu would define: assertions and error reports, and
// ggml_is_quantized, which ggml_cuda_should_use_mmvq (in the cut of
// mmvq.cu, never called here) calls.
bool ggml_is_quantized(enum ggml_type type) {
  fprintf(stderr, "ggml_is_quantized(%d) called: not part of the harness\n", (int)type);
  abort();
}
void ggml_abort(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "ggml_abort %s:%d: ", file, line);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  abort();
}
void ggml_cuda_error(const char *stmt, const char *func, const char *file, int line, const char *msg) {
  fprintf(stderr, "CUDA error %s in %s (%s:%d): %s\n", msg, func, file, line, stmt);
  abort();
}

#define CK(x)                                                                                  \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));      \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)
#define CD(x)                                                                                  \
  do {                                                                                         \
    CUresult r_ = (x);                                                                         \
    if (r_ != CUDA_SUCCESS) {                                                                  \
      const char *s_ = "";                                                                     \
      cuGetErrorString(r_, &s_);                                                               \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, s_);                          \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

static const int K = 4096, N = 11776, NB = K / 32;
static const int ROT = 8;  // weight copies cycled for DRAM-cold event timing (8 x 25.6 MB)

// lcg is the generator check/main.go repeats to rebuild the inputs.
static uint32_t lcg(uint32_t &s) { return s = s * 1664525u + 1013904223u; }

struct Ours {
  CUfunction gemv, quant;
};

static void ours_gemv(const Ours &o, const void *w, const void *act, float *y) {
  CUdeviceptr pw = (CUdeviceptr)w, pa = (CUdeviceptr)act, py = (CUdeviceptr)y;
  uint64_t n = N, nb = NB;
  uint32_t fused = 1, rows = 4;
  void *args[] = {&pw, &pa, &n, &nb, &fused, &rows, &py};
  CD(cuLaunchKernel(o.gemv, (N + 3) / 4, 1, 1, 128, 1, 1, 0, 0, args, nullptr));
}

static void ours_quant(const Ours &o, const float *x, void *out) {
  CUdeviceptr px = (CUdeviceptr)x, po = (CUdeviceptr)out;
  uint64_t nb = NB;
  void *args[] = {&px, &nb, &po};
  CD(cuLaunchKernel(o.quant, (NB + 7) / 8, 1, 1, 256, 1, 1, 0, 0, args, nullptr));
}

// ggml_gemv is mul_mat_vec_q_switch_ncols_dst's ncols_dst = 1 launch.
static void ggml_gemv(const void *w, const void *act, float *y) {
  ggml_cuda_mm_fusion_args_device fusion{};
  const uint3 one = init_fastdiv_values(1);
  mul_mat_vec_q<GGML_TYPE_MXFP4, 1, false, false, false><<<dim3(N, 1, 1), dim3(32, 4, 1)>>>(
      w, act, nullptr, fusion, y, (uint32_t)K, make_uint3(0, 0, 0), (uint32_t)NB, (uint32_t)NB, (uint32_t)N, one,
      0u, 0u, 0u, one, 0u, 0u, 0u, 0u);
}

// ggml_quant is quantize_row_q8_1_cuda for one row of K floats.
static void ggml_quant(const float *x, void *out) {
  quantize_q8_1<<<dim3((K + CUDA_QUANTIZE_BLOCK_SIZE - 1) / CUDA_QUANTIZE_BLOCK_SIZE, 1, 1),
                  dim3(CUDA_QUANTIZE_BLOCK_SIZE, 1, 1)>>>(x, out, K, K, K, K, K, 1u, init_fastdiv_values(1));
}

static void save(const std::string &path, const void *p, size_t n) {
  FILE *f = fopen(path.c_str(), "wb");
  if (!f || fwrite(p, 1, n, f) != n) {
    fprintf(stderr, "write %s failed\n", path.c_str());
    exit(1);
  }
  fclose(f);
}

template <class F>
static float time_us(F launch, int reps, cudaEvent_t a, cudaEvent_t b) {
  CK(cudaEventRecord(a));
  for (int i = 0; i < reps; i++) launch(i);
  CK(cudaEventRecord(b));
  CK(cudaEventSynchronize(b));
  CK(cudaGetLastError());
  float ms;
  CK(cudaEventElapsedTime(&ms, a, b));
  return 1000.0f * ms / reps;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: bench PTX OUTDIR [ncu]\n");
    return 2;
  }
  const bool ncu = argc > 3 && std::string(argv[3]) == "ncu";
  const std::string out = argv[2];
  CK(cudaSetDevice(0));
  CK(cudaFree(0));
  std::string ptx;
  {
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
      fprintf(stderr, "open %s failed\n", argv[1]);
      return 1;
    }
    char buf[65536];
    size_t r;
    while ((r = fread(buf, 1, sizeof buf, f)) > 0) ptx.append(buf, r);
    fclose(f);
  }
  CUmodule mod;
  CD(cuModuleLoadData(&mod, ptx.c_str()));
  Ours o;
  CD(cuModuleGetFunction(&o.gemv, mod, "gemv_mxfp4_q8_1"));
  CD(cuModuleGetFunction(&o.quant, mod, "q8_1_quantize"));

  // Inputs: weights of random bytes with E8M0 exponents 118..133 (2^-10..2^5
  // after the 0.5), activations uniform in [-1, 1) on a 2^-23 grid.
  const size_t wbytes = (size_t)N * NB * 17;
  std::vector<uint8_t> w(wbytes);
  uint32_t s = 20261125u;
  for (size_t i = 0; i < wbytes; i++) {
    uint32_t v = lcg(s) >> 24;
    w[i] = (uint8_t)(i % 17 == 0 ? 118u + v % 16u : v);
  }
  std::vector<float> x(K);
  for (int i = 0; i < K; i++) x[i] = (float)((int32_t)(lcg(s) >> 8) - 8388608) * (1.0f / 8388608.0f);

  uint8_t *dw, *actG, *actO;
  float *dx, *yG, *yO;
  CK(cudaMalloc(&dw, wbytes * ROT));
  CK(cudaMalloc(&dx, K * 4));
  CK(cudaMalloc(&actG, NB * 36));
  CK(cudaMalloc(&actO, NB * 36));
  CK(cudaMalloc(&yG, N * 4));
  CK(cudaMalloc(&yO, N * 4));
  for (int r = 0; r < ROT; r++) CK(cudaMemcpy(dw + r * wbytes, w.data(), wbytes, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dx, x.data(), K * 4, cudaMemcpyHostToDevice));
  CK(cudaMemset(actG, 0xA5, NB * 36));
  CK(cudaMemset(actO, 0x5A, NB * 36));
  CK(cudaMemset(yG, 0xFF, N * 4));  // NaN poison: every output must be written
  CK(cudaMemset(yO, 0xFF, N * 4));

  if (ncu) {
    // Each kernel 2 + 10 times, interleaved, the GEMVs on rotating weights;
    // ncu flushes the caches before each one (--cache-control all).
    for (int i = 0; i < 12; i++) {
      ggml_quant(dx, actG);
      ours_quant(o, dx, actO);
      ggml_gemv(dw + (i % ROT) * wbytes, actG, yG);
      ours_gemv(o, dw + ((i + 1) % ROT) * wbytes, actG, yO);
    }
    CK(cudaDeviceSynchronize());
    CK(cudaGetLastError());
    return 0;
  }

  // Correctness: both quantizers on x, both GEMVs on ggml's activation bytes.
  ggml_quant(dx, actG);
  ours_quant(o, dx, actO);
  ggml_gemv(dw, actG, yG);
  ours_gemv(o, dw, actG, yO);
  CK(cudaDeviceSynchronize());
  CK(cudaGetLastError());
  std::vector<uint8_t> hG(NB * 36), hO(NB * 36);
  std::vector<float> fG(N), fO(N);
  CK(cudaMemcpy(hG.data(), actG, NB * 36, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hO.data(), actO, NB * 36, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(fG.data(), yG, N * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(fO.data(), yO, N * 4, cudaMemcpyDeviceToHost));
  save(out + "/x.f32", x.data(), K * 4);
  save(out + "/act_ggml.q8_1", hG.data(), NB * 36);
  save(out + "/act_ours.q8_1", hO.data(), NB * 36);
  save(out + "/y_ggml.f32", fG.data(), N * 4);
  save(out + "/y_ours.f32", fO.data(), N * 4);
  int qdiff = 0, ydiff = 0, unwritten = 0;
  for (int b = 0; b < NB; b++) qdiff += memcmp(&hG[b * 36], &hO[b * 36], 36) != 0;
  for (int i = 0; i < N; i++) {
    uint32_t a, c;
    memcpy(&a, &fG[i], 4);
    memcpy(&c, &fO[i], 4);
    if (a == 0xFFFFFFFFu || c == 0xFFFFFFFFu) unwritten++;
    if (a != c && ydiff++ < 5) printf("y[%d]: ggml %08x (%g) ours %08x (%g)\n", i, a, fG[i], c, fO[i]);
  }
  printf("q8_1 blocks differing (ggml quantize_q8_1 vs ours q8_1_quantize): %d of %d\n", qdiff, NB);
  printf("GEMV outputs differing bitwise (same weight and q8_1 bytes): %d of %d; unwritten %d\n", ydiff, N, unwritten);

  // Timing with CUDA events: 50 launches a timing, median of 9, the four
  // kinds interleaved; dram cycles ROT weight copies (205 MB > 50 MB L2).
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  const int reps = 50, runs = 9;
  std::vector<float> t[6];
  for (int r = 0; r < runs; r++) {
    t[0].push_back(time_us([&](int i) { ggml_gemv(dw + (i % ROT) * wbytes, actG, yG); }, reps, a, b));
    t[1].push_back(time_us([&](int i) { ours_gemv(o, dw + (i % ROT) * wbytes, actG, yO); }, reps, a, b));
    t[2].push_back(time_us([&](int) { ggml_gemv(dw, actG, yG); }, reps, a, b));
    t[3].push_back(time_us([&](int) { ours_gemv(o, dw, actG, yO); }, reps, a, b));
    t[4].push_back(time_us([&](int) { ggml_quant(dx, actG); }, reps, a, b));
    t[5].push_back(time_us([&](int) { ours_quant(o, dx, actO); }, reps, a, b));
  }
  const char *names[6] = {"ggml mul_mat_vec_q<MXFP4> dram", "ours gemv_mxfp4_q8_1 dram",
                          "ggml mul_mat_vec_q<MXFP4> l2warm", "ours gemv_mxfp4_q8_1 l2warm",
                          "ggml quantize_q8_1 (K=4096)", "ours q8_1_quantize (K=4096)"};
  printf("events, us per launch (median of %d timings of %d launches; min-max):\n", runs, reps);
  for (int k = 0; k < 6; k++) {
    std::vector<float> v = t[k];
    std::sort(v.begin(), v.end());
    printf("  %-36s %7.2f  (%.2f-%.2f)\n", names[k], v[runs / 2], v[0], v[runs - 1]);
  }
  return 0;
}
