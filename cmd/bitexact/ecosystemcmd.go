package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/bitexact/bitexact/conformance/record"
)

const ecosystemHelp = `
Ecosystem renders the conformance matrix of the recorded implementations
(docs/ecosystem.md) from the records under --root: implementation x op ->
the profile it conforms to or a summary of how it differs, with its
provenance and the command that reproduces it. With --check it compares
the rendering with --out and exits 1 when they differ.`

func runEcosystem(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("ecosystem", "ecosystem [--root DIR] [--out FILE] [--check]", ecosystemHelp, stderr)
	root := fs.String("root", "conformance/harness", "folder of the harnesses and their records")
	out := fs.String("out", "docs/ecosystem.md", "file to write (- for stdout)")
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
	switch {
	case *check:
		old, err := os.ReadFile(*out)
		if err != nil {
			fmt.Fprintf(stderr, "bitexact ecosystem: %v\n", err)
			return exitUsage
		}
		if !bytes.Equal(old, b) {
			fmt.Fprintf(stderr, "bitexact ecosystem: %s is stale; run 'go run ./cmd/bitexact ecosystem'\n", *out)
			return exitMismatch
		}
		fmt.Fprintf(stdout, "%s is up to date\n", *out)
	case *out == "-":
		stdout.Write(b)
	default:
		if err := os.WriteFile(*out, b, 0o644); err != nil {
			fmt.Fprintf(stderr, "bitexact ecosystem: %v\n", err)
			return exitUsage
		}
		fmt.Fprintf(stdout, "wrote %s\n", *out)
	}
	return exitOK
}
