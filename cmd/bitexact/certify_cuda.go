//go:build cuda

package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/bitexact/bitexact/backends/cuda"
	"github.com/bitexact/bitexact/backends/ptxabi"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/wasm"
)

// certifyPTX certifies a third-party PTX kernel in-process.
func certifyPTX(ctx context.Context, v *vendorFlags, set *golden.Set, manifestSHA256 string, stdout, stderr io.Writer) int {
	switch {
	case v.ptx == "":
		return usageError(stderr, "certify", "--backend cuda needs --ptx FILE")
	case v.kernel == "":
		return usageError(stderr, "certify", "--backend cuda needs --kernel NAME (the PTX entry point)")
	case v.abi == "":
		return usageError(stderr, "certify", "--backend cuda needs --abi ABI")
	case v.results != "" || v.suite != "":
		return usageError(stderr, "certify", "--backend cuda takes its suite from --abi; drop --suite/--results")
	}
	if _, err := ptxabi.Lookup(v.abi); err != nil {
		return usageError(stderr, "certify", "%v", err)
	}
	src, err := os.ReadFile(v.ptx)
	if err != nil {
		fmt.Fprintf(stderr, "bitexact certify: %v\n", err)
		return exitUsage
	}
	dev, err := cuda.Open(v.device)
	if err != nil {
		fmt.Fprintf(stderr, "bitexact certify: %v\n", err)
		return exitUsage
	}
	defer dev.Close()
	c, err := ptxabi.Certify(ctx, ptxabi.Options{Dev: dev, PTX: src, Kernel: v.kernel, ABI: v.abi, Claim: v.claim,
		Set: set, GoldenSHA256: manifestSHA256, ReferenceWasm: wasm.ModuleDigest(), SampleChunks: v.sample,
		MaxMismatches: v.maxMismatches, Log: stderr})
	if err != nil {
		fmt.Fprintf(stderr, "bitexact certify: %v\n", err)
		return exitUsage
	}
	if st, ok := v.sign(c, stderr); !ok {
		return st
	}
	return reportCertificate(c, v.certOut, stdout, stderr)
}
