// Package certificate turns a vendor's outputs for a suite into a
// certificate: per-task verdicts against the profile held to, per-profile
// verdicts against every profile of the format, the first mismatches
// decoded field by field, a diagnosis of the bug class, and the digests
// that tie it to the golden set, the reference module and the results
// files. One Certificate is written as JSON (machine), Markdown (human)
// and JUnit XML (CI); Verify re-checks one.
package certificate

import (
	"context"
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
	"github.com/bitexact/bitexact/refimpl/nanconv"
	"github.com/bitexact/bitexact/refimpl/ops"
)

// Format names the certificate layout; Verify refuses others. Version 2
// added max_mismatches, golden_set and signature, and verifies by them.
const Format = "bitexact-certificate/2"

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
	// Mode is ModeBound for a bound-mode suite (Against is then the
	// declared bound model and no output is compared bit for bit); empty
	// for bit-exact certification.
	Mode string `json:"mode,omitempty"`
	// BoundAllowance, in bound mode, says what the declared model allows
	// on the suite's tasks: its bound against |y| (suite.BoundAllowance).
	BoundAllowance *suite.BoundAllowance `json:"bound_allowance,omitempty"`
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
	// MaxMismatches is how many mismatches per case were decoded (First);
	// verify-cert --results decodes as many again.
	MaxMismatches int `json:"max_mismatches"`
	// GoldenSet is GoldenReleased when GoldenSHA256 is the manifest digest
	// of a released golden set (the one embedded in this build), else
	// GoldenUnreleased: the certificate then says so in its verdict and is
	// not valid for certification.
	GoldenSet string `json:"golden_set"`
	// ContentSHA256 is the SHA-256 of the certificate's JSON with this
	// field and Signature empty. Anyone can recompute it: it detects
	// accidental damage, not forgery. A Signature, or re-certifying the
	// results (verify-cert --results), is what ties the content to a
	// signer or to the results.
	ContentSHA256 string `json:"content_sha256"`
	// Signature, when present, is an ed25519 signature over the canonical
	// certificate (sign.go); nil for an unsigned certificate.
	Signature *Signature `json:"signature,omitempty"`
}

// Values of Certificate.GoldenSet.
const (
	GoldenReleased   = "released"
	GoldenUnreleased = "unreleased"
)

// Case is one task's outputs held to the Against profile.
type Case struct {
	Task string `json:"task"`
	// Case is the golden case of the expected outputs, or ComputedCase.
	Case    string `json:"case"`
	Profile string `json:"profile"`
	// Expected says where the expected outputs come from: ExpectedGolden
	// (the golden set's case file) or ExpectedComputed (the golden set has
	// no case of the profile for this task, so the outputs were computed
	// in this run from the task's golden inputs by ComputedBy).
	Expected string `json:"expected"`
	// ComputedBy names the engine of computed expected outputs: "wasm
	// sha256:<hex>", the embedded reference module (ReferenceWasm).
	ComputedBy string `json:"computed_by,omitempty"`
	// Result is "pass" or "fail". (Certificates of earlier builds could
	// say "n/a": a task left unchecked, which Verify now refuses.)
	Result     string     `json:"result"`
	Elements   int        `json:"elements"`
	Mismatches int        `json:"mismatches"`
	Tensors    []Tensor   `json:"tensors"`
	First      []Mismatch `json:"first_mismatches,omitempty"`
	// Bound summarises a bound-mode task (Mode ModeBound): Mismatches
	// are then the outputs outside the bound, First the first of them.
	Bound *BoundCheck `json:"bound,omitempty"`
}

// NoCase is the Case of a task left unchecked ("n/a") by certificates of
// earlier builds; Verify refuses them.
const NoCase = "(none)"

// ComputedCase is the Case of a task whose expected outputs were computed
// (Expected is ExpectedComputed).
const ComputedCase = "(computed)"

// Sources of expected outputs (Case.Expected).
const (
	ExpectedGolden   = "golden"
	ExpectedComputed = "computed"
)

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
	// Tasks is how many tasks the profile is checked on, of TasksTotal:
	// those with a golden case and those the reference computed it for
	// (every task for the profile held to; without a claim, every task the
	// reference defines the profile on).
	Tasks      int `json:"tasks"`
	TasksTotal int `json:"tasks_total"`
	// Computed is how many of Tasks were checked against expected outputs
	// computed by the reference (no golden case).
	Computed int `json:"computed_tasks,omitempty"`
}

