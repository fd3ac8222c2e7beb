// Package metal holds bitexact's Metal Shading Language kernels (kernels/)
// and two ways to run them: a macOS harness that runs them on the GPU
// through Metal.framework (build tags darwin and metal; unverified until
// run on a Mac), and a CPU emulation that compiles the same .metal sources
// as C++ (cpu/metal_compat.h) and runs them on the host, which the
// package's plain `go test` uses on Linux as the check of the kernels'
// logic.
//
// Both run through one Backend interface, so the launch code (NewEngine,
// behind gate's Engine, with the kernel claims in its
// gate.Table) and the checks (runSuite: gate's golden and
// declared-schedule runners, reported as a conformance/certificate Gate
// record) are the same code on both and are exercised on Linux. What a pass means differs:
//
//   - on the CPU emulation: indexing, packing, tie rules, integer bit
//     manipulation and the declared float schedules are right, with IEEE
//     binary32 arithmetic on the host and simd_sum emulated as the
//     declared butterfly tree. It says nothing about Apple GPU arithmetic,
//     Apple's simd_sum order or the Metal compiler;
//   - on a Mac: the kernels as the Metal compiler built them (fast math
//     off) gave the reference's bits on that GPU.
//
// Float schedule: the kernels are compiled with fast math disabled, write
// each float operation whose rounding matters once, use fma() only where
// a kernel declares fused multiply-adds, and convert formats with integer
// bit manipulation. The GEMVs declare their order on a
// `bitexact-schedule:` line, exported here as refimpl/gemv Schedules
// (SparseFP4Schedule, MXFP4Schedule) that the reference evaluates.
package metal
