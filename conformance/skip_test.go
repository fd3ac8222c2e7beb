//go:build !cuda

package conformance

import "testing"

func TestCUDA(t *testing.T) {
	t.Skip("CUDA tests not built: run go test -tags cuda ./conformance/ (needs CUDA and, for CUDA 13, `make test-cuda` for the compat header)")
}
