package demo

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteSite: every file has a gzip copy that decompresses to it, the
// _headers file names the module, and an existing non-empty directory is
// left alone.
func TestWriteSite(t *testing.T) {
	dir := t.TempDir()
	files, err := WriteSite(dir)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, f := range files {
		have[f.Name] = true
	}
	for _, want := range []string{"index.html", "app.js", "meta.json", ModuleFile(), "_headers", ".nojekyll"} {
		if !have[want] {
			t.Errorf("site lacks %s (has %v)", want, files)
		}
	}
	for _, f := range files {
		if strings.HasSuffix(f.Name, ".gz") || f.Name == "_headers" || f.Name == ".nojekyll" {
			continue
		}
		plain, err := os.ReadFile(filepath.Join(dir, f.Name))
		if err != nil {
			t.Fatal(err)
		}
		z, err := os.Open(filepath.Join(dir, f.Name+".gz"))
		if err != nil {
			t.Errorf("%s has no gzip copy: %v", f.Name, err)
			continue
		}
		r, err := gzip.NewReader(z)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		z.Close()
		if err != nil || !bytes.Equal(got, plain) {
			t.Errorf("%s.gz does not decompress to %s (err %v)", f.Name, f.Name, err)
		}
	}
	h, _ := os.ReadFile(filepath.Join(dir, "_headers"))
	if !strings.Contains(string(h), "/"+ModuleFile()+"\n  Cache-Control: public, max-age=31536000, immutable") {
		t.Errorf("_headers does not make the module immutable:\n%s", h)
	}
	if _, err := WriteSite(dir); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("writing over a site: err %v, want a refusal", err)
	}
}
