package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/cmd/bitexact/internal/demo"
	"github.com/bitexact/bitexact/wasm"
)

// TestSite writes the static site through both spellings and checks the
// module's bytes, and that a second run refuses to write over the first.
func TestSite(t *testing.T) {
	for _, args := range [][]string{{"--out"}, {"serve", "--out"}} {
		dir := filepath.Join(t.TempDir(), "site")
		var out, errb bytes.Buffer
		var st int
		if args[0] == "serve" {
			st = runServe(t.Context(), []string{"--out", dir}, &out, &errb)
		} else {
			st = runSite(context.Background(), []string{"--out", dir}, &out, &errb)
		}
		if st != exitOK {
			t.Fatalf("%v: exit %d, stderr %q", args, st, errb.String())
		}
		if !strings.Contains(out.String(), wasm.ModuleDigest()) {
			t.Errorf("%v: output %q does not name the module digest", args, out.String())
		}
		b, err := os.ReadFile(filepath.Join(dir, demo.ModuleFile()))
		if err != nil {
			t.Fatal(err)
		}
		if d := sha256.Sum256(b); hex.EncodeToString(d[:]) != wasm.ModuleDigest() {
			t.Errorf("%v: module in the site has sha256 %x, want %s", args, d, wasm.ModuleDigest())
		}
		errb.Reset()
		if st := runSite(context.Background(), []string{"--out", dir}, &out, &errb); st != exitUsage || !strings.Contains(errb.String(), "is not empty") {
			t.Errorf("second run into %s: exit %d, stderr %q; want a refusal naming the non-empty directory", dir, st, errb.String())
		}
	}
	var errb bytes.Buffer
	if st := runSite(context.Background(), nil, &bytes.Buffer{}, &errb); st != exitUsage || !strings.Contains(errb.String(), "--out DIR is required") {
		t.Errorf("no --out: exit %d, stderr %q", st, errb.String())
	}
}
