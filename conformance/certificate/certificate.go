// Package certificate turns a vendor's outputs for a suite into a
// certificate: per-task verdicts against the profile held to, per-profile
// verdicts against every profile of the format, the first mismatches
// decoded field by field, a diagnosis of the bug class, and the digests
// that tie it to the golden set, the reference module and the results
// files. One Certificate is written as JSON (machine), Markdown (human)
// and JUnit XML (CI); Verify re-checks one.
package certificate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/bitexact/bitexact/conformance/diagnose"
	"github.com/bitexact/bitexact/conformance/results"
	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/ops"
)

// Format names the certificate layout; Verify refuses others.
const Format = "bitexact-certificate/1"

// DefaultMaxMismatches is how many mismatches per case are decoded.
const DefaultMaxMismatches = 8

// Certificate is the outcome of one certification run.
type Certificate struct {
	Format string `json:"format"`
	// Tool is the bitexact build that wrote the certificate.
	Tool         string `json:"tool"`
	Suite        string `json:"suite"`
	SuiteVersion string `json:"suite_version"`
	// GoldenSHA256 is the SHA-256 of the golden set's manifest.json,
	// which itself records the SHA-256 of every input and expected file.
	GoldenSHA256 string `json:"golden_manifest_sha256"`
	// Generator is the golden manifest's generator ("wasm sha256:...").
	Generator string `json:"golden_generator"`
	// ReferenceWasm is the SHA-256 of this build's reference module.
	ReferenceWasm string `json:"reference_wasm_sha256"`
	// Backend is "results" (a results directory) or "cuda-ptx".
	Backend        string `json:"backend"`
	Implementation string `json:"implementation"`
	Platform       string `json:"platform,omitempty"`
	// Claimed is the profile the implementation claims ("" for none).
	Claimed string `json:"claimed_profile,omitempty"`
	// Against is the profile the per-case verdicts hold the outputs to:
	// the claimed profile, else the first conforming one, else the one
	// with the fewest mismatches.
	Against string `json:"against"`
	// Valid is false for a sampled or reduced run, with the reason.
	Valid         bool           `json:"valid_for_certification"`
	InvalidReason string         `json:"invalid_reason,omitempty"`
	Files         []results.File `json:"results_files,omitempty"`
	// Missing lists tasks a reduced run left out.
	Missing  []string  `json:"missing_tasks,omitempty"`
	Cases    []Case    `json:"cases"`
	Profiles []Profile `json:"profiles"`
	// Exhaustive holds the 2^32-input sweeps of a unary kernel against
	// the committed Merkle digests of every profile of its format.
	Exhaustive []Exhaustive        `json:"exhaustive,omitempty"`
	Conforms   bool                `json:"conforms"`
	Verdict    string              `json:"verdict"`
	Diagnosis  *diagnose.Diagnosis `json:"diagnosis,omitempty"`
	// Extra carries backend facts (PTX digest, kernel, ABI, GPU).
	Extra map[string]string `json:"extra,omitempty"`
	// ContentSHA256 is the SHA-256 of the certificate's JSON with this
	// field empty: an integrity check against accidental or careless
	// edits (not a signature; re-checking against the results is).
	ContentSHA256 string `json:"content_sha256"`
}

// Case is one task's outputs held to the Against profile.
type Case struct {
	Task    string `json:"task"`
	Case    string `json:"case"`
	Profile string `json:"profile"`
	// Result is "pass", "fail", or "n/a" when the golden set has no case
	// of the profile for this task (Case is then NoCase).
	Result     string     `json:"result"`
	Elements   int        `json:"elements"`
	Mismatches int        `json:"mismatches"`
	Tensors    []Tensor   `json:"tensors"`
	First      []Mismatch `json:"first_mismatches,omitempty"`
}

// NoCase is the Case of a task the golden set does not compute under the
// profile held to.
const NoCase = "(none)"

// Tensor is one output tensor's count.
type Tensor struct {
	Name       string `json:"name"`
	Elements   int    `json:"elements"`
	Mismatches int    `json:"mismatches"`
	// Layout is set when the tensor's dtype or shape differs from the
	// profile's (every element then counts as a mismatch).
	Layout string `json:"layout,omitempty"`
}

// Exhaustive is one 2^32-input sweep compared with the committed digest
// of one conversion (golden/exhaustive).
type Exhaustive struct {
	// Conversion is "format/profile"; Profile the suite's profile name.
	Conversion string `json:"conversion"`
	Profile    string `json:"profile"`
	// Chunks is the number of 2^24-input chunks swept (256 for all 2^32
	// inputs); Differing how many of them differ from the digest.
	Chunks    int  `json:"chunks"`
	Differing int  `json:"differing_chunks"`
	Conforms  bool `json:"conforms"`
	// First is the first differing input of the first differing chunk,
	// decoded, when localised.
	First string `json:"first_difference,omitempty"`
}

// Profile is the verdict against one profile of the suite.
type Profile struct {
	Profile  string `json:"profile"`
	Conforms bool   `json:"conforms"`
	// Mismatches is the number of differing output elements over the
	// tasks that have this profile.
	Mismatches int `json:"mismatches"`
	// Tasks is how many tasks have a golden case for the profile, of
	// TasksTotal.
	Tasks      int `json:"tasks"`
	TasksTotal int `json:"tasks_total"`
}

