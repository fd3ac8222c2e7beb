package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/bitexact/bitexact/cmd/bitexact/internal/demo"
	"github.com/bitexact/bitexact/conformance/diagnose"
	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
	"github.com/bitexact/bitexact/refimpl/unary"
)

// A facet is one place a declared code format must reach: the golden set,
// the vendor suites, the ops that encode and decode it, the diagnosis, the
// demo and the docs. Everything but the docs is derived from the format's
// description (refimpl/unary.Format), so a gap means a derivation skipped
// the format, an op is not registered, or a committed artifact (the golden
// set, docs/semantics.md) was not regenerated.
type facetGap struct{ facet, why string }

func (g facetGap) String() string { return g.facet + ": " + g.why }

// facetEnv is what the facets are checked against: the committed golden
// set, the demo's metadata and the generated semantics doc.
type facetEnv struct {
	set       *golden.Set
	demo      map[string]demo.DecodeOp // by format name
	semantics string
}

var loadFacetEnv = sync.OnceValues(func() (*facetEnv, error) {
	set, err := golden.Default()
	if err != nil {
		return nil, err
	}
	rec := httptest.NewRecorder()
	demo.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/meta.json", nil))
	var meta struct{ Formats []demo.Format }
	if err := json.Unmarshal(rec.Body.Bytes(), &meta); err != nil {
		return nil, fmt.Errorf("demo meta.json: %v", err)
	}
	env := &facetEnv{set: set, demo: map[string]demo.DecodeOp{}}
	for _, f := range meta.Formats {
		env.demo[f.Name] = f.Decode
	}
	sem, err := os.ReadFile("../../docs/semantics.md")
	if err != nil {
		return nil, err
	}
	env.semantics = string(sem)
	return env, nil
})

// missingFacets lists the facets that format f lacks, in a fixed order.
func missingFacets(f unary.Format, env *facetEnv) []facetGap {
	var gaps []facetGap
	add := func(facet string, err error) {
		if err != nil {
			gaps = append(gaps, facetGap{facet, err.Error()})
		}
	}
	add("golden cases", goldenFacet(f, env.set))
	add("suite", suiteFacet(f, env.set))
	add("encode path", encodeFacet(f))
	add("decode path", decodeFacet(f))
	add("diagnosis coverage", diagnosisFacet(f, env.set))
	add("demo metadata", demoFacet(f, env.demo))
	add("cli", cliFacet(f))
	add("docs", docsFacet(f, env.semantics))
	return gaps
}

// goldenFacet: the set has the edge and random cases of every conversion
// of f, through f's encode op, and its decode cases.
func goldenFacet(f unary.Format, set *golden.Set) error {
	convs := f.Conversions()
	if len(convs) == 0 {
		return fmt.Errorf("no conversion of %s is declared in refimpl/unary", f.Name)
	}
	want := func(name, op string, params map[string]string) error {
		c, ok := set.Case(name)
		if !ok {
			return fmt.Errorf("the golden set %s has no case %s (run make golden)", set.Manifest.Suite, name)
		}
		if c.Op != op || !reflect.DeepEqual(map[string]string(c.Params), params) && len(params)+len(c.Params) > 0 {
			return fmt.Errorf("case %s is op %s %v, the description says %s %v", name, c.Op, c.Params, op, params)
		}
		return nil
	}
	for _, c := range convs {
		for _, set := range []string{"edges", "random"} {
			if err := want(f.Name+"."+set+"."+c.Profile, f.Encode.Op, f.EncodeParams(c.Profile)); err != nil {
				return err
			}
		}
	}
	if f.DecodeOp.NoGolden == "" {
		return want(f.Name+".decode.all", f.DecodeOp.Op, f.DecodeParams())
	}
	return nil
}

// suiteFacet: the float32, fp16-input and bf16-input suites of f, those
// of its peers' codes, and its decode suite resolve against the set, the
// float32 one with every profile of f.
func suiteFacet(f unary.Format, set *golden.Set) error {
	names := []string{f.Name}
	for _, src := range []string{"fp16", "bf16"} {
		if src != f.Name {
			names = append(names, f.Name+"-from-"+src)
		}
	}
	for _, pp := range unary.PeerPairs() {
		if pp.To.Name == f.Name {
			names = append(names, f.Name+"-from-"+pp.From.Name)
		}
	}
	if f.DecodeOp.NoGolden == "" {
		names = append(names, f.Name+"-decode")
	}
	for _, n := range names {
		s, err := suite.Resolve(set, n)
		if err != nil {
			return err
		}
		if n != f.Name {
			continue
		}
		var profiles []string
		for _, c := range f.Conversions() {
			profiles = append(profiles, c.Profile)
		}
		got := slices.Clone(s.Profiles)
		slices.Sort(got)
		slices.Sort(profiles)
		if !slices.Equal(got, profiles) {
			return fmt.Errorf("suite %s has profiles %v, the format %v", n, got, profiles)
		}
	}
	return nil
}

