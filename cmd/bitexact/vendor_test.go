package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/conformance/certificate"
	"github.com/bitexact/bitexact/conformance/results"
	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/internal/conformance/mutants"
	"github.com/bitexact/bitexact/internal/golden/stfile"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// vendorResults writes a results directory for suite name from the
// outputs of run (the reference itself or a mutant) on the exported
// inputs, the way a harness does.
func vendorResults(t *testing.T, exportDir, name, claim string, run func(p ops.Params, in ops.Tensors) (ops.Tensors, error)) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(exportDir, suite.DescriptionFile))
	if err != nil {
		t.Fatal(err)
	}
	var d suite.Description
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	outs := map[string]ops.Tensors{}
	for _, task := range d.Tasks {
		ib, err := os.ReadFile(filepath.Join(exportDir, task.InputFile))
		if err != nil {
			t.Fatal(err)
		}
		in, _, err := stfile.Decode(task.InputFile, ib)
		if err != nil {
			t.Fatal(err)
		}
		var params ops.Params
		for _, e := range task.Expected {
			if e.Profile == claim {
				params = ops.Params(e.Params)
			}
		}
		out, err := run(params, in)
		if err != nil {
			t.Fatal(err)
		}
		for n, x := range out { // a harness in another language writes no logical metadata
			x.Logical = ""
			out[n] = x
		}
		outs[task.Name] = out
	}
	dir := t.TempDir()
	if err := results.Write(dir, results.Manifest{Suite: d.Suite, SuiteVersion: d.SuiteVersion, Implementation: "test harness", Profile: claim}, outs); err != nil {
		t.Fatal(err)
	}
	return dir
}

func reference(op string) func(ops.Params, ops.Tensors) (ops.Tensors, error) {
	return func(p ops.Params, in ops.Tensors) (ops.Tensors, error) { return ops.Run(op, p, in) }
}

