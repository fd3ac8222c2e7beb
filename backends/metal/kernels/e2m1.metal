// E2M1 encode, profile `nvidia` (refimpl/fp4), in software: Apple GPUs have
// no E2M1 conversion instruction. The encoder is e2m1_nvidia_code
// (bitexact.h), shared with the NVFP4 and MXFP4 quantizers.
//
// No float arithmetic, so no float schedule: compares and bit operations
// only.
#include "bitexact.h"

// codes[i] = E2M1(x[i]), one code per byte; one thread per element.
kernel void e2m1_nvidia(device const float *x [[buffer(0)]],
                        device uchar *codes [[buffer(1)]],
                        constant uint &n [[buffer(2)]],
                        uint i [[thread_position_in_grid]]) {
  if (i < n) codes[i] = uchar(e2m1_nvidia_code(x[i]));
}
