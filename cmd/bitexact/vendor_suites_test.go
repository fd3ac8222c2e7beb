package main

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// flipFirst is kernel, except that on the first task (by name) the lowest
// bit of the first element of the first output tensor (by name) is
// flipped: a kernel one element wrong.
func flipFirst(first string, kernel func(*testing.T, suite.Task, ops.Tensors) ops.Tensors) func(*testing.T, suite.Task, ops.Tensors) ops.Tensors {
	return func(t *testing.T, task suite.Task, in ops.Tensors) ops.Tensors {
		out := kernel(t, task, in)
		if task.Name != first {
			return out
		}
		names := make([]string, 0, len(out))
		for n := range out {
			names = append(names, n)
		}
		sort.Strings(names)
		x := out[names[0]]
		d := bytes.Clone(x.Data)
		d[0] ^= 1
		out[names[0]] = tensor.Tensor{DType: x.DType, Shape: x.Shape, Logical: x.Logical, Data: d}
		return out
	}
}

// TestVendorDecodeAndLayoutSuites certifies each decoder, dequantizer and
// layout suite, and each conversion of fp16 or bf16 inputs, as a vendor
// would: a results folder written by the
// reference under the suite's last profile (so that a non-default profile
// is claimed where the suite has several) conforms (exit 0), and the same
// folder with one element of one task wrong does not (exit 1, one
// element of that task counted).
func TestVendorDecodeAndLayoutSuites(t *testing.T) {
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{
		"e2m1-decode", "e2m1-unpack", "awq-unpack", "fp8-decode", "e4m3-decode", "e5m2-decode", "e8m0-decode",
		"nvfp4-dequantize", "mxfp4-dequantize", "ggml-mxfp4-dequantize", "q8_1-dequantize", "awq-dequantize",
		"sparse24-select", "sparse24-decompress", "sparse24-reorder", "sparse24-reorder-i32", "sparse24-unreorder",
		"nvfp4-swizzle", "nvfp4-unswizzle",
		"e2m1-from-fp16", "e2m1-from-bf16", "e4m3-from-fp16", "e4m3-from-bf16", "e5m2-from-fp16", "e5m2-from-bf16",
		"e8m0-from-fp16", "e8m0-from-bf16", "fp16-from-bf16", "bf16-from-fp16",
		"nvfp4-from-fp16", "nvfp4-from-bf16", "mxfp4-from-fp16", "mxfp4-from-bf16",
	} {
		t.Run(name, func(t *testing.T) {
			s, err := suite.Resolve(set, name)
			if err != nil {
				t.Fatal(err)
			}
			claim := s.Profiles[len(s.Profiles)-1]
			pp, ok := s.ProfileParams(claim)
			if !ok {
				t.Fatalf("profile %s has no parameters", claim)
			}
			kernel := refKernel(s.Op, pp)
			good := kernelResults(t, set, name, claim, kernel)
			expect(t, []string{"certify", "--suite", name, "--results", good}, exitOK, "out", "CONFORMS to claimed profile "+claim+":")
			first := s.Tasks[0].Name
			bad := kernelResults(t, set, name, claim, flipFirst(first, kernel))
			o, _ := expect(t, []string{"certify", "--suite", name, "--results", bad}, exitMismatch, "out", "DOES NOT CONFORM to claimed profile "+claim+":")
			if w := fmt.Sprintf("FAIL %s (", first); !strings.Contains(o, w) || !strings.Contains(o, "): 1 of ") {
				t.Errorf("certify output lacks one failing element of task %s:\n%s", first, o)
			}
		})
	}
}

// TestExportHelpListsSuites: export --help lists every suite with its
// inputs, outputs and profiles, the same listing (suite.List) whose
// Markdown form docs/vendor.md holds (TestVendorDocSuites).
func TestExportHelpListsSuites(t *testing.T) {
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	ls, err := suite.List(set)
	if err != nil {
		t.Fatal(err)
	}
	_, e := expect(t, []string{"export", "-h"}, exitOK, "err", suite.ListText(ls))
	for _, n := range suite.Names() {
		if !strings.Contains(e, "\n  "+n+" (") {
			t.Errorf("export -h does not list suite %s", n)
		}
	}
}