// Input is what Build certifies.
type Input struct {
	Suite        *suite.Suite
	Set          *golden.Set
	GoldenSHA256 string
	// ReferenceWasm is wasm.ModuleDigest() (passed in so that this package
	// does not start the wasm runtime).
	ReferenceWasm string
	// Reference computes the expected outputs of the tasks the golden set
	// has no case for under the profile held to: the embedded wasm module
	// (golden.Wasm, or any engine whose golden.EngineName is "wasm
	// sha256:"+ReferenceWasm; another engine makes the certificate not
	// valid for certification). Nil refuses such a run.
	Reference      golden.Engine
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

// ClaimError is a profile held to that cannot be checked on a task: the
// golden set has no case for the pair and the reference cannot compute it.
// The claim is invalid; no verdict is given.
type ClaimError struct {
	Task, Profile string
	Err           error
}

func (e *ClaimError) Error() string {
	return fmt.Sprintf("profile %s cannot be checked on task %s: the golden set has no case for it and the reference cannot compute it: %v", e.Profile, e.Task, e.Err)
}

func (e *ClaimError) Unwrap() error { return e.Err }

// Build certifies in.Outputs (BuildContext without cancellation).
func Build(in Input) (*Certificate, error) { return BuildContext(context.Background(), in) }

// BuildContext certifies in.Outputs. Every task with outputs is held to
// the profile held to (Against): against its golden case, or where the
// golden set has none, against outputs in.Reference computes from the
// task's inputs (recorded per case, with the engine). A profile that
// cannot be computed for a task is a *ClaimError, returned before any
// verdict.
//
// The steps, in order: settle the input (normalizeInput, checkTexts),
// write the header (newCertificate; a bound-mode suite goes on in
// buildBound), expect (loadTasks, computeMissing), choose the profile
// held to (chooseAgainst, requireAgainst, checkComputedBy), give the
// verdicts (profileVerdicts, holdCases) and conclude (conclude).
func BuildContext(ctx context.Context, in Input) (*Certificate, error) {
	s := in.Suite
	if err := normalizeInput(&in); err != nil {
		return nil, err
	}
	if err := checkTexts(in); err != nil {
		return nil, err
	}
	c := newCertificate(in)
	if s.Bound {
		return buildBound(ctx, in, c)
	}
	tds, ex, err := loadTasks(in)
	if err != nil {
		return nil, err
	}
	if err := computeMissing(ctx, in, tds, ex); err != nil {
		return nil, err
	}
	c.Against = chooseAgainst(s, in.Claimed, ex, len(tds))
	if err := requireAgainst(s, c.Against, tds, ex); err != nil {
		return nil, err
	}
	checkComputedBy(c, in.ReferenceWasm, tds, ex)
	c.Profiles = profileVerdicts(s, in.Claimed, len(tds), ex)
	diagTasks, err := holdCases(c, in, tds, ex)
	if err != nil {
		return nil, err
	}
	if err := conclude(c, s, diagTasks); err != nil {
		return nil, err
	}
	return c, nil
}

// normalizeInput refuses a negative in.MaxMismatches and sets 0 to
// DefaultMaxMismatches, and rewrites in.Claimed in its canonical spelling
// (an error if it is not a profile of the suite).
func normalizeInput(in *Input) error {
	if in.MaxMismatches < 0 {
		return fmt.Errorf("max mismatches %d is negative", in.MaxMismatches)
	}
	if in.MaxMismatches == 0 {
		in.MaxMismatches = DefaultMaxMismatches
	}
	if in.Claimed != "" {
		// One spelling per claim: the certificate records the canonical
		// one, whatever order the results declared its keys in.
		p, err := in.Suite.CanonicalProfile(in.Claimed)
		if err != nil {
			return err
		}
		in.Claimed = p
	}
	return nil
}

// checkTexts refuses strings from outside (results.json, a kernel name,
// the driver's GPU name, backend facts) that Parse would refuse: Parse
// refuses a certificate with control characters, so Build never writes
// one.
func checkTexts(in Input) error {
	texts := map[string]string{"implementation": in.Implementation, "platform": in.Platform, "reduced-run reason": in.Reduced}
	for k, v := range in.Extra {
		texts["backend fact "+k] = k + v
	}
	for name, v := range texts {
		if err := results.CheckText(v, maxText); err != nil {
			return fmt.Errorf("%s %s: %v", name, results.Printable(v), err)
		}
	}
	return nil
}

// newCertificate is the certificate's header, everything decided before
// any verdict: identity, digests, files, the run's settings, and validity
// (a reduced run, tasks left out or an unreleased golden set make it not
// valid for certification, with the first reason).
func newCertificate(in Input) *Certificate {
	c := &Certificate{Format: Format, Tool: ToolVersion(), Suite: in.Suite.Name, SuiteVersion: in.Suite.Version,
		GoldenSHA256: in.GoldenSHA256, Generator: in.Set.Manifest.Generator, ReferenceWasm: in.ReferenceWasm,
		Backend: in.Backend, Implementation: in.Implementation, Platform: in.Platform, Claimed: in.Claimed,
		Files: in.Files, Missing: in.Missing, Extra: in.Extra, Valid: true, Exhaustive: in.Exhaustive}
	if in.Reduced != "" {
		c.Valid, c.InvalidReason = false, in.Reduced
	} else if len(in.Missing) > 0 {
		c.Valid, c.InvalidReason = false, "reduced run: tasks left out: "+strings.Join(in.Missing, ", ")
	}
	c.MaxMismatches = in.MaxMismatches
	c.GoldenSet = goldenSetOf(in.GoldenSHA256)
	if c.GoldenSet != GoldenReleased && c.Valid {
		c.Valid, c.InvalidReason = false, unreleasedReason(in.GoldenSHA256)
	}
	return c
}

// taskData is one task with outputs: its inputs, its expected outputs per
// profile (golden or computed) and the outputs under test.
type taskData struct {
	t        suite.Task
	inputs   ops.Tensors
	expected map[string]ops.Tensors
	got      ops.Tensors
}

// expectations records, per profile and task, what checking the outputs
// against each profile found.
type expectations struct {
	counts       map[string]map[string]int    // profile -> task -> mismatches
	computed     map[string]map[string]string // profile -> task -> engine
	uncomputable map[string]map[string]error  // profile -> task -> why
}

// count records n mismatches of task against profile p.
func (ex *expectations) count(p, task string, n int) {
	if ex.counts[p] == nil {
		ex.counts[p] = map[string]int{}
	}
	ex.counts[p][task] = n
}

// loadTasks reads, for every task of the suite with outputs (in suite
// order), its inputs and the golden expected outputs of each profile it
// has a case for, and counts the mismatches against each. An error if no
// task has outputs or the golden set cannot be read.
func loadTasks(in Input) ([]taskData, *expectations, error) {
	s := in.Suite
	var tds []taskData
	ex := &expectations{counts: map[string]map[string]int{}, computed: map[string]map[string]string{},
		uncomputable: map[string]map[string]error{}}
	for _, t := range s.Tasks {
		got, ok := in.Outputs[t.Name]
		if !ok {
			continue
		}
		td := taskData{t: t, expected: map[string]ops.Tensors{}}
		var err error
		if td.inputs, err = in.Set.Inputs(t.Cases[t.Profiles[0]]); err != nil {
			return nil, nil, err
		}
		for _, p := range t.Profiles {
			e, err := in.Set.Expected(t.Cases[p])
			if err != nil {
				return nil, nil, err
			}
			td.expected[p] = e
			n, _ := compareUnder(s, p, e, got)
			ex.count(p, t.Name, n)
		}
		td.got = results.Normalize(got, t.Cases[t.Profiles[0]].Outputs)
		tds = append(tds, td)
	}
	if len(tds) == 0 {
		return nil, nil, fmt.Errorf("no task of suite %s has outputs", s.Name)
	}
	return tds, ex, nil
}

// computeMissing has in.Reference compute the expected outputs where the
// golden set has no case of a profile for a task: for a claim, the
// claimed profile's (the others keep the verdict of the tasks they have a
// case for); without one, every profile's, so that the results are held
// to the profile they match among all of them. A profile it cannot
// compute is recorded in ex.uncomputable, not returned; only
// cancellation is an error.
func computeMissing(ctx context.Context, in Input, tds []taskData, ex *expectations) error {
	s := in.Suite
	for i := range tds {
		td := &tds[i]
		for _, p := range s.ProfilesWith(in.Claimed) {
			if _, ok := td.expected[p]; ok || (in.Claimed != "" && p != in.Claimed) {
				continue
			}
			if ex.uncomputable[p] == nil {
				ex.uncomputable[p] = map[string]error{}
			}
			if in.Reference == nil {
				ex.uncomputable[p][td.t.Name] = fmt.Errorf("no reference engine to compute expected outputs")
				continue
			}
			e, err := s.Compute(ctx, in.Reference, td.t, p, td.inputs)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				ex.uncomputable[p][td.t.Name] = err
				continue
			}
			td.expected[p] = e
			if ex.computed[p] == nil {
				ex.computed[p] = map[string]string{}
			}
			ex.computed[p][td.t.Name] = golden.EngineName(in.Reference)
			n, _ := compareUnder(s, p, e, td.got)
			ex.count(p, td.t.Name, n)
		}
	}
	return nil
}

