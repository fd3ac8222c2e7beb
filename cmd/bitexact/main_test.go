package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/golden/exhaustive"
)

// bitexact runs the command in-process.
func bitexact(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(context.Background(), args, &o, &e)
	return code, o.String(), e.String()
}

func TestUsage(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stream string // "out" or "err"
		want   string
	}{
		{"no args", nil, exitUsage, "err", "Commands:"},
		{"help", []string{"help"}, exitOK, "out", "certify"},
		{"unknown", []string{"frobnicate"}, exitUsage, "err", `unknown command "frobnicate"`},
		{"certify -h", []string{"certify", "-h"}, exitOK, "err", "Usage: bitexact certify"},
		{"help certify", []string{"help", "certify"}, exitOK, "err", "Usage: bitexact certify"},
		{"certify bad flag", []string{"certify", "--nope"}, exitUsage, "err", "flag provided but not defined: -nope"},
		{"certify extra arg", []string{"certify", "x"}, exitUsage, "err", `unexpected argument "x"`},
		{"certify bad engine", []string{"certify", "--engines", "gpu"}, exitUsage, "err", `unknown engine "gpu"`},
		{"certify missing dir", []string{"certify", "--dir", "/nonexistent"}, exitUsage, "err", "/nonexistent: not a directory"},
		{"certify no such case", []string{"certify", "--engines", "native", "--case", "zzz"}, exitUsage, "err", `no case name contains "zzz"`},
		{"golden", []string{"golden"}, exitUsage, "err", "gen|verify"},
		{"golden -h", []string{"golden", "-h"}, exitOK, "err", "Subcommands:"},
		{"golden bad sub", []string{"golden", "make"}, exitUsage, "err", `unknown subcommand "make"`},
		{"golden gen -h", []string{"golden", "gen", "-h"}, exitOK, "err", "Usage: bitexact golden gen"},
		{"golden verify -h", []string{"golden", "verify", "-h"}, exitOK, "err", "Usage: bitexact golden verify"},
		{"golden verify bad dir", []string{"golden", "verify", "--dir", "/nonexistent"}, exitUsage, "err", "golden set directory /nonexistent: not a directory"},
		{"exhaustive -h", []string{"exhaustive", "-h"}, exitOK, "err", "Merkle"},
		{"exhaustive nothing", []string{"exhaustive"}, exitUsage, "err", "name a conversion"},
		{"exhaustive unknown", []string{"exhaustive", "--conv", "e2m1/none"}, exitUsage, "err", `unknown conversion "e2m1/none"`},
		{"exhaustive unknown format", []string{"exhaustive", "--op", "e9m9"}, exitUsage, "err", `unknown format "e9m9"`},
		{"exhaustive both", []string{"exhaustive", "--all", "--conv", "e2m1/nvidia"}, exitUsage, "err", "--all excludes"},
		{"exhaustive bad chunk", []string{"exhaustive", "--conv", "e2m1/nvidia", "--chunks", "256"}, exitUsage, "err", `--chunks: "256" is not a chunk index in 0..255`},
		{"exhaustive sampled", []string{"exhaustive", "--conv", "e2m1/nvidia", "--engine", "native", "--chunks", "63,255"}, exitOK, "out", "ok   e2m1/nvidia            2 of 256 chunks match the committed leaves (SAMPLED, not a full check; native"},
		{"encode -h", []string{"encode", "-h"}, exitOK, "err", "Usage: bitexact encode"},
		{"encode nothing", []string{"encode"}, exitUsage, "err", "no VALUE given"},
		{"encode bad value", []string{"encode", "1", "abc"}, exitUsage, "err", `argument 2: "abc" is not a number`},
		{"encode bad bits", []string{"encode", "bits:0xzz"}, exitUsage, "err", `"bits:0xzz" is not a 32-bit hex pattern`},
		{"encode bad format", []string{"encode", "--format", "e3m3", "1"}, exitUsage, "err", `unknown format "e3m3"`},
		{"encode bad block", []string{"encode", "--block", "mxfp8", "1"}, exitUsage, "err", `--block "mxfp8": want nvfp4, mxfp4 or a block format of refimpl/block`},
		{"encode bad recipe", []string{"encode", "--block", "nvfp4", "--profile", "nope", "1"}, exitUsage, "err", "nope"},
		{"semantics -h", []string{"semantics", "-h"}, exitOK, "err", "disagreement matrix"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, o, e := bitexact(t, tc.args...)
			got := o
			if tc.stream == "err" {
				got = e
			}
			if code != tc.code || !strings.Contains(got, tc.want) {
				t.Errorf("exit %d, want %d; std%s:\n%s\nwant it to contain %q", code, tc.code, tc.stream, got, tc.want)
			}
		})
	}
}

