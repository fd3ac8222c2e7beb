// Package results reads a vendor results directory (results.json and one
// safetensors file per task of a suite) with strict validation: every
// problem (malformed or truncated file, unknown or duplicate task, missing
// or extra tensor, wrong dtype or shape) is an *Error naming the file and
// the tensor, never a silent skip.
package results

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/internal/golden/safeio"
	"github.com/bitexact/bitexact/internal/golden/stfile"
	"github.com/bitexact/bitexact/internal/golden/strictjson"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// ManifestFile is the name of the results manifest.
const ManifestFile = "results.json"

// Manifest is results.json.
type Manifest struct {
	Format       string `json:"format"`
	Suite        string `json:"suite"`
	SuiteVersion string `json:"suite_version"`
	// Implementation names what produced the results ("torch 2.11
	// .to(float8_e4m3fn)").
	Implementation string `json:"implementation"`
	// Platform describes the hardware and software, when known.
	Platform string `json:"platform,omitempty"`
	// Profile is the profile the implementation claims; empty claims
	// none (certify then reports which profiles it conforms to). A
	// bound-mode suite requires it: the bound model
	// "mul32=M,round16=R,out=fp32|fp16" (suite.Spec.ParseBound).
	Profile string   `json:"profile,omitempty"`
	Tasks   []string `json:"tasks"`
}

// File is the digest of one file of the results directory.
type File struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
	Bytes  int    `json:"bytes"`
}

// Results is a validated results directory.
type Results struct {
	Manifest Manifest
	// Outputs are the tensors of each task.
	Outputs map[string]ops.Tensors
	// Files are the digests of results.json and every task file, sorted
	// by name.
	Files []File
	// Missing lists the suite's tasks the results leave out (only with
	// Options.AllowPartial); a partial run is not valid for certification.
	Missing []string
}

// Error is a results problem: the results cannot be compared.
type Error struct {
	File    string
	Tensor  string
	Problem string
}

func (e *Error) Error() string {
	if e.Tensor != "" {
		return fmt.Sprintf("%s: tensor %q: %s", Printable(e.File), e.Tensor, e.Problem)
	}
	return fmt.Sprintf("%s: %s", Printable(e.File), e.Problem)
}

// Printable returns s unchanged when it is safe to print on a terminal,
// else quoted with Go escapes (control characters, ANSI escapes, \r,
// bidirectional overrides and invalid UTF-8 shown as escapes, not
// interpreted).
func Printable(s string) string {
	if CheckText(s, len(s)+1) == nil {
		return s
	}
	return strconv.QuoteToASCII(s)
}

// Limits on results.json and on the free-text fields of a manifest.
const (
	// MaxManifestBytes bounds results.json.
	MaxManifestBytes = 1 << 20
	// MaxTextRunes bounds implementation and platform.
	MaxTextRunes = 200
	// headerAllowance is what a task file may hold beyond its tensors'
	// bytes: the 8-byte length and the JSON header, with room for a
	// harness's own metadata.
	headerAllowance = 1 << 20
)

// CheckText refuses text that could change how a terminal, a Markdown
// renderer or an XML reader shows what follows it: invalid UTF-8,
// control characters (C0, DEL, C1: ANSI escapes, \r, newlines),
// Unicode format characters (bidirectional overrides, zero-width
// characters), line and paragraph separators, and more than max runes.
// Markdown and HTML punctuation is allowed here; the writers escape it.
func CheckText(s string, max int) error {
	if !utf8.ValidString(s) {
		return errors.New("not valid UTF-8")
	}
	n := 0
	for i, r := range s {
		n++
		switch {
		case unicode.IsControl(r):
			return fmt.Errorf("control character %U at byte %d", r, i)
		case unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029':
			return fmt.Errorf("format character %U at byte %d (bidirectional or invisible)", r, i)
		}
	}
	if n > max {
		return fmt.Errorf("%d characters, at most %d", n, max)
	}
	return nil
}

// FileLimit is the largest results file task t can need: the bytes of
// its largest profile's outputs plus a header allowance. A larger file
// is refused before it is read.
func FileLimit(t suite.Task) int64 {
	var most int64
	for _, c := range t.Cases {
		var n int64
		for _, o := range c.Outputs {
			e := int64(tensor.DType(o.DType).Size())
			for _, d := range o.Shape {
				e *= int64(d)
			}
			n += e
		}
		most = max(most, n)
	}
	return 8 + headerAllowance + most
}

