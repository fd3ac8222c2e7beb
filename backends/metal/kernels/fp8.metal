// FP8 E4M3 encode with the semantics of PTX cvt.rn.satfinite.e4m3x2.f32
// (refimpl/fp8 profile `satfinite`), in software: the NVFP4 quantizer casts
// its block scales with e4m3_satfinite_code (bitexact.h), and this kernel
// certifies that routine on its own over the E4M3 golden cases.
//
// Integer arithmetic only: no float schedule.
#include "bitexact.h"

// codes[i] = E4M3(x[i]); one thread per element.
kernel void e4m3_satfinite(device const float *x [[buffer(0)]],
                           device uchar *codes [[buffer(1)]],
                           constant uint &n [[buffer(2)]],
                           uint i [[thread_position_in_grid]]) {
  if (i < n) codes[i] = uchar(e4m3_satfinite_code(x[i]));
}
