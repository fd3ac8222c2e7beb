// Package cuda runs bitexact's CUDA kernels from Go through the CUDA driver
// API (gorgonia.org/cu) so that their outputs can be compared bit for bit
// with the reference.
//
// The kernel sources live in kernels/ (one .cu per format family, plus
// common.cuh); their PTX, built by `make ptx` with nvcc for the virtual
// architecture compute_89 (the FP8 cvt instructions need sm_89), is
// embedded in ptx/ so that a machine with a CUDA 13 driver but no toolkit
// compiler can load it. Each embedded PTX file records the SHA-256 of the
// sources it was built from and the nvcc flags; TestPTXMatchesSources
// fails when either no longer matches, in every build, with or without
// CUDA.
//
// Everything that touches the driver is behind the build tag `cuda`
// (go test -tags cuda ./backends/cuda/ ./conformance/). Building with the
// tag needs CUDA's cuda.h and, for CUDA 13, the compat header in compat/
// first on the include path; see the "# cuda" section of the Makefile.
//
// The package is launch code behind gate: Kernels lists each
// kernel's claim (a gate.Kernel), NewEngine puts them on a Device as a
// gate.Engine, and the gates in conformance/ (and the CUDA mutants, and
// backends/ptxabi for third-party PTX, through Buffers) run gate's
// runners on it.
//
// Float schedule: every kernel is compiled with -fmad=false and writes the
// float operations whose rounding matters with explicit _rn intrinsics;
// kernels that reduce (GEMVs) declare their summation order as a Schedule
// that the conformance tests hand to the reference.
package cuda
