package demo

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/bitexact/bitexact/internal/golden/safeio"
	"github.com/bitexact/bitexact/wasm"
)

// SiteFile is one file WriteSite wrote.
type SiteFile struct {
	Name string // relative to the site directory
	Size int
}

// ModuleFile is the module's name in a static site: its SHA-256 (the first
// 16 hex digits) is part of the name, so a host may let browsers cache it
// for good; a new module is a new name, which the uncached meta.json
// points to.
func ModuleFile() string { return "refimpl." + wasm.ModuleDigest()[:16] + ".wasm" }

// headers is the _headers file of a static site (the syntax of Netlify and
// Cloudflare Pages; other hosts take the same rules in their own form):
// the page, its scripts and meta.json revalidate on every load, the
// content-addressed module is immutable, and the page is confined to its
// own origin as under `bitexact serve`. Each file gets one Cache-Control:
// both hosts join the values of a header set by several matching rules.
func headers() string {
	var b strings.Builder
	b.WriteString(`# Cache and security headers for the bitexact demo (Netlify / Cloudflare
# Pages syntax). Everything but the module revalidates on each load, so a
# page and the module it names always match; the module's name carries its
# SHA-256, so it never changes under that name.
/*
  Content-Security-Policy: ` + csp + `
  X-Content-Type-Options: nosniff
`)
	names := []string{"/", "/meta.json"}
	ents, _ := assets.ReadDir("assets") // fixed at build time
	for _, e := range ents {
		names = append(names, "/"+e.Name())
	}
	for _, n := range names {
		b.WriteString(n + "\n  Cache-Control: no-cache\n")
	}
	b.WriteString("/" + ModuleFile() + "\n  Cache-Control: public, max-age=31536000, immutable\n  Content-Type: application/wasm\n")
	return b.String()
}

// WriteSite writes the demo as static files into dir, which must not exist
// or be empty: index.html and its scripts, meta.json, the reference module
// as ModuleFile() (the same bytes that `bitexact serve` serves), a gzip
// copy (name.gz) of each for hosts that serve precompressed files, the
// _headers file, and .nojekyll (GitHub Pages then serves every file as
// is). It returns the files written, sorted by name.
//
// Each file is created exclusively (internal/golden/safeio.CreateFile): one
// that appears in dir after the emptiness check, a symbolic link
// included, stops the write and is left as it is.
func WriteSite(dir string) ([]SiteFile, error) {
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return nil, fmt.Errorf("%s is not empty (%d entries, e.g. %s); give a new or empty directory, so that nothing there is overwritten", dir, len(ents), ents[0].Name())
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	afterEmptyCheck(dir)
	od, err := safeio.OpenOutDir(dir)
	if err != nil {
		return nil, err
	}
	defer od.Close()
	files := map[string][]byte{
		"meta.json":  metaJSON(ModuleFile()),
		ModuleFile(): module(),
		"_headers":   []byte(headers()),
		".nojekyll":  {},
	}
	err = fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := assets.ReadFile(p)
		files[strings.TrimPrefix(p, "assets/")] = b
		return err
	})
	if err != nil {
		return nil, err
	}
	var names []string
	for n := range files {
		names = append(names, n)
	}
	for _, n := range names {
		if n == "_headers" || n == ".nojekyll" {
			continue
		}
		z, err := gzipBytes(files[n])
		if err != nil {
			return nil, err
		}
		files[n+".gz"] = z
		names = append(names, n+".gz")
	}
	sort.Strings(names)
	var out []SiteFile
	for _, n := range names {
		if err := od.CreateFile(n, files[n], 0o644); err != nil {
			return out, err
		}
		out = append(out, SiteFile{n, len(files[n])})
	}
	return out, nil
}

// afterEmptyCheck lets a test plant a file after the emptiness check.
var afterEmptyCheck = func(dir string) {}

// gzipBytes compresses b at the best level with an empty header (no name,
// no time), so that the same input always gives the same bytes.
func gzipBytes(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
