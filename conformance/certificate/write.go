package certificate

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"strings"

	"github.com/bitexact/bitexact/conformance/results"
	"github.com/bitexact/bitexact/internal/golden/safeio"
)

// File names written by WriteDir.
const (
	JSONFile     = "certificate.json"
	MarkdownFile = "certificate.md"
	JUnitFile    = "certificate.junit.xml"
)

// JSON is the machine certificate: indented, final newline.
func (c *Certificate) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(c, "", "  ")
	return append(b, '\n'), err
}

// WriteDir writes the JSON, Markdown and JUnit forms under dir, creating
// it if need be. Each file replaces a regular file of its name; none is
// written through a symbolic link (internal/golden/safeio).
func (c *Certificate) WriteDir(dir string) error {
	j, err := c.JSON()
	if err != nil {
		return err
	}
	x, err := c.JUnit()
	if err != nil {
		return err
	}
	d, err := safeio.OpenOutDir(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	for _, f := range []struct {
		name string
		b    []byte
	}{{JSONFile, j}, {MarkdownFile, c.Markdown()}, {JUnitFile, x}} {
		if err := d.WriteFile(f.name, f.b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Markdown is the human certificate. Its first line is the status and
// the second the verdict, both written by this package alone; every
// string that came from outside (implementation, platform, tool, backend
// facts, reasons) is escaped (mdText), so none can open a heading, a
// comment, a link or HTML, or end a table cell. The case and mismatch
// lists hold only names of the suite and text this package generates
// from codes and validated dtypes; a certificate is only rendered after
// Build or Parse, which refuse control characters.
func (c *Certificate) Markdown() []byte {
	var b bytes.Buffer
	status := "CONFORMS"
	if !c.Conforms {
		status = "DOES NOT CONFORM"
	}
	if c.Mode == ModeBound {
		// Never a bare CONFORMS: the bound is not bit-exactness.
		status = "CONFORMS WITHIN THE RIGOROUS BOUND (not bit-exact)"
		if !c.Conforms {
			status = "OUTSIDE THE RIGOROUS BOUND (bound mode, not bit-exact)"
		}
	}
	if c.Mode == ModeNaNAny {
		// Nor under the NaN relaxation: a NaN's bits were not compared.
		status = "CONFORMS UP TO NaN BITS (not bit-exact)"
		if !c.Conforms {
			status = "DOES NOT CONFORM even up to NaN bits"
		}
	}
	fmt.Fprintf(&b, "# %s: bitexact certificate, suite %s\n\n", status, mdCode(c.Suite))
	to := "to"
	if c.Mode == ModeBound {
		to = "of bound model"
	}
	fmt.Fprintf(&b, "**%s** %s %s. %s\n\n", status, to, mdCode(c.Against), mdVerdict(c.Verdict))
	if c.GoldenSet != GoldenReleased {
		fmt.Fprintf(&b, "> **Unreleased golden set:** the expected outputs come from a golden set whose manifest SHA-256 %s is not a released suite's.\n\n", mdCode(c.GoldenSHA256))
	}
	if !c.Valid {
		fmt.Fprintf(&b, "> **Not valid for certification:** %s\n\n", mdText(c.InvalidReason))
	}
	if c.Signature == nil {
		fmt.Fprintf(&b, "> **Unsigned.** The content SHA-256 below detects accidental damage only: anyone can edit this certificate and recompute it. Re-check it against the results with `bitexact verify-cert certificate.json --results DIR`.\n\n")
	} else if pub, err := c.SignerKey(); err == nil {
		fmt.Fprintf(&b, "> **Signed** (ed25519) by key %s. Check with `bitexact verify-cert certificate.json --pubkey KEY.pub`.\n\n", mdCode(KeyFingerprint(pub)))
	}
	fmt.Fprintf(&b, "| | |\n|---|---|\n")
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "| %s | %s |\n", k, v)
		}
	}
	row("implementation", mdText(c.Implementation))
	row("platform", mdText(c.Platform))
	row("suite", fmt.Sprintf("%s version %s", mdCode(c.Suite), mdText(c.SuiteVersion)))
	row("golden set", mdText(c.GoldenSet))
	row("golden manifest SHA-256", mdCode(c.GoldenSHA256))
	row("golden generator", mdText(c.Generator))
	row("reference .wasm SHA-256", mdCode(c.ReferenceWasm))
	row("tool", mdText(c.Tool))
	row("backend", mdText(c.Backend))
	row("claimed profile", mdText(c.Claimed))
	row("mismatches decoded per case", fmt.Sprint(c.MaxMismatches))
	keys := make([]string, 0, len(c.Extra))
	for k := range c.Extra {
		keys = append(keys, k)
	}
	sortStrings(keys)
	for _, k := range keys {
		row(mdText(k), mdText(c.Extra[k]))
	}
	for _, f := range c.Files {
		row("results file "+mdText(f.Name), fmt.Sprintf("%d bytes, SHA-256 %s", f.Bytes, mdCode(f.SHA256)))
	}
	fmt.Fprintf(&b, "\n## Per-profile verdicts\n\n| profile | verdict | differing elements | tasks |\n|---|---|---|---|\n")
	for _, p := range c.Profiles {
		v := "differs"
		if p.Conforms {
			v = "conforms"
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d of %d |\n", mdCode(p.Profile), v, p.Mismatches, p.Tasks, p.TasksTotal)
	}
	if len(c.Exhaustive) > 0 {
		fmt.Fprintf(&b, "\n## Exhaustive sweeps (all float32 inputs, Merkle digests of golden/exhaustive)\n\n| conversion | verdict | chunks swept | differing chunks | first difference |\n|---|---|---|---|---|\n")
		for _, e := range c.Exhaustive {
			v := "differs"
			if e.Conforms {
				v = "conforms"
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %s |\n", mdCode(e.Conversion), v, e.Chunks, e.Differing, mdText(e.First))
		}
	}
	fmt.Fprintf(&b, "\n## Cases (held to %s)\n\n| task | expected outputs | result | elements | mismatches |\n|---|---|---|---|---|\n", mdCode(c.Against))
	computed := 0
	for _, cs := range c.Cases {
		src := "golden case " + mdCode(cs.Case)
		if cs.Expected == ExpectedComputed {
			src = "**computed** by " + mdCode(cs.ComputedBy) + " (no golden case)"
			computed++
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d |\n", cs.Task, src, cs.Result, cs.Elements, cs.Mismatches)
	}
	if computed > 0 {
		fmt.Fprintf(&b, "\nThe golden set has no case of %s for %d of %d tasks: their expected outputs were computed in this run from the tasks' golden inputs by the reference module named (the reference .wasm above), not read from the golden set.\n", mdCode(c.Against), computed, len(c.Cases))
	}
	for _, cs := range c.Cases {
		if cs.Result != "fail" {
			continue
		}
		fmt.Fprintf(&b, "\n### %s: first %d of %d mismatches\n\n", cs.Task, len(cs.First), cs.Mismatches)
		for _, t := range cs.Tensors {
			if t.Layout != "" {
				fmt.Fprintf(&b, "- tensor `%s`: layout %s\n", t.Name, t.Layout)
			}
		}
		for _, m := range cs.First {
			var in []string
			for _, v := range m.Inputs {
				in = append(in, v.String())
			}
			input := ""
			if len(in) > 0 {
				input = " input " + strings.Join(in, ", ") + ":"
			}
			fmt.Fprintf(&b, "- `%s`%v%s expected %s; got %s\n", m.Tensor, m.Position, input, m.Expected, m.Got)
		}
	}
	if d := c.Diagnosis; d != nil {
		fmt.Fprintf(&b, "\n## Diagnosis\n\n%s.\n", d.Summary())
		for _, m := range d.Classes {
			fmt.Fprintf(&b, "- `%s`: %s (reproduces every output)\n", m.Class, m.Doc)
		}
	}
	fmt.Fprintf(&b, "\nContent SHA-256 %s. Re-check with `bitexact verify-cert certificate.json --results DIR`.\n", mdCode(c.ContentSHA256))
	return b.Bytes()
}

// mdText escapes s for Markdown text and table cells: control and format
// characters are shown as Go escapes (results.Printable), so s stays on
// its line; every character that opens an inline construct (emphasis,
// code, link, image, strikethrough, math) or ends a table cell is
// backslash-escaped; and <, > and & become HTML entities (no tag, comment
// or entity survives). s then renders as the literal text it is.
func mdText(s string) string {
	s = results.Printable(s)
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '\\', '`', '*', '_', '[', ']', '(', ')', '!', '|', '~', '$':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdCode is s as an inline code span; s holds no backtick or character
// that needs escaping when it comes from this package (names, digests),
// and is escaped as text otherwise.
func mdCode(s string) string {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.,=:/+ ", r)) {
			return mdText(s)
		}
	}
	return "`" + s + "`"
}

// mdVerdict is the verdict line, whose backquoted names are this
// package's; anything else in it (a reason) is escaped.
func mdVerdict(v string) string {
	parts := strings.Split(v, "`")
	for i := range parts {
		if i%2 == 1 && len(parts)%2 == 1 {
			parts[i] = mdCode(parts[i])
		} else {
			parts[i] = mdText(parts[i])
		}
	}
	return strings.Join(parts, "")
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// signatureLine says whether and by which key c is signed.
func (c *Certificate) signatureLine() string {
	if c.Signature == nil {
		return "unsigned"
	}
	pub, err := c.SignerKey()
	if err != nil {
		return "malformed signature"
	}
	return "ed25519 " + KeyFingerprint(pub)
}

// JUnit is the CI form: one testcase per task held to Against, one per
// profile verdict, properties for the digests.
func (c *Certificate) JUnit() ([]byte, error) {
	s := junitSuite{Name: "bitexact." + c.Suite}
	for _, p := range []junitProperty{
		{"suite_version", c.SuiteVersion}, {"golden_manifest_sha256", c.GoldenSHA256},
		{"reference_wasm_sha256", c.ReferenceWasm}, {"tool", c.Tool}, {"implementation", c.Implementation},
		{"against", c.Against}, {"valid_for_certification", fmt.Sprint(c.Valid)}, {"verdict", c.Verdict},
		{"golden_set", c.GoldenSet}, {"platform", c.Platform}, {"signature", c.signatureLine()},
	} {
		p.Value = results.Printable(p.Value)
		s.Properties = append(s.Properties, p)
	}
	for _, cs := range c.Cases {
		jc := junitCase{Name: cs.Task + " @ " + cs.Profile, Classname: "bitexact." + c.Suite}
		if c.Mode == ModeBound {
			jc.Name = cs.Task + " within the rigorous bound of " + cs.Profile
		}
		if c.Mode == ModeNaNAny {
			jc.Name = cs.Task + " @ " + cs.Profile + " up to NaN bits (not bit-exact)"
		}
		if cs.Result == "fail" {
			var t strings.Builder
			for _, m := range cs.First {
				fmt.Fprintf(&t, "%s%v: expected %s; got %s\n", m.Tensor, m.Position, m.Expected, m.Got)
			}
			if c.Diagnosis != nil {
				t.WriteString("diagnosis: " + c.Diagnosis.Summary() + "\n")
			}
			from := cs.Case
			if cs.Expected == ExpectedComputed {
				from = "the outputs computed by " + cs.ComputedBy
			}
			msg := fmt.Sprintf("%d of %d elements differ from %s", cs.Mismatches, cs.Elements, from)
			if c.Mode == ModeBound {
				msg = fmt.Sprintf("%d of %d outputs outside the rigorous bound of bound model %s (bound mode, not bit-exact)", cs.Mismatches, cs.Elements, cs.Profile)
			}
			jc.Failure = &junitFailure{Message: msg, Text: t.String()}
			s.Failures++
		}
		s.Cases = append(s.Cases, jc)
	}
	for _, e := range c.Exhaustive {
		if e.Profile != c.Against {
			continue
		}
		jc := junitCase{Name: "exhaustive " + e.Conversion, Classname: "bitexact." + c.Suite}
		if !e.Conforms {
			jc.Failure = &junitFailure{Message: fmt.Sprintf("%d of %d chunks differ", e.Differing, e.Chunks), Text: e.First}
			s.Failures++
		}
		s.Cases = append(s.Cases, jc)
	}
	if !c.Valid {
		s.Cases = append(s.Cases, junitCase{Name: "valid for certification", Classname: "bitexact." + c.Suite,
			Failure: &junitFailure{Message: c.InvalidReason}})
		s.Failures++
	}
	s.Tests = len(s.Cases)
	out, err := xml.MarshalIndent(junitSuites{Suites: []junitSuite{s}}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(out, '\n')...), nil
}
