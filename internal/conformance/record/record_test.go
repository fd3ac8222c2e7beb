package record_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/conformance/certificate"
	"github.com/bitexact/bitexact/conformance/results"
	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/internal/conformance/record"
	"github.com/bitexact/bitexact/refimpl/unary"
	"github.com/bitexact/bitexact/wasm"
)

// root is the harness folder, relative to this package.
const root = "../../../conformance/harness"

func readAll(t *testing.T) []record.File {
	t.Helper()
	files, err := record.ReadAll(os.DirFS(root))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no records under ../../conformance/harness/*/records")
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

// TestBlockRecords holds every profile that names a measured block-op
// implementation to its record: the implementation's results on the
// golden inputs of its suite, the certificate `bitexact certify` wrote
// for them and, where the harness writes one, provenance.json. The
// results are certified again against this build's golden set and must
// conform to exactly the profiles the stored certificate names, with the
// same mismatch count against every other profile (so a record that
// separates two platforms keeps separating them); the stored certificate
// must be one this build reads.
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
	// A claim the golden set has no case for (a NaN convention,
	// BASE,nan=CONV) is checked against outputs the wasm reference
	// computes, as certify computes them.
	ref, err := golden.NewWasm(context.Background(), wasm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close(context.Background())
	for _, b := range blocks {
		t.Run(b.Dir, func(t *testing.T) {
			cb, err := os.ReadFile(filepath.Join(root, b.Dir, certificate.JSONFile))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := certificate.Parse(cb); err != nil {
				t.Fatalf("stored certificate: %v (re-certify the record: its README says how)", err)
			}
			checkProvenance(t, filepath.Join(root, b.Dir, "provenance.json"), b.Cert)
			s, err := suite.Resolve(set, b.Cert.Suite)
			if err != nil {
				t.Fatal(err)
			}
			r, err := results.Read(filepath.Join(root, b.Results), s, nil)
			if err != nil {
				t.Fatal(err)
			}
			c, err := certificate.Build(certificate.Input{Suite: s, Set: set, GoldenSHA256: md, ReferenceWasm: wasm.ModuleDigest(), Reference: ref,
				Backend: "results", Implementation: r.Manifest.Implementation, Platform: r.Manifest.Platform, Claimed: r.Manifest.Profile,
				Outputs: r.Outputs, Files: r.Files, Missing: r.Missing})
			if err != nil {
				t.Fatal(err)
			}
			got := (&record.Block{Cert: c}).Conforming()
			want := b.Conforming()
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("conforms now to [%s], its certificate says [%s]", strings.Join(got, ", "), strings.Join(want, ", "))
			}
			if r.Manifest.Profile != "" && !c.Conforms {
				t.Errorf("does not conform to the profile it claims: %s", c.Verdict)
			}
			now := map[string]certificate.Profile{}
			for _, p := range c.Profiles {
				now[p.Profile] = p
			}
			for _, p := range b.Cert.Profiles {
				q, ok := now[p.Profile]
				if !ok {
					t.Errorf("stored certificate has profile %s, the suite no longer does", p.Profile)
					continue
				}
				if p.Mismatches != q.Mismatches || p.Conforms != q.Conforms {
					t.Errorf("profile %s: stored %d mismatches (conforms %v), re-certified %d (conforms %v)",
						p.Profile, p.Mismatches, p.Conforms, q.Mismatches, q.Conforms)
				}
			}
		})
	}
}

// checkProvenance requires a record's provenance.json, where there is one,
// to be strict JSON with every field set and to name the suite and profile
// its certificate does.
func checkProvenance(t *testing.T, path string, c *certificate.Certificate) {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Implementation string   `json:"implementation"`
		Repository     string   `json:"repository"`
		Commit         string   `json:"commit"`
		Files          []string `json:"files"`
		Platform       string   `json:"platform"`
		Suite          string   `json:"suite"`
		Profile        string   `json:"profile"`
		Date           string   `json:"date"`
		Command        string   `json:"command"`
		Certify        string   `json:"certify"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for name, v := range map[string]string{"implementation": p.Implementation, "repository": p.Repository,
		"commit": p.Commit, "platform": p.Platform, "suite": p.Suite, "profile": p.Profile,
		"date": p.Date, "command": p.Command, "certify": p.Certify} {
		if v == "" {
			t.Errorf("%s: field %q is empty", path, name)
		}
	}
	if p.Suite != c.Suite || p.Profile != c.Claimed {
		t.Errorf("%s: suite %s profile %s, the certificate %s claims %q", path, p.Suite, p.Profile, c.Suite, c.Claimed)
	}
}

// TestEcosystemDoc: docs/ecosystem.md is what the records generate.
func TestEcosystemDoc(t *testing.T) {
	want, err := record.Ecosystem(root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../../docs/ecosystem.md")
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
