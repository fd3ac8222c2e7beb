package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/bitexact/bitexact/internal/conformance/record"
	"github.com/bitexact/bitexact/internal/golden/safeio"
)

const ecosystemHelp = `
Ecosystem renders the conformance matrix of the recorded implementations
(docs/ecosystem.md) from the records under --root: implementation x op ->
the profile it conforms to or a summary of how it differs, with its
provenance and the command that reproduces it, and the same matrix as
JSON for the browser demo's Ecosystem view (--json). With --check it
compares both renderings with the files and exits 1 when one differs.`

func runEcosystem(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("ecosystem", "ecosystem [--root DIR] [--out FILE] [--json FILE] [--check]", ecosystemHelp, stderr)
	root := fs.String("root", "conformance/harness", "folder of the harnesses and their records")
	out := fs.String("out", "docs/ecosystem.md", "file to write (- for stdout)")
	jsonOut := fs.String("json", "cmd/bitexact/internal/demo/assets/ecosystem.json", "the demo's copy of the matrix as JSON (\"\" to skip)")
	check := fs.Bool("check", false, "compare with --out instead of writing it")
	if st, ok := parse(fs, args); !ok {
		return st
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "ecosystem", "unexpected argument %q", fs.Arg(0))
	}
	b, err := record.Ecosystem(*root)
	if err != nil {
		fmt.Fprintf(stderr, "bitexact ecosystem: %v\n", err)
		return exitUsage
	}
	outs := []struct {
		file string
		b    []byte
	}{{*out, b}}
	if *jsonOut != "" {
		j, err := record.EcosystemJSON(*root)
		if err != nil {
			fmt.Fprintf(stderr, "bitexact ecosystem: %v\n", err)
			return exitUsage
		}
		outs = append(outs, struct {
			file string
			b    []byte
		}{*jsonOut, j})
	}
	stale := false
	for _, o := range outs {
		switch {
		case *check:
			old, err := os.ReadFile(o.file)
			if err != nil {
				fmt.Fprintf(stderr, "bitexact ecosystem: %v\n", err)
				return exitUsage
			}
			if !bytes.Equal(old, o.b) {
				fmt.Fprintf(stderr, "bitexact ecosystem: %s is stale; run 'go run ./cmd/bitexact ecosystem'\n", o.file)
				stale = true
				continue
			}
			fmt.Fprintf(stdout, "%s is up to date\n", o.file)
		case o.file == "-":
			stdout.Write(o.b)
		default:
			if err := safeio.WriteFile(o.file, o.b, 0o644); err != nil {
				fmt.Fprintf(stderr, "bitexact ecosystem: %v\n", err)
				return exitUsage
			}
			fmt.Fprintf(stdout, "wrote %s\n", o.file)
		}
	}
	if stale {
		return exitMismatch
	}
	return exitOK
}
