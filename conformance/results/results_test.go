package results

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/ops"
)

var e4m3 = sync.OnceValues(func() (*suite.Suite, error) {
	set, err := golden.Default()
	if err != nil {
		return nil, err
	}
	return suite.Resolve(set, "e4m3")
})

// goodDir writes the satfinite golden outputs of the e4m3 suite as a
// results directory and returns its files.
func goodFiles(t testing.TB) (*suite.Suite, map[string][]byte) {
	t.Helper()
	s, err := e4m3()
	if err != nil {
		t.Fatal(err)
	}
	set, _ := golden.Default()
	out := map[string]ops.Tensors{}
	for _, tk := range s.Tasks {
		if out[tk.Name], err = set.Expected(tk.Cases["satfinite"]); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	if err := Write(dir, Manifest{Suite: s.Name, SuiteVersion: s.Version, Implementation: "test", Profile: "satfinite"}, out); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		files[e.Name()], _ = os.ReadFile(filepath.Join(dir, e.Name()))
	}
	return s, files
}

func writeFiles(t testing.TB, files map[string][]byte) string {
	dir := t.TempDir()
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestStrictManifest: results.json is read as docs/vendor.md promises;
// every case here was accepted (or hung, or leaked) before.
func TestStrictManifest(t *testing.T) {
	s, good := goodFiles(t)
	manifest := string(good[ManifestFile])
	for _, tc := range []struct {
		name, json, want string
	}{
		{"trailing data", manifest + "garbage", "data after the JSON value"},
		{"second object", manifest + `{"format":"x"}`, "data after the JSON value"},
		{"key differing in case", strings.Replace(manifest, `"suite"`, `"SUITE"`, 1), `key "SUITE" differs from the field "suite" only in case`},
		{"duplicated key", strings.Replace(manifest, `"suite": "e4m3"`, `"suite": "e4m3", "suite": "e5m2"`, 1), `key "suite" appears twice`},
		{"ANSI escape in implementation", strings.Replace(manifest, `"test"`, `"ok\u001b[2J"`, 1), `implementation "ok\x1b[2J": control character U+001B`},
		{"carriage return in platform", strings.Replace(manifest, `"implementation"`, `"platform": "a\rCONFORMS", "implementation"`, 1), `platform "a\rCONFORMS": control character U+000D`},
		{"newline in implementation", strings.Replace(manifest, `"test"`, `"x\n**CONFORMS**"`, 1), "control character U+000A"},
		{"bidi override", strings.Replace(manifest, `"test"`, `"x\u202e"`, 1), "format character U+202E"},
		{"too long", strings.Replace(manifest, `"test"`, `"`+strings.Repeat("a", 201)+`"`, 1), "201 characters, at most 200"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string][]byte{}
			for n, b := range good {
				files[n] = b
			}
			files[ManifestFile] = []byte(tc.json)
			_, err := Read(writeFiles(t, files), s, nil)
			var re *Error
			if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want a results error containing %q", err, tc.want)
			}
		})
	}
	// Markdown and HTML are allowed in the text (the writers escape it).
	files := map[string][]byte{}
	for n, b := range good {
		files[n] = b
	}
	files[ManifestFile] = []byte(strings.Replace(manifest, `"test"`, `"**CONFORMS** <!-- x | y"`, 1))
	if r, err := Read(writeFiles(t, files), s, nil); err != nil || r.Manifest.Implementation != "**CONFORMS** <!-- x | y" {
		t.Fatalf("markdown in implementation: %v", err)
	}
}

// TestHostileFiles: files that are not regular files inside the folder,
// or larger than the task's outputs can be, are refused at once, naming
// the file and why.
func TestHostileFiles(t *testing.T) {
	s, good := goodFiles(t)
	task := suite.ResultFile(s.Tasks[0].Name)
	for _, tc := range []struct {
		name, file string
		make       func(path string) error
		want       string
	}{
		{"symlink to /dev/zero", task, func(p string) error { return os.Symlink("/dev/zero", p) },
			`a symbolic link (to "/dev/zero") that leaves the folder`},
		{"symlink to /etc/passwd", ManifestFile, func(p string) error { return os.Symlink("/etc/passwd", p) },
			`results.json: cannot be read: a symbolic link (to "/etc/passwd") that leaves the folder`},
		{"fifo", task, mkfifo, "a named pipe (FIFO), not a regular file"},
		{"fifo manifest", ManifestFile, mkfifo, "results.json: cannot be read: a named pipe (FIFO)"},
		{"64 GiB sparse file", task, func(p string) error {
			f, err := os.Create(p)
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(64 << 30)
		}, "68719476736 bytes, more than the"},
		{"directory", task, func(p string) error { return os.Mkdir(p, 0o755) }, "a directory, not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string][]byte{}
			for n, b := range good {
				if n != tc.file {
					files[n] = b
				}
			}
			dir := writeFiles(t, files)
			if err := tc.make(filepath.Join(dir, tc.file)); err != nil {
				t.Skipf("cannot make it here: %v", err)
			}
			_, err := Read(dir, s, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), tc.file) {
				t.Fatalf("error %v, want it to start with %s and contain %q", err, tc.file, tc.want)
			}
			if strings.Contains(err.Error(), "root:") {
				t.Fatalf("error %v leaks the linked file", err)
			}
		})
	}
}

// TestFileLimit: the limit follows the task's largest outputs.
func TestFileLimit(t *testing.T) {
	s, good := goodFiles(t)
	for _, tk := range s.Tasks {
		n := int64(len(good[suite.ResultFile(tk.Name)]))
		if lim := FileLimit(tk); lim < n || lim > n+headerAllowance+8 {
			t.Errorf("task %s: limit %d for a %d-byte file", tk.Name, lim, n)
		}
	}
}

// FuzzRead: whatever results.json and task files hold, Read returns
// results or an *Error, never panics (nothing recovers one), and what it
// accepts has exactly the outputs of one of each task's profiles.
func FuzzRead(f *testing.F) {
	s, good := goodFiles(f)
	t0, t1 := suite.ResultFile(s.Tasks[0].Name), suite.ResultFile(s.Tasks[1].Name)
	f.Add(good[ManifestFile], good[t0], good[t1])
	f.Add([]byte(strings.Replace(string(good[ManifestFile]), `"suite"`, `"SUITE"`, 1)), good[t0], good[t1])
	f.Add(good[ManifestFile], good[t0][:100], []byte{1, 0, 0, 0, 0, 0, 0, 0, '{'})
	f.Fuzz(func(t *testing.T, manifest, a, b []byte) {
		dir := writeFiles(t, map[string][]byte{ManifestFile: manifest, t0: a, t1: b})
		r, err := Read(dir, s, &Options{AllowPartial: len(manifest)%2 == 0})
		if err != nil {
			var re *Error
			if !errors.As(err, &re) {
				t.Fatalf("error %T %v is not a results error", err, err)
			}
			if CheckText(err.Error(), 1<<20) != nil {
				t.Fatalf("error %q holds control characters", err)
			}
			return
		}
		if CheckText(r.Manifest.Implementation, MaxTextRunes) != nil || CheckText(r.Manifest.Platform, MaxTextRunes) != nil {
			t.Fatalf("accepted unprintable text %q %q", r.Manifest.Implementation, r.Manifest.Platform)
		}
		for name, ts := range r.Outputs {
			tk, ok := s.Task(name)
			if !ok {
				t.Fatalf("accepted unknown task %q", name)
			}
			if err := checkLayout("f", tk, ts, "", nil); err != nil {
				t.Fatalf("accepted task %s with a wrong layout: %v", name, err)
			}
		}
	})
}
