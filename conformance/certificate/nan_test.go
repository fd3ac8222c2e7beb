package certificate

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// e4m3Decode returns the e4m3-decode suite and its canonical outputs with
// every NaN output rewritten by f (NaN bits in, bits out).
func e4m3Decode(t *testing.T, f func(code int, bits uint32) uint32) (*golden.Set, *suite.Suite, map[string]ops.Tensors) {
	t.Helper()
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	s, err := suite.Resolve(set, "e4m3-decode")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]ops.Tensors{}
	for _, tk := range s.Tasks {
		e, err := set.Expected(tk.Cases["default"])
		if err != nil {
			t.Fatal(err)
		}
		x := e["x"]
		v := append([]byte(nil), x.Data...)
		for i := 0; i+4 <= len(v); i += 4 {
			b := binary.LittleEndian.Uint32(v[i:])
			binary.LittleEndian.PutUint32(v[i:], f(i/4, b))
		}
		out[tk.Name] = ops.Tensors{"x": tensor.Tensor{DType: x.DType, Shape: x.Shape, Data: v}}
	}
	return set, s, out
}

// TestNaNConventionClaims: decoder outputs whose NaNs carry the CUDA
// canonical NaN conform to BASE,nan=cuda (expected outputs computed by the
// wasm reference), not to BASE; under BASE,nan=any they conform with a
// verdict, Markdown and JUnit that say "not bit-exact"; a NaN where the
// reference has a number fails even the relaxation.
func TestNaNConventionClaims(t *testing.T) {
	isNaN := func(b uint32) bool { return b&0x7FFFFFFF > 0x7F800000 }
	cuda := func(_ int, b uint32) uint32 {
		if isNaN(b) {
			return 0x7FFFFFFF
		}
		return b
	}
	set, s, out := e4m3Decode(t, cuda)
	ref := wasmReference(t)
	build := func(claim string, out map[string]ops.Tensors) *Certificate {
		t.Helper()
		c, err := Build(Input{Suite: s, Set: set, GoldenSHA256: ReleasedGoldenSHA256(), ReferenceWasm: ref.ModuleDigest(), Reference: ref,
			Backend: "results", Implementation: "k", Claimed: claim, Outputs: out})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, tc := range []struct {
		name, claim string
		conforms    bool
		mode        string
		prefix      string
	}{
		{"cuda convention", "default,nan=cuda", true, "", "CONFORMS to claimed profile `default,nan=cuda`"},
		{"canonical refuses CUDA NaNs", "default", false, "", "DOES NOT CONFORM to claimed profile `default`"},
		{"x86 convention refuses CUDA NaNs", "default,nan=x86", false, "", "DOES NOT CONFORM"},
		{"relaxation accepts them", "default,nan=any", true, ModeNaNAny, "CONFORMS UP TO NaN BITS (not bit-exact"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := build(tc.claim, out)
			if c.Conforms != tc.conforms || c.Mode != tc.mode || !strings.HasPrefix(c.Verdict, tc.prefix) {
				t.Errorf("conforms %v mode %q verdict %q; want %v %q %q...", c.Conforms, c.Mode, c.Verdict, tc.conforms, tc.mode, tc.prefix)
			}
		})
	}
	// Without a claim the diagnosis names the convention to claim.
	if c := build("", out); c.Conforms || c.Diagnosis == nil || !c.Diagnosis.Explained || c.Diagnosis.Classes[0].Class != "nan:cuda" ||
		!strings.Contains(c.Diagnosis.Summary(), "claim profile default,nan=cuda") {
		t.Errorf("unclaimed CUDA NaNs: conforms %v, diagnosis %+v", c.Conforms, c.Diagnosis)
	}
	c := build("default,nan=any", out)
	if md := string(c.Markdown()); !strings.HasPrefix(md, "# CONFORMS UP TO NaN BITS (not bit-exact)") {
		t.Errorf("Markdown opens %q", md[:min(80, len(md))])
	}
	if j, err := c.JUnit(); err != nil || !strings.Contains(string(j), "up to NaN bits (not bit-exact)") {
		t.Errorf("JUnit does not say the relaxation: %v", err)
	}
	if err := Verify(c, Context{Set: set, GoldenSHA256: ReleasedGoldenSHA256(), ReferenceWasm: ref.ModuleDigest(), Reference: ref}); err != nil {
		t.Errorf("relaxed certificate rejected by Verify: %v", err)
	}
	// A NaN for the number 1.0 (code 0x38) is a mismatch under every claim.
	_, _, bad := e4m3Decode(t, func(code int, b uint32) uint32 {
		if code == 0x38 {
			return 0x7FC00000
		}
		return cuda(code, b)
	})
	if c := build("default,nan=any", bad); c.Conforms || c.Cases[0].Mismatches != 1 {
		t.Errorf("a NaN where the reference has 1.0 passed the relaxation: %s", c.Verdict)
	}
}
