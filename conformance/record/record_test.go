package record_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/conformance/certificate"
	"github.com/bitexact/bitexact/conformance/record"
	"github.com/bitexact/bitexact/conformance/results"
	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/unary"
	"github.com/bitexact/bitexact/wasm"
)

// root is the harness folder, relative to this package.
const root = "../harness"

func readAll(t *testing.T) []record.File {
	t.Helper()
	files, err := record.ReadAll(os.DirFS(root))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no records under ../harness/*/records")
	}
	return files
}

// TestUnaryRecords holds every unary record to the committed profile
// digests, all 2^32 inputs through the leaves: the comparison it states
// with its nearest (and canonical) profile must be what the leaves say,
// and a record equal to some profile must name it.
func TestUnaryRecords(t *testing.T) {
	for _, f := range readAll(t) {
		if f.Unary == nil {
			continue
		}
		if err := f.Unary.Check(); err != nil {
			t.Errorf("%s: %v", f.Path, err)
		}
		if h, _, _ := strings.Cut(f.Path, "/"); h != f.Unary.Harness {
			t.Errorf("%s: record of harness %q filed under %q", f.Path, f.Unary.Harness, h)
		}
	}
}

// unmeasured are the unary profiles that name no implementation this
// project can run here, each with the reason; every other profile must be
// reproduced, bit for bit over all 2^32 inputs, by at least one record.
var unmeasured = map[string]string{
	"e2m1/sw-sm121":         "dgx-vllm's Python patch for SM121 (Avarok-Cybersecurity/dgx-vllm), read, not run: it needs that vLLM build",
	"e2m1/cutlass":          "cutlass float_e2m1_t host conversion, read, not run; the same function as e2m1/sw-sm121",
	"e2m1/ties-away":        "microsoft/microxcaling's round=nearest, read, not run (its output is a float, E2M1 codes are this project's reading)",
	"e2m1/ties-toward-zero": "the exact-arithmetic rule of ggml's best_index_mxfp4; the function itself is e2m1/ggml (recorded)",
}

// TestProfilesReproduceRecords: every unary profile except those in
// unmeasured equals at least one record on all 2^32 inputs.
func TestProfilesReproduceRecords(t *testing.T) {
	conforming := map[string][]string{}
	for _, f := range readAll(t) {
		if f.Unary != nil && f.Unary.Conforms() {
			conforming[f.Unary.Conversion] = append(conforming[f.Unary.Conversion], f.Path)
		}
	}
	for _, c := range unary.All() {
		why, exempt := unmeasured[c.Name]
		recs := conforming[c.Name]
		switch {
		case exempt && len(recs) > 0:
			t.Errorf("%s is listed as unmeasured (%s), yet %s reproduce it: drop it from the list", c.Name, why, strings.Join(recs, ", "))
		case !exempt && len(recs) == 0:
			t.Errorf("%s (%s) is reproduced by no record", c.Name, c.Source)
		}
	}
	for name := range unmeasured {
		if _, err := unary.Lookup(name); err != nil {
			t.Errorf("unmeasured lists %s: %v", name, err)
		}
	}
}

// TestTableRecords: each table record is reproduced by its model.
func TestTableRecords(t *testing.T) {
	n := 0
	for _, f := range readAll(t) {
		if f.Table == nil {
			continue
		}
		n++
		model, _, names := record.TableModel(f.Table)
		if model == nil {
			t.Errorf("%s: no reference models %s from %s", f.Path, f.Table.Op, f.Table.Harness)
			continue
		}
		d, err := record.TableDiffs(f.Table, model)
		if err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		if len(d) > 0 {
			t.Errorf("%s: %s differs from the record on %d codes: %s", f.Path, names[0], len(d), strings.Join(d, "; "))
		}
	}
	if n == 0 {
		t.Error("no table records")
	}
}

// TestBlockRecords certifies every committed results folder again against
// the embedded golden set: the profiles it conforms to must be those its
// committed certificate names (a profile changed since the run, or a
// golden set regenerated with other outputs, shows here).
func TestBlockRecords(t *testing.T) {
	blocks, err := record.ReadBlocks(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) == 0 {
		t.Fatal("no block-op records")
	}
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	md, err := suite.ManifestDigest(golden.DataFS())
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		s, err := suite.Resolve(set, b.Cert.Suite)
		if err != nil {
			t.Errorf("%s: %v", b.Dir, err)
			continue
		}
		r, err := results.Read(filepath.Join(root, b.Dir), s, nil)
		if err != nil {
			t.Errorf("%s: %v", b.Dir, err)
			continue
		}
		c, err := certificate.Build(certificate.Input{Suite: s, Set: set, GoldenSHA256: md, ReferenceWasm: wasm.ModuleDigest(),
			Backend: "results", Implementation: r.Manifest.Implementation, Platform: r.Manifest.Platform, Claimed: r.Manifest.Profile,
			Outputs: r.Outputs, Files: r.Files, Missing: r.Missing})
		if err != nil {
			t.Errorf("%s: %v", b.Dir, err)
			continue
		}
		got := (&record.Block{Cert: c}).Conforming()
		want := b.Conforming()
		sort.Strings(got)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: conforms now to [%s], its certificate says [%s]", b.Dir, strings.Join(got, ", "), strings.Join(want, ", "))
		}
	}
}

// TestEcosystemDoc: docs/ecosystem.md is what the records generate.
func TestEcosystemDoc(t *testing.T) {
	want, err := record.Ecosystem(root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../docs/ecosystem.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Error("docs/ecosystem.md is stale: run 'go run ./cmd/bitexact ecosystem'")
	}
}

func TestParseRejects(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"not json", "{", "malformed"},
		{"unknown kind", `{"kind":"binary"}`, "unknown record kind"},
		{"unknown field", `{"kind":"table","bogus":1}`, "unknown field"},
		{"no provenance", `{"kind":"table","op":"e8m0.decode","outputs":["0x0"]}`, "without harness"},
		{"unary without leaves", `{"kind":"unary","harness":"h","implementation":"i","function":"f","build":"b","date":"d","command":"c",` +
			`"format":"fp16","conversion":"fp16/rne","nearest":{"profile":"fp16/rne"}}`, "leaves"},
	} {
		_, err := record.Parse([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}
