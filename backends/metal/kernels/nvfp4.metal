// NVFP4 quantize: refimpl/nvfp4's Canonical recipe, each float operation a
// single correctly rounded operation (fast math off) in the recipe's order:
//
//   amax = largest finite |x| of the tensor (NaN, +-Inf ignored)
//   g    = 2688 / amax, saturated to FLT_MAX (amax 0 -> FLT_MAX);
//          or the caller's per-tensor value
//   b    = largest |x| of the 16-element block, NaN ignored (+-Inf counts)
//   t    = (b / 6) * g
//   sc   = E4M3 satfinite of t (e4m3_satfinite_code, bitexact.h)
//   s    = exact value of sc;  d = s / g
//   q    = x / d, or x * 0 when d == 0
//   code = E2M1 nvidia profile (e2m1_nvidia_code)
//
// No fma, no reduction in float: amax and b are integer maxima of the
// magnitude bits (for non-negative floats the bit patterns order like the
// values), so they are exact and order-independent.
//
// Layout: x row-major [rows, cols], cols % 16 == 0; packed [rows, cols/2],
// element 2i in the low nibble; scales [rows, cols/16] row-major, or the
// 128x4 tiled layout of refimpl/nvfp4.SwizzleOffset into a zero-filled
// buffer of SwizzledLen bytes.
#include "bitexact.h"

// Finite |x| as integer bits; NaN and +-Inf map to 0 (ignored).
inline uint nvfp4_finite_abs_bits(float x) {
  uint a = as_type<uint>(x) & 0x7FFFFFFFu;
  return a < 0x7F800000u ? a : 0u;
}

// amax (zero-initialised by the host) = max over x of finite |x| bits:
// a grid-stride loop, simd_max in each SIMD group, simd_max of the group
// maxima in SIMD group 0, one atomic max per threadgroup. Integer max is
// exact in any order. Threadgroups of at most 32 SIMD groups.
kernel void nvfp4_amax(device const float *x [[buffer(0)]],
                       device atomic_uint *amax [[buffer(1)]],
                       constant uint &n [[buffer(2)]],
                       uint tid [[thread_position_in_grid]],
                       uint nthreads [[threads_per_grid]],
                       ushort lane [[thread_index_in_simdgroup]],
                       ushort sg [[simdgroup_index_in_threadgroup]],
                       ushort nsg [[simdgroups_per_threadgroup]]) {
  threadgroup uint part[32];
  uint m = 0u;
  for (uint i = tid; i < n; i += nthreads) m = max(m, nvfp4_finite_abs_bits(x[i]));
  m = simd_max(m);
  if (lane == 0) part[sg] = m;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (sg == 0) {
    uint w = lane < nsg ? part[lane] : 0u;
    w = simd_max(w);
    if (lane == 0) atomic_fetch_max_explicit(amax, w, memory_order_relaxed);
  }
}

struct NVFP4Args {
  uint rows, cols;
  uint global_mode;  // 0: g from amax_bits; 1: g = as_type<float>(global_bits)
  uint global_bits;
  uint swizzle;  // 0: linear scales; 1: 128x4 tiled
};

inline uint nvfp4_swizzle_offset(uint m, uint k, uint sf_cols) {
  uint nkt = (sf_cols + 3u) / 4u;
  return ((m / 128u) * nkt + k / 4u) * 512u + (m % 32u) * 16u + ((m / 32u) % 4u) * 4u + k % 4u;
}

// One thread per block of 16 elements.
kernel void nvfp4_quantize(device const float *x [[buffer(0)]],
                           device const uint *amax_bits [[buffer(1)]],
                           device uchar *packed [[buffer(2)]],
                           device uchar *scales [[buffer(3)]],
                           device float *global_out [[buffer(4)]],
                           constant NVFP4Args &args [[buffer(5)]],
                           uint blk [[thread_position_in_grid]]) {
  float g;
  if (args.global_mode == 0u) {
    float amax = as_type<float>(amax_bits[0]);
    g = 2688.0f / amax;
    if (!(g <= FLT_MAX)) g = FLT_MAX;  // +Inf: amax 0 or tiny
  } else {
    g = as_type<float>(args.global_bits);
  }
  if (blk == 0u) global_out[0] = g;
  uint sf_cols = args.cols / 16u;
  if (blk >= args.rows * sf_cols) return;
  device const float *xs = x + blk * 16u;
  uint bb = 0u;
  for (uint j = 0; j < 16u; j++) {
    uint a = as_type<uint>(xs[j]) & 0x7FFFFFFFu;
    if (a <= 0x7F800000u) bb = max(bb, a);  // NaN ignored, Inf counts
  }
  float b = as_type<float>(bb);
  float t6 = b / 6.0f;
  float t = t6 * g;
  uint sc = e4m3_satfinite_code(t);
  float s = e4m3_value(sc, false);
  float d = s / g;
  for (uint j = 0; j < 16u; j += 2u) {
    float q0 = d == 0.0f ? xs[j] * 0.0f : xs[j] / d;
    float q1 = d == 0.0f ? xs[j + 1u] * 0.0f : xs[j + 1u] / d;
    packed[blk * 8u + j / 2u] = uchar(e2m1_nvidia_code(q0) | (e2m1_nvidia_code(q1) << 4));
  }
  uint m = blk / sf_cols, k = blk % sf_cols;
  scales[args.swizzle != 0u ? nvfp4_swizzle_offset(m, k, sf_cols) : blk] = uchar(sc);
}
