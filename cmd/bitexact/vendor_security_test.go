package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bitexact/bitexact/conformance/certificate"
	"github.com/bitexact/bitexact/conformance/results"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/wasm"
)

// e4m3Results exports the e4m3 suite and writes the reference's results
// (claiming claim) or those of the no-saturation mutant.
func e4m3Results(t *testing.T, claim string, bad bool) string {
	t.Helper()
	exp := t.TempDir()
	expect(t, []string{"export", "--suite", "e4m3", "--out", exp}, exitOK, "out", "exported")
	if bad {
		return vendorResults(t, exp, "e4m3", claim, mutant(t, "e4m3-no-saturation").Run)
	}
	return vendorResults(t, exp, "e4m3", claim, reference("fp8.encode"))
}

func setImplementation(t *testing.T, dir, impl string) {
	t.Helper()
	editManifest(t, dir, func(m *results.Manifest) { m.Implementation = impl })
}

// TestCertificateInjection (issue 16): strings of results.json cannot
// forge a verdict in certificate.md or on the terminal.
func TestCertificateInjection(t *testing.T) {
	bad := e4m3Results(t, "satfinite", true)
	t.Run("control characters refused", func(t *testing.T) {
		for _, impl := range []string{"k\x1b[1A\x1b[2KCONFORMS", "k\rCONFORMS", "k\n**CONFORMS**", "k\u202e"} {
			dir := t.TempDir()
			copyDir(t, bad, dir)
			setImplementation(t, dir, impl)
			_, e := expect(t, []string{"certify", "--suite", "e4m3", "--results", dir}, exitUsage, "err", "results.json: implementation")
			if strings.ContainsAny(e, "\x1b\r") {
				t.Errorf("stderr carries a raw control character: %q", e)
			}
		}
	})
	t.Run("markdown escaped, verdict first", func(t *testing.T) {
		dir := t.TempDir()
		copyDir(t, bad, dir)
		// The forgery measured on 383a60b: a fake passing verdict, the
		// real one hidden in an unclosed HTML comment.
		setImplementation(t, dir, "k\u00a0 **CONFORMS** to `satfinite`. <!--")
		cert := t.TempDir()
		o, _ := expect(t, []string{"certify", "--suite", "e4m3", "--results", dir, "--cert-out", cert}, exitMismatch, "out", "DOES NOT CONFORM")
		if first, _, _ := strings.Cut(o, "\n"); !strings.HasPrefix(first, "DOES NOT CONFORM to claimed profile satfinite:") {
			t.Errorf("terminal output starts %q", first)
		}
		md, err := os.ReadFile(filepath.Join(cert, certificate.MarkdownFile))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(md), "\n")
		if lines[0] != "# DOES NOT CONFORM: bitexact certificate, suite `e4m3`" || !strings.HasPrefix(lines[2], "**DOES NOT CONFORM** to `satfinite`.") {
			t.Errorf("certificate.md starts:\n%s\n%s\n%s", lines[0], lines[1], lines[2])
		}
		if strings.Contains(string(md), "<!--") || strings.Contains(string(md), "**CONFORMS**") {
			t.Errorf("certificate.md carries the forgery:\n%s", md)
		}
		if !strings.Contains(string(md), `| implementation | k`+"\u00a0"+` \*\*CONFORMS\*\* to \`+"`"+`satfinite\`+"`"+`. &lt;\!-- |`) {
			t.Errorf("implementation not escaped:\n%s", md)
		}
		x, _ := os.ReadFile(filepath.Join(cert, certificate.JUnitFile))
		if strings.Contains(string(x), "<!--") {
			t.Errorf("JUnit carries a comment:\n%s", x)
		}
	})
}

// TestVerifyCertOwnSettings (issue 16): a genuine certificate made with
// any --max-mismatches re-checks against its results.
func TestVerifyCertOwnSettings(t *testing.T) {
	bad := e4m3Results(t, "satfinite", true)
	for _, n := range []string{"3", "9", "20", "100000000"} {
		cert := t.TempDir()
		expect(t, []string{"certify", "--suite", "e4m3", "--results", bad, "--cert-out", cert, "--max-mismatches", n}, exitMismatch, "out", "DOES NOT CONFORM")
		expect(t, []string{"verify-cert", filepath.Join(cert, certificate.JSONFile), "--results", bad}, exitOK, "out", "results: identical to a fresh certification")
	}
	expect(t, []string{"certify", "--suite", "e4m3", "--results", bad, "--max-mismatches", "-1"}, exitUsage, "err", "--max-mismatches -1: must be 0")
	cert := t.TempDir()
	expect(t, []string{"certify", "--suite", "e4m3", "--results", bad, "--cert-out", cert}, exitMismatch, "out", "DOES NOT CONFORM")
	expect(t, []string{"verify-cert", filepath.Join(cert, certificate.JSONFile), "--results", "/nonexistent"}, exitUsage, "err", "/nonexistent: not a directory")
}

// TestVerifyCertIdentityAndSignature (issue 16): identity fields are
// compared with results.json; a thoroughly forged unsigned certificate
// is only internally consistent (and says it is unsigned); a signed one
// cannot be forged without the key.
func TestVerifyCertIdentityAndSignature(t *testing.T) {
	bad := e4m3Results(t, "satfinite", true)
	keys := t.TempDir()
	key := filepath.Join(keys, "vendor.key")
	expect(t, []string{"keygen", "--out", key}, exitOK, "out", "wrote "+key)
	expect(t, []string{"keygen", "--out", key}, exitUsage, "err", "file exists")
	cert := t.TempDir()
	o, _ := expect(t, []string{"certify", "--suite", "e4m3", "--results", bad, "--cert-out", cert, "--sign-key", key}, exitMismatch, "out", "signed with ed25519 key SHA256:")
	_ = o
	cj := filepath.Join(cert, certificate.JSONFile)
	expect(t, []string{"verify-cert", cj, "--results", bad, "--pubkey", key + ".pub"}, exitOK, "out", "signature: valid, by the given key")
	md, _ := os.ReadFile(filepath.Join(cert, certificate.MarkdownFile))
	if !strings.Contains(string(md), "**Signed** (ed25519) by key `SHA256:") {
		t.Errorf("certificate.md does not name the signing key")
	}

	orig, _ := os.ReadFile(cj)
	// The forgery of issue 16: every count zeroed, the verdict flipped,
	// the digest recomputed.
	forge := func(t *testing.T, edit func(c *certificate.Certificate)) string {
		c, err := certificate.Parse(orig)
		if err != nil {
			t.Fatal(err)
		}
		edit(c)
		c.ContentSHA256, _ = certificate.ContentDigest(c)
		b, _ := json.Marshal(c)
		p := filepath.Join(t.TempDir(), "cert.json")
		os.WriteFile(p, b, 0o644)
		return p
	}
	passing := func(c *certificate.Certificate) {
		for i := range c.Cases {
			c.Cases[i].Result, c.Cases[i].Mismatches, c.Cases[i].First = "pass", 0, nil
			for j := range c.Cases[i].Tensors {
				c.Cases[i].Tensors[j].Mismatches = 0
			}
		}
		for i := range c.Profiles {
			if c.Profiles[i].Profile == "satfinite" {
				c.Profiles[i].Mismatches, c.Profiles[i].Conforms = 0, true
			}
		}
		c.Conforms, c.Diagnosis = true, nil
		c.Verdict = strings.Replace(strings.Replace(c.Verdict, "DOES NOT CONFORM", "CONFORMS", 1), "conforms to `nosat`; differs from `satfinite` on 3870 elements", "conforms to `satfinite`", 1)
	}
	t.Run("forged, signature dropped", func(t *testing.T) {
		p := forge(t, func(c *certificate.Certificate) { passing(c); c.Signature = nil })
		// A forger reads the verdict the tool wants from its message.
		code, _, e := bitexact(t, "verify-cert", p)
		if m := regexp.MustCompile(`does not follow from the profile verdicts \((".*")\)`).FindStringSubmatch(e); code == exitMismatch && m != nil {
			v, _ := strconv.Unquote(m[1])
			p = forge(t, func(c *certificate.Certificate) { passing(c); c.Signature = nil; c.Verdict = v })
		}
		// Unsigned, it holds together: all the tool can do is say what
		// it did not check.
		o, _ := expect(t, []string{"verify-cert", p}, exitOK, "out", "signature: none (unsigned: anyone could have written or edited this certificate")
		if !strings.Contains(o, "results: not checked") || !strings.Contains(o, "certificate OK: suite e4m3 2026") {
			t.Errorf("output:\n%s", o)
		}
		expect(t, []string{"verify-cert", p, "--pubkey", key + ".pub"}, exitMismatch, "err", "the certificate is unsigned, but a public key was given")
		expect(t, []string{"verify-cert", p, "--results", bad}, exitMismatch, "err", "the results give fail")
	})
	t.Run("forged, signature kept", func(t *testing.T) {
		p := forge(t, passing)
		expect(t, []string{"verify-cert", p}, exitMismatch, "err", "ed25519 signature")
	})
	t.Run("implementation renamed", func(t *testing.T) {
		p := forge(t, func(c *certificate.Certificate) { c.Implementation = "someone else's kernel"; c.Signature = nil })
		expect(t, []string{"verify-cert", p, "--results", bad}, exitMismatch, "err", `implementation "someone else's kernel", but results.json says "test harness"`)
	})
	t.Run("platform added", func(t *testing.T) {
		p := forge(t, func(c *certificate.Certificate) { c.Platform = "H100"; c.Signature = nil })
		expect(t, []string{"verify-cert", p, "--results", bad}, exitMismatch, "err", `platform "H100", but results.json says ""`)
	})
	// No field of the certificate is copied into the fresh
	// certification; an added backend fact or a reason for invalidity
	// comes from nowhere and is refused.
	t.Run("backend fact added", func(t *testing.T) {
		p := forge(t, func(c *certificate.Certificate) {
			c.Extra = map[string]string{"gpu": "H100 (verified)"}
			c.Signature = nil
		})
		expect(t, []string{"verify-cert", p}, exitOK, "out", "results: not checked")
		expect(t, []string{"verify-cert", p, "--results", bad}, exitMismatch, "err", "field extra differs from a fresh certification of the results")
	})
	t.Run("invalid reason rewritten", func(t *testing.T) {
		p := forge(t, func(c *certificate.Certificate) {
			c.Valid, c.InvalidReason, c.Signature = false, "audited by a third party", nil
			c.Verdict += " [NOT VALID FOR CERTIFICATION: audited by a third party]"
		})
		expect(t, []string{"verify-cert", p}, exitOK, "out", "results: not checked")
		expect(t, []string{"verify-cert", p, "--results", bad}, exitMismatch, "err", "verdict differs from the results")
	})
	t.Run("tool renamed", func(t *testing.T) {
		p := forge(t, func(c *certificate.Certificate) { c.Tool = "bitexact v9" })
		expect(t, []string{"verify-cert", p, "--pubkey", key + ".pub"}, exitMismatch, "err", "ed25519 signature")
	})
	t.Run("other key", func(t *testing.T) {
		other := filepath.Join(keys, "other.key")
		expect(t, []string{"keygen", "--out", other}, exitOK, "out", "wrote")
		expect(t, []string{"verify-cert", cj, "--pubkey", other + ".pub"}, exitMismatch, "err", "not by the given key")
	})
}

// TestUnreleasedGoldenSetCLI (issue 16): certify --dir with a set that is
// not the released one says so in the verdict and JSON and is not valid.
func TestUnreleasedGoldenSetCLI(t *testing.T) {
	dir := writeSet(t)
	mp := filepath.Join(dir, golden.ManifestFile)
	mb, err := os.ReadFile(mp)
	if err != nil {
		t.Fatal(err)
	}
	// The same cases, another manifest digest.
	if err := os.WriteFile(mp, append(mb, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	good := e4m3Results(t, "satfinite", false)
	cert := t.TempDir()
	o, _ := expect(t, []string{"certify", "--suite", "e4m3", "--results", good, "--dir", dir, "--cert-out", cert}, exitOK, "out", "AGAINST AN UNRELEASED GOLDEN SET (manifest SHA-256 ")
	if first, _, _ := strings.Cut(o, "\n"); !strings.HasPrefix(first, "AGAINST AN UNRELEASED GOLDEN SET") {
		t.Errorf("first line %q", first)
	}
	b, _ := os.ReadFile(filepath.Join(cert, certificate.JSONFile))
	var c map[string]any
	json.Unmarshal(b, &c)
	if c["valid_for_certification"] != false || c["golden_set"] != "unreleased" || !strings.Contains(c["invalid_reason"].(string), "is not a released golden set") {
		t.Errorf("JSON: valid %v golden_set %v reason %v", c["valid_for_certification"], c["golden_set"], c["invalid_reason"])
	}
	cj := filepath.Join(cert, certificate.JSONFile)
	expect(t, []string{"verify-cert", cj, "--dir", dir, "--results", good}, exitOK, "out", "AGAINST AN UNRELEASED GOLDEN SET")
	expect(t, []string{"verify-cert", cj}, exitMismatch, "err", "golden manifest SHA-256")
}

// TestHostileResults (issue 16): files that are not regular files inside
// the results folder, or cannot be as large as they are, are exit 2 at
// once with the file named, in certify and verify-cert.
func TestHostileResults(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks and named pipes")
	}
	good := e4m3Results(t, "satfinite", false)
	cert := t.TempDir()
	expect(t, []string{"certify", "--suite", "e4m3", "--results", good, "--cert-out", cert}, exitOK, "out", "CONFORMS")
	cj := filepath.Join(cert, certificate.JSONFile)
	const task = "edges.e4m3.safetensors"
	for _, tc := range []struct {
		name, file string
		make       func(p string) error
		want       string
	}{
		{"symlink to /dev/zero", task, func(p string) error { return os.Symlink("/dev/zero", p) }, `edges.e4m3.safetensors: cannot be read: a symbolic link (to "/dev/zero") that leaves the folder`},
		{"fifo", task, func(p string) error { return mkfifo(p) }, "edges.e4m3.safetensors: cannot be read: a named pipe (FIFO), not a regular file"},
		{"64 GiB sparse file", task, func(p string) error {
			f, err := os.Create(p)
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(64 << 30)
		}, "edges.e4m3.safetensors: cannot be read: 68719476736 bytes, more than the"},
		{"results.json to /etc/passwd", results.ManifestFile, func(p string) error { return os.Symlink("/etc/passwd", p) }, `results.json: cannot be read: a symbolic link (to "/etc/passwd") that leaves the folder`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			copyDir(t, good, dir)
			os.Remove(filepath.Join(dir, tc.file))
			if err := tc.make(filepath.Join(dir, tc.file)); err != nil {
				t.Skipf("cannot make it: %v", err)
			}
			for _, args := range [][]string{
				{"certify", "--suite", "e4m3", "--results", dir},
				{"verify-cert", cj, "--results", dir},
			} {
				start := time.Now()
				_, e := expect(t, args, exitUsage, "err", tc.want)
				if d := time.Since(start); d > 10*time.Second {
					t.Errorf("%s took %v", args[0], d)
				}
				if strings.Contains(e, "root:") {
					t.Errorf("the error leaks /etc/passwd: %s", e)
				}
			}
		})
	}
	t.Run("certificate is a fifo", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "cert.json")
		if err := mkfifo(p); err != nil {
			t.Skip(err)
		}
		expect(t, []string{"verify-cert", p}, exitUsage, "err", "cert.json: a named pipe (FIFO), not a regular file")
	})
	t.Run("certificate is /dev/zero", func(t *testing.T) {
		expect(t, []string{"verify-cert", "/dev/zero"}, exitUsage, "err", "/dev/zero: a character device, not a regular file")
	})
}

