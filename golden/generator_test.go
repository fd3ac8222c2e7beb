package golden

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/bitexact/bitexact/wasm"
)

// The committed set names the module that generated it, and certificates
// record that name next to this build's module digest: a module rebuilt
// without regenerating the set must fail go test, not only `bitexact
// golden verify` (which CI does not run through wasm).
func TestManifestGeneratorIsEmbeddedModule(t *testing.T) {
	b, err := fs.ReadFile(DataFS(), ManifestFile)
	if err != nil {
		t.Fatal(err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if want := "wasm sha256:" + wasm.ModuleDigest(); m.Generator != want {
		t.Fatalf("golden/data/manifest.json names generator %q, the embedded reference module is %q: the set is stale; regenerate it with `go run ./cmd/bitexact golden gen` and commit", m.Generator, want)
	}
}

// A manifest that differs in a file digest and in the generator reports
// the digest: it says the manifest no longer describes its files, while a
// generator difference alone only says which module produced them.
func TestManifestDiffOrder(t *testing.T) {
	regen, err := fs.ReadFile(DataFS(), ManifestFile)
	if err != nil {
		t.Fatal(err)
	}
	var m Manifest
	if err := json.Unmarshal(regen, &m); err != nil {
		t.Fatal(err)
	}
	c := m.Cases[len(m.Cases)/2]
	oldGen := []byte(`"generator": "` + m.Generator + `"`)
	otherGen := []byte(`"generator": "wasm sha256:` + strings.Repeat("0", 64) + `"`)
	if !bytes.Contains(regen, oldGen) || !bytes.Contains(regen, []byte(c.SHA256)) {
		t.Fatalf("manifest layout: %s or %s not found", oldGen, c.SHA256)
	}
	for _, tc := range []struct {
		name string
		edit func(b []byte) []byte
		want string
	}{
		{"generator only", func(b []byte) []byte { return bytes.Replace(b, oldGen, otherGen, 1) },
			"generator mismatch: the manifest names \"wasm sha256:0000"},
		{"digest and generator", func(b []byte) []byte {
			b = bytes.Replace(b, oldGen, otherGen, 1)
			return bytes.Replace(b, []byte(c.SHA256), []byte(strings.Repeat("f", 64)), 1)
		}, "digest mismatch: " + c.File + " is recorded with SHA-256 ffff"},
		{"suite and generator", func(b []byte) []byte {
			b = bytes.Replace(b, oldGen, otherGen, 1)
			return bytes.Replace(b, []byte(`"suite": "`+SuiteVersion+`"`), []byte(`"suite": "1999.01-1"`), 1)
		}, `line 3 differs: committed "\"suite\": \"1999.01-1\","`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			committed := tc.edit(bytes.Clone(regen))
			f := &Files{Data: map[string][]byte{ManifestFile: regen}}
			err := f.compare(fstest.MapFS{ManifestFile: &fstest.MapFile{Data: committed}})
			var d *DiffError
			if !errors.As(err, &d) || d.File != ManifestFile || !strings.Contains(d.Problem, tc.want) {
				t.Fatalf("compare = %v, want a manifest difference containing %q", err, tc.want)
			}
		})
	}
}
