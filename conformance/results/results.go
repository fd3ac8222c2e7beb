// Package results reads a vendor results directory (results.json and one
// safetensors file per task of a suite) with strict validation: every
// problem (malformed or truncated file, unknown or duplicate task, missing
// or extra tensor, wrong dtype or shape) is an *Error naming the file and
// the tensor, never a silent skip.
package results

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/ops"
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
	// none (certify then reports which profiles it conforms to).
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
		return fmt.Sprintf("%s: tensor %q: %s", e.File, e.Tensor, e.Problem)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Problem)
}

// Options tune Read.
type Options struct {
	// AllowPartial accepts results that leave tasks out (a reduced run).
	AllowPartial bool
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
	mb, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil, &Error{File: ManifestFile, Problem: "missing: " + err.Error()}
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(mb))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, &Error{File: ManifestFile, Problem: "malformed JSON: " + err.Error()}
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
	case m.Profile != "" && !s.HasProfile(m.Profile):
		return nil, &Error{File: ManifestFile, Problem: fmt.Sprintf("profile %q is not a profile of suite %s (profiles: %s)", m.Profile, s.Name, strings.Join(s.Profiles, ", "))}
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
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			return nil, &Error{File: file, Problem: "missing results file for task " + name}
		}
		ts, _, err := golden.DecodeSafetensors(file, b)
		if err != nil {
			return nil, &Error{File: file, Problem: strings.TrimPrefix(err.Error(), file+": ")}
		}
		if err := checkLayout(file, t, ts, m.Profile); err != nil {
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
func checkLayout(file string, t suite.Task, ts ops.Tensors, claim string) error {
	profiles := t.Profiles
	if claim != "" {
		if _, ok := t.Cases[claim]; ok {
			profiles = append([]string{claim}, profiles...)
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
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
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
		b, err := golden.EncodeSafetensors(ts, nil)
		if err != nil {
			return fmt.Errorf("task %s: %w", n, err)
		}
		if err := os.WriteFile(filepath.Join(dir, suite.ResultFile(n)), b, 0o644); err != nil {
			return err
		}
	}
	j, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ManifestFile), append(j, '\n'), 0o644)
}