func mutant(t *testing.T, name string) mutants.Mutant {
	for _, m := range mutants.Catalog() {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("no mutant %s", name)
	return mutants.Mutant{}
}

func expect(t *testing.T, args []string, code int, stream, want string) (string, string) {
	t.Helper()
	c, o, e := bitexact(t, args...)
	got := o
	if stream == "err" {
		got = e
	}
	if c != code || !strings.Contains(got, want) {
		t.Fatalf("bitexact %s: exit %d, want %d; stdout:\n%s\nstderr:\n%s\nwant std%s to contain %q", strings.Join(args, " "), c, code, o, e, stream, want)
	}
	return o, e
}

// TestVendorFlow: export -> results (reference, then a mutant) -> certify
// -> verify-cert, and tampering.
func TestVendorFlow(t *testing.T) {
	exp := t.TempDir()
	expect(t, []string{"export", "--suite", "e4m3", "--out", exp}, exitOK, "out", "exported suite e4m3")
	for _, f := range []string{"suite.json", "README.md", "inputs/edges.e4m3.safetensors", "inputs/random.e4m3.safetensors"} {
		if _, err := os.Stat(filepath.Join(exp, f)); err != nil {
			t.Fatalf("export: %v", err)
		}
	}

	// The reference, claiming satfinite: conforms to satfinite, differs from nosat.
	ref := vendorResults(t, exp, "e4m3", "satfinite", reference("fp8.encode"))
	cert := t.TempDir()
	o, _ := expect(t, []string{"certify", "--suite", "e4m3", "--results", ref, "--cert-out", cert}, exitOK, "out",
		"CONFORMS to claimed profile satfinite: conforms to satfinite; differs from nosat on ")
	if strings.Contains(o, "`") {
		t.Errorf("the terminal verdict prints Markdown code marks:\n%s", o)
	}
	for _, f := range []string{certificate.JSONFile, certificate.MarkdownFile, certificate.JUnitFile} {
		if _, err := os.Stat(filepath.Join(cert, f)); err != nil {
			t.Fatal(err)
		}
	}
	cj := filepath.Join(cert, certificate.JSONFile)
	expect(t, []string{"verify-cert", cj, "--results", ref}, exitOK, "out", "results: identical to a fresh certification of")
	expect(t, []string{"verify-cert", cj}, exitOK, "out", "results: not checked (only internal consistency")

	// A mutant (E4M3 without saturation, claiming satfinite): exit 1, the
	// first mismatch decoded, the class named.
	m := mutant(t, "e4m3-no-saturation")
	bad := vendorResults(t, exp, "e4m3", "satfinite", m.Run)
	mcert := t.TempDir()
	o, _ = expect(t, []string{"certify", "--suite", "e4m3", "--results", bad, "--cert-out", mcert}, exitMismatch, "out",
		"diagnosis: explained by profile:nosat")
	for _, want := range []string{"DOES NOT CONFORM to claimed profile satfinite:", "expected 0x7e = 448 [s=0 e=1111 m=110]; got 0x7f = NaN"} {
		if !strings.Contains(o, want) {
			t.Errorf("mutant certify output lacks %q:\n%s", want, o)
		}
	}
	mj := filepath.Join(mcert, certificate.JSONFile)
	expect(t, []string{"verify-cert", mj, "--results", bad}, exitOK, "out", "DOES NOT CONFORM")
	md, _ := os.ReadFile(filepath.Join(mcert, certificate.MarkdownFile))
	if !strings.Contains(string(md), "## Diagnosis") || !strings.Contains(string(md), "profile:nosat") {
		t.Errorf("markdown certificate lacks the diagnosis:\n%s", md)
	}
	jx, _ := os.ReadFile(filepath.Join(mcert, certificate.JUnitFile))
	if !strings.Contains(string(jx), `<failure message="`) {
		t.Errorf("JUnit certificate has no failure:\n%s", jx)
	}

	// Tampering.
	orig, _ := os.ReadFile(cj)
	tamper := func(t *testing.T, edit func(c map[string]any)) string {
		var c map[string]any
		if err := json.Unmarshal(orig, &c); err != nil {
			t.Fatal(err)
		}
		edit(c)
		b, _ := json.MarshalIndent(c, "", "  ")
		p := filepath.Join(t.TempDir(), "cert.json")
		os.WriteFile(p, b, 0o644)
		return p
	}
	t.Run("verdict flipped", func(t *testing.T) {
		p := tamper(t, func(c map[string]any) { c["conforms"] = false })
		expect(t, []string{"verify-cert", p}, exitMismatch, "err", "edited after it was written")
	})
	t.Run("verdict flipped and resealed", func(t *testing.T) {
		// Recompute the content digest the way the tool does: only the
		// consistency checks can catch this.
		c, _ := certificate.Parse(orig)
		c.Cases[0].Result = "fail"
		c.ContentSHA256 = ""
		p := reseal(t, c)
		expect(t, []string{"verify-cert", p}, exitMismatch, "err", "does not follow from 0 mismatches")
	})
	t.Run("case removed", func(t *testing.T) {
		c, _ := certificate.Parse(orig)
		c.Cases = c.Cases[:1]
		p := reseal(t, c)
		expect(t, []string{"verify-cert", p}, exitMismatch, "err", "is missing from the certificate")
	})
	t.Run("case duplicated", func(t *testing.T) {
		c, _ := certificate.Parse(orig)
		c.Cases = append(c.Cases, c.Cases[0])
		p := reseal(t, c)
		expect(t, []string{"verify-cert", p}, exitMismatch, "err", "appears 2 times")
	})
	t.Run("results file changed", func(t *testing.T) {
		dir := t.TempDir()
		copyDir(t, bad, dir)
		// the certificate of the reference, checked against the mutant's files
		expect(t, []string{"verify-cert", cj, "--results", dir}, exitMismatch, "err", "has SHA-256")
	})
	t.Run("golden digest", func(t *testing.T) {
		c, _ := certificate.Parse(orig)
		c.GoldenSHA256 = strings.Repeat("0", 64)
		p := reseal(t, c)
		expect(t, []string{"verify-cert", p}, exitMismatch, "err", "manifest SHA-256 0000000000")
	})
	t.Run("not json", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "c.json")
		os.WriteFile(p, []byte("{"), 0o644)
		expect(t, []string{"verify-cert", p}, exitUsage, "err", "malformed JSON")
	})
}

func reseal(t *testing.T, c *certificate.Certificate) string {
	t.Helper()
	c.ContentSHA256 = ""
	b, _ := json.Marshal(c)
	// The digest is over the JSON with the field empty; recompute it as
	// a tamperer with the source would.
	var m map[string]any
	json.Unmarshal(b, &m)
	c2, err := certificate.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	d, err := certificate.ContentDigest(c2)
	if err != nil {
		t.Fatal(err)
	}
	c.ContentSHA256 = d
	out, _ := json.Marshal(c)
	p := filepath.Join(t.TempDir(), "cert.json")
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(src, e.Name()))
		os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644)
	}
}