func TestEncode(t *testing.T) {
	code, o, _ := bitexact(t, "encode", "0.75", "-nan")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	// 0.75 is the E2M1 tie between 0.5 and 1: nearest-even gives code 2
	// (1.0), llama.cpp's best_index_mxfp4 gives 1 (0.5) (formats.md).
	// -NaN: NVIDIA 0x7, CUTLASS 0xF, ml_dtypes 0x0 (formats.md).
	for _, want := range []string{
		"x = 0.75  (float32 bits 0x3f400000)",
		"e2m1/nvidia            0x2     0010              0  01        0           1",
		"e2m1/ties-toward-zero  0x1     0001              0  00        1           0.5      *",
		"e4m3/satfinite         0x34    00110100          0  0110      100         0.75",
		"bf16/rne               0x3f40  0011111101000000  0  01111110  1000000     0.75",
		"x = -NaN(0xffc00000)  (float32 bits 0xffc00000)",
		"e2m1/cutlass           0xf     1111              1  11        1           -6                *",
		"e2m1/ml_dtypes         0x0     0000              0  00        0           0                 *",
		"e4m3/nosat             0xff    11111111          1  1111      111         -NaN(0xffc00000)  *",
	} {
		if !strings.Contains(o, want) {
			t.Errorf("output lacks %q:\n%s", want, o)
		}
	}
	code, o, _ = bitexact(t, "encode", "--format", "e8m0", "bits:0x3fc00000")
	if code != exitOK || !strings.Contains(o, "x = 1.5") || !strings.Contains(o, "e8m0/rz         0x7f  01111111  -  01111111  -     1") || strings.Contains(o, "e2m1") {
		t.Errorf("encode --format e8m0 1.5: exit %d\n%s", code, o)
	}
}

func TestEncodeBlock(t *testing.T) {
	// An MX block of {0.75, 1.75, 6, 7}: amax 7, floor(log2 7) - 2 = 0, so
	// scale 2^0 (E8M0 0x7f); 0.75 and 1.75 are ties that nearest-even
	// rounds up, 7 saturates to 6.
	code, o, _ := bitexact(t, "encode", "--block", "mxfp4", "0.75", "1.75", "6", "7")
	for _, want := range []string{"block 0: scale 0x7f (E8M0 1)", "0  0.75  0x2   1     1            0.25", "3  7     0x7   6     6            -1", "(28 zero elements pad the block)"} {
		if code != exitOK || !strings.Contains(o, want) {
			t.Errorf("exit %d; output lacks %q:\n%s", code, want, o)
		}
	}
	code, o, _ = bitexact(t, "encode", "--block", "nvfp4", "1", "-2", "6")
	if code != exitOK || !strings.Contains(o, "nvfp4 (recipe canonical): 3 values in 1 block of 16") || !strings.Contains(o, "block 0: scale 0x") {
		t.Errorf("encode --block nvfp4: exit %d\n%s", code, o)
	}
}

func TestCertifyNative(t *testing.T) {
	code, o, e := bitexact(t, "certify", "--engines", "native")
	if code != exitOK || !strings.Contains(o, "CONFORMANT:") || !strings.Contains(o, "nvfp4.quantize") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, o, e)
	}
}

// writeSet copies the embedded set to a directory.
func writeSet(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	err := fs.WalkDir(golden.DataFS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, p), 0o755)
		}
		b, err := fs.ReadFile(golden.DataFS(), p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, p), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// tamper flips the last byte of a case's expected file (the end of its
