// sweep writes the codes of all 2^32 float32 inputs, in input order, under
// one of ml_dtypes' C++ conversions (built from a jax-ml/ml_dtypes checkout
// and the Eigen commit it pins as third_party/eigen):
//
//   sweep OP [threads] > codes    (OP one of sweep --list)
//   sweep --function OP           (the function OP runs, for the record)
//
// 1 byte per code for the 4-, 6- and 8-bit formats, 16-bit codes
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

enum Op { kE2M1, kE4M3, kE5M2, kE8M0, kBF16, kFP16, kE2M3, kE3M2, kE4M3FNUZ, kE5M2FNUZ };

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
      case kE2M3: v = ml_dtypes::float6_e2m3fn(x).rep(); break;
      case kE3M2: v = ml_dtypes::float6_e3m2fn(x).rep(); break;
      case kE4M3FNUZ: v = ml_dtypes::float8_e4m3fnuz(x).rep(); break;
      case kE5M2FNUZ: v = ml_dtypes::float8_e5m2fnuz(x).rep(); break;
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
  // Each conversion with the function run.sh names in its record.
  static const struct { const char* name; Op op; int width; const char* function; } ops[] = {
      {"e2m1", kE2M1, 1, "ml_dtypes::float4_e2m1fn(float) (ml_dtypes/include/mxfloat.h)"},
      {"e4m3", kE4M3, 1, "ml_dtypes::float8_e4m3fn(float) (ml_dtypes/include/float8.h)"},
      {"e5m2", kE5M2, 1, "ml_dtypes::float8_e5m2(float) (ml_dtypes/include/float8.h)"},
      {"e8m0", kE8M0, 1, "ml_dtypes::float8_e8m0fnu(float) (ml_dtypes/include/float8.h)"},
      {"bf16", kBF16, 2, "Eigen::bfloat16(float) (Eigen/src/Core/arch/Default/BFloat16.h)"},
      {"fp16", kFP16, 2, "Eigen::half(float) (Eigen/src/Core/arch/Default/Half.h)"},
      {"e2m3", kE2M3, 1, "ml_dtypes::float6_e2m3fn(float) (ml_dtypes/include/mxfloat.h)"},
      {"e3m2", kE3M2, 1, "ml_dtypes::float6_e3m2fn(float) (ml_dtypes/include/mxfloat.h)"},
      {"e4m3fnuz", kE4M3FNUZ, 1, "ml_dtypes::float8_e4m3fnuz(float) (ml_dtypes/include/float8.h)"},
      {"e5m2fnuz", kE5M2FNUZ, 1, "ml_dtypes::float8_e5m2fnuz(float) (ml_dtypes/include/float8.h)"}};
  if (argc == 2 && std::strcmp(argv[1], "--list") == 0) {
    for (const auto& o : ops) std::printf("%s\n", o.name);
    return 0;
  }
  if (argc == 3 && std::strcmp(argv[1], "--function") == 0) {
    for (const auto& o : ops) {
      if (std::strcmp(argv[2], o.name) == 0) {
        std::printf("%s\n", o.function);
        return 0;
      }
    }
    std::fprintf(stderr, "sweep: unknown op %s\n", argv[2]);
    return 2;
  }
  if (argc < 2) {
    std::fprintf(stderr, "usage: sweep OP [threads] | --list | --function OP\n");
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
