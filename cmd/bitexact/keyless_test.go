package main

import (
	"encoding/base64"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"

	"github.com/bitexact/bitexact/conformance/certificate"
)

// TestKeylessSignature: a certificate "signed" by the identity point
// with R = identity and S = 0 (which crypto/ed25519 accepts for any
// content) is refused, as is such a key given as --pubkey, and a valid
// signature checked without --pubkey is said to establish nothing about
// the signer.
func TestKeylessSignature(t *testing.T) {
	bad := e4m3Results(t, "satfinite", true)
	cert := t.TempDir()
	expect(t, []string{"certify", "--suite", "e4m3", "--results", bad, "--cert-out", cert}, exitMismatch, "out", "DOES NOT CONFORM")
	b, err := os.ReadFile(filepath.Join(cert, certificate.JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	c, err := certificate.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	identity := make([]byte, 32)
	identity[0] = 1
	sig := make([]byte, 64)
	sig[0] = 1                             // R = identity, S = 0
	for _, sign := range []byte{0, 0x80} { // and the non-canonical -0 spelling
		identity[31], sig[31] = sign, sign
		c.Signature = &certificate.Signature{Algorithm: certificate.SignatureAlgorithm,
			PublicKey: base64.StdEncoding.EncodeToString(identity), Value: base64.StdEncoding.EncodeToString(sig)}
		j, err := c.JSON()
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "certificate.json")
		if err := os.WriteFile(p, j, 0o644); err != nil {
			t.Fatal(err)
		}
		expect(t, []string{"verify-cert", p}, exitMismatch, "err", "is a point of small order: a signature by it can be valid for any content")
		pub := filepath.Join(t.TempDir(), "identity.pub")
		der := append([]byte{0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00}, identity...) // PKIX ed25519
		if err := os.WriteFile(pub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o644); err != nil {
			t.Fatal(err)
		}
		expect(t, []string{"verify-cert", p, "--pubkey", pub}, exitUsage, "err", "identity.pub: a point of small order, not a usable ed25519 public key")
	}

	key := filepath.Join(t.TempDir(), "vendor.key")
	expect(t, []string{"keygen", "--out", key}, exitOK, "out", "wrote")
	signed := t.TempDir()
	expect(t, []string{"certify", "--suite", "e4m3", "--results", bad, "--cert-out", signed, "--sign-key", key}, exitMismatch, "out", "signed with ed25519 key")
	expect(t, []string{"verify-cert", filepath.Join(signed, certificate.JSONFile)}, exitOK, "out",
		"nothing about the signer is established: anyone can make a key and sign any certificate with it")
}