// Options tune Read.
type Options struct {
	// AllowPartial accepts results that leave tasks out (a reduced run).
	AllowPartial bool
	// ClaimLayout, when set, gives the outputs of claimed profile claim on
	// a task that has no golden case of it (a spec-string GEMV schedule
	// may round its output to a precision no named profile of the task
	// shares): the results file is then held to that layout. Unset, or
	// returning nil outputs, such a file may have the layout of any
	// profile of the task.
	ClaimLayout func(t suite.Task, claim string) ([]golden.TensorInfo, error)
}

func digest(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Read reads and validates the results directory dir against s.
func Read(dir string, s *suite.Suite, opt *Options) (*Results, error) {
	if opt == nil {
		opt = &Options{}
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, &Error{File: dir, Problem: "not a directory"}
	}
	// Every file is read through root: a symbolic link that leaves the
	// folder is refused, and only regular files are read (safeio).
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, &Error{File: dir, Problem: err.Error()}
	}
	defer root.Close()
	mb, err := safeio.ReadFileIn(root, ManifestFile, MaxManifestBytes)
	if err != nil {
		return nil, &Error{File: ManifestFile, Problem: "cannot be read: " + problem(err)}
	}
	var m Manifest
	if err := strictjson.Unmarshal(mb, &m); err != nil {
		return nil, &Error{File: ManifestFile, Problem: "malformed JSON: " + err.Error()}
	}
	for _, f := range []struct{ name, v string }{{"implementation", m.Implementation}, {"platform", m.Platform}} {
		if err := CheckText(f.v, MaxTextRunes); err != nil {
			return nil, &Error{File: ManifestFile, Problem: fmt.Sprintf("%s %s: %v", f.name, strconv.QuoteToASCII(f.v), err)}
		}
	}
	switch {
	case m.Format != suite.ResultsFormat:
		return nil, &Error{File: ManifestFile, Problem: fmt.Sprintf("format %q, want %q", m.Format, suite.ResultsFormat)}
	case m.Suite != s.Name:
		return nil, &Error{File: ManifestFile, Problem: fmt.Sprintf("suite %q, but certifying suite %q", m.Suite, s.Name)}
	case m.SuiteVersion != s.Version:
		return nil, &Error{File: ManifestFile, Problem: fmt.Sprintf("suite_version %q, this golden set is %q (re-export and re-run)", m.SuiteVersion, s.Version)}
	case strings.TrimSpace(m.Implementation) == "":
		return nil, &Error{File: ManifestFile, Problem: "implementation is empty: name what produced the results"}
	case s.Bound && m.Profile == "":
		return nil, &Error{File: ManifestFile, Problem: fmt.Sprintf("suite %s is a bound-mode suite: profile must declare the bound model (for example %q; see docs/vendor.md)", s.Name, s.Profiles[0])}
	case m.Profile != "":
		// A named profile, or a spec string where the suite takes one
		// (a GEMV schedule): a malformed spec is refused here.
		if err := s.CheckProfile(m.Profile); err != nil {
			return nil, &Error{File: ManifestFile, Problem: err.Error()}
		}
		// One spelling per claim (refimpl/claim): keys in another order,
		// or defaults left out, name the canonical profile.
		p, err := s.CanonicalProfile(m.Profile)
		if err != nil {
			return nil, &Error{File: ManifestFile, Problem: err.Error()}
		}
		m.Profile = p
	}
	r := &Results{Manifest: m, Outputs: map[string]ops.Tensors{}}
	r.Files = append(r.Files, File{Name: ManifestFile, SHA256: digest(mb), Bytes: len(mb)})
	listed := map[string]bool{}
	for _, name := range m.Tasks {
		if listed[name] {
			return nil, &Error{File: ManifestFile, Problem: fmt.Sprintf("task %q listed twice", name)}
		}
		listed[name] = true
		t, ok := s.Task(name)
		if !ok {
			return nil, &Error{File: ManifestFile, Problem: fmt.Sprintf("unknown task %q (tasks of %s: %s)", name, s.Name, strings.Join(taskNames(s), ", "))}
		}
		file := suite.ResultFile(name)
		b, err := safeio.ReadFileIn(root, file, FileLimit(t))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &Error{File: file, Problem: "missing results file for task " + name}
		}
		if err != nil {
			return nil, &Error{File: file, Problem: "cannot be read: " + problem(err)}
		}
		ts, _, err := stfile.Decode(file, b)
		if err != nil {
			return nil, &Error{File: file, Problem: strings.TrimPrefix(err.Error(), file+": ")}
		}
		if err := checkLayout(file, t, ts, m.Profile, opt.ClaimLayout); err != nil {
			return nil, err
		}
		r.Outputs[name] = ts
		r.Files = append(r.Files, File{Name: file, SHA256: digest(b), Bytes: len(b)})
	}
	for _, t := range s.Tasks {
		if !listed[t.Name] {
			if !opt.AllowPartial {
				return nil, &Error{File: ManifestFile, Problem: fmt.Sprintf("task %q missing (every task of the suite is required: %s)", t.Name, strings.Join(taskNames(s), ", "))}
			}
			r.Missing = append(r.Missing, t.Name)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		n := e.Name()
		if strings.HasSuffix(n, ".safetensors") && !listed[strings.TrimSuffix(n, ".safetensors")] {
			return nil, &Error{File: n, Problem: "not a task listed in " + ManifestFile}
		}
	}
	sort.Slice(r.Files, func(i, j int) bool { return r.Files[i].Name < r.Files[j].Name })
	return r, nil
}

