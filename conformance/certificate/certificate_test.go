package certificate

import (
	"strings"
	"testing"

	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/ops"
)

func e4m3(t *testing.T, profile string) (*golden.Set, *suite.Suite, map[string]ops.Tensors) {
	t.Helper()
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	s, err := suite.Resolve(set, "e4m3")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]ops.Tensors{}
	for _, tk := range s.Tasks {
		out[tk.Name], err = set.Expected(tk.Cases[profile])
		if err != nil {
			t.Fatal(err)
		}
	}
	return set, s, out
}

// TestExhaustiveVerdict: a failing exhaustive sweep of the profile held to
// fails the certificate even when every golden case passes; a sampled
// sweep cannot be valid.
func TestExhaustiveVerdict(t *testing.T) {
	set, s, out := e4m3(t, "satfinite")
	in := Input{Suite: s, Set: set, GoldenSHA256: "g", ReferenceWasm: "w", Backend: "cuda-ptx", Implementation: "k",
		Claimed: "satfinite", Outputs: out, Exhaustive: []Exhaustive{
			{Conversion: "e4m3/satfinite", Profile: "satfinite", Chunks: 256, Differing: 1, First: "input 0x7f800000"},
			{Conversion: "e4m3/nosat", Profile: "nosat", Chunks: 256, Differing: 200},
		}}
	c, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if c.Conforms || !strings.Contains(c.Verdict, "differs from `e4m3/satfinite` in 1 of 256 chunks") {
		t.Errorf("conforms=%v verdict %q", c.Conforms, c.Verdict)
	}
	if v := c.VerdictText(); strings.Contains(v, "`") || !strings.Contains(v, "differs from e4m3/satfinite in 1 of 256 chunks") ||
		!strings.HasPrefix(v, "DOES NOT CONFORM to claimed profile satfinite: ") {
		t.Errorf("terminal verdict %q keeps Markdown marks or loses words", v)
	}
	ctx := Context{Set: set, GoldenSHA256: "g", ReferenceWasm: "w"}
	if err := Verify(c, ctx); err != nil {
		t.Errorf("fresh certificate rejected: %v", err)
	}
	in.Exhaustive = []Exhaustive{{Conversion: "e4m3/satfinite", Profile: "satfinite", Chunks: 8, Conforms: true}}
	c, err = Build(in)
	if err != nil {
		t.Fatal(err)
	}
	c.Valid = true // a forged claim of validity for a sampled sweep
	c.Verdict = verdictLine(c)
	c.seal()
	if err := Verify(c, ctx); err == nil || !strings.Contains(err.Error(), "swept 8 of 256 chunks") {
		t.Errorf("sampled sweep claimed valid: err %v", err)
	}
}

// TestAgainstSelection: without a claim, the certificate holds the results
// to the profile they match.
func TestAgainstSelection(t *testing.T) {
	set, s, out := e4m3(t, "nosat")
	c, err := Build(Input{Suite: s, Set: set, Backend: "results", Implementation: "x", Outputs: out})
	if err != nil {
		t.Fatal(err)
	}
	if c.Against != "nosat" || !c.Conforms || c.Diagnosis != nil {
		t.Errorf("against %s conforms %v", c.Against, c.Conforms)
	}
	c, err = Build(Input{Suite: s, Set: set, Backend: "results", Implementation: "x", Outputs: out, Claimed: "satfinite"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Against != "satfinite" || c.Conforms || c.Diagnosis == nil || c.Diagnosis.Classes[0].Class != "profile:nosat" {
		t.Errorf("claimed satfinite: %s", c.Verdict)
	}
	// First mismatch decoded: field by field.
	m := c.Cases[0].First[0]
	if m.Expected.Fields == "" || m.Got.Fields == "" || len(m.Inputs) != 1 {
		t.Errorf("mismatch not decoded: %+v", m)
	}
}

// TestProfileNotOnEveryTask: a profile the golden set computes on some
// tasks only leaves the others n/a, neither passed nor failed.
func TestProfileNotOnEveryTask(t *testing.T) {
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	s, err := suite.Resolve(set, "mxfp4")
	if err != nil {
		t.Fatal(err)
	}
	const claim = "mode=floor,profile=ties-away"
	out := map[string]ops.Tensors{}
	for _, tk := range s.Tasks {
		in, _ := set.Inputs(tk.Cases[tk.Profiles[0]])
		out[tk.Name], err = ops.Run("mxfp4.quantize", ops.Params{"mode": "floor", "profile": "ties-away"}, in)
		if err != nil {
			t.Fatal(err)
		}
	}
	c, err := Build(Input{Suite: s, Set: set, Backend: "results", Implementation: "x", Claimed: claim, Outputs: out})
	if err != nil {
		t.Fatal(err)
	}
	results := map[string]string{}
	for _, cs := range c.Cases {
		results[cs.Task] = cs.Result
	}
	if !c.Conforms || results["matrix.f32"] != "n/a" || results["blocks.edge-nonfinite"] != "pass" {
		t.Errorf("conforms=%v cases %v: %s", c.Conforms, results, c.Verdict)
	}
	if err := Verify(c, Context{Set: set}); err != nil {
		t.Errorf("verify: %v", err)
	}
}
