package safeio

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// victim is a file outside the output folder that a planted link names.
func victim(t *testing.T) string {
	t.Helper()
	v := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(v, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	return v
}

func checkVictim(t *testing.T, v string) {
	t.Helper()
	if b, err := os.ReadFile(v); err != nil || string(b) != "precious" {
		t.Fatalf("the victim %s now holds %q (%v)", v, b, err)
	}
}

// noTemp fails when a temporary file was left in dir.
func noTemp(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".tmp-") {
			t.Errorf("temporary file %s left behind", p)
		}
		return nil
	})
}

func TestWriteFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges")
	}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, out, victim string) // plants something in out
		file  string
		want  string // "" means the write succeeds
	}{
		{"new file", func(*testing.T, string, string) {}, "a", ""},
		{"new file in a new subfolder", func(*testing.T, string, string) {}, "sub/a", ""},
		{"regular file replaced", func(t *testing.T, out, _ string) { os.WriteFile(filepath.Join(out, "a"), []byte("old"), 0o644) }, "a", ""},
		{"link to a file outside", func(t *testing.T, out, v string) { os.Symlink(v, filepath.Join(out, "a")) }, "a",
			"a: a symbolic link: output files are never written through a link"},
		{"link to a file inside", func(t *testing.T, out, _ string) {
			os.WriteFile(filepath.Join(out, "b"), []byte("precious"), 0o644)
			os.Symlink("b", filepath.Join(out, "a"))
		}, "a", "a symbolic link"},
		{"dangling link", func(t *testing.T, out, v string) { os.Symlink(v+".new", filepath.Join(out, "a")) }, "a", "a symbolic link"},
		{"subfolder linked outside", func(t *testing.T, out, v string) { os.Symlink(filepath.Dir(v), filepath.Join(out, "sub")) }, "sub/victim",
			"path escapes from parent"},
		{"directory", func(t *testing.T, out, _ string) { os.Mkdir(filepath.Join(out, "a"), 0o755) }, "a", "a directory, not a regular file; it is not replaced"},
		{"fifo", func(t *testing.T, out, _ string) {
			if err := mkfifo(filepath.Join(out, "a")); err != nil {
				t.Skip(err)
			}
		}, "a", "a named pipe (FIFO), not a regular file; it is not replaced"},
		{"dot dot", func(*testing.T, string, string) {}, "../victim", "not a file name inside the output folder"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := victim(t)
			out := t.TempDir()
			tc.setup(t, out, v)
			d, err := OpenOutDir(out)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			err = d.WriteFile(tc.file, []byte("new"), 0o644)
			checkVictim(t, v)
			noTemp(t, out)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v, want it to contain %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(filepath.Join(out, tc.file)); err != nil || string(b) != "new" {
				t.Fatalf("wrote %q, %v", b, err)
			}
		})
	}
}

// A link planted after the check is replaced by the rename, not written
// through.
func TestWriteFileLinkPlantedAfterCheck(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges")
	}
	v := victim(t)
	out := t.TempDir()
	testHookBeforeRename = func(name string) {
		if err := os.Symlink(v, filepath.Join(out, name)); err != nil {
			t.Fatal(err)
		}
	}
	defer func() { testHookBeforeRename = nil }()
	if err := WriteFile(filepath.Join(out, "README.md"), []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	checkVictim(t, v)
	st, err := os.Lstat(filepath.Join(out, "README.md"))
	if err != nil || !st.Mode().IsRegular() {
		t.Fatalf("README.md is %v, %v; want the regular file written", st.Mode(), err)
	}
}

func TestCreateFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges")
	}
	for _, tc := range []struct {
		name  string
		setup func(out, victim string)
		want  string
	}{
		{"new", func(string, string) {}, ""},
		{"regular file there", func(out, _ string) { os.WriteFile(filepath.Join(out, "k"), []byte("precious"), 0o644) }, "k: already exists; nothing there is overwritten"},
		{"link to a file outside", func(out, v string) { os.Symlink(v, filepath.Join(out, "k")) }, "already exists"},
		{"dangling link", func(out, v string) { os.Symlink(v+".new", filepath.Join(out, "k")) }, "already exists"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := victim(t)
			out := t.TempDir()
			tc.setup(out, v)
			err := CreateFile(filepath.Join(out, "k"), []byte("secret"), 0o600)
			checkVictim(t, v)
			if _, serr := os.Stat(v + ".new"); serr == nil {
				t.Fatal("created the file a dangling link names")
			}
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, fs.ErrExist) {
					t.Fatalf("error %v, want it to contain %q and unwrap to fs.ErrExist", err, tc.want)
				}
				if b, _ := os.ReadFile(filepath.Join(out, "k")); bytes.Equal(b, []byte("secret")) {
					t.Fatal("overwritten")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(filepath.Join(out, "k"))
			if err != nil || st.Mode().Perm()&0o077 != 0 {
				t.Fatalf("mode %v, %v; want no group or world bits", st.Mode(), err)
			}
		})
	}
}