// Input is what Build certifies.
type Input struct {
	Suite        *suite.Suite
	Set          *golden.Set
	GoldenSHA256 string
	// ReferenceWasm is wasm.ModuleDigest() (passed in so that this package
	// does not start the wasm runtime).
	ReferenceWasm  string
	Backend        string
	Implementation string
	Platform       string
	Claimed        string
	// Outputs are the implementation's outputs per task.
	Outputs map[string]ops.Tensors
	Files   []results.File
	Missing []string
	// Reduced, when set, says why the run is not valid for certification.
	Reduced       string
	MaxMismatches int
	Exhaustive    []Exhaustive
	Extra         map[string]string
}

// ToolVersion names this build: the module version and VCS revision when
// the binary records them.
func ToolVersion() string {
	v := "bitexact (devel)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = "bitexact " + bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				v += " " + s.Value
			}
			if s.Key == "vcs.modified" && s.Value == "true" {
				v += "+dirty"
			}
		}
	}
	return v + " (golden " + golden.SuiteVersion + ")"
}

// Build certifies in.Outputs.
func Build(in Input) (*Certificate, error) {
	s := in.Suite
	if in.MaxMismatches <= 0 {
		in.MaxMismatches = DefaultMaxMismatches
	}
	c := &Certificate{Format: Format, Tool: ToolVersion(), Suite: s.Name, SuiteVersion: s.Version,
		GoldenSHA256: in.GoldenSHA256, Generator: in.Set.Manifest.Generator, ReferenceWasm: in.ReferenceWasm,
		Backend: in.Backend, Implementation: in.Implementation, Platform: in.Platform, Claimed: in.Claimed,
		Files: in.Files, Missing: in.Missing, Extra: in.Extra, Valid: true, Exhaustive: in.Exhaustive}
	if in.Reduced != "" {
		c.Valid, c.InvalidReason = false, in.Reduced
	} else if len(in.Missing) > 0 {
		c.Valid, c.InvalidReason = false, "reduced run: tasks left out: "+strings.Join(in.Missing, ", ")
	}
	type taskData struct {
		t        suite.Task
		inputs   ops.Tensors
		expected map[string]ops.Tensors
		got      ops.Tensors
	}
	var tds []taskData
	counts := map[string]map[string]int{} // profile -> task -> mismatches
	for _, t := range s.Tasks {
		got, ok := in.Outputs[t.Name]
		if !ok {
			continue
		}
		td := taskData{t: t, expected: map[string]ops.Tensors{}}
		var err error
		if td.inputs, err = in.Set.Inputs(t.Cases[t.Profiles[0]]); err != nil {
			return nil, err
		}
		for _, p := range t.Profiles {
			e, err := in.Set.Expected(t.Cases[p])
			if err != nil {
				return nil, err
			}
			td.expected[p] = e
			if counts[p] == nil {
				counts[p] = map[string]int{}
			}
			n, _ := compare(e, got)
			counts[p][t.Name] = n
		}
		td.got = results.Normalize(got, t.Cases[t.Profiles[0]].Outputs)
		tds = append(tds, td)
	}
	if len(tds) == 0 {
		return nil, fmt.Errorf("no task of suite %s has outputs", s.Name)
	}
	for _, p := range s.Profiles {
		pv := Profile{Profile: p, TasksTotal: len(tds)}
		for _, n := range counts[p] {
			pv.Tasks++
			pv.Mismatches += n
		}
		pv.Conforms = pv.Tasks > 0 && pv.Mismatches == 0
		c.Profiles = append(c.Profiles, pv)
	}
	// The profile held to.
	c.Against = in.Claimed
	if c.Against == "" {
		best := -1
		for _, pv := range c.Profiles {
			if pv.Tasks != pv.TasksTotal {
				continue
			}
			if best < 0 || pv.Mismatches < best {
				best, c.Against = pv.Mismatches, pv.Profile
			}
		}
		if c.Against == "" {
			c.Against = s.Profiles[0]
		}
	}
	var diagTasks []diagnose.Task
	for _, td := range tds {
		cs := Case{Task: td.t.Name, Profile: c.Against}
		want, ok := td.expected[c.Against]
		if !ok {
			// The golden set computes this profile on other tasks only (an
			// E2M1 element profile of MXFP4 on the edge blocks, not the
			// matrix): nothing to hold this task to.
			cs.Result = "n/a"
			cs.Case = NoCase
			cs.Tensors = []Tensor{}
			c.Cases = append(c.Cases, cs)
			continue
		}
		gc := td.t.Cases[c.Against]
		cs.Case = gc.Name
		got := results.Normalize(td.got, gc.Outputs)
		cs.Mismatches, cs.Tensors = compare(want, got)
		for _, tv := range cs.Tensors {
			cs.Elements += tv.Elements
		}
		cs.Result = "pass"
		if cs.Mismatches > 0 {
			cs.Result = "fail"
			cs.First = firstMismatches(td.inputs, want, got, in.MaxMismatches)
		}
		c.Cases = append(c.Cases, cs)
		params := ops.Params{}
		for k, v := range gc.Params {
			params[k] = v
		}
		diagTasks = append(diagTasks, diagnose.Task{Task: td.t, Params: params, Inputs: td.inputs,
			Reference: want, Expected: td.expected, Observed: got})
	}
	c.Conforms = conformsFrom(c)
	c.Verdict = verdictLine(c)
	if !c.Conforms && len(diagTasks) > 0 {
		d, err := diagnose.Run(s, c.Against, diagTasks)
		if err != nil {
			return nil, err
		}
		c.Diagnosis = &d
	}
	if err := c.seal(); err != nil {
		return nil, err
	}
	return c, nil
}

