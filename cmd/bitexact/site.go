package main

import (
	"context"
	"fmt"
	"io"

	"github.com/bitexact/bitexact/cmd/bitexact/internal/demo"
	"github.com/bitexact/bitexact/wasm"
)

const siteHelp = `
Site writes the browser demo as static files into DIR (a new or empty
directory), for any static host (GitHub Pages, Netlify, an S3 bucket,
python3 -m http.server) with no Go server: the page and its scripts,
meta.json, and the very refimpl.wasm that 'bitexact serve' serves, named
by its SHA-256 (the page shows the digest it computed). Every file also
has a gzip copy (NAME.gz) for hosts that serve precompressed files.
DIR/_headers lists the cache and security headers to set: the module is
immutable under its name, everything else revalidates on each load.`

const siteSynopsis = "site --out DIR"

// runSite is 'bitexact site'; 'bitexact serve --out DIR' runs it too.
func runSite(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("site", siteSynopsis, siteHelp, stderr)
	out := fs.String("out", "", "directory to write the site into (new or empty)")
	if st, ok := parse(fs, args); !ok {
		return st
	}
	if fs.NArg() != 0 {
		return usageError(stderr, "site", "unexpected argument %q", fs.Arg(0))
	}
	if *out == "" {
		return usageError(stderr, "site", "--out DIR is required")
	}
	return writeSite(*out, stdout, stderr)
}

func writeSite(dir string, stdout, stderr io.Writer) int {
	files, err := demo.WriteSite(dir)
	if err != nil {
		fmt.Fprintf(stderr, "bitexact site: %v\n", err)
		return exitUsage
	}
	total := 0
	for _, f := range files {
		total += f.Size
	}
	fmt.Fprintf(stdout, "wrote %d files (%d bytes) to %s; module %s sha256 %s\n", len(files), total, dir, demo.ModuleFile(), wasm.ModuleDigest())
	fmt.Fprintf(stdout, "publish the directory as is; %s/_headers lists the cache headers to set\n", dir)
	return exitOK
}