// last tensor's data) and, when fixDigest, records the new SHA-256 in the
// manifest so that only the comparison can notice.
func tamper(t *testing.T, dir, caseName string, fixDigest bool) string {
	t.Helper()
	mp := filepath.Join(dir, golden.ManifestFile)
	mb, err := os.ReadFile(mp)
	if err != nil {
		t.Fatal(err)
	}
	var m golden.Manifest
	if err := json.Unmarshal(mb, &m); err != nil {
		t.Fatal(err)
	}
	for i, c := range m.Cases {
		if c.Name != caseName {
			continue
		}
		p := filepath.Join(dir, c.File)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)-1] ^= 1
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if fixDigest {
			h := sha256.Sum256(b)
			m.Cases[i].SHA256 = hex.EncodeToString(h[:])
			nb, _ := json.MarshalIndent(m, "", "  ")
			if err := os.WriteFile(mp, append(nb, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return c.File
	}
	t.Fatalf("no case %s", caseName)
	return ""
}

func TestCertifyMismatch(t *testing.T) {
	dir := writeSet(t)
	file := tamper(t, dir, "e4m3.edges.satfinite", true)
	code, o, _ := bitexact(t, "certify", "--engines", "native", "--dir", dir)
	if code != exitMismatch || !strings.Contains(o, "FAIL native e4m3.edges.satfinite: "+file+`: tensor "codes": 1 of `) || !strings.Contains(o, "NOT CONFORMANT") {
		t.Errorf("exit %d, want %d\n%s", code, exitMismatch, o)
	}
	// Without the digest fixed, the set itself is bad input.
	dir = writeSet(t)
	tamper(t, dir, "e4m3.edges.satfinite", false)
	code, _, e := bitexact(t, "certify", "--engines", "native", "--dir", dir)
	if code != exitUsage || !strings.Contains(e, file+": SHA-256") {
		t.Errorf("exit %d, want %d\n%s", code, exitUsage, e)
	}
}

func TestGoldenGenVerify(t *testing.T) {
	dir := t.TempDir()
	code, o, e := bitexact(t, "golden", "gen", "--engine", "native", "--out", dir)
	if code != exitOK || !strings.Contains(o, "wrote "+dir) {
		t.Fatalf("gen: exit %d\n%s%s", code, o, e)
	}
	code, o, e = bitexact(t, "golden", "verify", "--engine", "native", "--dir", dir)
	if code != exitOK || !strings.Contains(o, "byte-identical") {
		t.Fatalf("verify: exit %d\n%s%s", code, o, e)
	}
	file := tamper(t, dir, "e4m3.edges.satfinite", false)
	code, o, _ = bitexact(t, "golden", "verify", "--engine", "native", "--dir", dir)
	if code != exitMismatch || !strings.Contains(o, "MISMATCH in "+dir+": "+file+`: tensor "codes": 1 of `) {
		t.Errorf("verify after tampering: exit %d\n%s", code, o)
	}
}

func TestSemanticsUpToDate(t *testing.T) {
	want := semanticsDoc()
	got, err := os.ReadFile("../../docs/semantics.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/semantics.md is stale; regenerate with: go run ./cmd/bitexact semantics --out docs/semantics.md")
	}
	code, o, _ := bitexact(t, "semantics")
	if code != exitOK || o != string(want) {
		t.Errorf("semantics to stdout: exit %d, %d bytes, want %d", code, len(o), len(want))
	}
}

func TestExhaustiveCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("2^32 inputs")
	}
	code, o, e := bitexact(t, "exhaustive", "--conv", "e2m1/nvidia", "--engine", "native")
	if code != exitOK || !strings.HasPrefix(o, "ok   e2m1/nvidia") {
		t.Errorf("exit %d\n%s%s", code, o, e)
	}
}

func TestExhaustiveDigestsDir(t *testing.T) {
	d, err := exhaustive.Committed("e2m1/nvidia")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	d.Leaves[63] = strings.Repeat("0", 64)
	b, _ := d.Marshal()
	if err := os.WriteFile(filepath.Join(dir, "e2m1.nvidia.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, e := bitexact(t, "exhaustive", "--conv", "e2m1/nvidia", "--engine", "native", "--chunks", "63", "--digests", dir)
	if code != exitUsage || !strings.Contains(e, "e2m1.nvidia.json: e2m1/nvidia: root "+d.Root+" does not match its leaves") {
		t.Errorf("exit %d, want %d\n%s", code, exitUsage, e)
	}
	code, _, e = bitexact(t, "exhaustive", "--conv", "e2m1/sw-sm121", "--engine", "native", "--chunks", "63", "--digests", dir)
	if code != exitUsage || !strings.Contains(e, "no committed digest for e2m1/sw-sm121") {
		t.Errorf("exit %d, want %d\n%s", code, exitUsage, e)
	}
}