// TestVendorBadResults: every malformed results directory is exit 2
// with the problem named.
func TestVendorBadResults(t *testing.T) {
	exp := t.TempDir()
	expect(t, []string{"export", "--suite", "e4m3", "--out", exp}, exitOK, "out", "exported")
	good := vendorResults(t, exp, "e4m3", "satfinite", reference("fp8.encode"))
	for _, tc := range []struct {
		name string
		edit func(t *testing.T, dir string)
		want string
	}{
		{"truncated safetensors", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "edges.e4m3.safetensors")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)-100], 0o644)
		}, "edges.e4m3.safetensors: malformed safetensors"},
		{"header only", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "edges.e4m3.safetensors"), []byte{1, 2, 3}, 0o644)
		}, "edges.e4m3.safetensors: truncated safetensors"},
		{"wrong dtype", func(t *testing.T, dir string) {
			writeTensors(t, dir, "edges.e4m3", ops.Tensors{"codes": f32Tensor(1556)})
		}, `edges.e4m3.safetensors: tensor "codes": dtype F32, want U8`},
		{"wrong shape", func(t *testing.T, dir string) {
			writeTensors(t, dir, "edges.e4m3", ops.Tensors{"codes": u8Tensor(100)})
		}, `edges.e4m3.safetensors: tensor "codes": shape [100], want [1556]`},
		{"missing tensor", func(t *testing.T, dir string) {
			writeTensors(t, dir, "edges.e4m3", ops.Tensors{"y": u8Tensor(1556)})
		}, `edges.e4m3.safetensors: tensor "codes": missing`},
		{"extra tensor", func(t *testing.T, dir string) {
			writeTensors(t, dir, "edges.e4m3", ops.Tensors{"codes": u8Tensor(1556), "debug": u8Tensor(4)})
		}, `tensor "debug": not an output of the task`},
		{"missing file", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "random.e4m3.safetensors"))
		}, "random.e4m3.safetensors: missing results file"},
		{"missing task", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m *results.Manifest) { m.Tasks = m.Tasks[:1] })
		},
			`task "random.e4m3" missing (every task of the suite is required`},
		{"duplicate task", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m *results.Manifest) { m.Tasks = append(m.Tasks, m.Tasks[0]) })
		}, "listed twice"},
		{"wrong suite version", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m *results.Manifest) { m.SuiteVersion = "1999.01-1" })
		}, `suite_version "1999.01-1"`},
		{"unknown profile", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m *results.Manifest) { m.Profile = "fast" })
		}, `profile "fast" is not a profile of suite e4m3`},
		{"malformed results.json", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, results.ManifestFile), []byte(`{"format": 1}`), 0o644)
		}, "results.json: malformed JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			copyDir(t, good, dir)
			tc.edit(t, dir)
			expect(t, []string{"certify", "--suite", "e4m3", "--results", dir}, exitUsage, "err", tc.want)
		})
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"export no suite", []string{"export", "--out", t.TempDir()}, "--suite is required"},
		{"export unknown suite", []string{"export", "--suite", "fp7", "--out", t.TempDir()}, `unknown suite "fp7"`},
		{"certify results without suite", []string{"certify", "--results", good}, "needs both --suite and --results"},
		{"certify wrong suite", []string{"certify", "--suite", "e5m2", "--results", good}, `suite "e4m3", but certifying suite "e5m2"`},
		{"certify unknown backend", []string{"certify", "--backend", "rocm"}, `unknown backend "rocm"`},
		{"certify ptx without backend", []string{"certify", "--ptx", "k.ptx"}, "need --backend cuda"},
		{"verify-cert no file", []string{"verify-cert"}, "want exactly one certificate file"},
		{"certify cuda without the tag", []string{"certify", "--backend", "cuda", "--ptx", "k.ptx", "--kernel", "k", "--abi", "unary-e4m3"}, "built without CUDA"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if builtWithCUDA && tc.name == "certify cuda without the tag" {
				t.Skip("built with -tags cuda")
			}
			expect(t, tc.args, exitUsage, "err", tc.want)
		})
	}
}

// TestVendorReducedRun: --tasks certifies a subset and the certificate
// says it is not valid for certification.
func TestVendorReducedRun(t *testing.T) {
	exp := t.TempDir()
	expect(t, []string{"export", "--suite", "e4m3", "--out", exp}, exitOK, "out", "exported")
	good := vendorResults(t, exp, "e4m3", "satfinite", reference("fp8.encode"))
	cert := t.TempDir()
	expect(t, []string{"certify", "--suite", "e4m3", "--results", good, "--tasks", "edges.e4m3", "--cert-out", cert}, exitOK, "out",
		"NOT VALID FOR CERTIFICATION: reduced run: tasks left out: random.e4m3")
	b, _ := os.ReadFile(filepath.Join(cert, certificate.JSONFile))
	c, err := certificate.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if c.Valid || len(c.Missing) != 1 {
		t.Errorf("valid=%v missing=%v", c.Valid, c.Missing)
	}
	expect(t, []string{"verify-cert", filepath.Join(cert, certificate.JSONFile)}, exitOK, "out", "NOT VALID FOR CERTIFICATION")
}

func writeTensors(t *testing.T, dir, task string, ts ops.Tensors) {
	t.Helper()
	b, err := stfile.Encode(ts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, task+".safetensors"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func editManifest(t *testing.T, dir string, edit func(m *results.Manifest)) {
	t.Helper()
	p := filepath.Join(dir, results.ManifestFile)
	b, _ := os.ReadFile(p)
	var m results.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(&m)
	b, _ = json.Marshal(m)
	os.WriteFile(p, b, 0o644)
}

func u8Tensor(n int) tensor.Tensor  { return tensor.FromU8([]int{n}, make([]uint8, n)) }
func f32Tensor(n int) tensor.Tensor { return tensor.FromF32([]int{n}, make([]float32, n)) }
