// sweep writes the codes of all 2^32 float32 inputs, in input order, under
// HIP's software float -> FP8 conversion, internal::cast_to_f8 of
// ROCm/clr hipamd/include/hip/amd_detail/amd_hip_fp8.h: the path
// __hip_cvt_float_to_fp8 takes on the host and on devices without the
// gfx942/gfx950 conversion instructions. run.sh extracts the function
// from a checkout into cast_to_f8.inc; nothing of HIP is committed.
//
//   sweep OP [threads] > codes    (OP one of sweep --list)
//   sweep --function OP           (the call OP makes, for the record)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <type_traits>
#include <vector>

// What amd_hip_fp8.h and host_defines.h define around the function on a
// host build.
#define __FP8_HOST_DEVICE_STATIC__ static inline
typedef unsigned char __hip_fp8_storage_t;
namespace __hip_internal {
using std::is_same;
}  // namespace __hip_internal
namespace internal {
#include "cast_to_f8.inc"
}  // namespace internal

namespace {

constexpr uint32_t kChunk = 1u << 24;

struct Conv {
  const char* name;
  int wm, we;
  bool clip;
  const char* function;
};

const Conv kConvs[] = {
    {"e4m3fnuz-nosat", 3, 4, false, "__hip_cvt_float_to_fp8(x, __HIP_NOSAT, __HIP_E4M3_FNUZ): internal::cast_to_f8<float, true>(x, 3, 4, false)"},
    {"e4m3fnuz-satfinite", 3, 4, true, "__hip_cvt_float_to_fp8(x, __HIP_SATFINITE, __HIP_E4M3_FNUZ): internal::cast_to_f8<float, true>(x, 3, 4, true)"},
    {"e5m2fnuz-nosat", 2, 5, false, "__hip_cvt_float_to_fp8(x, __HIP_NOSAT, __HIP_E5M2_FNUZ): internal::cast_to_f8<float, true>(x, 2, 5, false)"},
    {"e5m2fnuz-satfinite", 2, 5, true, "__hip_cvt_float_to_fp8(x, __HIP_SATFINITE, __HIP_E5M2_FNUZ): internal::cast_to_f8<float, true>(x, 2, 5, true)"},
};

void Run(const Conv* c, uint32_t start, uint8_t* out) {
  for (uint32_t k = 0; k < kChunk; k++) {
    uint32_t b = start + k;
    float x;
    std::memcpy(&x, &b, 4);
    out[k] = internal::cast_to_f8<float, true>(x, c->wm, c->we, c->clip);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--list") == 0) {
    for (const auto& c : kConvs) std::printf("%s\n", c.name);
    return 0;
  }
  if (argc == 3 && std::strcmp(argv[1], "--function") == 0) {
    for (const auto& c : kConvs) {
      if (std::strcmp(argv[2], c.name) == 0) {
        std::printf("%s\n", c.function);
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
  for (const auto& c : kConvs) {
    if (std::strcmp(argv[1], c.name) != 0) continue;
    std::vector<std::vector<uint8_t>> bufs(threads, std::vector<uint8_t>(kChunk));
    for (uint64_t k = 0; k < 256; k += threads) {
      int n = static_cast<int>(std::min<uint64_t>(threads, 256 - k));
      std::vector<std::thread> ts;
      for (int t = 0; t < n; t++) {
        ts.emplace_back(Run, &c, static_cast<uint32_t>((k + t) * kChunk), bufs[t].data());
      }
      for (int t = 0; t < n; t++) {
        ts[t].join();
        if (std::fwrite(bufs[t].data(), 1, kChunk, stdout) != kChunk) return 1;
      }
    }
    return std::fflush(stdout) != 0;
  }
  std::fprintf(stderr, "sweep: unknown op %s\n", argv[1]);
  return 2;
}
