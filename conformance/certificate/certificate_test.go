package certificate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/wasm"
)

func e4m3(t testing.TB, profile string) (*golden.Set, *suite.Suite, map[string]ops.Tensors) {
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
	in := Input{Suite: s, Set: set, GoldenSHA256: ReleasedGoldenSHA256(), ReferenceWasm: "w", Backend: "cuda-ptx", Implementation: "k",
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
	ctx := Context{Set: set, GoldenSHA256: ReleasedGoldenSHA256(), ReferenceWasm: "w"}
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

// TestProfileNotOnEveryTask: a claimed profile the golden set has on some
// tasks only is held to outputs the reference computes on the others,
// recorded per case; without a reference, or where the reference refuses
// the pair, the claim is refused with a *ClaimError naming task and
// profile. (Until issue 16 such tasks were "n/a" and certified.)
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
	ref := wasmReference(t)
	digest := wasm.ModuleDigest()
	in := Input{Suite: s, Set: set, GoldenSHA256: ReleasedGoldenSHA256(), ReferenceWasm: digest, Backend: "results", Implementation: "x", Claimed: claim, Outputs: out, Reference: ref}
	c, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	byTask := map[string]Case{}
	for _, cs := range c.Cases {
		byTask[cs.Task] = cs
	}
	m, e := byTask["matrix.f32"], byTask["blocks.edge-nonfinite"]
	if !c.Conforms || !c.Valid || m.Result != "pass" || m.Expected != ExpectedComputed || m.ComputedBy != "wasm sha256:"+digest || m.Case != ComputedCase ||
		m.Elements != 128*1024+128*64 || e.Result != "pass" || e.Expected != ExpectedGolden {
		t.Errorf("conforms=%v valid=%v (%s) cases %+v: %s", c.Conforms, c.Valid, c.InvalidReason, byTask, c.Verdict)
	}
	if err := Verify(c, Context{Set: set, GoldenSHA256: ReleasedGoldenSHA256(), ReferenceWasm: digest}); err != nil {
		t.Errorf("verify: %v", err)
	}

	// Computed by another engine than the reference module: checked, but
	// not valid for certification.
	in.Reference = golden.Native{}
	if c, err := Build(in); err != nil || c.Valid || !strings.Contains(c.InvalidReason, "computed by native") || !c.Conforms {
		t.Errorf("native reference: err %v, valid %v (%s)", err, c.Valid, c.InvalidReason)
	}

	for _, tc := range []struct {
		name string
		ref  golden.Engine
		want string
	}{
		{"no reference", nil, "no reference engine"},
		{"reference refuses", refuses{}, "refused for the test"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in.Reference = tc.ref
			_, err := Build(in)
			var ce *ClaimError
			if !errors.As(err, &ce) || ce.Task != "matrix.f32" || ce.Profile != claim || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Build = %v, want a *ClaimError for task matrix.f32, profile %s, saying %q", err, claim, tc.want)
			}
		})
	}
}

// refuses is an engine that refuses every op.
type refuses struct{ golden.Native }

func (refuses) Run(context.Context, string, ops.Params, ops.Tensors) (ops.Tensors, error) {
	return nil, errors.New("refused for the test")
}

// TestVerifyRefusesUnchecked: a certificate that leaves a task unchecked
// ("n/a", as builds before issue 16 wrote them), or misstates where its
// expected outputs come from, is rejected even when resealed.
func TestVerifyRefusesUnchecked(t *testing.T) {
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	s, err := suite.Resolve(set, "mxfp4")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]ops.Tensors{}
	for _, tk := range s.Tasks {
		in, _ := set.Inputs(tk.Cases[tk.Profiles[0]])
		out[tk.Name], _ = ops.Run("mxfp4.quantize", ops.Params{"mode": "floor", "profile": "ties-away"}, in)
	}
	digest := wasm.ModuleDigest()
	c0, err := Build(Input{Suite: s, Set: set, GoldenSHA256: ReleasedGoldenSHA256(), ReferenceWasm: digest, Backend: "results", Implementation: "x",
		Claimed: "mode=floor,profile=ties-away", Outputs: out, Reference: wasmReference(t)})
	if err != nil {
		t.Fatal(err)
	}
	computed := -1
	for i, cs := range c0.Cases {
		if cs.Expected == ExpectedComputed {
			computed = i
		}
	}
	if computed < 0 {
		t.Fatal("no computed case")
	}
	// pi is the claimed profile's index (the suite's profile order moves
	// as recipes are added).
	pi := -1
	for i, p := range c0.Profiles {
		if p.Profile == c0.Against {
			pi = i
		}
	}
	if pi < 0 {
		t.Fatal("claimed profile not among the certificate's profiles")
	}
	for _, tc := range []struct {
		name string
		edit func(c *Certificate)
		want string
	}{
		{"n/a", func(c *Certificate) {
			cs := &c.Cases[computed]
			cs.Result, cs.Case, cs.Expected, cs.ComputedBy, cs.Elements, cs.Tensors = "n/a", NoCase, "", "", 0, nil
			c.Profiles[pi].Tasks, c.Profiles[pi].Computed = 1, 0
		}, "is not checked against profile"},
		{"computed passed off as golden", func(c *Certificate) {
			c.Cases[computed].Expected, c.Cases[computed].ComputedBy = ExpectedGolden, ""
		}, "the golden set has no case of profile"},
		{"golden passed off as computed", func(c *Certificate) {
			cs := &c.Cases[1-computed]
			cs.Expected, cs.ComputedBy, cs.Case = ExpectedComputed, "wasm sha256:"+digest, ComputedCase
		}, "recorded as computed, but the golden set has case"},
		{"computed by another engine", func(c *Certificate) { c.Cases[computed].ComputedBy = "native" }, "not the reference module"},
		{"computed count", func(c *Certificate) { c.Profiles[pi].Computed = 0 }, fmt.Sprintf("(0 computed), its cases are %d (1 computed)", len(s.Tasks))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := c0.JSON()
			c, err := Parse(b)
			if err != nil {
				t.Fatal(err)
			}
			if c.Profiles[pi].Profile != c.Against {
				t.Fatalf("profile %d is %s, want %s", pi, c.Profiles[pi].Profile, c.Against)
			}
			tc.edit(c)
			c.Verdict = verdictLine(c)
			if err := c.seal(); err != nil {
				t.Fatal(err)
			}
			err = Verify(c, Context{Set: set, GoldenSHA256: ReleasedGoldenSHA256(), ReferenceWasm: digest})
			var ve *VerifyError
			if !errors.As(err, &ve) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Verify = %v, want a rejection containing %q", err, tc.want)
			}
		})
	}
}
