package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/conformance/certificate"
)

// plantLink makes out/name a symbolic link to a new file outside out
// and returns that file's path; noVictimChange checks it afterwards.
func plantLink(t *testing.T, out, name string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges")
	}
	v := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(v, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Join(out, name)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(v, filepath.Join(out, name)); err != nil {
		t.Fatal(err)
	}
	return v
}

func noVictimChange(t *testing.T, v string) {
	t.Helper()
	if b, err := os.ReadFile(v); err != nil || string(b) != "precious" {
		t.Fatalf("the file a planted link names now holds %.40q (%v)", b, err)
	}
}

// TestOutputsNeverFollowLinks: a symbolic link planted where a command
// writes a file is refused with its name, and the file it names is left
// as it is, for every command that writes files.
func TestOutputsNeverFollowLinks(t *testing.T) {
	results := e4m3Results(t, "satfinite", false)
	table := filepath.Join(t.TempDir(), "e8m0.bin") // 256 float32 of a table record
	if err := os.WriteFile(table, make([]byte, 4*256), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		file string                    // planted inside out
		args func(out string) []string // the command writing into out
	}{
		{"export README.md", "README.md", func(out string) []string { return []string{"export", "--suite", "e4m3", "--out", out} }},
		{"export suite.json", "suite.json", func(out string) []string { return []string{"export", "--suite", "e4m3", "--out", out} }},
		{"export an input", "inputs/edges.e4m3.safetensors", func(out string) []string { return []string{"export", "--suite", "e4m3", "--out", out} }},
		{"certify --cert-out certificate.json", certificate.JSONFile, func(out string) []string {
			return []string{"certify", "--suite", "e4m3", "--results", results, "--cert-out", out}
		}},
		{"certify --cert-out certificate.md", certificate.MarkdownFile, func(out string) []string {
			return []string{"certify", "--suite", "e4m3", "--results", results, "--cert-out", out}
		}},
		{"semantics --out", "semantics.md", func(out string) []string {
			return []string{"semantics", "--out", filepath.Join(out, "semantics.md")}
		}},
		{"record --out", "records/r.json", func(out string) []string {
			return []string{"record", "--table", "e8m0.decode", "--in", table, "--harness", "h", "--implementation", "i",
				"--function", "f", "--build", "b", "--command", "c", "--out", filepath.Join(out, "records", "r.json")}
		}},
		{"keygen private key", "k", func(out string) []string { return []string{"keygen", "--out", filepath.Join(out, "k")} }},
		{"keygen public key", "k.pub", func(out string) []string { return []string{"keygen", "--out", filepath.Join(out, "k")} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			v := plantLink(t, out, tc.file)
			code, _, stderr := bitexact(t, tc.args(out)...)
			noVictimChange(t, v)
			if code != exitUsage || !strings.Contains(stderr, tc.file) {
				t.Fatalf("exit %d, stderr %q; want 2 and the planted name", code, stderr)
			}
			if st, err := os.Lstat(filepath.Join(out, tc.file)); err != nil || st.Mode()&os.ModeSymlink == 0 {
				t.Errorf("the planted link was removed or replaced (%v, %v)", st, err)
			}
		})
	}
}

// TestKeygenLeavesNothingBehind: keygen refuses an existing public key
// file before writing the private key, writes the private key 0600, and
// certify warns when asked to sign with a key others can read.
func TestKeygenLeavesNothingBehind(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "vendor.key")
	if err := os.WriteFile(key+".pub", []byte("someone's public key"), 0o644); err != nil {
		t.Fatal(err)
	}
	expect(t, []string{"keygen", "--out", key}, exitUsage, "err", key+".pub: file exists")
	if _, err := os.Lstat(key); err == nil {
		t.Fatalf("keygen refused but left the private key %s behind", key)
	}
	if b, _ := os.ReadFile(key + ".pub"); string(b) != "someone's public key" {
		t.Fatalf("the existing public key was overwritten: %q", b)
	}
	os.Remove(key + ".pub")
	expect(t, []string{"keygen", "--out", key}, exitOK, "out", "wrote "+key)
	st, err := os.Stat(key)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "windows" {
		return
	}
	if st.Mode().Perm()&0o077 != 0 {
		t.Errorf("private key mode %04o, want no group or world bits", st.Mode().Perm())
	}
	results := e4m3Results(t, "satfinite", false)
	_, e := expect(t, []string{"certify", "--suite", "e4m3", "--results", results, "--sign-key", key}, exitOK, "out", "signed with ed25519 key")
	if strings.Contains(e, "warning") {
		t.Errorf("warning for a 0600 key: %q", e)
	}
	if err := os.Chmod(key, 0o644); err != nil {
		t.Fatal(err)
	}
	_, e = expect(t, []string{"certify", "--suite", "e4m3", "--results", results, "--sign-key", key}, exitOK, "out", "signed with ed25519 key")
	if !strings.Contains(e, "warning: --sign-key "+key+" is readable by its group or by others (mode 0644)") {
		t.Errorf("no warning for a world-readable key; stderr %q", e)
	}
}
