package main

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/bitexact/bitexact/golden"
)

// TestHostileGoldenDir: a golden set directory named with --dir is read as
// untrusted input, like a results folder: a manifest that is a named pipe,
// a symbolic link out of the directory or a huge file is exit 2 at once,
// in every command that takes --dir.
func TestHostileGoldenDir(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks and named pipes")
	}
	good := e4m3Results(t, "satfinite", false)
	for _, tc := range []struct {
		name string
		make func(p string) error
		want string
	}{
		{"fifo", mkfifo, "manifest.json: a named pipe (FIFO), not a regular file"},
		{"symlink to /dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) }, `manifest.json: a symbolic link (to "/dev/zero") that leaves the folder`},
		{"64 GiB sparse file", func(p string) error {
			f, err := os.Create(p)
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(64 << 30)
		}, "manifest.json: 68719476736 bytes, more than the"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := tc.make(filepath.Join(dir, golden.ManifestFile)); err != nil {
				t.Skipf("cannot make it: %v", err)
			}
			for _, args := range [][]string{
				{"certify", "--suite", "e4m3", "--results", good, "--dir", dir},
				{"export", "--suite", "e4m3", "--dir", dir, "--out", filepath.Join(t.TempDir(), "x")},
				{"golden", "verify", "--dir", dir},
			} {
				start := time.Now()
				expect(t, args, exitUsage, "err", tc.want)
				if d := time.Since(start); d > 10*time.Second {
					t.Errorf("%s took %v", args[0], d)
				}
			}
		})
	}
}
