//go:build wasip1 && bitexact_wasmtest

package main

import (
	"crypto/rand"
	"errors"
	"os"
	"strings"
	"time"

	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// These ops exist only in the test build of the guest (build tag
// bitexact_wasmtest, built by package wasm's tests into a temporary
// directory); the embedded refimpl.wasm never contains them.
func init() {
	testHooks["test.panic"] = func(ops.Params, ops.Tensors) (ops.Tensors, error) {
		var s []int
		_ = s[3] // an index panic, as a reference bug would raise
		return nil, nil
	}
	testHooks["test.hang"] = func(ops.Params, ops.Tensors) (ops.Tensors, error) {
		for n := uint64(0); ; n++ {
			if n == ^uint64(0) {
				return nil, errors.New("unreachable")
			}
		}
	}
	testHooks["test.exit"] = func(ops.Params, ops.Tensors) (ops.Tensors, error) {
		os.Exit(3)
		return nil, nil
	}
	testHooks["test.oom"] = func(ops.Params, ops.Tensors) (ops.Tensors, error) {
		var keep [][]byte
		for {
			keep = append(keep, make([]byte, 64<<20))
		}
	}
	// test.sandbox reports what the guest can see of the outside world.
	testHooks["test.sandbox"] = func(ops.Params, ops.Tensors) (ops.Tensors, error) {
		var r [16]byte
		_, _ = rand.Read(r[:])
		_, ferr := os.Open("/etc/passwd")
		wd, _ := os.Getwd()
		report := strings.Join([]string{
			"args=" + strings.Join(os.Args, ","),
			"env=" + strings.Join(os.Environ(), ","),
			"now=" + time.Now().UTC().Format(time.RFC3339Nano),
			"open=" + errString(ferr),
			"wd=" + wd,
		}, "\n")
		return ops.Tensors{
			"report": tensor.FromU8([]int{len(report)}, []byte(report)),
			"rand":   tensor.FromU8([]int{16}, r[:]),
		}, nil
	}
}

func errString(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}