// encodeFacet: f's encode op gives each conversion's codes on a few
// inputs of every class.
func encodeFacet(f unary.Format) error {
	if _, err := ops.Lookup(f.Encode.Op); err != nil {
		return err
	}
	xs := []float32{0, float32(math.Copysign(0, -1)), 1, -1.5, 0.3, 1e-3, 3e38, float32(math.Inf(-1)), float32(math.NaN()), 1e-42}
	for _, c := range f.Conversions() {
		out, err := ops.Run(f.Encode.Op, f.EncodeParams(c.Profile), ops.Tensors{"x": tensor.FromF32([]int{len(xs)}, xs)})
		if err != nil {
			return err
		}
		y := out[f.Encode.Output]
		for i, x := range xs {
			var got uint32
			if c.Width() == 1 {
				got = uint32(y.Data[i])
			} else {
				got = uint32(y.Bits16()[i])
			}
			if want := c.Encode(x); got != want {
				return fmt.Errorf("%s %s(%g) = %#x, conversion %s says %#x", f.Encode.Op, c.Profile, x, got, c.Name, want)
			}
		}
	}
	return nil
}

// decodeFacet: f's decode op gives f.Decode's bits for every code.
func decodeFacet(f unary.Format) error {
	d := f.DecodeOp
	if _, err := ops.Lookup(d.Op); err != nil {
		return err
	}
	n := 1 << f.Fields.Bits()
	var in tensor.Tensor
	switch d.DType {
	case "U8":
		c := make([]uint8, n)
		for i := range c {
			c[i] = uint8(i)
		}
		in = tensor.FromU8([]int{n}, c)
		in.Logical = d.Logical
	case "F16", "BF16":
		c := make([]uint16, n)
		for i := range c {
			c[i] = uint16(i)
		}
		in = tensor.FromBits16(tensor.DType(d.DType), []int{n}, c)
	default:
		return fmt.Errorf("decode input dtype %q: want U8, F16 or BF16", d.DType)
	}
	out, err := ops.Run(d.Op, f.DecodeParams(), ops.Tensors{d.Input: in})
	if err != nil {
		return err
	}
	for _, y := range out {
		if y.DType != tensor.F32 || y.Len() != n {
			continue
		}
		for c, b := range y.Bits32() {
			if want := math.Float32bits(f.Decode(uint32(c))); b != want {
				return fmt.Errorf("%s of code %#x gives %#08x, the format %#08x", d.Op, c, b, want)
			}
		}
		return nil
	}
	return fmt.Errorf("%s has no F32 output of %d values", d.Op, n)
}

// diagnosisFacet: the diagnosis reads f's codes: on the first task of
// f's float32 suite the code classes (ties, truncation) of a
// sign-magnitude format, or another class than a profile, compute.
func diagnosisFacet(f unary.Format, set *golden.Set) error {
	s, err := suite.Resolve(set, f.Name)
	if err != nil {
		return fmt.Errorf("no suite to diagnose: %v", err)
	}
	t := s.Tasks[0]
	against := t.Profiles[0]
	c := t.Cases[against]
	in, err := set.Inputs(c)
	if err != nil {
		return err
	}
	ref, err := set.Expected(c)
	if err != nil {
		return err
	}
	dt := diagnose.Task{Task: t, Params: c.Params, Inputs: in, Reference: ref, Expected: map[string]ops.Tensors{against: ref}, Observed: ref}
	var applied []string
	for _, a := range diagnose.Alternatives(s, against) {
		if strings.HasPrefix(a.Class, "profile:") {
			continue
		}
		if _, ok, err := a.Compute(s, dt); err == nil && ok {
			applied = append(applied, a.Class)
		}
	}
	if f.Fields.Sign == 1 {
		for _, class := range []string{"ties-away", "ties-toward-zero", "truncation"} {
			if !slices.Contains(applied, class) {
				return fmt.Errorf("class %s does not apply to suite %s (diagnose cannot read %s codes)", class, s.Name, f.Name)
			}
		}
	}
	if len(applied) == 0 {
		return fmt.Errorf("no class but another profile applies to suite %s", s.Name)
	}
	return nil
}

