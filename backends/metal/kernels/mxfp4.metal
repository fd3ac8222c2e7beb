// MXFP4 quantize (OCP MX v1.0; refimpl/mxfp4): 32 consecutive elements of a
// row share one E8M0 scale; elements are E2M1, profile `nvidia`.
//
//   amax  = largest |x| of the block; any NaN or +-Inf -> scale 0xFF
//   scale = E8M0 of amax under the mode (refimpl/e8m0.SharedScale, emax 2,
//           max 6): floor   floor(log2 amax) - 2      (OCP)
//                   ceil    ceil(log2 amax) - 2
//                   even    amax rounded at E2M1's 1 mantissa bit, then floor
//                   rceil   ceil(log2(amax / 6)), one division
//           amax 0 -> 0; exponents below -127 clamp to 0, above 127 -> 0xFF
//   q     = x * 2^(127 - scale), one multiplication (exact unless the
//           product is a float32 subnormal; see refimpl/mxfp4)
//   code  = E2M1 nvidia of q; a 0xFF block encodes NaN: every code 0x7
//
// log2 is read from the float32 bits (integer arithmetic); the only float
// operations are rceil's amax / 6 and the element products.
// Layout: x [rows, cols], cols % 32 == 0; packed [rows, cols/2] element 2i
// in the low nibble; scales [rows, cols/32].
#include "bitexact.h"

struct MXFP4Args {
  uint blocks;  // rows * cols / 32
  uint mode;    // 0 floor, 1 ceil, 2 even, 3 rceil
};

inline uint mxfp4_scale(uint a, uint mode) {
  if (mode == 3u) {  // rceil
    uint q = as_type<uint>(as_type<float>(a) / 6.0f) & 0x7FFFFFFFu;
    if (q >= 0x7F800000u) return 0xFFu;
    if (q == 0u) return 0u;
    return e8m0_bias_clamp(log2_bits(q, true));
  }
  if (mode == 2u) {  // even: add half an E2M1 ulp (bit 21), carry allowed
    a = (a + (1u << 21)) & 0x7F800000u;
    if (a == 0x7F800000u) return 0xFFu;
  }
  if (a == 0u) return 0u;
  return e8m0_bias_clamp(log2_bits(a, mode == 1u) - 2);
}

// One thread per block of 32.
kernel void mxfp4_quantize(device const float *x [[buffer(0)]],
                           device uchar *packed [[buffer(1)]],
                           device uchar *scales [[buffer(2)]],
                           constant MXFP4Args &args [[buffer(3)]],
                           uint blk [[thread_position_in_grid]]) {
  if (blk >= args.blocks) return;
  device const float *xs = x + blk * 32u;
  uint amax = 0u;
  bool nonfinite = false;
  for (uint j = 0; j < 32u; j++) {
    uint a = as_type<uint>(xs[j]) & 0x7FFFFFFFu;
    nonfinite = nonfinite || a >= 0x7F800000u;
    amax = max(amax, a);
  }
  uint sc = nonfinite ? 0xFFu : mxfp4_scale(amax, args.mode);
  scales[blk] = uchar(sc);
  if (sc == 0xFFu) {
    for (uint j = 0; j < 16u; j++) packed[blk * 16u + j] = uchar(0x77u);
    return;
  }
  int k = 127 - int(sc);  // -127..127: 2^k is a float32 (k = -127 subnormal)
  float inv = as_type<float>(k >= -126 ? uint(k + 127) << 23 : 0x00400000u);
  for (uint j = 0; j < 32u; j += 2u) {
    uint lo = e2m1_nvidia_code(xs[j] * inv);
    uint hi = e2m1_nvidia_code(xs[j + 1u] * inv);
    packed[blk * 16u + j / 2u] = uchar(lo | (hi << 4));
  }
}
