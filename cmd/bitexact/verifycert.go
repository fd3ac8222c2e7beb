package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/bitexact/bitexact/conformance/certificate"
	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/wasm"
)

const verifyCertHelp = `
Verify-cert re-checks a certificate.json written by 'bitexact certify':
its content digest, that the golden set (manifest SHA-256, suite version)
and reference module (.wasm SHA-256) are this build's, that every task of
the suite appears exactly once, and that each verdict follows from the
counts it records. With --results DIR it also checks the SHA-256 of every
results file and certifies the results again: the verdicts must come out
identical. Exit status 0: the certificate holds; 1: it does not (the
reason is printed); 2: bad usage or an unreadable certificate.`

func runVerifyCert(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("verify-cert", "verify-cert CERT [--results DIR] [--dir GOLDEN]", verifyCertHelp, stderr)
	res := fs.String("results", "", "results directory the certificate was made from")
	dir := fs.String("dir", "", "golden set directory (default: the embedded set)")
	if st, ok := parse(fs, args); !ok {
		return st
	}
	// Accept flags after the certificate path too.
	rest := fs.Args()
	if len(rest) > 1 {
		if st, ok := parse(fs, rest[1:]); !ok {
			return st
		}
		rest = append(rest[:1], fs.Args()...)
	}
	if len(rest) != 1 {
		return usageError(stderr, "verify-cert", "want exactly one certificate file, got %d arguments", len(rest))
	}
	b, err := os.ReadFile(rest[0])
	if err != nil {
		fmt.Fprintf(stderr, "bitexact verify-cert: %v\n", err)
		return exitUsage
	}
	c, err := certificate.Parse(b)
	if err != nil {
		fmt.Fprintf(stderr, "bitexact verify-cert: %s: %v\n", rest[0], err)
		return exitUsage
	}
	set, fsys, err := goldenFS(*dir)
	if err != nil {
		fmt.Fprintf(stderr, "bitexact verify-cert: %v\n", err)
		return exitUsage
	}
	md, err := suite.ManifestDigest(fsys)
	if err != nil {
		fmt.Fprintf(stderr, "bitexact verify-cert: %v\n", err)
		return exitUsage
	}
	err = certificate.Verify(c, certificate.Context{Set: set, GoldenSHA256: md, ReferenceWasm: wasm.ModuleDigest(), ResultsDir: *res})
	var ve *certificate.VerifyError
	switch {
	case errors.As(err, &ve):
		fmt.Fprintf(stderr, "bitexact verify-cert: %s: %v\n", rest[0], err)
		return exitMismatch
	case err != nil:
		fmt.Fprintf(stderr, "bitexact verify-cert: %v\n", err)
		return exitUsage
	}
	what := "internally consistent"
	if *res != "" {
		what = "consistent with the results in " + *res
	}
	fmt.Fprintf(stdout, "certificate OK (%s): suite %s %s, %s\n", what, c.Suite, c.SuiteVersion, c.VerdictText())
	return exitOK
}