// chooseAgainst is the profile held to: the claim, else the profile with
// the fewest mismatches among those checked on all the tasks (the
// first in suite order on a tie), else the suite's first profile.
func chooseAgainst(s *suite.Suite, claimed string, ex *expectations, tasks int) string {
	if claimed != "" {
		return claimed
	}
	against, best := "", -1
	for _, p := range s.Profiles {
		if len(ex.counts[p]) != tasks {
			continue
		}
		n := 0
		for _, m := range ex.counts[p] {
			n += m
		}
		if best < 0 || n < best {
			best, against = n, p
		}
	}
	if against == "" {
		against = s.Profiles[0]
	}
	return against
}

// requireAgainst holds every task to against: the first task it cannot
// be checked on is a *ClaimError (with why it could not be computed),
// which makes the run invalid before any verdict.
func requireAgainst(s *suite.Suite, against string, tds []taskData, ex *expectations) error {
	for _, td := range tds {
		if _, ok := td.expected[against]; ok {
			continue
		}
		err := ex.uncomputable[against][td.t.Name]
		if err == nil {
			err = fmt.Errorf("profile %q is not a profile of suite %s", against, s.Name)
		}
		return &ClaimError{Task: td.t.Name, Profile: against, Err: err}
	}
	return nil
}

// checkComputedBy makes a valid c not valid for certification when the
// expected outputs of a task held to c.Against were computed by an engine
// other than the reference module referenceWasm names (the first such
// task is the reason).
func checkComputedBy(c *Certificate, referenceWasm string, tds []taskData, ex *expectations) {
	if want := "wasm sha256:" + referenceWasm; c.Valid {
		for _, td := range tds {
			if by := ex.computed[c.Against][td.t.Name]; by != "" && by != want {
				c.Valid, c.InvalidReason = false, fmt.Sprintf("expected outputs of task %s computed by %s, not by the reference module %s", td.t.Name, by, want)
				break
			}
		}
	}
}

