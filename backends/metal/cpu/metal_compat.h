// bitexact: the subset of the Metal Shading Language that the kernels in
// ../kernels use, in C++17, so that the same .metal sources compile with g++
// and run on the CPU (the Linux check of backends/metal).
//
// What this verifies: indexing, packing, tie rules, integer bit
// manipulation and the declared float schedules (operation order, where
// fma() is used, the simd_sum reduction tree). What it does not verify:
// Apple GPU arithmetic. Every float operation here is the host's IEEE
// binary32 operation: on x86-64 scalar SSE (addss, mulss, divss: correctly
// rounded single precision, FLT_EVAL_METHOD 0, subnormals kept because
// MXCSR FTZ/DAZ are off, checked at startup), fma() is the correctly
// rounded C library fmaf, and the driver is compiled with -ffp-contract=off
// and without -ffast-math (checked below), so no a*b+c is fused unless the
// kernel calls fma().
//
// Mapping:
//   - address spaces device, constant, thread: empty macros;
//   - threadgroup: `static`. Kernels declare threadgroup arrays at kernel
//     scope (as MSL requires); the emulator runs one threadgroup at a time
//     on one OS thread, its lanes as coroutines, so a function-static array
//     is exactly one array shared by the lanes of the running threadgroup;
//   - [[buffer(i)]] and thread-position attributes: ignored by g++
//     (-Wno-attributes); the parameters stay ordinary parameters that the
//     driver fills from its dispatch (see driver.cpp);
//   - simd_sum, simd_max, simd_shuffle_xor and threadgroup_barrier are
//     phase boundaries: the calling lane yields until every lane of its SIMD
//     group (32 lanes) or threadgroup has arrived, then the collective is
//     evaluated for all lanes at once (lockstep). simd_sum is a butterfly
//     (xor) tree: for offset 16, 8, 4, 2, 1 every lane adds the lane at
//     lane^offset, its own value first. Apple does not document the order
//     of its hardware simd_sum; this is the order the kernels declare.
//   - half: a 16-bit storage type; float -> half rounds to nearest even in
//     software (bit manipulation), half -> float is exact.
#ifndef BITEXACT_METAL_COMPAT_H
#define BITEXACT_METAL_COMPAT_H

#if defined(__APPLE__) && !defined(_XOPEN_SOURCE)
#define _XOPEN_SOURCE 700  // macOS exposes the (deprecated) ucontext routines only with it
#endif

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <ucontext.h>
#include <vector>

#if defined(__FAST_MATH__)
#error "the Metal CPU check must be compiled without -ffast-math"
#endif
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "the Metal CPU check needs FLT_EVAL_METHOD == 0 (binary32 arithmetic in binary32)"
#endif

typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;

