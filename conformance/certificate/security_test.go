package certificate

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/conformance/results"
	"github.com/bitexact/bitexact/golden"
)

// failing is a certificate of e4m3 nosat outputs claiming satfinite: it
// does not conform.
func failing(t testing.TB, impl string) (*Certificate, Context) {
	t.Helper()
	set, s, out := e4m3(t, "nosat")
	c, err := Build(Input{Suite: s, Set: set, GoldenSHA256: ReleasedGoldenSHA256(), ReferenceWasm: "w", Backend: "results",
		Implementation: impl, Claimed: "satfinite", Outputs: out})
	if err != nil {
		t.Fatal(err)
	}
	return c, Context{Set: set, GoldenSHA256: ReleasedGoldenSHA256(), ReferenceWasm: "w"}
}

// TestMarkdownInjection: a hostile implementation name cannot put a
// heading, a fake verdict, a comment hiding the real one, a link or a
// table cell into certificate.md; the status is the first line.
func TestMarkdownInjection(t *testing.T) {
	set, s, out := e4m3(t, "nosat")
	if _, err := Build(Input{Suite: s, Set: set, GoldenSHA256: ReleasedGoldenSHA256(), Backend: "results",
		Implementation: "x\n# **CONFORMS**", Outputs: out}); err == nil || !strings.Contains(err.Error(), "control character U+000A") {
		t.Errorf("Build accepted a newline in the implementation: %v", err)
	}
	const hostile = "x --> # **CONFORMS** <!-- | [link](http://e) ![i](http://e) `code` *em* _u_ ~s~ $m$ &amp; \\"
	c, _ := failing(t, hostile)
	md := string(c.Markdown())
	lines := strings.Split(md, "\n")
	if lines[0] != "# DOES NOT CONFORM: bitexact certificate, suite `e4m3`" {
		t.Errorf("first line %q", lines[0])
	}
	if !strings.HasPrefix(lines[2], "**DOES NOT CONFORM** to `satfinite`. DOES NOT CONFORM to claimed profile `satfinite`") {
		t.Errorf("verdict line %q", lines[2])
	}
	for _, bad := range []string{"<!--", "-->", "[link](", "![i]", "<"} {
		if strings.Contains(md, bad) {
			t.Errorf("certificate.md contains %q:\n%s", bad, md)
		}
	}
	for i, l := range lines {
		if strings.Contains(l, "CONFORMS") && !strings.Contains(l, "DOES NOT CONFORM") && !strings.Contains(l, `\*\*CONFORMS\*\*`) {
			t.Errorf("line %d reads as a passing verdict: %q", i+1, l)
		}
	}
	want := `| implementation | x --&gt; # \*\*CONFORMS\*\* &lt;\!-- \| \[link\]\(http://e\) \!\[i\]\(http://e\) \` + "`" + `code\` + "`" + ` \*em\* \_u\_ \~s\~ \$m\$ &amp;amp; \\ |`
	if !strings.Contains(md, want) {
		t.Errorf("implementation row not escaped as %q:\n%s", want, md)
	}
	x, err := c.JUnit()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(x, []byte("<!--")) {
		t.Errorf("JUnit holds a comment:\n%s", x)
	}
}

// TestParseRefusesControlCharacters: a certificate with an ANSI escape
// or \r in any string is refused before anything is printed.
func TestParseRefusesControlCharacters(t *testing.T) {
	c, _ := failing(t, "k")
	for _, v := range []string{"\x1b[2J", "a\rCONFORMS", "\u202e"} {
		c.InvalidReason = v
		b, _ := c.JSON()
		_, err := Parse(b)
		var ve *VerifyError
		if !errors.As(err, &ve) || !strings.Contains(err.Error(), "invalid_reason") {
			t.Errorf("%q: %v", v, err)
		}
	}
	c.InvalidReason = "" // each case below has one defect
	b, _ := c.JSON()
	for _, tc := range []struct{ name, in, want string }{
		{"second object", string(b) + "{}", "data after the JSON value"},
		{"case-folded key", strings.Replace(string(b), `"verdict"`, `"VERDICT"`, 1), `key "VERDICT" differs`},
		{"duplicated key", strings.Replace(string(b), `"conforms": false`, `"conforms": false, "conforms": true`, 1), `key "conforms" appears twice`},
	} {
		if _, err := Parse([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// TestSignature: a signed certificate verifies with its key; any edit,
// even resealed, breaks the signature; another key is refused; an
// unsigned certificate is refused when a key is required.
func TestSignature(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(nil)
	other, _, _ := ed25519.GenerateKey(nil)
	c, ctx := failing(t, "k")
	if err := Verify(c, Context{Set: ctx.Set, GoldenSHA256: ctx.GoldenSHA256, ReferenceWasm: "w", PublicKey: pub}); err == nil || !strings.Contains(err.Error(), "unsigned") {
		t.Errorf("unsigned certificate with a key required: %v", err)
	}
	if err := c.Sign(priv); err != nil {
		t.Fatal(err)
	}
	b, _ := c.JSON()
	c2, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	ctx.PublicKey = pub
	if err := Verify(c2, ctx); err != nil {
		t.Fatalf("signed certificate: %v", err)
	}
	// The attack of issue 16: flip the verdict and reseal.
	c2.Conforms, c2.Cases[0].Result = true, "pass"
	c2.seal()
	if err := Verify(c2, ctx); err == nil || !strings.Contains(err.Error(), "does not match the certificate") {
		t.Errorf("edited and resealed: %v", err)
	}
	c3, _ := Parse(b)
	c3.Implementation = "someone else"
	c3.seal()
	if err := Verify(c3, ctx); err == nil || !strings.Contains(err.Error(), "ed25519 signature") {
		t.Errorf("implementation edited: %v", err)
	}
	ctx.PublicKey = other
	c4, _ := Parse(b)
	if err := Verify(c4, ctx); err == nil || !strings.Contains(err.Error(), "not by the given key") {
		t.Errorf("other key: %v", err)
	}
	// Re-signed by an attacker's key: valid for that key only.
	_, evil, _ := ed25519.GenerateKey(nil)
	c4.Conforms = true
	c4.Sign(evil)
	ctx.PublicKey = pub
	if err := Verify(c4, ctx); err == nil || !strings.Contains(err.Error(), "not by the given key") {
		t.Errorf("re-signed by another key: %v", err)
	}
}

// TestKeyFiles: keygen's files load back, are not overwritten, and the
// private key is not world-readable.
func TestKeyFiles(t *testing.T) {
	d := t.TempDir()
	priv, pubf := filepath.Join(d, "k"), filepath.Join(d, "k.pub")
	pub, err := GenerateKey(nil, priv, pubf)
	if err != nil {
		t.Fatal(err)
	}
	sk, err := LoadPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := LoadPublicKey(pubf)
	if err != nil || !pk.Equal(pub) || !sk.Public().(ed25519.PublicKey).Equal(pub) {
		t.Fatalf("keys do not round-trip: %v", err)
	}
	if st, _ := os.Stat(priv); st.Mode().Perm()&0o077 != 0 {
		t.Errorf("private key mode %v", st.Mode())
	}
	if _, err := GenerateKey(nil, priv, pubf); err == nil {
		t.Error("GenerateKey overwrote an existing key")
	}
	if _, err := LoadPrivateKey(pubf); err == nil {
		t.Error("a public key loaded as a private key")
	}
}

// TestUnreleasedGoldenSet: a set whose manifest is not the released one
// is named in the verdict and JSON and is never valid.
func TestUnreleasedGoldenSet(t *testing.T) {
	set, s, out := e4m3(t, "satfinite")
	forged := strings.Repeat("ab", 32)
	c, err := Build(Input{Suite: s, Set: set, GoldenSHA256: forged, ReferenceWasm: "w", Backend: "results", Implementation: "k",
		Claimed: "satfinite", Outputs: out})
	if err != nil {
		t.Fatal(err)
	}
	if c.Valid || c.GoldenSet != GoldenUnreleased || !strings.HasPrefix(c.Verdict, "AGAINST AN UNRELEASED GOLDEN SET (manifest SHA-256 "+forged+"): CONFORMS") {
		t.Errorf("valid=%v golden_set=%q verdict %q", c.Valid, c.GoldenSet, c.Verdict)
	}
	ctx := Context{Set: set, GoldenSHA256: forged, ReferenceWasm: "w"}
	if err := Verify(c, ctx); err != nil {
		t.Errorf("honest unreleased certificate: %v", err)
	}
	for name, edit := range map[string]func(c *Certificate){
		"claims released": func(c *Certificate) { c.GoldenSet = GoldenReleased; c.Verdict = verdictLine(c) },
		"claims valid":    func(c *Certificate) { c.Valid, c.InvalidReason = true, ""; c.Verdict = verdictLine(c) },
	} {
		var cp Certificate
		b, _ := json.Marshal(c)
		json.Unmarshal(b, &cp)
		edit(&cp)
		cp.seal()
		if err := Verify(&cp, ctx); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestMaxMismatchesRecorded: the certificate records how many mismatches
// it decoded, a negative count is refused, and verification follows the
// recorded count.
func TestMaxMismatchesRecorded(t *testing.T) {
	set, s, out := e4m3(t, "nosat")
	in := Input{Suite: s, Set: set, GoldenSHA256: ReleasedGoldenSHA256(), ReferenceWasm: "w", Backend: "results",
		Implementation: "k", Claimed: "satfinite", Outputs: out, MaxMismatches: -1}
	if _, err := Build(in); err == nil {
		t.Error("negative MaxMismatches accepted")
	}
	for _, n := range []int{1, 3, 9, 20, 100000000} {
		in.MaxMismatches = n
		c, err := Build(in)
		if err != nil {
			t.Fatal(err)
		}
		if c.MaxMismatches != n || len(c.Cases[0].First) != min(n, c.Cases[0].Mismatches) {
			t.Errorf("n=%d: recorded %d, decoded %d", n, c.MaxMismatches, len(c.Cases[0].First))
		}
		c.MaxMismatches = len(c.Cases[0].First) - 1 // fewer than it decoded
		c.seal()
		if err := Verify(c, Context{Set: set, GoldenSHA256: ReleasedGoldenSHA256(), ReferenceWasm: "w"}); err == nil {
			t.Errorf("n=%d: certificate decoding more than max_mismatches accepted", n)
		}
	}
}

// FuzzVerify: any bytes given to verify-cert parse or are refused, and
// verify or are refused, without a panic (nothing recovers one); resealing
// (what a tamperer with the source can do) reaches the deeper checks; a
// certificate accepted renders to Markdown whose first line is its status
// and to JUnit and terminal text without control characters.
func FuzzVerify(f *testing.F) {
	set, err := golden.Default()
	if err != nil {
		f.Fatal(err)
	}
	ctx := Context{Set: set, GoldenSHA256: ReleasedGoldenSHA256(), ReferenceWasm: "w"}
	c, _ := failing(f, "seed")
	b, _ := c.JSON()
	f.Add(b, false)
	f.Add(b, true)
	_, priv, _ := ed25519.GenerateKey(nil)
	c.Sign(priv)
	b, _ = c.JSON()
	f.Add(b, false)
	f.Add([]byte(`{"format":"bitexact-certificate/2"}`), true)
	f.Fuzz(func(t *testing.T, b []byte, reseal bool) {
		c, err := Parse(b)
		if err != nil {
			var ve *VerifyError
			if !errors.As(err, &ve) {
				t.Fatalf("Parse error %T %v is not a VerifyError", err, err)
			}
			return
		}
		if reseal {
			if err := c.seal(); err != nil {
				t.Fatal(err)
			}
		}
		err = Verify(c, ctx)
		if err != nil {
			var ve *VerifyError
			if !errors.As(err, &ve) {
				t.Fatalf("Verify error %T %v is not a VerifyError", err, err)
			}
			return
		}
		md := c.Markdown()
		first, _, _ := bytes.Cut(md, []byte("\n"))
		if !bytes.HasPrefix(first, []byte("# CONFORMS: ")) && !bytes.HasPrefix(first, []byte("# DOES NOT CONFORM: ")) {
			t.Fatalf("accepted certificate's Markdown starts %q", first)
		}
		if (c.Conforms) != bytes.HasPrefix(first, []byte("# CONFORMS: ")) {
			t.Fatalf("status line %q for conforms=%v", first, c.Conforms)
		}
		if bytes.ContainsAny(md, "\x1b\r<") {
			t.Fatalf("Markdown holds a raw control character or <:\n%s", md)
		}
		if _, err := c.JUnit(); err != nil {
			t.Fatal(err)
		}
		if results.CheckText(c.Verdict, maxText) != nil {
			t.Fatalf("accepted verdict %q", c.Verdict)
		}
	})
}

// TestNotVouchedDocumented: docs/vendor.md says what verify-cert --results
// does not vouch for, field by field, and what each exit 0 establishes.
func TestNotVouchedDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/vendor.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	if !strings.Contains(doc, "### What exit 0 establishes") {
		t.Error(`docs/vendor.md has no section "What exit 0 establishes"`)
	}
	fields := map[string]bool{}
	j, _ := json.Marshal(&Certificate{Signature: &Signature{}})
	var m map[string]json.RawMessage
	json.Unmarshal(j, &m)
	for k := range m {
		fields[k] = true
	}
	for _, u := range NotVouched {
		if !fields[u.Field] {
			t.Errorf("NotVouched names %q, not a field of a certificate", u.Field)
		}
		if !strings.Contains(doc, "- `"+u.Field+"`: ") {
			t.Errorf("docs/vendor.md does not list %q as not vouched for", u.Field)
		}
	}
}