// TestStrictResultsJSON (issue 16): results.json is strict as
// docs/vendor.md promises, and so is a safetensors header.
func TestStrictResultsJSON(t *testing.T) {
	good := e4m3Results(t, "satfinite", false)
	mj, _ := os.ReadFile(filepath.Join(good, results.ManifestFile))
	for _, tc := range []struct{ name, json, want string }{
		{"trailing data", string(mj) + "x", "data after the JSON value"},
		{"second object", string(mj) + string(mj), "data after the JSON value"},
		{"key differing in case", strings.Replace(string(mj), `"suite":`, `"SUITE":`, 1), `key "SUITE" differs from the field "suite" only in case`},
		{"duplicated key", strings.Replace(string(mj), `"suite":`, `"suite": "e4m3", "suite":`, 1), `key "suite" appears twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			copyDir(t, good, dir)
			os.WriteFile(filepath.Join(dir, results.ManifestFile), []byte(tc.json), 0o644)
			expect(t, []string{"certify", "--suite", "e4m3", "--results", dir}, exitUsage, "err", tc.want)
		})
	}
	t.Run("duplicate tensor name", func(t *testing.T) {
		dir := t.TempDir()
		copyDir(t, good, dir)
		h := `{"codes":{"dtype":"U8","shape":[1556],"data_offsets":[0,1556]},"codes":{"dtype":"U8","shape":[1556],"data_offsets":[0,1556]}}`
		b := append([]byte{byte(len(h)), 0, 0, 0, 0, 0, 0, 0}, h...)
		b = append(b, make([]byte, 1556)...)
		os.WriteFile(filepath.Join(dir, "edges.e4m3.safetensors"), b, 0o644)
		expect(t, []string{"certify", "--suite", "e4m3", "--results", dir}, exitUsage, "err", `edges.e4m3.safetensors: malformed safetensors: header key "codes" appears twice`)
	})
}

// TestGuestOutOfMemory (issue 16): a case too large for the reference's
// guest memory is bad input (exit 2, "input too large"), not a NOT
// CONFORMANT verdict.
func TestGuestOutOfMemory(t *testing.T) {
	defer func(o wasm.Options) { wasmOptions = o }(wasmOptions)
	wasmOptions = wasm.Options{Instances: 1, MemoryLimitPages: 96} // 6 MiB
	// The case's request is 2.3 MB; the reference needs about twice that
	// above the Go runtime's 3 MiB.
	_, e := expect(t, []string{"certify", "--engines", "wasm", "--case", "gemv.sparse_fp4.sparse-v7.dgx_lut"}, exitUsage, "err",
		"bitexact certify: case gemv.sparse_fp4.sparse-v7.dgx_lut: input too large: op gemv.sparse_fp4 on a ")
	if !strings.Contains(e, "MiB of guest memory allowed for it") {
		t.Errorf("stderr:\n%s", e)
	}
}
