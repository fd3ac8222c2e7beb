package safeio

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// writeCall matches the os functions that create, replace or open files
// for writing; outside this package only OutDir may call them.
var writeCall = regexp.MustCompile(`\bos\.(WriteFile|Create|CreateTemp|OpenFile|Rename|Link|Symlink|Truncate)\(`)

// notWriters are the files allowed a direct call, each with its reason.
var notWriters = map[string]string{
	// go build writes the module itself into a temporary file this
	// generator creates exclusively (CreateTemp) and renames into place.
	"wasm/internal/guestbuild/gen/main.go": "the go command writes the file",
}

// Every file the module's commands and packages write goes through
// OutDir: a direct os.WriteFile elsewhere would follow a planted link.
func TestOneWriter(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("not at the module root: %v", err)
	}
	seen := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (strings.HasPrefix(n, ".") || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "internal/golden/safeio/") || notWriters[rel] != "" {
			return nil
		}
		seen++
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if writeCall.MatchString(line) {
				t.Errorf("%s:%d: %s (write through safeio.OutDir, WriteFile or CreateFile)", rel, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 50 {
		t.Fatalf("read %d Go files: not the module", seen)
	}
}
