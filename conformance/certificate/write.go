package certificate

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// WriteDir writes the JSON, Markdown and JUnit forms under dir.
func (c *Certificate) WriteDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	j, err := c.JSON()
	if err != nil {
		return err
	}
	x, err := c.JUnit()
	if err != nil {
		return err
	}
	for name, b := range map[string][]byte{JSONFile: j, MarkdownFile: c.Markdown(), JUnitFile: x} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Markdown is the human certificate.
func (c *Certificate) Markdown() []byte {
	var b bytes.Buffer
	status := "CONFORMS"
	if !c.Conforms {
		status = "DOES NOT CONFORM"
	}
	fmt.Fprintf(&b, "# bitexact certificate: %s, suite `%s`\n\n", c.Implementation, c.Suite)
	fmt.Fprintf(&b, "**%s** to `%s`. %s\n\n", status, c.Against, c.Verdict)
	if !c.Valid {
		fmt.Fprintf(&b, "> **Not valid for certification:** %s\n\n", c.InvalidReason)
	}
	fmt.Fprintf(&b, "| | |\n|---|---|\n")
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "| %s | %s |\n", k, strings.ReplaceAll(v, "|", "\\|"))
		}
	}
	row("suite", fmt.Sprintf("`%s` version %s", c.Suite, c.SuiteVersion))
	row("golden manifest SHA-256", "`"+c.GoldenSHA256+"`")
	row("golden generator", c.Generator)
	row("reference .wasm SHA-256", "`"+c.ReferenceWasm+"`")
	row("tool", c.Tool)
	row("backend", c.Backend)
	row("implementation", c.Implementation)
	row("platform", c.Platform)
	row("claimed profile", c.Claimed)
	keys := make([]string, 0, len(c.Extra))
	for k := range c.Extra {
		keys = append(keys, k)
	}
	sortStrings(keys)
	for _, k := range keys {
		row(k, c.Extra[k])
	}
	for _, f := range c.Files {
		row("results file "+f.Name, fmt.Sprintf("%d bytes, SHA-256 `%s`", f.Bytes, f.SHA256))
	}
	fmt.Fprintf(&b, "\n## Per-profile verdicts\n\n| profile | verdict | differing elements | tasks |\n|---|---|---|---|\n")
	for _, p := range c.Profiles {
		v := "differs"
		if p.Conforms {
			v = "conforms"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %d | %d of %d |\n", p.Profile, v, p.Mismatches, p.Tasks, p.TasksTotal)
	}
	if len(c.Exhaustive) > 0 {
		fmt.Fprintf(&b, "\n## Exhaustive sweeps (all float32 inputs, Merkle digests of golden/exhaustive)\n\n| conversion | verdict | chunks swept | differing chunks | first difference |\n|---|---|---|---|---|\n")
		for _, e := range c.Exhaustive {
			v := "differs"
			if e.Conforms {
				v = "conforms"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %d | %d | %s |\n", e.Conversion, v, e.Chunks, e.Differing, e.First)
		}
	}
	fmt.Fprintf(&b, "\n## Cases (held to `%s`)\n\n| task | golden case | result | elements | mismatches |\n|---|---|---|---|---|\n", c.Against)
	for _, cs := range c.Cases {
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d |\n", cs.Task, cs.Case, cs.Result, cs.Elements, cs.Mismatches)
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
	fmt.Fprintf(&b, "\nContent SHA-256 `%s`. Re-check with `bitexact verify-cert certificate.json --results DIR`.\n", c.ContentSHA256)
	return b.Bytes()
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

// JUnit is the CI form: one testcase per task held to Against, one per
// profile verdict, properties for the digests.
func (c *Certificate) JUnit() ([]byte, error) {
	s := junitSuite{Name: "bitexact." + c.Suite}
	s.Properties = append(s.Properties, []junitProperty{
		{"suite_version", c.SuiteVersion}, {"golden_manifest_sha256", c.GoldenSHA256},
		{"reference_wasm_sha256", c.ReferenceWasm}, {"tool", c.Tool}, {"implementation", c.Implementation},
		{"against", c.Against}, {"valid_for_certification", fmt.Sprint(c.Valid)}, {"verdict", c.Verdict},
	}...)
	for _, cs := range c.Cases {
		jc := junitCase{Name: cs.Task + " @ " + cs.Profile, Classname: "bitexact." + c.Suite}
		if cs.Result == "n/a" {
			jc.Skipped = &junitSkipped{Message: "the golden set has no case of profile " + cs.Profile + " for this task"}
		}
		if cs.Result == "fail" {
			var t strings.Builder
			for _, m := range cs.First {
				fmt.Fprintf(&t, "%s%v: expected %s; got %s\n", m.Tensor, m.Position, m.Expected, m.Got)
			}
			if c.Diagnosis != nil {
				t.WriteString("diagnosis: " + c.Diagnosis.Summary() + "\n")
			}
			jc.Failure = &junitFailure{Message: fmt.Sprintf("%d of %d elements differ from %s", cs.Mismatches, cs.Elements, cs.Case), Text: t.String()}
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
