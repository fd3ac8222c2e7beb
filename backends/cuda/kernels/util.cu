// Harness helpers, not kernels under test.
#include "common.cuh"

// spin busy-waits for about `cycles` SM clock cycles, then writes 1 to
// *done. The watchdog test launches it with a deadline shorter than the
// spin to check that a stuck kernel becomes a Go error instead of a hang;
// Device.hold queues it ahead of every timed sequence, so that the
// sequence is all enqueued before its start event runs.
extern "C" __global__ void util_spin(u64 cycles, u32 *done) {
  long long t0 = clock64();
  while ((u64)(clock64() - t0) < cycles) {
  }
  if (threadIdx.x == 0 && blockIdx.x == 0) *done = 1u;
}

// fault writes through a null pointer: the illegal-address test uses it to
// check that a kernel fault becomes a Go error naming the kernel.
extern "C" __global__ void util_fault(u32 *p) { p[threadIdx.x] = 1u; }

// util_read streams n16 16-byte words from p and writes one word per block
// (the xor of what it read, so the loads cannot be dropped) to sink. It is
// the read-bandwidth yardstick of the GEMV benchmarks: a kernel that does
// nothing but read the same number of bytes, launched the same way, so
// that launch, ramp-up and L2 effects at that size are in both figures.
extern "C" __global__ void util_read(const uint4 *__restrict__ p, u64 n16, u32 *__restrict__ sink) {
  u32 x = 0u;
  u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x, stride = (u64)gridDim.x * blockDim.x;
  for (; i + 3 * stride < n16; i += 4 * stride) {  // four loads in flight per thread
    uint4 a = p[i], b = p[i + stride], c = p[i + 2 * stride], d = p[i + 3 * stride];
    x ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
  }
  for (; i < n16; i += stride) {
    uint4 a = p[i];
    x ^= a.x ^ a.y ^ a.z ^ a.w;
  }
  for (int off = 16; off > 0; off >>= 1) x ^= __shfl_xor_sync(0xFFFFFFFFu, x, off);
  if (threadIdx.x % 32 == 0) atomicXor(sink + blockIdx.x % 1024, x);
}
