package conformance_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/conformance/certificate"
	"github.com/bitexact/bitexact/conformance/results"
	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/wasm"
)

// blockProvenance is a block-op record's provenance.json: what ran,
// where, when, and the exact command.
type blockProvenance struct {
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

// TestBlockRecords holds every profile that names a measured block-op
// implementation to its record: each folder
// harness/<name>/records/<op>/<platform>/ holds the implementation's
// results directory on the golden inputs (results/, written by the
// harness), the certificate.json that `bitexact certify` wrote for it,
// and provenance.json. The results are certified again here against the
// profile they claim and must conform on every task; the stored
// certificate must say the same, with the same mismatch count against
// every profile both know (so a record that separates two platforms keeps
// separating them).
func TestBlockRecords(t *testing.T) {
	dirs, err := filepath.Glob("harness/*/records/*/*/provenance.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no block-op records under harness/*/records")
	}
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	md, err := suite.ManifestDigest(golden.DataFS())
	if err != nil {
		t.Fatal(err)
	}
	for _, pf := range dirs {
		dir := filepath.Dir(pf)
		t.Run(strings.TrimPrefix(dir, "harness/"), func(t *testing.T) {
			var prov blockProvenance
			b, err := os.ReadFile(pf)
			if err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(strings.NewReader(string(b)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&prov); err != nil {
				t.Fatalf("%s: %v", pf, err)
			}
			for name, v := range map[string]string{"implementation": prov.Implementation, "repository": prov.Repository,
				"commit": prov.Commit, "platform": prov.Platform, "suite": prov.Suite, "profile": prov.Profile,
				"date": prov.Date, "command": prov.Command} {
				if v == "" {
					t.Errorf("%s: provenance field %q is empty", pf, name)
				}
			}
			s, err := suite.Resolve(set, prov.Suite)
			if err != nil {
				t.Fatal(err)
			}
			r, err := results.Read(filepath.Join(dir, "results"), s, nil)
			if err != nil {
				t.Fatal(err)
			}
			if r.Manifest.Profile != prov.Profile {
				t.Fatalf("results.json claims profile %q, provenance.json %q", r.Manifest.Profile, prov.Profile)
			}
			fresh, err := certificate.Build(certificate.Input{Suite: s, Set: set, GoldenSHA256: md, ReferenceWasm: wasm.ModuleDigest(),
				Backend: "results", Implementation: r.Manifest.Implementation, Platform: r.Manifest.Platform,
				Claimed: r.Manifest.Profile, Outputs: r.Outputs, Files: r.Files})
			if err != nil {
				t.Fatal(err)
			}
			if !fresh.Conforms || !fresh.Valid || fresh.Against != prov.Profile {
				t.Fatalf("re-certified: %s", fresh.Verdict)
			}
			cb, err := os.ReadFile(filepath.Join(dir, "certificate.json"))
			if err != nil {
				t.Fatal(err)
			}
			stored, err := certificate.Parse(cb)
			if err != nil {
				t.Fatal(err)
			}
			if stored.Suite != prov.Suite || stored.Claimed != prov.Profile || !stored.Conforms || !stored.Valid {
				t.Fatalf("stored certificate: suite %s, claimed %q, conforms %v, valid %v", stored.Suite, stored.Claimed, stored.Conforms, stored.Valid)
			}
			if stored.GoldenSHA256 != md {
				t.Logf("stored certificate was written against golden manifest %s, this set is %s; re-certified: %s", stored.GoldenSHA256, md, fresh.Verdict)
			}
			now := map[string]certificate.Profile{}
			for _, p := range fresh.Profiles {
				now[p.Profile] = p
			}
			for _, p := range stored.Profiles {
				q, ok := now[p.Profile]
				if !ok {
					t.Errorf("stored certificate has profile %s, the suite no longer does", p.Profile)
					continue
				}
				if p.Mismatches != q.Mismatches || p.Conforms != q.Conforms || p.Tasks != q.Tasks {
					t.Errorf("profile %s: stored %d mismatches on %d tasks (conforms %v), re-certified %d on %d (conforms %v)",
						p.Profile, p.Mismatches, p.Tasks, p.Conforms, q.Mismatches, q.Tasks, q.Conforms)
				}
			}
		})
	}
}
