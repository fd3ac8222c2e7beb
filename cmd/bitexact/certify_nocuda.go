//go:build !cuda

package main

import (
	"context"
	"fmt"
	"io"

	"github.com/bitexact/bitexact/golden"
)

// certifyPTX needs the CUDA harness, which this binary was built without.
func certifyPTX(ctx context.Context, v *vendorFlags, set *golden.Set, manifestSHA256 string, stdout, stderr io.Writer) int {
	fmt.Fprintf(stderr, "bitexact certify: --backend cuda: this binary was built without CUDA (rebuild with -tags cuda on a machine with the CUDA driver; see backends/cuda)\n")
	return exitUsage
}
