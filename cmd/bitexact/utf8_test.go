package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/bitexact/bitexact/conformance/certificate"
	"github.com/bitexact/bitexact/conformance/results"
)

// rewrite replaces old with new in the file at p, once, failing when old
// is not there exactly once.
func rewrite(t *testing.T, p string, old, new []byte) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, old); n != 1 {
		t.Fatalf("%s holds %q %d times, want once", p, old, n)
	}
	if err := os.WriteFile(p, bytes.Replace(b, old, new, 1), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestInvalidUTF8: results.json with invalid UTF-8 in a string is
// refused (not rewritten to U+FFFD), and a signed certificate's bytes
// cannot change under its signature: not to invalid UTF-8 that decodes
// to the same string, not to an escape of the same character, not by
// whitespace.
func TestInvalidUTF8(t *testing.T) {
	good := e4m3Results(t, "satfinite", false)
	t.Run("results.json", func(t *testing.T) {
		dir := t.TempDir()
		copyDir(t, good, dir)
		setImplementation(t, dir, "secXXtest")
		rewrite(t, filepath.Join(dir, results.ManifestFile), []byte("secXXtest"), []byte("sec\xfftest"))
		expect(t, []string{"certify", "--suite", "e4m3", "--results", dir}, exitUsage, "err", "invalid UTF-8 at byte")
	})

	dir := t.TempDir()
	copyDir(t, good, dir)
	setImplementation(t, dir, "sec\ufffdtest")
	key := filepath.Join(t.TempDir(), "vendor.key")
	expect(t, []string{"keygen", "--out", key}, exitOK, "out", "wrote")
	cert := t.TempDir()
	expect(t, []string{"certify", "--suite", "e4m3", "--results", dir, "--cert-out", cert, "--sign-key", key}, exitOK, "out", "signed with ed25519 key")
	cj := filepath.Join(cert, certificate.JSONFile)
	orig, err := os.ReadFile(cj)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, []string{"verify-cert", cj, "--pubkey", key + ".pub"}, exitOK, "out", "signature: valid, by the given key")
	for _, tc := range []struct {
		name     string
		old, new string
		code     int
		want     string
	}{
		{"U+FFFD as an invalid byte", "sec\ufffdtest", "sec\xfftest", exitUsage, "invalid UTF-8 at byte"},
		{"U+FFFD escaped", "sec\ufffdtest", `sec\ufffdtest`, exitMismatch, "not byte for byte the signed certificate"},
		{"a letter escaped", `"suite": "e4m3"`, `"suite": "e\u0034m3"`, exitMismatch, "not byte for byte the signed certificate"},
		{"whitespace", `"suite": "e4m3"`, `"suite":  "e4m3"`, exitMismatch, "not byte for byte the signed certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "certificate.json")
			if err := os.WriteFile(p, orig, 0o644); err != nil {
				t.Fatal(err)
			}
			rewrite(t, p, []byte(tc.old), []byte(tc.new))
			expect(t, []string{"verify-cert", p, "--pubkey", key + ".pub"}, tc.code, "err", tc.want)
		})
	}
}
