package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/cmd/bitexact/internal/demo"
	"github.com/bitexact/bitexact/conformance/diagnose"
	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/block"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// missingBlockFacets lists the facets block format f lacks, in a fixed
// order: golden cases, suites, ops, diagnosis, demo metadata, cli, docs.
func missingBlockFacets(f block.Format, env *facetEnv, blocksMeta string) []facetGap {
	var gaps []facetGap
	add := func(facet string, err error) {
		if err != nil {
			gaps = append(gaps, facetGap{facet, err.Error()})
		}
	}
	add("golden cases", blockGoldenFacet(f, env.set))
	add("suite", blockSuiteFacet(f, env.set))
	add("ops", blockOpsFacet(f))
	add("diagnosis coverage", blockDiagnosisFacet(f, env.set))
	if !strings.Contains(blocksMeta, `"name":"`+f.Name+`","title":"`+f.Title+`"`) {
		gaps = append(gaps, facetGap{"demo metadata", "meta.json's blockFormats lists no " + f.Name})
	}
	if f.Quantize != nil {
		var out, errb strings.Builder
		if st := runEncode(context.Background(), []string{"--block", f.Suite, "1.5"}, &out, &errb); st != exitOK || !strings.Contains(out.String(), f.Title) {
			gaps = append(gaps, facetGap{"cli", fmt.Sprintf("bitexact encode --block %s: exit %d: %s", f.Suite, st, strings.TrimSpace(errb.String()))})
		}
	}
	add("docs", blockDocsFacet(f, env.semantics))
	return gaps
}

func blockGoldenFacet(f block.Format, set *golden.Set) error {
	want := func(name, op string, params map[string]string) error {
		c, ok := set.Case(name)
		if !ok {
			return fmt.Errorf("the golden set %s has no case %s (run make golden)", set.Manifest.Suite, name)
		}
		if c.Op != op || !reflect.DeepEqual(map[string]string(c.Params), params) {
			return fmt.Errorf("case %s is op %s %v, the description says %s %v", name, c.Op, c.Params, op, params)
		}
		return nil
	}
	for _, p := range f.Profiles {
		if q := f.Quantize; q != nil {
			if err := want(f.Suite+".quantize."+p.Name, q.Op, block.Params(q.Params, f.ProfileParam, p.Name)); err != nil {
				return err
			}
		}
		if err := want(f.Suite+".dequantize."+p.Name, f.Dequantize.Op, block.Params(f.Dequantize.Params, f.ProfileParam, p.Name)); err != nil {
			return err
		}
	}
	return nil
}

func blockSuiteFacet(f block.Format, set *golden.Set) error {
	names := []string{f.Suite + "-dequantize"}
	if f.Quantize != nil {
		names = append(names, f.Suite)
	}
	for _, n := range names {
		s, err := suite.Resolve(set, n)
		if err != nil {
			return err
		}
		got, want := slices.Clone(s.Profiles), block.ProfileNames(f.Profiles)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			return fmt.Errorf("suite %s has profiles %v, the format %v", n, got, want)
		}
	}
	return nil
}

// blockOpsFacet: the registered ops give the description's functions'
// outputs on its input sets, under every profile.
func blockOpsFacet(f block.Format) error {
	for _, p := range f.Profiles {
		for _, s := range f.Dequantize.Inputs {
			b := s.Make()
			in := tensor.FromU8([]int{len(b) / f.BlockBytes, f.BlockBytes}, b)
			out, err := ops.Run(f.Dequantize.Op, block.Params(f.Dequantize.Params, f.ProfileParam, p.Name), ops.Tensors{"blocks": in})
			if err != nil {
				return err
			}
			want, err := f.Dequantize.Run(b, p.Name)
			if err != nil {
				return err
			}
			if !slices.Equal(out["y"].Bits32(), tensor.FromF32([]int{len(want)}, want).Bits32()) {
				return fmt.Errorf("%s %v differs from the description's dequantizer", f.Dequantize.Op, f.Dequantize.Params)
			}
		}
		if q := f.Quantize; q != nil {
			for _, s := range q.Inputs {
				x := s.Make()
				out, err := ops.Run(q.Op, block.Params(q.Params, f.ProfileParam, p.Name), ops.Tensors{"x": tensor.FromF32([]int{len(x)}, x)})
				if err != nil {
					return err
				}
				want, err := q.Run(x, p.Name)
				if err != nil {
					return err
				}
				if !slices.Equal(out["blocks"].Data, want) {
					return fmt.Errorf("%s %v differs from the description's quantizer", q.Op, q.Params)
				}
			}
		}
	}
	return nil
}

