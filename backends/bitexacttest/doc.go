// Package bitexacttest gates a kernel in its author's own go test: it
// holds the kernel bit for bit to a bitexact reference profile and, when
// they differ, reports the first differing inputs decoded field by field,
// how many differ, which profile the kernel does implement and the bug
// class that explains the difference. It is to bitexact what
// net/http/httptest and testing/fstest are to their packages.
//
// # Scalar conversions
//
// A float32 -> code encoder is held to a conversion, named "format/profile"
// as refimpl/unary names it (e2m1/nvidia, e2m1/cutlass, e4m3/satfinite,
// e5m2/nosat, e8m0/rz, bf16/rne, fp16/canonical-nan, ...; `bitexact
// encode` shows them all):
//
//	func TestE2M1(t *testing.T) {
//		bitexacttest.Unary(t, "e2m1/nvidia", myEncode) // func(float32) uint8
//	}
//
// Unary calls the encoder on every one of the 2^32 float32 bit patterns,
// on all cores, and compares its codes with the reference's block by
// block. That takes 2^32 times the encoder's cost over the number of
// cores: a few seconds on a workstation, about 20 seconds on two cores
// for a hand-written Go E2M1 encoder (8 ns per input); the sweep's own
// share is a fraction of a nanosecond per input (BenchmarkSweep). Under
// go test -short, or with the Sampled option, it calls the encoder on the
// golden inputs of the format (every edge class: each representable value,
// the midpoints between neighbours and their float32 neighbours, overflow,
// zeros, subnormals, infinities, NaNs of both signs and several payloads)
// and on 2^20 seeded random bit patterns instead; the Exhaustive option sweeps
// every input even under -short.
//
// Codes are returned as uint8 for 4- and 8-bit formats (E2M1 in the low
// nibble) and as uint16 for bf16 and fp16, or as a type defined on them;
// an encoder of the wrong width is refused. Kernels that take fp16 or
// bf16 inputs are held to the conversion of the same value on all 2^16 of
// their inputs by UnaryFromFP16 and UnaryFromBF16.
//
// # Batch kernels
//
// A kernel that converts a whole buffer per call, such as a GPU launch, is
// held by UnaryBatch without a Go call per element: it receives up to 2^20
// inputs and the buffer for their codes (one byte per code up to 8 bits,
// two little-endian bytes for 16-bit codes). Calls are serialised unless
// Concurrent is given.
//
// # Block ops and GEMVs
//
// Suite holds a kernel of one of the vendor suites (nvfp4, mxfp4,
// ggml-mxfp4, q8_1, awq-pack, awq-quantize, awq-dequantize, sparse24,
// gemv-awq, gemv-mxfp4, gemv-sparse-fp4, the scalar suites; `bitexact
// export --list` lists them with their tasks and profiles) to one profile:
//
//	func TestNVFP4(t *testing.T) {
//		bitexacttest.Suite(t, "nvfp4", "recipe=canonical", func(in bitexacttest.Inputs) (bitexacttest.Outputs, error) {
//			x, shape := in.F32("x"), in.Shape("x")
//			out := in.Outputs()
//			err := myQuantize(x, shape, out.U8("packed"), out.U8("scales"), out.F32("global"))
//			return out, err
//		})
//	}
//
// The kernel runs once per task of the suite on the task's golden inputs.
// Inputs are read and outputs written through typed accessors, which check
// the tensor's name and dtype; outputs come allocated with the shape the
// profile expects. A name the task does not have, an output read as the
// wrong dtype, an output left unwritten, a tensor of the wrong shape, and
// an unknown suite or profile stop the test with an error that lists what
// the task does have. Each task is held to the golden set's expected
// outputs, or, where the golden set has no case of the profile for the
// task, to outputs computed by the embedded WebAssembly reference from the
// task's inputs, as bitexact certify computes them.
//
// A GEMV whose summation order is not fixed (split-K with atomics) is held
// by a bound-mode suite (gemv-bound, gemv-f16-bound, gemv-mxfp4-bound,
// gemv-awq-bound, gemv-sparse-fp4-bound) to the rigorous error bound of the
// exact product under the bound model named in place of a profile, such
// as "mul32=1,round16=0,out=fp32" (see the CheckSuite bound example); the
// verdict then says it is a bound, not bit-exactness.
//
// # Reports
//
// A failing check fails the test with one report (see Report):
//
//	e2m1/nvidia: DOES NOT CONFORM: 8388607 of 4294967296 inputs differ (every float32 input (2^32))
//	first differing inputs (the first of each pair of codes):
//	  x = NaN (0xff800001): want 0x07 = 6 [s=0 e=11 m=1], got 0x0f = -6 [s=1 e=11 m=1]
//	  ... and 8388606 more
//	profiles on the golden tasks (16512 elements): conforms to cutlass, sw-sm121; differs from ml_dtypes on 47, nvidia on 24, ...
//	diagnosis: explained by profile:cutlass (NaN sign kept (-NaN -> -6): cutlass float_e2m1_t (profile cutlass)) ...
//	golden set 2026.12-1, manifest sha256:...; reference wasm sha256:...
//
// The last line names the golden set and the reference module the expected
// outputs come from. A passing check logs its verdict (go test -v). The
// Check functions (CheckUnary, CheckSuite, ...) run the same checks
// without a testing.TB and return the Report.
//
// # Where the expected outputs come from
//
// Golden outputs are the embedded golden set (golden.Default), generated
// through the WebAssembly build of the reference so that they are the same
// on every host. The exhaustive and sampled sweeps compare with the native
// reference (refimpl/unary), whose codes for all 2^32 inputs of every
// conversion are pinned by the committed Merkle digests of
// golden/exhaustive: go test checks the native codes against them in full,
// and the WebAssembly build reproduces them (in full with `bitexact
// exhaustive --all`, on sampled chunks in go test). The certificate a
// vendor publishes comes from bitexact certify (docs/vendor.md); a go test
// gate is for development and CI.
//
// # The same code as bitexact's own gates
//
// Suite, and Unary on the golden tasks, run the kernel through
// gate's Suite runner and its WebAssembly reference: the code
// that certifies bitexact's own CUDA kernels against their mutants and
// third-party PTX under `bitexact certify --backend cuda`. A gate written
// with this package and bitexact's own are the same code.
package bitexacttest
