package golden

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
)

// countingFS counts the reads of each file of a golden set: the hook that
// shows how often Load hashes a file, without timing anything.
type countingFS struct {
	fstest.MapFS
	reads map[string]int
}

func (c *countingFS) Open(name string) (fs.File, error) {
	c.reads[name]++
	return c.MapFS.Open(name)
}

func (c *countingFS) ReadFile(name string) ([]byte, error) {
	c.reads[name]++
	return c.MapFS.ReadFile(name)
}

// editManifest rewrites the manifest of m through edit.
func editManifest(t *testing.T, m fstest.MapFS, edit func(*Manifest)) {
	t.Helper()
	var man Manifest
	if err := json.Unmarshal(m[ManifestFile].Data, &man); err != nil {
		t.Fatal(err)
	}
	edit(&man)
	b, err := json.Marshal(&man)
	if err != nil {
		t.Fatal(err)
	}
	m[ManifestFile].Data = b
}

// TestLoadKeepsVerifiedBytes: a file swapped after Load (between the
// check and the use, the race of a golden --dir) never reaches a caller:
// the set hands out the bytes it hashed.
func TestLoadKeepsVerifiedBytes(t *testing.T) {
	m := copyFS(t)
	s, err := Load(m)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Manifest.Cases[0]
	var in InputFile
	for _, x := range s.Manifest.Inputs {
		if x.Name == c.Inputs {
			in = x
		}
	}
	wantOut, err := s.Expected(c)
	if err != nil {
		t.Fatal(err)
	}
	wantIn, err := s.Inputs(c)
	if err != nil {
		t.Fatal(err)
	}
	// Swap in another case's expected file and another input set's
	// inputs, both well-formed safetensors, and remove the manifest.
	other := s.Manifest.Cases[len(s.Manifest.Cases)-1]
	otherIn := s.Manifest.Inputs[len(s.Manifest.Inputs)-1]
	if other.SHA256 == c.SHA256 || otherIn.SHA256 == in.SHA256 {
		t.Fatal("the first and last files are the same; pick others")
	}
	m[c.File] = &fstest.MapFile{Data: bytes.Clone(m[other.File].Data)}
	m[in.File] = &fstest.MapFile{Data: bytes.Clone(m[otherIn.File].Data)}
	manifest := m[ManifestFile].Data
	m[ManifestFile] = &fstest.MapFile{Data: []byte(`{"schema": 1}`)}

	// The digest a certificate names is the manifest's that was loaded.
	if got, want := s.ManifestSHA256(), digest(manifest); got != want {
		t.Errorf("ManifestSHA256 after the manifest was replaced = %s, want the loaded manifest's %s", got, want)
	}
	if b, err := s.File(in.File); err != nil || digest(b) != in.SHA256 {
		t.Errorf("File(%s) after the swap: SHA-256 %s (%v), want the verified %s", in.File, digest(b), err, in.SHA256)
	}

	for name, got := range map[string]func() (any, error){
		"expected": func() (any, error) { return s.Expected(c) },
		"inputs":   func() (any, error) { return s.Inputs(c) },
	} {
		v, err := got()
		if err != nil {
			t.Errorf("%s after the swap: %v", name, err)
			continue
		}
		want := any(wantOut)
		if name == "inputs" {
			want = wantIn
		}
		a, _ := json.Marshal(v)
		b, _ := json.Marshal(want)
		if !bytes.Equal(a, b) {
			t.Errorf("%s after the swap are not the bytes Load verified", name)
		}
	}
}

