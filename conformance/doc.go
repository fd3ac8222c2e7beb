// Package conformance holds the go test gates that run native kernels
// against the reference and write certificates.
//
// The CUDA gates are built only with the `cuda` tag:
//
//	go test -tags cuda ./conformance/
//
// They run every golden case that a CUDA kernel claims bit for bit
// (golden.Check through native/cuda's Engine), the exhaustive 2^32-input
// sweeps of the unary conversions against the Merkle digests of
// golden/exhaustive, and hold the third-party kernels against the
// profiles they do and do not implement. With BITEXACT_CERT_DIR set (or
// -cert DIR), the run writes certificate.json and certificate.md there:
// GPU, driver, CUDA version, PTX provenance, golden suite, and one verdict
// per kernel and check.
//
// Without the tag the package builds a single test that reports the
// CUDA gates as skipped, so `go test ./...` says they were not built.
package conformance
