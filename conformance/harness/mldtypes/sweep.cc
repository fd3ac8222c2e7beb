// sweep writes the codes of all 2^32 float32 inputs, in input order, under
// one of ml_dtypes' C++ conversions (built from a jax-ml/ml_dtypes checkout
// and the Eigen commit it pins as third_party/eigen):
//
//   sweep e2m1|e4m3|e5m2|e8m0|bf16|fp16 [threads] > codes
//
// 1 byte per code for the 4- and 8-bit formats, 16-bit codes
// little-endian. bf16 and fp16 are Eigen::bfloat16 and Eigen::half, the
// types ml_dtypes' bfloat16 and float16 conversions use.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "Eigen/Core"
#include "ml_dtypes/include/float8.h"
#include "ml_dtypes/include/mxfloat.h"

namespace {

constexpr uint32_t kChunk = 1u << 24;

enum Op { kE2M1, kE4M3, kE5M2, kE8M0, kBF16, kFP16 };

void Run(Op op, uint32_t start, uint8_t* out) {
  for (uint32_t k = 0; k < kChunk; k++) {
    uint32_t b = start + k;
    float x;
    std::memcpy(&x, &b, 4);
    uint16_t v = 0;
    switch (op) {
      case kE2M1: v = ml_dtypes::float4_e2m1fn(x).rep(); break;
      case kE4M3: v = ml_dtypes::float8_e4m3fn(x).rep(); break;
      case kE5M2: v = ml_dtypes::float8_e5m2(x).rep(); break;
      case kE8M0: v = ml_dtypes::float8_e8m0fnu(x).rep(); break;
      case kBF16: v = Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(x)); break;
      case kFP16: v = Eigen::numext::bit_cast<uint16_t>(Eigen::half(x)); break;
    }
    if (op == kBF16 || op == kFP16) {
      out[2 * k] = static_cast<uint8_t>(v);
      out[2 * k + 1] = static_cast<uint8_t>(v >> 8);
    } else {
      out[k] = static_cast<uint8_t>(v);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  static const struct { const char* name; Op op; int width; } ops[] = {
      {"e2m1", kE2M1, 1}, {"e4m3", kE4M3, 1}, {"e5m2", kE5M2, 1},
      {"e8m0", kE8M0, 1}, {"bf16", kBF16, 2}, {"fp16", kFP16, 2}};
  if (argc < 2) {
    std::fprintf(stderr, "usage: sweep e2m1|e4m3|e5m2|e8m0|bf16|fp16 [threads]\n");
    return 2;
  }
  int threads = argc > 2 ? std::atoi(argv[2]) : 2;
  if (threads < 1) threads = 1;
  for (const auto& o : ops) {
    if (std::strcmp(argv[1], o.name) != 0) continue;
    std::vector<std::vector<uint8_t>> bufs(threads, std::vector<uint8_t>(size_t{kChunk} * o.width));
    for (uint64_t c = 0; c < 256; c += threads) {
      int n = static_cast<int>(std::min<uint64_t>(threads, 256 - c));
      std::vector<std::thread> ts;
      for (int t = 0; t < n; t++) {
        ts.emplace_back(Run, o.op, static_cast<uint32_t>((c + t) * kChunk), bufs[t].data());
      }
      for (int t = 0; t < n; t++) {
        ts[t].join();
        if (std::fwrite(bufs[t].data(), o.width, kChunk, stdout) != kChunk) return 1;
      }
    }
    return std::fflush(stdout) != 0;
  }
  std::fprintf(stderr, "sweep: unknown op %s\n", argv[1]);
  return 2;
}
