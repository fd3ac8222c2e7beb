package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/conformance/certificate"
	"github.com/bitexact/bitexact/conformance/results"
	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// TestCertifyBoundMode certifies the MXFP4 x Q8_1 GEMV in bound mode as a
// vendor of a split-K kernel would: outputs bit-exact to llama.cpp's mmvq
// schedule, claimed under the bound model, conform and the verdict says
// it is a bound, not bit-exactness, in every form; one row moved by the
// sum of its terms' magnitudes (far past gamma_K times it) fails with that
// row, its error and its bound; a missing or malformed model is exit 2.
func TestCertifyBoundMode(t *testing.T) {
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	const (
		name  = "gemv-mxfp4-bound"
		model = "mul32=2,round16=0,out=fp32"
		row   = 5
	)
	exp := t.TempDir()
	expect(t, []string{"export", "--suite", name, "--out", exp}, exitOK, "out", "exported suite "+name)
	for f, w := range map[string]string{"suite.json": `"mode": "bound"`, "README.md": "Bound mode: your outputs are held to the rigorous error bound"} {
		if b, err := os.ReadFile(filepath.Join(exp, f)); err != nil || !strings.Contains(string(b), w) {
			t.Errorf("export %s lacks %q (%v)", f, w, err)
		}
	}
	kernel := refKernel("gemv.mxfp4_q8_1", ops.Params{"schedule": "mmvq"})
	good := kernelResults(t, set, name, model, kernel)
	cert := t.TempDir()
	o, _ := expect(t, []string{"certify", "--suite", name, "--results", good, "--cert-out", cert}, exitOK, "out",
		"CONFORMS WITHIN THE RIGOROUS BOUND (not bit-exact) of bound model "+model+": all 619 outputs of 4 tasks within the bound")
	if !strings.Contains(o, "bound mode: every output is held to the rigorous error bound") {
		t.Errorf("certify does not explain bound mode:\n%s", o)
	}
	for _, f := range []string{certificate.JSONFile, certificate.MarkdownFile, certificate.JUnitFile} {
		b, err := os.ReadFile(filepath.Join(cert, f))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "CONFORMS WITHIN THE RIGOROUS BOUND (not bit-exact)") {
			t.Errorf("%s does not say it is a bound:\n%s", f, b)
		}
	}
	b, _ := os.ReadFile(filepath.Join(cert, certificate.JSONFile))
	c, err := certificate.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if c.Mode != certificate.ModeBound || !c.Valid || c.Against != model {
		t.Errorf("mode %q valid %v (%s) against %q", c.Mode, c.Valid, c.InvalidReason, c.Against)
	}
	expect(t, []string{"verify-cert", filepath.Join(cert, certificate.JSONFile), "--results", good}, exitOK, "out", "CONFORMS WITHIN THE RIGOROUS BOUND")

	s, err := suite.Resolve(set, name)
	if err != nil {
		t.Fatal(err)
	}
	claim, err := s.ParseBound(model)
	if err != nil {
		t.Fatal(err)
	}
	first := s.Tasks[0].Name
	bad := kernelResults(t, set, name, model, func(t *testing.T, task suite.Task, in ops.Tensors) ops.Tensors {
		out := kernel(t, task, in)
		if task.Name != first {
			return out
		}
		ps, err := s.BoundProblems(task, in, claim)
		if err != nil {
			t.Fatal(err)
		}
		k := len(ps[0].X)
		abs := 0.0
		for i, w := range ps[0].W[row*k : (row+1)*k] {
			abs += math.Abs(w * ps[0].X[i])
		}
		y := out["y"].F32()
		y[row] += float32(abs) + 1
		return ops.Tensors{"y": tensor.FromF32(out["y"].Shape, y)}
	})
	o, _ = expect(t, []string{"certify", "--suite", name, "--results", bad}, exitMismatch, "out",
		"DOES NOT CONFORM: OUTSIDE THE RIGOROUS BOUND (bound mode, not bit-exact) of bound model "+model+": 1 of 619 outputs")
	for _, w := range []string{"FAIL " + first + ": 1 of 512 outputs outside the rigorous bound of " + model, "y[5] expected ", "outside the bound]"} {
		if !strings.Contains(o, w) {
			t.Errorf("certify output lacks %q:\n%s", w, o)
		}
	}

	for _, tc := range []struct{ name, claim, want string }{
		{"no model", "", "suite gemv-mxfp4-bound is a bound-mode suite: profile must declare the bound model"},
		{"a schedule", "mmvq", "is not a bound model of suite gemv-mxfp4-bound"},
		{"spaces", "mul32=2, round16=0,out=fp32", `write it as "mul32=2,round16=0,out=fp32"`},
		{"bad precision", "mul32=2,round16=0,out=bf16", `key "out": value "bf16", want one of fp32, fp16`},
		{"negative count", "mul32=-2,round16=0,out=fp32", `key "mul32": value "-2", want a count`},
		// A model must describe a plausible kernel: before, any count up
		// to 65536 was accepted and round16=1024 let all-zero outputs
		// certify CONFORMS.
		{"more roundings than can happen", "mul32=0,round16=1024,out=fp32", `key "round16": value "1024", want a count from 0 to 1023`},
		{"more multiplications than factors", "mul32=3,round16=0,out=fp32", "a term of gemv.mxfp4_q8_1 has 3 factors, so at most 2 rounded multiplications"},
		{"zero within the bound", "mul32=0,round16=200,out=fp32", "bound model mul32=0,round16=200,out=fp32 is too loose for suite gemv-mxfp4-bound: on task gemv.mxfp4_q8_1 a zero output is within its bound at 495 of the 510 outputs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			copyDir(t, good, dir)
			editManifest(t, dir, func(m *results.Manifest) { m.Profile = tc.claim })
			expect(t, []string{"certify", "--suite", name, "--results", dir}, exitUsage, "err", tc.want)
		})
	}
	// Keys in another order name the same model, recorded canonically.
	dir := t.TempDir()
	copyDir(t, good, dir)
	editManifest(t, dir, func(m *results.Manifest) { m.Profile = "round16=0,out=fp32,mul32=2" })
	expect(t, []string{"certify", "--suite", name, "--results", dir}, exitOK, "out", "CONFORMS WITHIN THE RIGOROUS BOUND (not bit-exact) of bound model "+model+":")
	// All-zero outputs under the named model do not conform.
	zeros := kernelResults(t, set, name, model, func(t *testing.T, task suite.Task, in ops.Tensors) ops.Tensors {
		y := kernel(t, task, in)["y"]
		return ops.Tensors{"y": tensor.FromF32(y.Shape, make([]float32, len(y.F32())))}
	})
	expect(t, []string{"certify", "--suite", name, "--results", zeros}, exitMismatch, "out", "DOES NOT CONFORM: OUTSIDE THE RIGOROUS BOUND")
	// A declared fp16 output with F32 results is a layout error: exit 2.
	dir = t.TempDir()
	copyDir(t, good, dir)
	editManifest(t, dir, func(m *results.Manifest) { m.Profile = "mul32=2,round16=0,out=fp16" })
	expect(t, []string{"certify", "--suite", name, "--results", dir}, exitUsage, "err", `tensor "y": dtype F32, want F16`)
}