// profileVerdicts is the verdict against each profile of the suite (with
// the claim's parameters, if any) over the tasks it was checked on, of
// tasks.
func profileVerdicts(s *suite.Suite, claimed string, tasks int, ex *expectations) []Profile {
	var v []Profile
	for _, p := range s.ProfilesWith(claimed) {
		pv := Profile{Profile: p, TasksTotal: tasks, Computed: len(ex.computed[p])}
		for _, n := range ex.counts[p] {
			pv.Tasks++
			pv.Mismatches += n
		}
		pv.Conforms = pv.Tasks > 0 && pv.Mismatches == 0
		v = append(v, pv)
	}
	return v
}

// holdCases appends to c.Cases one Case per task, held to c.Against:
// where its expected outputs came from, the mismatches per tensor and the
// first in.MaxMismatches decoded. It returns the tasks as the diagnosis
// reads them.
func holdCases(c *Certificate, in Input, tds []taskData, ex *expectations) ([]diagnose.Task, error) {
	s := in.Suite
	var diagTasks []diagnose.Task
	for _, td := range tds {
		cs := Case{Task: td.t.Name, Profile: c.Against, Expected: ExpectedGolden}
		want := td.expected[c.Against]
		infos := tensorInfos(want)
		params := ops.Params{}
		if by := ex.computed[c.Against][td.t.Name]; by != "" {
			cs.Case, cs.Expected, cs.ComputedBy = ComputedCase, ExpectedComputed, by
			var err error
			if params, err = s.Params(td.t, c.Against); err != nil {
				return nil, err
			}
		} else {
			gc := td.t.Cases[c.Against]
			cs.Case, infos = gc.Name, gc.Outputs
			for k, v := range gc.Params {
				params[k] = v
			}
		}
		got := results.Normalize(td.got, infos)
		cs.Mismatches, cs.Tensors = compareUnder(s, c.Against, want, got)
		for _, tv := range cs.Tensors {
			cs.Elements += tv.Elements
		}
		cs.Result = "pass"
		if cs.Mismatches > 0 {
			cs.Result = "fail"
			cs.First = firstMismatches(td.inputs, want, got, in.MaxMismatches)
		}
		c.Cases = append(c.Cases, cs)
		diagTasks = append(diagTasks, diagnose.Task{Task: td.t, Params: params, Inputs: td.inputs,
			Reference: want, Expected: td.expected, Observed: got})
	}
	return diagTasks, nil
}

