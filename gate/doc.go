// Package gate is the one layer between a kernel and the reference: it
// owns the claim model (Kernel: what a kernel says it computes, in the
// reference's terms), the backend interface (Backend: how a kernel is
// launched, and nothing else; Table keeps a backend's claims beside its
// launch code), the engine that runs a case on the kernel that claims it
// (Engine, a golden.Engine and an exhaustive.Unary), the runners that hold
// kernels to the reference, and their verdicts, reported through
// conformance/certificate:
//
//   - Golden: every case of a golden set that a kernel claims, bit for bit;
//   - Exhaustive: a unary kernel's range form over all 2^32 float32
//     inputs against the Merkle digest of golden/exhaustive;
//   - HeldAgainst: a third-party unary kernel over all 2^32 inputs against
//     a profile it does not claim, differing exactly as documented;
//   - Profiles: a unary kernel's 2^32 sweep (or a sample of its chunks)
//     against the digest of every profile of its format, as a
//     certificate records it;
//   - Random: larger inputs than the golden cases, against the reference
//     run in the same process with the same parameters;
//   - Declared: a GEMV on golden inputs against the reference evaluated
//     under the float schedule the kernel declares;
//   - Suite: a kernel on every task of a vendor suite, certified by
//     conformance/certificate exactly as `bitexact certify` certifies a
//     results directory.
//
// The runners of a backend's gate return certificate.Verdicts, gathered in
// a certificate.Gate record; Suite returns the certificate.Certificate of
// `bitexact certify`. Those are the only certificate models.
//
// backends/cuda and backends/metal are launch code behind Backend;
// backends/ptxabi (third-party PTX), the CUDA mutants and the public
// bitexacttest package run their kernels through Suite (and ptxabi its
// sweep through Profiles), so a third party's gate and bitexact's own are
// the same code.
//
// # Import order
//
// The module's packages form a tower; none imports a layer above its own
// (internal/layers' test holds them to it under every build
// configuration):
//
//  1. refimpl/... (the reference; standard library only)
//  2. wasm/... (the reference compiled to WebAssembly, under wazero)
//  3. golden/... with internal/golden/catalog and internal/golden/stfile (golden sets,
//     their catalogue and codec, exhaustive digests)
//  4. conformance/...: suite, results, diagnose, certificate (which imports
//     the three), mutants, record
//  5. gate (this package: it imports the layers below, the
//     certificate above all)
//  6. the backends and the public gate API, which import gate: backends/cuda,
//     backends/metal, backends/ptxabi, bitexacttest
//  7. cmd/...
package gate
