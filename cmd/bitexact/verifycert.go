package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"

	"github.com/bitexact/bitexact/conformance/certificate"
	"github.com/bitexact/bitexact/conformance/results"
	"github.com/bitexact/bitexact/internal/golden/safeio"
	"github.com/bitexact/bitexact/wasm"
)

const verifyCertHelp = `
Verify-cert re-checks a certificate.json written by 'bitexact certify':
its content digest, its signature (with --pubkey, that the given ed25519
key made it), that the golden set (manifest SHA-256, suite version) and
reference module (.wasm SHA-256) are this build's, that every task of
the suite appears exactly once, and that each verdict follows from the
counts it records. With --results DIR it also checks the SHA-256 of every
results file, that implementation, platform and claimed profile are those
of results.json, and certifies the results again: every field but tool,
max_mismatches (the one setting taken from the certificate),
content_sha256 and signature must come out identical (docs/vendor.md,
"What exit 0 establishes").

What passing proves: the content digest only that the file is intact
(anyone can recompute it after an edit); --results that the certificate
is what this build makes of those results; --pubkey that the holder of
the matching private key issued exactly this certificate. Exit status 0:
the certificate holds; 1: it does not (the reason is printed); 2: bad
usage, or an unreadable certificate, key or results directory.`

func runVerifyCert(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("verify-cert", "verify-cert CERT [--results DIR] [--pubkey KEY.pub] [--dir GOLDEN]", verifyCertHelp, stderr)
	res := fs.String("results", "", "results directory the certificate was made from")
	dir := fs.String("dir", "", "golden set directory (default: the embedded set)")
	pubkey := fs.String("pubkey", "", "ed25519 public key (PEM, from 'bitexact keygen') that must have signed the certificate")
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
	var pub ed25519.PublicKey
	if *pubkey != "" {
		var err error
		if pub, err = certificate.LoadPublicKey(*pubkey); err != nil {
			fmt.Fprintf(stderr, "bitexact verify-cert: --pubkey: %v\n", err)
			return exitUsage
		}
	}
	b, err := safeio.ReadFile(rest[0], certificate.MaxBytes)
	if err != nil {
		fmt.Fprintf(stderr, "bitexact verify-cert: %v\n", err)
		return exitUsage
	}
	c, err := certificate.Parse(b)
	if err != nil {
		fmt.Fprintf(stderr, "bitexact verify-cert: %s: %v\n", rest[0], err)
		return exitUsage
	}
	set, err := loadSet(*dir)
	if err != nil {
		fmt.Fprintf(stderr, "bitexact verify-cert: %v\n", err)
		return exitUsage
	}
	// The digest of the manifest the set was loaded from, not of the
	// file as it is now.
	md := set.ManifestSHA256()
	ref := &lazyWasm{}
	defer ref.Close()
	err = certificate.Verify(c, certificate.Context{Set: set, GoldenSHA256: md, ReferenceWasm: wasm.ModuleDigest(), ResultsDir: *res, Reference: ref, PublicKey: pub, Bytes: b})
	var ve *certificate.VerifyError
	switch {
	case errors.As(err, &ve):
		fmt.Fprintf(stderr, "bitexact verify-cert: %s: %v\n", rest[0], err)
		return exitMismatch
	case err != nil:
		fmt.Fprintf(stderr, "bitexact verify-cert: %v\n", err)
		return exitUsage
	}
	// Parse refused control characters in every string; Printable is a
	// second guard for the terminal.
	fmt.Fprintf(stdout, "certificate OK: suite %s %s, %s\n", c.Suite, c.SuiteVersion, results.Printable(c.VerdictText()))
	if *res != "" {
		fmt.Fprintf(stdout, "results: identical to a fresh certification of %s\n", results.Printable(*res))
	} else {
		fmt.Fprintf(stdout, "results: not checked (only internal consistency; pass --results DIR to re-certify them)\n")
	}
	switch {
	case c.Signature == nil:
		fmt.Fprintf(stdout, "signature: none (unsigned: anyone could have written or edited this certificate and recomputed its content SHA-256)\n")
	case pub != nil:
		fmt.Fprintf(stdout, "signature: valid, by the given key %s\n", certificate.KeyFingerprint(pub))
	default:
		k, _ := c.SignerKey()
		fmt.Fprintf(stdout, "signature: matches the key the certificate itself carries, %s; nothing about the signer is established: anyone can make a key and sign any certificate with it (pass --pubkey KEY.pub, a key you trust, to check who signed)\n", certificate.KeyFingerprint(k))
	}
	return exitOK
}

const keygenHelp = `
Keygen writes a new ed25519 key pair for signing certificates: the
private key to FILE (PEM PKCS #8, mode 0600) and the public key to
FILE.pub (PEM PKIX; openssl reads both). It never overwrites a file.

  bitexact keygen --out vendor.key
  bitexact certify --suite e4m3 --results R --cert-out C --sign-key vendor.key
  bitexact verify-cert C/certificate.json --pubkey vendor.key.pub`

func runKeygen(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("keygen", "keygen --out FILE", keygenHelp, stderr)
	out := fs.String("out", "", "private key file; the public key goes to FILE.pub")
	if st, ok := parse(fs, args); !ok {
		return st
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "keygen", "unexpected argument %q", fs.Arg(0))
	}
	if *out == "" {
		return usageError(stderr, "keygen", "--out is required")
	}
	pub, err := certificate.GenerateKey(nil, *out, *out+".pub")
	if err != nil {
		fmt.Fprintf(stderr, "bitexact keygen: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(stdout, "wrote %s (private, keep it secret) and %s.pub; key %s\n", *out, *out, certificate.KeyFingerprint(pub))
	return exitOK
}
