// Package gate is the one layer between a kernel and the reference: it
// owns the claim model (Kernel: what a kernel says it computes, in the
// reference's terms), the backend interface (Backend: how a kernel is
// launched), the engine that runs a case on the kernel that claims it
// (Engine, a golden.Engine and an exhaustive.Unary), the runners that hold
// kernels to the reference, and their verdicts, reported through
// conformance/certificate:
//
//   - Golden: every case of a golden set that a kernel claims, bit for bit;
//   - Exhaustive: a unary kernel's range form over all 2^32 float32
//     inputs against the Merkle digest of golden/exhaustive;
//   - Random: larger inputs than the golden cases, against the reference
//     run in the same process with the same parameters;
//   - Declared: a GEMV on golden inputs against the reference evaluated
//     under the float schedule the kernel declares;
//   - Suite: a kernel on every task of a vendor suite, certified by
//     conformance/certificate exactly as `bitexact certify` certifies a
//     results directory.
//
// native/cuda and native/metal are launch code behind Backend;
// conformance/ptxabi (third-party PTX), the CUDA mutants and the public
// bitexacttest package run their kernels through Suite, so a third party's
// gate and bitexact's own are the same code.
//
// # Import order
//
// The module's packages form a tower; none imports a layer above its own:
//
//  1. refimpl/... (the reference; standard library only)
//  2. wasm (the reference compiled to WebAssembly, under wazero)
//  3. golden, golden/exhaustive (golden sets, digests)
//  4. conformance/suite, conformance/results, conformance/diagnose, then
//     conformance/certificate (which imports those three)
//  5. conformance/gate (this package)
//  6. the backends and the public gate API: native/cuda, native/metal,
//     conformance/ptxabi, conformance/mutants, bitexacttest
//  7. cmd/bitexact
//
// TestImportTower holds every package of the module to this order.
package gate
