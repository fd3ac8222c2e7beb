#!/usr/bin/env python3
"""PyTorch's bandwidth for the conversions bitexact's CUDA kernels also do,
measured the way backends/cuda's benchmarks measure ours (CUDA events over
back-to-back launches, bytes read plus bytes written), so that the two can
be compared in one device session:

    python3 conformance/harness/torch/bandwidth.py

Prints one line per operation: microseconds per call, GB/s, and the ratio
to torch's own device-to-device copy of the same input in the same run.
Only operations torch has an equivalent for: the FP8 casts (.to(float8_*),
the `nosat` profile) and, for scale, the copy itself.
"""
import torch


def timed(fn, reps=20):
    fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        fn()
    stop.record()
    torch.cuda.synchronize()
    return start.elapsed_time(stop) / reps  # ms per call


def main():
    n = 1 << 28  # 2^28 float32, as BenchmarkUnary
    x = torch.randn(n, device="cuda", dtype=torch.float32)
    y = torch.empty_like(x)
    ms = timed(lambda: y.copy_(x))
    copy = 2 * 4 * n / (ms * 1e6)
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}")
    print(f"copy f32 2^28: {ms * 1e3:9.1f} us {copy:7.0f} GB/s")
    for name, dt in [("e4m3fn", torch.float8_e4m3fn), ("e5m2", torch.float8_e5m2)]:
        ms = timed(lambda: x.to(dt))
        gbps = 5 * n / (ms * 1e6)
        print(f"to({name}) 2^28: {ms * 1e3:9.1f} us {gbps:7.0f} GB/s  x_copy {gbps / copy:.2f}")


if __name__ == "__main__":
    main()