// TestLoadManifestStrict: a manifest is strict JSON and names each input
// set and case once.
func TestLoadManifestStrict(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(t *testing.T, m fstest.MapFS)
		want string
	}{
		{"duplicate top-level key", func(t *testing.T, m fstest.MapFS) {
			m[ManifestFile].Data = bytes.Replace(m[ManifestFile].Data, []byte(`"schema": 1,`), []byte(`"schema": 1, "schema": 1,`), 1)
		}, `key "schema" appears twice`},
		{"duplicate key in a case", func(t *testing.T, m fstest.MapFS) {
			m[ManifestFile].Data = bytes.Replace(m[ManifestFile].Data, []byte(`"family": `), []byte(`"family": "x", "family": `), 1)
		}, `key "family" appears twice`},
		{"key differing in case", func(t *testing.T, m fstest.MapFS) {
			m[ManifestFile].Data = bytes.Replace(m[ManifestFile].Data, []byte(`"schema": 1,`), []byte(`"Schema": 1,`), 1)
		}, `differs from the field "schema" only in case`},
		{"trailing value", func(t *testing.T, m fstest.MapFS) {
			m[ManifestFile].Data = append(m[ManifestFile].Data, []byte(`{}`)...)
		}, "data after the JSON value"},
		{"case listed twice", func(t *testing.T, m fstest.MapFS) {
			editManifest(t, m, func(man *Manifest) { man.Cases = append(man.Cases, man.Cases[0]) })
		}, "is listed twice"},
		{"input set listed twice", func(t *testing.T, m fstest.MapFS) {
			editManifest(t, m, func(man *Manifest) { man.Inputs = append(man.Inputs, man.Inputs[0]) })
		}, "is listed twice"},
		{"one file, two digests", func(t *testing.T, m fstest.MapFS) {
			editManifest(t, m, func(man *Manifest) { man.Cases[1].File = man.Cases[0].File })
		}, "lists " + "expected/"},
		{"size differs", func(t *testing.T, m fstest.MapFS) {
			editManifest(t, m, func(man *Manifest) { man.Cases[0].Bytes++ })
		}, "bytes, manifest records"},
		{"the manifest as a file", func(t *testing.T, m fstest.MapFS) {
			editManifest(t, m, func(man *Manifest) { man.Cases[0].File = ManifestFile })
		}, "invalid file path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := copyFS(t)
			tc.edit(t, m)
			if _, err := Load(m); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestLoadHashesEachFileOnce: a file listed by many cases is read (and
// hashed) once, and a manifest whose files exceed MaxSetBytes is refused
// before any of them is read.
func TestLoadHashesEachFileOnce(t *testing.T) {
	m := copyFS(t)
	var first CaseFile
	editManifest(t, m, func(man *Manifest) {
		first = man.Cases[0]
		for i := range man.Cases {
			man.Cases[i].File, man.Cases[i].SHA256, man.Cases[i].Bytes = first.File, first.SHA256, first.Bytes
		}
	})
	c := &countingFS{MapFS: m, reads: map[string]int{}}
	s, err := Load(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Manifest.Cases) < 100 {
		t.Fatalf("only %d cases", len(s.Manifest.Cases))
	}
	if n := c.reads[first.File]; n != 1 {
		t.Errorf("%s, listed by %d cases, read %d times", first.File, len(s.Manifest.Cases), n)
	}
	for p, n := range c.reads {
		if n != 1 {
			t.Errorf("%s read %d times", p, n)
		}
	}

	m = copyFS(t)
	editManifest(t, m, func(man *Manifest) {
		for i := range man.Cases {
			man.Cases[i].Bytes = MaxSetBytes / 100
		}
	})
	c = &countingFS{MapFS: m, reads: map[string]int{}}
	if _, err := Load(c); err == nil || !strings.Contains(err.Error(), "the limit of a golden set") {
		t.Errorf("Load of a set over MaxSetBytes = %v", err)
	}
	if len(c.reads) != 1 || c.reads[ManifestFile] != 1 {
		t.Errorf("Load read %d files before refusing an oversized set", len(c.reads))
	}

	m = copyFS(t)
	m[ManifestFile].Data = append(m[ManifestFile].Data, bytes.Repeat([]byte(" "), MaxManifestBytes)...)
	if _, err := Load(m); err == nil || !strings.Contains(err.Error(), "a manifest may hold") {
		t.Errorf("Load of an oversized manifest = %v", err)
	}
}