// conclude sets the mode, the overall verdict and, when c does not
// conform, the diagnosis of diagTasks, then seals c.
func conclude(c *Certificate, s *suite.Suite, diagTasks []diagnose.Task) error {
	if s.NaNRelaxed(c.Against) {
		c.Mode = ModeNaNAny
	}
	c.Conforms = conformsFrom(c)
	c.Verdict = verdictLine(c)
	if !c.Conforms && len(diagTasks) > 0 {
		d, err := diagnose.Run(s, c.Against, diagTasks)
		if err != nil {
			return err
		}
		c.Diagnosis = &d
	}
	return c.seal()
}

// tensorInfos describes computed outputs the way a golden case records its
// own (the logical formats the results are read with).
func tensorInfos(ts ops.Tensors) []golden.TensorInfo {
	var v []golden.TensorInfo
	for n, t := range ts {
		v = append(v, golden.TensorInfo{Name: n, DType: string(t.DType), Logical: t.Logical, Shape: t.Shape})
	}
	return v
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
	s := boundVerdict(c)
	if c.Mode != ModeBound {
		s = bitExactVerdict(c)
	}
	if c.GoldenSet != GoldenReleased {
		s = "AGAINST AN UNRELEASED GOLDEN SET (manifest SHA-256 " + c.GoldenSHA256 + "): " + s
	}
	if !c.Valid {
		s += " [NOT VALID FOR CERTIFICATION: " + c.InvalidReason + "]"
	}
	return s
}

// bitExactVerdict is verdictLine's verdict of the profiles and exhaustive
// sweeps, with the claim.
func bitExactVerdict(c *Certificate) string {
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
		switch {
		case c.Conforms && c.Mode == ModeNaNAny:
			s = "CONFORMS UP TO NaN BITS (not bit-exact: any NaN accepted where the reference has a NaN) to claimed profile `" + c.Claimed + "`: " + s
		case c.Conforms:
			s = "CONFORMS to claimed profile `" + c.Claimed + "`: " + s
		default:
			s = "DOES NOT CONFORM to claimed profile `" + c.Claimed + "`: " + s
		}
	}
	return s
}

// ModeNaNAny is Certificate.Mode when the profile held to claims the NaN
// relaxation (suite.NaNAny): a NaN output is accepted wherever the
// reference has a NaN, whatever its bits; every other element is compared
// bit for bit. Not bit-exact, and every rendering says so.
const ModeNaNAny = "nan-any"

// compareUnder is compare, or compareNaNAny for a profile that claims the
// NaN relaxation.
func compareUnder(s *suite.Suite, p string, want, got ops.Tensors) (int, []Tensor) {
	if s.NaNRelaxed(p) {
		return compareNaNAny(want, got)
	}
	return compare(want, got)
}

// compareNaNAny is compare with a float element (F32, F16, BF16) that is a
// NaN in both want and got counted as equal, whatever the two NaNs' bits.
func compareNaNAny(want, got ops.Tensors) (int, []Tensor) {
	total, tv := compare(want, got)
	for i := range tv {
		t := &tv[i]
		if t.Layout != "" || t.Mismatches == 0 {
			continue
		}
		w, g := want[t.Name], got[t.Name]
		isNaN := nanconv.NaNTest(string(w.DType))
		if isNaN == nil {
			continue
		}
		sz := w.DType.Size()
		n := 0
		for j := 0; j+sz <= len(w.Data); j += sz {
			if string(w.Data[j:j+sz]) == string(g.Data[j:j+sz]) || (isNaN(w.Data[j:j+sz]) && isNaN(g.Data[j:j+sz])) {
				continue
			}
			n++
		}
		total -= t.Mismatches - n
		t.Mismatches = n
	}
	return total, tv
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
	cp.Signature = nil
	b, err := json.Marshal(&cp)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:]), nil
}
