package safeio

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// folder makes a folder with a regular file, a symlink inside it, and
// the hostile entries the platform allows.
func folder(t *testing.T) (string, *os.Root) {
	t.Helper()
	d := t.TempDir()
	if err := os.WriteFile(filepath.Join(d, "ok"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(d, "sub"), 0o755)
	os.Symlink("ok", filepath.Join(d, "inside"))
	os.Symlink("/etc/passwd", filepath.Join(d, "passwd"))
	os.Symlink("../"+filepath.Base(d)+"/ok", filepath.Join(d, "dotdot"))
	os.Symlink("/dev/zero", filepath.Join(d, "zero"))
	os.Symlink("nowhere", filepath.Join(d, "dangling"))
	if runtime.GOOS != "windows" {
		if err := mkfifo(filepath.Join(d, "fifo")); err != nil {
			t.Logf("mkfifo: %v", err)
		}
	}
	f, err := os.Create(filepath.Join(d, "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64 << 30); err != nil {
		t.Logf("truncate: %v", err)
	}
	f.Close()
	r, err := os.OpenRoot(d)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return d, r
}

func TestReadFileIn(t *testing.T) {
	_, root := folder(t)
	for _, tc := range []struct {
		name, file, want string // want "" means it reads "hello"
	}{
		{"regular", "ok", ""},
		{"symlink inside", "inside", ""},
		{"symlink to /etc/passwd", "passwd", `passwd: a symbolic link (to "/etc/passwd") that leaves the folder`},
		{"symlink to /dev/zero", "zero", `zero: a symbolic link (to "/dev/zero") that leaves the folder`},
		{"symlink through ..", "dotdot", "that leaves the folder"},
		{"dangling symlink", "dangling", "cannot be followed"},
		{"fifo", "fifo", "fifo: a named pipe (FIFO), not a regular file"},
		{"directory", "sub", "sub: a directory, not a regular file"},
		{"64 GiB sparse file", "sparse", "sparse: 68719476736 bytes, more than the 100 it may hold"},
		{"missing", "nothere", "nothere: "},
		{"path out of the folder", "../x", "../x: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.file == "fifo" && runtime.GOOS == "windows" {
				t.Skip("no named pipes")
			}
			start := time.Now()
			b, err := ReadFileIn(root, tc.file, 100)
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
			switch {
			case tc.want == "" && (err != nil || string(b) != "hello"):
				t.Fatalf("got %q, %v", b, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			case tc.want != "" && strings.Contains(err.Error(), "root:"):
				t.Fatalf("error %v leaks a line of the file", err)
			}
		})
	}
	if _, err := ReadFileIn(root, "nothere", 1); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v does not unwrap to fs.ErrNotExist", err)
	}
}

func TestReadFile(t *testing.T) {
	d, _ := folder(t)
	for _, tc := range []struct {
		name, file, want string
	}{
		{"regular", "ok", ""},
		{"symlink named by the caller", "passwd", ""}, // followed: the caller named it
		{"/dev/zero", "zero", "a character device, not a regular file"},
		{"fifo", "fifo", "a named pipe (FIFO), not a regular file"},
		{"sparse", "sparse", "more than the 100 it may hold"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.file == "fifo" && runtime.GOOS == "windows" {
				t.Skip("no named pipes")
			}
			b, err := ReadFile(filepath.Join(d, tc.file), 100)
			if tc.want == "" {
				if err != nil && !strings.Contains(err.Error(), "more than the 100") {
					t.Fatalf("got %q, %v", b, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// Open refuses what ReadFile refuses and hands back a regular file whose
// stat is the opened file's.
func TestOpen(t *testing.T) {
	d, _ := folder(t)
	f, st, err := Open(filepath.Join(d, "ok"), 100)
	if err != nil || st.Size() != 5 {
		t.Fatalf("ok: %v, %v", st, err)
	}
	f.Close()
	for _, tc := range []struct{ file, want string }{
		{"zero", "a character device, not a regular file"},
		{"fifo", "a named pipe (FIFO), not a regular file"},
		{"sparse", "68719476736 bytes, more than the 100 it may hold"},
	} {
		if tc.file == "fifo" && runtime.GOOS == "windows" {
			continue
		}
		if f, _, err := Open(filepath.Join(d, tc.file), 100); err == nil || !strings.Contains(err.Error(), tc.want) {
			if f != nil {
				f.Close()
			}
			t.Errorf("%s: error %v, want %q", tc.file, err, tc.want)
		}
	}
}

// ReadLimited stops after limit+1 bytes of an endless stream.
func TestReadLimited(t *testing.T) {
	b, err := ReadLimited("s", strings.NewReader("hello"), 5)
	if err != nil || string(b) != "hello" {
		t.Fatalf("got %q, %v", b, err)
	}
	if _, err := ReadLimited("endless", endless{}, 1<<20); err == nil || err.Error() != "endless: more than the 1048576 bytes it may hold" {
		t.Fatalf("endless stream: %v", err)
	}
}

type endless struct{}

func (endless) Read(p []byte) (int, error) { return len(p), nil }