// demoFacet: the demo's metadata lists f with its decode op.
func demoFacet(f unary.Format, formats map[string]demo.DecodeOp) error {
	d, ok := formats[f.Name]
	if !ok {
		return fmt.Errorf("meta.json lists no format %s", f.Name)
	}
	if d.Op != f.DecodeOp.Op || d.Input != f.DecodeOp.Input || d.DType != f.DecodeOp.DType || !maps.Equal(d.Params, f.DecodeParams()) {
		return fmt.Errorf("meta.json decodes %s with %+v, the description says %+v", f.Name, d, f.DecodeOp)
	}
	return nil
}

// cliFacet: bitexact encode --format f prints every conversion of f.
func cliFacet(f unary.Format) error {
	var out, errb strings.Builder
	if st := runEncode(context.Background(), []string{"--format", f.Name, "1.5"}, &out, &errb); st != exitOK {
		return fmt.Errorf("bitexact encode --format %s: exit %d: %s", f.Name, st, strings.TrimSpace(errb.String()))
	}
	convs := f.Conversions()
	if len(convs) == 0 {
		return fmt.Errorf("bitexact encode --format %s: the format has no conversion to print", f.Name)
	}
	for _, c := range convs {
		if !strings.Contains(out.String(), c.Profile) {
			return fmt.Errorf("bitexact encode --format %s does not print profile %s", f.Name, c.Profile)
		}
	}
	return nil
}

// docsFacet: f's rationale exists and names f, and docs/semantics.md
// has f's section.
func docsFacet(f unary.Format, semantics string) error {
	if f.Rationale == "" {
		return fmt.Errorf("%s names no rationale document", f.Name)
	}
	b, err := os.ReadFile("../../" + f.Rationale)
	if err != nil {
		return err
	}
	if !strings.Contains(strings.ToLower(string(b)), strings.ToLower(f.Name)) {
		return fmt.Errorf("%s does not mention %s", f.Rationale, f.Name)
	}
	if !strings.Contains(semantics, "\n## "+f.Title+"\n") {
		return fmt.Errorf("docs/semantics.md has no section %q (run make golden)", f.Title)
	}
	return nil
}

// TestFormatFacets: every declared code format reaches every facet.
func TestFormatFacets(t *testing.T) {
	env, err := loadFacetEnv()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range unary.Formats() {
		t.Run(f.Name, func(t *testing.T) {
			for _, g := range missingFacets(f, env) {
				t.Errorf("format %s lacks %s", f.Name, g)
			}
		})
	}
}

// TestFormatFacetsCatchGaps: the check names the facet a format lacks.
// Each format here is declared inside the test only, so nothing derived
// from refimpl/unary knows it: a new format (every facet missing), and
// copies of E4M3 with one part of the description broken.
func TestFormatFacetsCatchGaps(t *testing.T) {
	env, err := loadFacetEnv()
	if err != nil {
		t.Fatal(err)
	}
	e4m3, err := unary.LookupFormat("e4m3")
	if err != nil {
		t.Fatal(err)
	}
	throwaway := e4m3
	throwaway.Name, throwaway.Title = "e3m4", "FP8 E3M4"
	throwaway.Encode.Params = map[string]string{"format": "e3m4"}
	throwaway.DecodeOp.Op = "fp8x.decode"
	throwaway.Rationale = "docs/rationale/e3m4.md"

	noRationale := e4m3
	noRationale.Rationale = ""
	wrongDecode := e4m3
	wrongDecode.DecodeOp.Params = map[string]string{"format": "e5m2"}
	for _, tc := range []struct {
		name   string
		f      unary.Format
		facets []string
	}{
		{"new format", throwaway, []string{"golden cases", "suite", "decode path", "diagnosis coverage", "demo metadata", "cli", "docs"}},
		{"no rationale", noRationale, []string{"docs"}},
		{"decoder of another format", wrongDecode, []string{"golden cases", "decode path", "demo metadata"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, g := range missingFacets(tc.f, env) {
				got = append(got, g.facet)
				t.Logf("%s", g)
			}
			if !slices.Equal(got, tc.facets) {
				t.Errorf("missing facets %q, want %q", got, tc.facets)
			}
		})
	}
}