// blockDiagnosisFacet: the diagnosis tries every declared fault on the
// format's suites, and the decoder classes on its dequantize suite.
func blockDiagnosisFacet(f block.Format, set *golden.Set) error {
	s, err := suite.Resolve(set, f.Suite+"-dequantize")
	if err != nil {
		return fmt.Errorf("no suite to diagnose: %v", err)
	}
	classes := diagnose.Classes(s, s.Profiles[0])
	if f.Quantize != nil {
		if q, err := suite.Resolve(set, f.Suite); err == nil {
			classes = append(classes, diagnose.Classes(q, q.Profiles[0])...)
		}
	}
	for _, c := range []string{"negative-zero-cleared"} {
		if !slices.Contains(classes, c) {
			return fmt.Errorf("class %s is not tried on suite %s", c, s.Name)
		}
	}
	for _, fault := range f.Faults {
		if !slices.Contains(classes, fault.Class) {
			return fmt.Errorf("fault %s is not tried on the suites of %s", fault.Class, f.Name)
		}
	}
	return nil
}

func blockDocsFacet(f block.Format, semantics string) error {
	b, err := os.ReadFile("../../" + f.Rationale)
	if err != nil {
		return err
	}
	if !strings.Contains(strings.ToLower(string(b)), strings.ToLower(f.Name)) {
		return fmt.Errorf("%s does not mention %s", f.Rationale, f.Name)
	}
	if !strings.Contains(semantics, "\n### "+f.Title+"\n") {
		return fmt.Errorf("docs/semantics.md has no section %q (run make golden)", f.Title)
	}
	return nil
}

func blocksMeta(t *testing.T) string {
	rec := httptest.NewRecorder()
	demo.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/meta.json", nil))
	return rec.Body.String()
}

// TestBlockFacets: every block format of refimpl/block reaches every
// facet.
func TestBlockFacets(t *testing.T) {
	env, err := loadFacetEnv()
	if err != nil {
		t.Fatal(err)
	}
	meta := blocksMeta(t)
	for _, f := range block.Formats() {
		t.Run(f.Name, func(t *testing.T) {
			for _, g := range missingBlockFacets(f, env, meta) {
				t.Errorf("block format %s lacks %s", f.Name, g)
			}
		})
	}
}

// TestBlockFacetsCatchGaps: a block format declared inside the test only
// (so nothing derived from refimpl/block knows it) lacks every facet,
// and copies of Q4_K with one part broken lack that part.
func TestBlockFacetsCatchGaps(t *testing.T) {
	env, err := loadFacetEnv()
	if err != nil {
		t.Fatal(err)
	}
	meta := blocksMeta(t)
	q4k, err := block.Lookup("q4_K")
	if err != nil {
		t.Fatal(err)
	}
	throwaway := q4k
	throwaway.Name, throwaway.Suite, throwaway.Title = "q7_K", "gguf-q7_k", "GGUF Q7_K"
	throwaway.Rationale = "docs/rationale/q7k.md"
	q := *q4k.Quantize
	q.Params = map[string]string{"type": "q7_K"}
	throwaway.Quantize = &q
	throwaway.Dequantize.Params = map[string]string{"type": "q7_K"}
	throwaway.Faults = []block.Fault{{Class: "q7-fault", Dequantize: q4k.Dequantize.Run}}

	wrongOp := q4k
	wrongOp.Dequantize.Params = map[string]string{"type": "q5_K"}
	for _, tc := range []struct {
		name   string
		f      block.Format
		facets []string
	}{
		{"new block format", throwaway, []string{"golden cases", "suite", "ops", "diagnosis coverage", "demo metadata", "cli", "docs"}},
		{"dequantizer of another type", wrongOp, []string{"golden cases", "ops"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, g := range missingBlockFacets(tc.f, env, meta) {
				got = append(got, g.facet)
				t.Logf("%s", g)
			}
			if !slices.Equal(got, tc.facets) {
				t.Errorf("missing facets %q, want %q", got, tc.facets)
			}
		})
	}
}
