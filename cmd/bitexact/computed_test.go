package main

import (
	"bytes"
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
	"github.com/bitexact/bitexact/wasm"
)

// kernelResults writes a results directory for suite name claiming claim:
// each task's outputs are kernel(task, inputs), as a vendor harness that
// runs its kernel once per task writes them.
func kernelResults(t *testing.T, set *golden.Set, name, claim string, kernel func(t *testing.T, task suite.Task, in ops.Tensors) ops.Tensors) string {
	t.Helper()
	s, err := suite.Resolve(set, name)
	if err != nil {
		t.Fatal(err)
	}
	outs := map[string]ops.Tensors{}
	for _, task := range s.Tasks {
		in, err := set.Inputs(task.Cases[task.Profiles[0]])
		if err != nil {
			t.Fatal(err)
		}
		out := kernel(t, task, in)
		for n, x := range out { // a harness in another language writes no logical metadata
			x.Logical = ""
			out[n] = x
		}
		outs[task.Name] = out
	}
	dir := t.TempDir()
	m := results.Manifest{Suite: name, SuiteVersion: s.Version, Implementation: "independent kernel (test)", Profile: claim}
	if err := results.Write(dir, m, outs); err != nil {
		t.Fatal(err)
	}
	return dir
}

// refKernel computes the op natively with params plus the task's fixed
// parameters: a correct kernel of that behaviour.
func refKernel(op string, params ops.Params) func(t *testing.T, task suite.Task, in ops.Tensors) ops.Tensors {
	return func(t *testing.T, task suite.Task, in ops.Tensors) ops.Tensors {
		t.Helper()
		p := ops.Params{}
		for k, v := range task.Params {
			p[k] = v
		}
		for k, v := range params {
			p[k] = v
		}
		out, err := ops.Run(op, p, in)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
}

// garbageOn is kernel, except that on task bad every output byte is 0x77
// and every byte of a tensor named "scales" 0x80.
func garbageOn(bad string, kernel func(*testing.T, suite.Task, ops.Tensors) ops.Tensors) func(*testing.T, suite.Task, ops.Tensors) ops.Tensors {
	return func(t *testing.T, task suite.Task, in ops.Tensors) ops.Tensors {
		out := kernel(t, task, in)
		if task.Name != bad {
			return out
		}
		for n, x := range out {
			fill := byte(0x77)
			if n == "scales" {
				fill = 0x80
			}
			x.Data = bytes.Repeat([]byte{fill}, len(x.Data))
			out[n] = x
		}
		return out
	}
}

// twoExperts is kernel, except that with more than two active experts the
// rows past the second are those of the first two again (a kernel that
// indexes its experts modulo 2): right on the crafted two-expert task,
// wrong on the main one.
func twoExperts(kernel func(*testing.T, suite.Task, ops.Tensors) ops.Tensors) func(*testing.T, suite.Task, ops.Tensors) ops.Tensors {
	return func(t *testing.T, task suite.Task, in ops.Tensors) ops.Tensors {
		out := kernel(t, task, in)
		y := out["y"]
		a, row := y.Shape[0], len(y.Data)/y.Shape[0]
		data := bytes.Clone(y.Data)
		for i := 2; i < a; i++ {
			copy(data[i*row:(i+1)*row], data[(i%2)*row:(i%2+1)*row])
		}
		out["y"] = tensor.Tensor{DType: y.DType, Shape: y.Shape, Data: data, Logical: y.Logical}
		return out
	}
}

// TestCertifyComputedExpected: a task the golden set has no case for
// under the claimed profile is held to outputs computed by the embedded
// wasm module, recorded as such. On 383a60b the first two kernels were
// certified (exit 0): the tasks were marked n/a.
func TestCertifyComputedExpected(t *testing.T) {
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	const (
		mxClaim = "mode=floor,profile=ties-away"
		spClaim = "schedule=sparse-v7-seq,scale_decode=e4m3fn"
	)
	mxRef := refKernel("mxfp4.quantize", ops.Params{"mode": "floor", "profile": "ties-away"})
	spRef := refKernel("gemv.sparse_fp4", ops.Params{"schedule": "sparse-v7-seq"})
	for _, tc := range []struct {
		name, suite, claim string
		kernel             func(*testing.T, suite.Task, ops.Tensors) ops.Tensors
		code               int
		computed           string // the task whose expected outputs are computed
		want               []string
	}{
		{"MXFP4 matrix garbage claiming ties-away", "mxfp4", mxClaim, garbageOn("matrix.f32", mxRef), exitMismatch, "matrix.f32",
			[]string{"DOES NOT CONFORM to claimed profile " + mxClaim, "FAIL matrix.f32 (computed expected outputs): 138574 of 139264 elements differ",
				"computed matrix.f32: the golden set has no case of " + mxClaim}},
		{"MXFP4 ties-away reference", "mxfp4", mxClaim, mxRef, exitOK, "matrix.f32",
			[]string{"CONFORMS to claimed profile " + mxClaim, "5/5 (1 computed)"}},
		{"MXFP4 ties-away reference, no claim", "mxfp4", "", mxRef, exitOK, "matrix.f32",
			[]string{"conforms to " + mxClaim + "; differs from", "5/5 (1 computed)"}},
		{"sparse GEMV right on two experts only, claiming sparse-v7-seq", "gemv-sparse-fp4", spClaim, twoExperts(spRef), exitMismatch, "gemv.sparse_fp4",
			[]string{"DOES NOT CONFORM to claimed profile " + spClaim, "FAIL gemv.sparse_fp4 (computed expected outputs): "}},
		{"sparse GEMV sparse-v7-seq reference", "gemv-sparse-fp4", spClaim, spRef, exitOK, "gemv.sparse_fp4",
			[]string{"CONFORMS to claimed profile " + spClaim}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := kernelResults(t, set, tc.suite, tc.claim, tc.kernel)
			cert := t.TempDir()
			o, _ := expect(t, []string{"certify", "--suite", tc.suite, "--results", res, "--cert-out", cert}, tc.code, "out", tc.want[0])
			for _, w := range tc.want[1:] {
				if !strings.Contains(o, w) {
					t.Errorf("certify output lacks %q:\n%s", w, o)
				}
			}
			cj := filepath.Join(cert, certificate.JSONFile)
			b, err := os.ReadFile(cj)
			if err != nil {
				t.Fatal(err)
			}
			c, err := certificate.Parse(b)
			if err != nil {
				t.Fatal(err)
			}
			if !c.Valid {
				t.Errorf("certificate not valid for certification: %s", c.InvalidReason)
			}
			by := "wasm sha256:" + wasm.ModuleDigest()
			for _, cs := range c.Cases {
				want := certificate.ExpectedGolden
				if cs.Task == tc.computed {
					want = certificate.ExpectedComputed
					if cs.ComputedBy != by || cs.Case != certificate.ComputedCase {
						t.Errorf("task %s: computed by %q, case %q; want %q, %q", cs.Task, cs.ComputedBy, cs.Case, by, certificate.ComputedCase)
					}
				}
				if cs.Expected != want {
					t.Errorf("task %s: expected outputs %q, want %q", cs.Task, cs.Expected, want)
				}
			}
			md, _ := os.ReadFile(filepath.Join(cert, certificate.MarkdownFile))
			if w := "| " + tc.computed + " | **computed** by `" + by + "` (no golden case) |"; !strings.Contains(string(md), w) {
				t.Errorf("certificate.md lacks %q:\n%s", w, md)
			}
			verdict := "CONFORMS"
			switch {
			case tc.code != exitOK:
				verdict = "DOES NOT CONFORM"
			case tc.claim == "":
				verdict = "conforms to mode=floor"
			}
			expect(t, []string{"verify-cert", cj, "--results", res}, exitOK, "out", verdict)
		})
	}
}

