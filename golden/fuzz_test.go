package golden

import (
	"encoding/json"
	"io/fs"
	"testing"
	"testing/fstest"
)

// smallSet is a golden set of a few small files of the committed one:
// two input sets and the cases on them, with the manifest that lists
// them.
func smallSet(t testing.TB) (fstest.MapFS, []byte) {
	t.Helper()
	// The committed manifest, read without loading the whole set (each
	// fuzzing worker builds this once).
	var full struct{ Manifest Manifest }
	b, err := fs.ReadFile(DataFS(), ManifestFile)
	if err == nil {
		err = json.Unmarshal(b, &full.Manifest)
	}
	if err != nil {
		t.Fatal(err)
	}
	read := func(p string) []byte {
		b, err := fs.ReadFile(DataFS(), p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	m := Manifest{Schema: full.Manifest.Schema, Suite: full.Manifest.Suite, Generator: full.Manifest.Generator, PRNG: full.Manifest.PRNG}
	keep := map[string]bool{"codes.e2m1.all": true, "sep.blocks32.one-row": true}
	files := fstest.MapFS{}
	for _, in := range full.Manifest.Inputs {
		if keep[in.Name] {
			m.Inputs = append(m.Inputs, in)
			files[in.File] = &fstest.MapFile{Data: read(in.File)}
		}
	}
	for _, c := range full.Manifest.Cases {
		if keep[c.Inputs] && len(m.Cases) < 3 {
			m.Cases = append(m.Cases, c)
			files[c.File] = &fstest.MapFile{Data: read(c.File)}
		}
	}
	mb, err := json.MarshalIndent(&m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return files, mb
}

// FuzzLoad: any manifest.json over a directory of real golden files loads
// or is refused with an error, never a panic; a set that loads lists each
// input set and case once, hands out for every file it lists bytes with
// the SHA-256 and size the manifest records, and names the digest of the
// manifest it decoded.
func FuzzLoad(f *testing.F) {
	files, seed := smallSet(f)
	f.Add(seed)
	f.Add([]byte(`{"schema":1,"inputs":[],"cases":[]}`))
	f.Add([]byte(`{"schema":1,"schema":1}`))
	f.Fuzz(func(t *testing.T, manifest []byte) {
		fsys := fstest.MapFS{ManifestFile: &fstest.MapFile{Data: manifest}}
		for p, f := range files {
			fsys[p] = f
		}
		s, err := Load(fsys)
		if err != nil {
			return
		}
		if s.ManifestSHA256() != digest(manifest) {
			t.Fatalf("ManifestSHA256 %s, the manifest's is %s", s.ManifestSHA256(), digest(manifest))
		}
		names := map[string]bool{}
		check := func(kind, name, file, sum string, n int) {
			if names[kind+name] {
				t.Fatalf("%s %q listed twice", kind, name)
			}
			names[kind+name] = true
			b, err := s.File(file)
			if err != nil {
				t.Fatalf("%s %s: %v", kind, name, err)
			}
			if digest(b) != sum || len(b) != n {
				t.Fatalf("%s %s: file %s has SHA-256 %s (%d bytes), the manifest records %s (%d)", kind, name, file, digest(b), len(b), sum, n)
			}
			if !fs.ValidPath(file) {
				t.Fatalf("%s %s: invalid path %q loaded", kind, name, file)
			}
		}
		for _, in := range s.Manifest.Inputs {
			check("input set", in.Name, in.File, in.SHA256, in.Bytes)
		}
		for _, c := range s.Manifest.Cases {
			check("case", c.Name, c.File, c.SHA256, c.Bytes)
			// Decoding may fail (a case may name an input file as its
			// expected outputs), but never panics.
			s.Inputs(c)
			s.Expected(c)
		}
	})
}
