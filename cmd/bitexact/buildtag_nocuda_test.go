//go:build !cuda

package main

// builtWithCUDA: this test binary has the CUDA harness (certify_cuda.go).
const builtWithCUDA = false
