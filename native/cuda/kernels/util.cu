// Harness helpers, not kernels under test.
#include "common.cuh"

// spin busy-waits for about `cycles` SM clock cycles, then writes 1 to
// *done. The watchdog test launches it with a deadline shorter than the
// spin to check that a stuck kernel becomes a Go error instead of a hang.
extern "C" __global__ void util_spin(u64 cycles, u32 *done) {
  long long t0 = clock64();
  while ((u64)(clock64() - t0) < cycles) {
  }
  if (threadIdx.x == 0 && blockIdx.x == 0) *done = 1u;
}

// fault writes through a null pointer: the illegal-address test uses it to
// check that a kernel fault becomes a Go error naming the kernel.
extern "C" __global__ void util_fault(u32 *p) { p[threadIdx.x] = 1u; }