// problem is a safeio error without the file name the Error adds.
func problem(err error) string {
	var se *safeio.Error
	if errors.As(err, &se) {
		return se.Problem
	}
	return err.Error()
}

func taskNames(s *suite.Suite) []string {
	var n []string
	for _, t := range s.Tasks {
		n = append(n, t.Name)
	}
	return n
}

// checkLayout requires ts to hold exactly the output tensors of one of the
// task's profiles (the claimed one when claim is set), with its dtypes
// and shapes; a logical format, if recorded, must match.
func checkLayout(file string, t suite.Task, ts ops.Tensors, claim string, claimLayout func(suite.Task, string) ([]golden.TensorInfo, error)) error {
	profiles := t.Profiles
	if claim != "" {
		if _, ok := t.Cases[claim]; ok {
			profiles = append([]string{claim}, profiles...)
		} else if claimLayout != nil {
			want, err := claimLayout(t, claim)
			if err != nil {
				return &Error{File: file, Problem: fmt.Sprintf("the outputs of claimed profile %s on task %s: %v", claim, t.Name, err)}
			}
			if want != nil {
				return layoutMatches(file, want, ts)
			}
		}
	}
	var first error
	for _, p := range profiles {
		err := layoutMatches(file, t.Cases[p].Outputs, ts)
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
	}
	return first
}

func layoutMatches(file string, want []golden.TensorInfo, ts ops.Tensors) error {
	names := map[string]bool{}
	for _, w := range want {
		names[w.Name] = true
		g, ok := ts[w.Name]
		if !ok {
			return &Error{File: file, Tensor: w.Name, Problem: fmt.Sprintf("missing (want %s%v)", w.DType, w.Shape)}
		}
		if string(g.DType) != w.DType {
			return &Error{File: file, Tensor: w.Name, Problem: fmt.Sprintf("dtype %s, want %s", g.DType, w.DType)}
		}
		if !sameShape(g.Shape, w.Shape) {
			return &Error{File: file, Tensor: w.Name, Problem: fmt.Sprintf("shape %v, want %v", g.Shape, w.Shape)}
		}
		if g.Logical != "" && g.Logical != w.Logical {
			return &Error{File: file, Tensor: w.Name, Problem: fmt.Sprintf("logical format %q, want %q", g.Logical, w.Logical)}
		}
	}
	var extra []string
	for n := range ts {
		if !names[n] {
			extra = append(extra, n)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return &Error{File: file, Tensor: extra[0], Problem: "not an output of the task"}
	}
	return nil
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Normalize sets each tensor's logical format to the expected one, so
// that tensors written without logical metadata compare equal to the
// golden outputs.
func Normalize(ts ops.Tensors, want []golden.TensorInfo) ops.Tensors {
	out := ops.Tensors{}
	for n, t := range ts {
		for _, w := range want {
			if w.Name == n {
				t.Logical = w.Logical
			}
		}
		out[n] = t
	}
	return out
}

// Write writes a results directory: results.json and one file per task.
// Harnesses written in Go (and the tests) use it.
func Write(dir string, m Manifest, outputs map[string]ops.Tensors) error {
	d, err := safeio.OpenOutDir(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if m.Format == "" {
		m.Format = suite.ResultsFormat
	}
	if m.Tasks == nil {
		for n := range outputs {
			m.Tasks = append(m.Tasks, n)
		}
		sort.Strings(m.Tasks)
	}
	for n, ts := range outputs {
		b, err := stfile.Encode(ts, nil)
		if err != nil {
			return fmt.Errorf("task %s: %w", n, err)
		}
		if err := d.WriteFile(suite.ResultFile(n), b, 0o644); err != nil {
			return err
		}
	}
	j, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return d.WriteFile(ManifestFile, append(j, '\n'), 0o644)
}