// TestCertifyUncomputableClaim: a claimed profile the reference cannot
// compute for a task makes the claim invalid: exit 2 naming the task and
// the profile, before any verdict or certificate. The golden set is the
// embedded one with one MXFP4 edge case relabelled to a profile that
// exists on that task only.
func TestCertifyUncomputableClaim(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, golden.DataFS()); err != nil {
		t.Fatal(err)
	}
	mp := filepath.Join(dir, golden.ManifestFile)
	mb, err := os.ReadFile(mp)
	if err != nil {
		t.Fatal(err)
	}
	// The case mxfp4.blocks.edge-nonfinite.floor.ties-away, as the
	// manifest spells its parameters.
	old := []byte(`"name": "mxfp4.blocks.edge-nonfinite.floor.ties-away",`)
	i := bytes.Index(mb, old)
	j := bytes.Index(mb[i:], []byte(`"profile": "ties-away"`))
	if i < 0 || j < 0 {
		t.Fatal("manifest layout: case or parameter not found")
	}
	mb = append(mb[:i+j:i+j], append([]byte(`"profile": "unknown-rounding"`), mb[i+j+len(`"profile": "ties-away"`):]...)...)
	if err := os.WriteFile(mp, mb, 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := golden.Load(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	const claim = "mode=floor,profile=unknown-rounding"
	res := kernelResults(t, set, "mxfp4", claim, refKernel("mxfp4.quantize", ops.Params{"mode": "floor", "profile": "ties-away"}))
	cert := filepath.Join(t.TempDir(), "cert")
	o, e := expect(t, []string{"certify", "--dir", dir, "--suite", "mxfp4", "--results", res, "--cert-out", cert}, exitUsage, "err",
		"invalid claim: profile "+claim+" cannot be checked on task matrix.f32")
	if o != "" {
		t.Errorf("certify printed before refusing the claim:\n%s", o)
	}
	if !strings.Contains(e, "unknown-rounding") {
		t.Errorf("error does not say why: %s", e)
	}
	if _, err := os.Stat(cert); !os.IsNotExist(err) {
		t.Errorf("a certificate was written for an invalid claim (%v)", err)
	}
}
