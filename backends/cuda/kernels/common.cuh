// bitexact CUDA kernels: shared definitions.
//
// Float schedule: every kernel in this directory is compiled with
// -fmad=false -ftz=false -prec-div=true -prec-sqrt=true (see
// backends/cuda/kernels.go, which the embedded PTX headers are checked
// against), and every float operation whose rounding matters is written
// with an explicit round-to-nearest intrinsic (__fmul_rn, __fadd_rn,
// __fdiv_rn, __fmaf_rn) so that the schedule can be read off the source.
// Conversions are integer bit manipulation or a named PTX cvt.
//
// Kernel parameters: scalars are 64-bit (unsigned long long) or 32-bit
// values; the Go side passes each one in an 8-byte slot (gorgonia.org/cu
// copies 8 bytes per parameter), of which the driver reads the
// parameter's own size, little-endian.
#pragma once

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

// Grid-stride loop over [0, n).
#define GRID_STRIDE(i, n)                                                     \
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < (n);           \
       i += (u64)gridDim.x * blockDim.x)

// UNARY_KERNELS defines the two entry points of a float32 -> byte-code
// conversion FN (a __device__ function float -> u32, code in the low byte):
//   NAME_range(start, out, n): out[i] = FN(bits(start + i)), i < n, the
//     input sequence wrapping at 2^32 (the exhaustive sweep; no input
//     buffer, so the sweep is bound by the output writes alone);
//   NAME(in, out, n): out[i] = FN(in[i]).
// Each thread converts 4 consecutive inputs (one 16-byte load in the
// tensor form) and stores one 32-bit word; in must be 16-byte and out
// 4-byte aligned (device allocations are), and n need not be a multiple
// of 4.
#define UNARY_KERNELS(NAME, FN)                                               \
  extern "C" __global__ void NAME##_range(u32 start, u8 *__restrict__ out,    \
                                          u64 n) {                            \
    u64 words = n / 4;                                                        \
    GRID_STRIDE(w, words) {                                                   \
      u32 base = start + (u32)(w * 4);                                        \
      u32 c0 = FN(__uint_as_float(base)) & 0xFFu;                             \
      u32 c1 = FN(__uint_as_float(base + 1u)) & 0xFFu;                        \
      u32 c2 = FN(__uint_as_float(base + 2u)) & 0xFFu;                        \
      u32 c3 = FN(__uint_as_float(base + 3u)) & 0xFFu;                        \
      reinterpret_cast<u32 *>(out)[w] = c0 | c1 << 8 | c2 << 16 | c3 << 24;   \
    }                                                                         \
    u64 tail = words * 4 + (u64)blockIdx.x * blockDim.x + threadIdx.x;        \
    if (tail < n)                                                             \
      out[tail] = (u8)FN(__uint_as_float(start + (u32)tail));                 \
  }                                                                           \
  extern "C" __global__ void NAME(const float *__restrict__ in,               \
                                  u8 *__restrict__ out, u64 n) {              \
    u64 words = n / 4;                                                        \
    GRID_STRIDE(w, words) {                                                   \
      float4 v = reinterpret_cast<const float4 *>(in)[w];                     \
      u32 c0 = FN(v.x) & 0xFFu, c1 = FN(v.y) & 0xFFu;                         \
      u32 c2 = FN(v.z) & 0xFFu, c3 = FN(v.w) & 0xFFu;                         \
      reinterpret_cast<u32 *>(out)[w] = c0 | c1 << 8 | c2 << 16 | c3 << 24;   \
    }                                                                         \
    u64 tail = words * 4 + (u64)blockIdx.x * blockDim.x + threadIdx.x;        \
    if (tail < n) out[tail] = (u8)FN(in[tail]);                               \
  }