namespace metal {

// ---- scalar reinterpretation ----
template <class To, class From>
inline To as_type(From v) {
  static_assert(sizeof(To) == sizeof(From), "as_type: sizes differ");
  To t;
  std::memcpy(&t, &v, sizeof t);
  return t;
}

// ---- half ----
// float -> binary16, round to nearest even; overflow to infinity; a NaN
// keeps its sign and top 10 payload bits and is made quiet.
inline ushort bx_f32_to_f16(float f) {
  uint b = as_type<uint>(f);
  ushort sign = (ushort)((b >> 16) & 0x8000u);
  uint a = b & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return (ushort)(sign | 0x7E00u | ((a >> 13) & 0x3FFu));
  if (a >= 0x477FF000u) return (ushort)(sign | 0x7C00u);  // >= 65520 or Inf
  if (a >= 0x38800000u) {                                 // normal binary16
    uint r = a - 0x38000000u;                             // rebias 127 -> 15
    r = (r + 0xFFFu + ((r >> 13) & 1u)) >> 13;
    return (ushort)(sign | r);
  }
  if (a <= 0x33000000u) return sign;  // <= 2^-25: ties to even 0
  // Subnormal binary16: m = value / 2^-24, rounded to nearest even.
  uint e = a >> 23;
  uint mant = (a & 0x7FFFFFu) | 0x800000u;
  uint shift = 126u - e;  // 14..24
  uint m = mant >> shift;
  uint rem = mant & ((1u << shift) - 1u);
  uint halfway = 1u << (shift - 1u);
  if (rem > halfway || (rem == halfway && (m & 1u))) m++;
  return (ushort)(sign | m);
}

inline float bx_f16_to_f32(ushort h) {
  uint sign = (uint)(h & 0x8000u) << 16;
  uint e = (h >> 10) & 0x1Fu;
  uint m = h & 0x3FFu;
  if (e == 0x1Fu) return as_type<float>(sign | 0x7F800000u | (m << 13) | (m ? 0x400000u : 0u));
  if (e != 0) return as_type<float>(sign | ((e + 112u) << 23) | (m << 13));
  if (m == 0) return as_type<float>(sign);
  // Subnormal: m * 2^-24, normalised.
  int p = 31 - __builtin_clz(m);  // 0..9
  return as_type<float>(sign | ((uint)(p - 24 + 127) << 23) | ((m << (23 - p)) & 0x7FFFFFu));
}

struct half {
  ushort bits;
  half() = default;
  explicit half(float f) : bits(bx_f32_to_f16(f)) {}
  operator float() const { return bx_f16_to_f32(bits); }
};
static_assert(sizeof(half) == 2, "half must be 16 bits");

// ---- vectors (only what the kernels use) ----
struct float4 {
  float x, y, z, w;
  float4() = default;
  float4(float a, float b, float c, float d) : x(a), y(b), z(c), w(d) {}
};
struct uint3 {
  uint x, y, z;
};
struct ushort3 {
  ushort x, y, z;
};

// dot: products and sums left to right, unfused. The kernels use it only
// where every product and partial sum is exact (small integers), so the
// order on the GPU does not matter; see the kernels.
inline float dot(float4 a, float4 b) {
  float p0 = a.x * b.x, p1 = a.y * b.y, p2 = a.z * b.z, p3 = a.w * b.w;
  return ((p0 + p1) + p2) + p3;
}

// ---- math ----
inline float fma(float a, float b, float c) { return std::fmaf(a, b, c); }
inline uint max(uint a, uint b) { return a > b ? a : b; }
inline uint min(uint a, uint b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline int min(int a, int b) { return a < b ? a : b; }
inline uint clz(uint x) { return x ? (uint)__builtin_clz(x) : 32u; }
inline bool isnan(float x) { return std::isnan(x); }

// ---- atomics (device memory; the emulator is single-threaded) ----
struct atomic_uint {
  uint v;
};
enum memory_order { memory_order_relaxed };
inline uint atomic_fetch_max_explicit(atomic_uint *a, uint v, memory_order) {
  uint old = a->v;
  if (v > old) a->v = v;
  return old;
}

// ---- the emulated threadgroup ----
enum class mem_flags { mem_none, mem_device, mem_threadgroup };

// One collective in flight per lane: its operand and result as raw bits,
// and the routine that evaluates it over the 32 lanes of a SIMD group.
struct BxLane {
  ucontext_t ctx;
  int state;  // BX_RUN, BX_SIMD, BX_BARRIER, BX_DONE
  uint64_t in, out;
  void (*resolve)(BxLane *lanes, uint arg);
  uint arg;
};
enum { BX_RUN, BX_SIMD, BX_BARRIER, BX_DONE };

struct BxGroup {
  BxLane *lanes;
  int cur;
  ucontext_t sched;
};
extern BxGroup *bx_group;

[[noreturn]] inline void bx_fatal(const char *msg) {
  std::fprintf(stderr, "metal emulator: %s\n", msg);
  std::exit(3);
}

inline void bx_yield(int state) {
  if (!bx_group) bx_fatal("collective called outside a dispatch");
  BxLane *l = &bx_group->lanes[bx_group->cur];
  l->state = state;
  swapcontext(&l->ctx, &bx_group->sched);
}

template <class T>
inline T bx_get(const BxLane &l, bool out) {
  T v;
  std::memcpy(&v, out ? &l.out : &l.in, sizeof v);
  return v;
}
template <class T>
inline void bx_put(BxLane &l, T v) {
  l.out = 0;
  std::memcpy(&l.out, &v, sizeof v);
}

// Butterfly sum: after the step with offset o, lane l holds v[l] + v[l^o]
// (its own value first). lanes points at lane 0 of a full SIMD group.
template <class T>
void bx_resolve_sum(BxLane *lanes, uint) {
  T v[32], w[32];
  for (int l = 0; l < 32; l++) v[l] = bx_get<T>(lanes[l], false);
  for (int o = 16; o > 0; o >>= 1) {
    for (int l = 0; l < 32; l++) w[l] = v[l] + v[l ^ o];
    for (int l = 0; l < 32; l++) v[l] = w[l];
  }
  for (int l = 0; l < 32; l++) bx_put<T>(lanes[l], v[l]);
}
template <class T>
void bx_resolve_max(BxLane *lanes, uint) {
  T m = bx_get<T>(lanes[0], false);
  for (int l = 1; l < 32; l++) {
    T v = bx_get<T>(lanes[l], false);
    if (v > m) m = v;
  }
  for (int l = 0; l < 32; l++) bx_put<T>(lanes[l], m);
}
template <class T>
void bx_resolve_shuffle_xor(BxLane *lanes, uint mask) {
  T v[32];
  for (int l = 0; l < 32; l++) v[l] = bx_get<T>(lanes[l], false);
  for (int l = 0; l < 32; l++) bx_put<T>(lanes[l], v[(l ^ mask) & 31]);
}

template <class T>
inline T bx_collective(T x, void (*resolve)(BxLane *, uint), uint arg) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value, "collective operand");
  if (!bx_group) bx_fatal("simd function called outside a dispatch");
  BxLane *l = &bx_group->lanes[bx_group->cur];
  l->in = 0;
  std::memcpy(&l->in, &x, sizeof x);
  l->resolve = resolve;
  l->arg = arg;
  bx_yield(BX_SIMD);
  return bx_get<T>(bx_group->lanes[bx_group->cur], true);
}

template <class T>
inline T simd_sum(T x) { return bx_collective<T>(x, bx_resolve_sum<T>, 0); }
template <class T>
inline T simd_max(T x) { return bx_collective<T>(x, bx_resolve_max<T>, 0); }
template <class T>
inline T simd_shuffle_xor(T x, ushort mask) { return bx_collective<T>(x, bx_resolve_shuffle_xor<T>, mask); }

inline void threadgroup_barrier(mem_flags) { bx_yield(BX_BARRIER); }

}  // namespace metal

// MSL keywords.
#define kernel
#define device
#define constant
#define thread
#define threadgroup static

#endif  // BITEXACT_METAL_COMPAT_H