// conformsFrom derives the overall verdict: every case passes and every
// exhaustive sweep of the profile held to matches its digest.
func conformsFrom(c *Certificate) bool {
	for _, cs := range c.Cases {
		if cs.Result == "fail" {
			return false
		}
	}
	for _, e := range c.Exhaustive {
		if e.Profile == c.Against && !e.Conforms {
			return false
		}
	}
	return true
}

// VerdictText is the verdict for a terminal: Verdict without its Markdown
// code marks (Verdict itself is kept as recorded, since the certificate's
// digest covers it and the Markdown and JUnit forms show it as is).
func (c *Certificate) VerdictText() string { return strings.ReplaceAll(c.Verdict, "`", "") }

// verdictLine is "conforms to `nosat`; differs from `satfinite` on 22
// elements", with the reduced-run caveat.
func verdictLine(c *Certificate) string {
	var conf, diff []string
	for _, p := range c.Profiles {
		switch {
		case p.Tasks == 0:
		case p.Conforms && p.Tasks == p.TasksTotal:
			conf = append(conf, "`"+p.Profile+"`")
		case p.Conforms:
			conf = append(conf, fmt.Sprintf("`%s` (on the %d of %d tasks it covers)", p.Profile, p.Tasks, p.TasksTotal))
		default:
			diff = append(diff, fmt.Sprintf("`%s` on %d elements", p.Profile, p.Mismatches))
		}
	}
	var parts []string
	if len(conf) > 0 {
		parts = append(parts, "conforms to "+strings.Join(conf, ", "))
	} else {
		parts = append(parts, "conforms to no profile")
	}
	if len(diff) > 0 {
		parts = append(parts, "differs from "+strings.Join(diff, ", "))
	}
	s := strings.Join(parts, "; ")
	if len(c.Exhaustive) > 0 {
		var ec, ed []string
		for _, e := range c.Exhaustive {
			if e.Conforms {
				ec = append(ec, "`"+e.Conversion+"`")
			} else {
				ed = append(ed, fmt.Sprintf("`%s` in %d of %d chunks", e.Conversion, e.Differing, e.Chunks))
			}
		}
		x := fmt.Sprintf("; exhaustive (%d of 256 chunks of 2^24 inputs):", c.Exhaustive[0].Chunks)
		if len(ec) > 0 {
			x += " conforms to " + strings.Join(ec, ", ")
		}
		if len(ed) > 0 {
			if len(ec) > 0 {
				x += ";"
			}
			x += " differs from " + strings.Join(ed, ", ")
		}
		s += x
	}
	if c.Claimed != "" {
		if c.Conforms {
			s = "CONFORMS to claimed profile `" + c.Claimed + "`: " + s
		} else {
			s = "DOES NOT CONFORM to claimed profile `" + c.Claimed + "`: " + s
		}
	}
	if !c.Valid {
		s += " [NOT VALID FOR CERTIFICATION: " + c.InvalidReason + "]"
	}
	return s
}

// compare counts differing elements per tensor of want (dtype units).
func compare(want, got ops.Tensors) (int, []Tensor) {
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	sort.Strings(names)
	total := 0
	var tv []Tensor
	for _, n := range names {
		w := want[n]
		sz := w.DType.Size()
		t := Tensor{Name: n, Elements: len(w.Data) / sz}
		g, ok := got[n]
		switch {
		case !ok:
			t.Layout = "missing"
		case g.DType != w.DType || !sameShape(g.Shape, w.Shape) || len(g.Data) != len(w.Data):
			t.Layout = fmt.Sprintf("%s%v, profile wants %s%v", g.DType, g.Shape, w.DType, w.Shape)
		}
		if t.Layout != "" {
			t.Mismatches = t.Elements
		} else {
			for i := 0; i+sz <= len(w.Data); i += sz {
				for j := 0; j < sz; j++ {
					if w.Data[i+j] != g.Data[i+j] {
						t.Mismatches++
						break
					}
				}
			}
		}
		total += t.Mismatches
		tv = append(tv, t)
	}
	return total, tv
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

// seal computes ContentSHA256.
func (c *Certificate) seal() error {
	d, err := c.contentDigest()
	c.ContentSHA256 = d
	return err
}

func (c *Certificate) contentDigest() (string, error) {
	cp := *c
	cp.ContentSHA256 = ""
	b, err := json.Marshal(&cp)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:]), nil
}
