// Package conformance holds the go test gates that run native kernels
// against the reference and write certificates.
//
// The CUDA gates are built only with the `cuda` tag:
//
//	go test -tags cuda ./conformance/
//
// They are gate's runners on backends/cuda's kernels
// (cuda.NewEngine): every golden case that a CUDA kernel claims, bit for
// bit (gate.Golden); the exhaustive 2^32-input sweeps of the unary
// conversions against the Merkle digests of golden/exhaustive
// (gate.Exhaustive); larger random inputs against the reference in the
// same process (gate.Random); and the third-party kernels held against the
// profiles they do and do not implement. With BITEXACT_CERT_DIR set (or
// -cert DIR), the run writes its conformance/certificate Gate record,
// certificate.json and certificate.md, there: GPU, driver, CUDA version,
// PTX provenance, golden suite, and one verdict per kernel and check.
//
// Without the tag the package builds a single test that reports the
// CUDA gates as skipped, so `go test ./...` says they were not built.
package conformance
