package main

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/internal/conformance/record"
	"github.com/bitexact/bitexact/refimpl/e8m0"
)

func TestRecordUsage(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short.bin")
	if err := os.WriteFile(short, make([]byte, 1000), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no out", []string{"record", "--format", "fp16"}, "--out"},
		{"both modes", []string{"record", "--format", "fp16", "--table", "e8m0.decode", "--out", "x"}, "exactly one"},
		{"unknown table", []string{"record", "--table", "nope", "--in", short, "--out", filepath.Join(dir, "t.json")}, `unknown table op "nope"`},
		{"unknown format", []string{"record", "--format", "fp12", "--in", short, "--out", filepath.Join(dir, "u.json")}, `unknown format "fp12"`},
		{"truncated stream", []string{"record", "--format", "fp16", "--in", short, "--out", filepath.Join(dir, "v.json")}, "chunk 0 of 256"},
		{"import without chunks", []string{"record", "--import", "sweep.json"}, "--import needs --chunks"},
	} {
		code, _, stderr := bitexact(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and %q", tc.name, code, stderr, tc.want)
		}
	}
	for _, f := range []string{"u.json", "v.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s written after a failed run", f)
		}
	}
}

// TestRecordTable records the E8M0 reference decode as a table and reads
// it back.
func TestRecordTable(t *testing.T) {
	dir := t.TempDir()
	in := make([]byte, 4*256)
	for c := range 256 {
		binary.LittleEndian.PutUint32(in[4*c:], math.Float32bits(e8m0.Decode(uint8(c))))
	}
	inFile, out := filepath.Join(dir, "in.bin"), filepath.Join(dir, "rec.json")
	if err := os.WriteFile(inFile, in, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := bitexact(t, "record", "--table", "e8m0.decode", "--in", inFile, "--out", out, "--harness", "h",
		"--implementation", "refimpl", "--function", "e8m0.Decode", "--build", "go", "--command", "test", "--date", "2026-11-25")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	f, err := record.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if f.Table == nil || len(f.Table.Outputs) != 256 || f.Table.Outputs[255] != "0x7fc00000" || f.Table.Outputs[0] != "0x00400000" {
		t.Errorf("table record %+v", f.Table)
	}
}

func TestEcosystemCheck(t *testing.T) {
	code, stdout, stderr := bitexact(t, "ecosystem", "--root", "../../conformance/harness", "--out", "../../docs/ecosystem.md", "--json", "internal/demo/assets/ecosystem.json", "--check")
	if code != exitOK {
		t.Errorf("exit %d: %s%s", code, stdout, stderr)
	}
}
