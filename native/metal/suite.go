package metal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/ops"
)

// Verdict is one kernel's outcome on one check (the shape of the CUDA
// conformance certificate's verdicts).
type Verdict struct {
	Kernel string `json:"kernel"`
	// Claim is what the kernel was held to: an op with parameters.
	Claim string `json:"claim"`
	// Check is "golden" (committed golden cases the kernel claims) or
	// "declared-schedule" (golden inputs, expected outputs computed by the
	// reference under the kernel's declared schedule).
	Check string `json:"check"`
	// Reference says what the outputs were compared with.
	Reference string `json:"reference"`
	// Result is "pass" or "fail"; bit-exact, no tolerance.
	Result  string  `json:"result"`
	Inputs  uint64  `json:"inputs"`
	Seconds float64 `json:"seconds"`
	Detail  string  `json:"detail,omitempty"`
}

// SourceProvenance records which kernel source ran.
type SourceProvenance struct {
	Module       string `json:"module"`
	SourceSHA256 string `json:"source_sha256"`
	Schedule     string `json:"declared_schedule,omitempty"`
}

// GoldenProvenance records which reference data was used.
type GoldenProvenance struct {
	Suite     string `json:"suite"`
	Source    string `json:"source"`
	Generator string `json:"generator,omitempty"`
}

// Certificate is what a conformance run writes.
type Certificate struct {
	Tool     string             `json:"tool"`
	Date     string             `json:"date"`
	Device   BackendInfo        `json:"device"`
	Sources  []SourceProvenance `json:"sources"`
	Golden   GoldenProvenance   `json:"golden"`
	Verdicts []Verdict          `json:"verdicts"`
	Summary  map[string]int     `json:"summary"`
}

// claimed runs only the golden cases a Metal kernel claims, timing each
// kernel.
type claimed struct {
	Engine
	mu   sync.Mutex
	secs map[string]float64
}

var errNoKernel = errors.New("no Metal kernel claims this case")

func (c *claimed) Run(ctx context.Context, op string, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	k, ok := KernelFor(op, p)
	if !ok {
		return nil, errNoKernel
	}
	t0 := time.Now()
	out, err := c.Engine.Run(ctx, op, p, in)
	c.mu.Lock()
	c.secs[k.Name] += time.Since(t0).Seconds()
	c.mu.Unlock()
	return out, err
}

// claimOf spells a kernel's claim.
func claimOf(k Kernel) string { return k.Op + " " + k.Claim }

// RunSuite holds every kernel against the golden set s on backend b:
//
//   - "golden": every case of s that a kernel claims, outputs compared bit
//     for bit with the committed expected files;
//   - "declared-schedule": each GEMV on the inputs of the golden cases of
//     its op, compared bit for bit with the reference (ops.Run) evaluated
//     under the schedule the kernel declares (the committed GEMV cases use
//     the CUDA/llama.cpp schedules, which these kernels do not claim),
//     once per variant parameter (scale_decode for the sparse GEMV).
//
// It returns one verdict per kernel and check, sorted; an error only when
// the suite itself cannot run.
func RunSuite(ctx context.Context, b Backend, s *golden.Set) ([]Verdict, error) {
	e := Engine{B: b}
	cl := &claimed{Engine: e, secs: map[string]float64{}}
	res, err := golden.Check(ctx, cl, s, &golden.Options{Workers: 1})
	if err != nil {
		return nil, err
	}
	type agg struct {
		cases, elems int
		fails        []string
	}
	per := map[string]*agg{}
	for _, r := range res {
		if errors.Is(r.Err, errNoKernel) {
			continue
		}
		k, _ := KernelFor(r.Case.Op, r.Case.Params)
		a := per[k.Name]
		if a == nil {
			a = &agg{}
			per[k.Name] = a
		}
		a.cases++
		a.elems += r.Elements
		if !r.OK() {
			a.fails = append(a.fails, describe(r))
		}
	}
	var vs []Verdict
	for name, a := range per {
		k, _ := LookupKernel(name)
		v := Verdict{Kernel: name, Claim: claimOf(k), Check: "golden", Reference: "golden set " + s.Manifest.Suite,
			Result: "pass", Inputs: uint64(a.elems), Seconds: cl.secs[name], Detail: fmt.Sprintf("%d cases", a.cases)}
		if len(a.fails) > 0 {
			v.Result, v.Detail = "fail", fmt.Sprintf("%d of %d cases differ; first: %s", len(a.fails), a.cases, a.fails[0])
		}
		vs = append(vs, v)
	}
	for _, k := range Kernels {
		if k.Schedule == nil {
			continue
		}
		v, err := declaredCheck(ctx, e, k, s)
		if err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
	sort.SliceStable(vs, func(i, j int) bool {
		if vs[i].Check != vs[j].Check {
			return vs[i].Check < vs[j].Check
		}
		return vs[i].Kernel < vs[j].Kernel
	})
	return vs, nil
}

func describe(r golden.Result) string {
	if r.Err != nil {
		return fmt.Sprintf("case %s (%s %v): %v", r.Case.Name, r.Case.Op, r.Case.Params, r.Err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "case %s (%s %v):", r.Case.Name, r.Case.Op, r.Case.Params)
	for _, d := range r.Diffs {
		fmt.Fprintf(&b, " %s: %s;", d.Tensor, d.Problem)
	}
	return b.String()
}

// declaredVariants are the parameter sets each GEMV is checked under, on
// top of its declared schedule.
var declaredVariants = map[string][]ops.Params{
	"gemv.sparse_fp4": {{"scale_decode": "e4m3fn"}, {"scale_decode": "dgx_lut"}},
	"gemv.mxfp4_q8_1": {{}},
}

// scheduleNote is the verdict detail of a GEMV that differs from its
// declared schedule.
const scheduleNote = "on an Apple GPU a difference in a GEMV alone may be simd_sum's undocumented reduction order " +
	"(declared here as a butterfly); refimpl gemv.exact's error bound is then the fallback verdict"

func declaredCheck(ctx context.Context, e Engine, k Kernel, s *golden.Set) (Verdict, error) {
	var c golden.CaseFile
	found := false
	for _, cf := range s.Manifest.Cases {
		if cf.Op == k.Op {
			c, found = cf, true
			break
		}
	}
	spec := k.Schedule.String()
	v := Verdict{Kernel: k.Name, Claim: claimOf(k), Check: "declared-schedule",
		Reference: "refimpl ops.Run " + k.Op + " schedule=" + spec, Result: "pass"}
	if !found {
		v.Result, v.Detail = "fail", "the golden set has no case of "+k.Op+" to take inputs from"
		return v, nil
	}
	in, err := s.Inputs(c)
	if err != nil {
		return v, err
	}
	v.Reference += " on the inputs of golden case " + c.Name
	t0 := time.Now()
	var fails, bounds []string
	for _, variant := range declaredVariants[k.Op] {
		p := ops.Params{"schedule": spec}
		for key, val := range variant {
			p[key] = val
		}
		want, err := ops.Run(k.Op, p, in)
		if err != nil {
			return v, fmt.Errorf("metal: reference %s %v: %w", k.Op, p, err)
		}
		for _, t := range want {
			v.Inputs += uint64(t.Len())
		}
		got, err := e.Run(ctx, k.Op, p, in)
		if err != nil {
			fails = append(fails, fmt.Sprintf("%v: %v", variant, err))
			continue
		}
		diffs := golden.DiffTensors(want, got)
		for _, d := range diffs {
			fails = append(fails, fmt.Sprintf("%v: %s: %s", variant, d.Tensor, d.Problem))
		}
		if len(diffs) > 0 {
			// The fallback verdict: within the bound of every order?
			br, err := GEMVBound(k.Op, p, in, got["y"])
			if err != nil {
				bounds = append(bounds, err.Error())
			} else {
				bounds = append(bounds, fmt.Sprintf("%v: %d of %d outputs within refimpl/gemv's bound for any float32 summation order (%d non-finite)%s",
					variant, br.Within, br.Outputs, br.NonFinite, firstOf(br.First)))
			}
		}
	}
	v.Seconds = time.Since(t0).Seconds()
	v.Detail = fmt.Sprintf("%d variants (%s)", len(declaredVariants[k.Op]), variantString(declaredVariants[k.Op]))
	if len(fails) > 0 {
		v.Result = "fail"
		v.Detail = fmt.Sprintf("%s; first: %s; %s", v.Detail, fails[0], scheduleNote)
		if len(bounds) > 0 {
			v.Detail += "; fallback: " + strings.Join(bounds, "; ")
		}
	}
	return v, nil
}

func firstOf(s string) string {
	if s == "" {
		return ""
	}
	return "; first outside: " + s
}

func variantString(vs []ops.Params) string {
	var s []string
	for _, v := range vs {
		if len(v) == 0 {
			s = append(s, "as declared")
			continue
		}
		s = append(s, paramString(v))
	}
	return strings.Join(s, ", ")
}

// NewCertificate fills a certificate for a run on b with golden set s.
func NewCertificate(tool string, b Backend, s *golden.Set, source string, vs []Verdict) Certificate {
	c := Certificate{Tool: tool, Date: time.Now().UTC().Format(time.RFC3339), Device: b.Describe(),
		Golden:   GoldenProvenance{Suite: s.Manifest.Suite, Source: source, Generator: s.Manifest.Generator},
		Verdicts: vs, Summary: map[string]int{}}
	for _, m := range Modules {
		h, _ := m.SourceHash()
		sp := SourceProvenance{Module: m.Name, SourceSHA256: h}
		if sch, ok, _ := m.DeclaredSchedule(); ok {
			sp.Schedule = sch.String()
		}
		c.Sources = append(c.Sources, sp)
	}
	for _, v := range vs {
		c.Summary[v.Result]++
	}
	return c
}

// Write writes certificate.json and certificate.md into dir.
func (c Certificate) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	j, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "certificate.json"), append(j, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "certificate.md"), []byte(c.Markdown()), 0o644)
}

// Markdown renders the certificate for people.
func (c Certificate) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# bitexact Metal certificate\n\n")
	fmt.Fprintf(&b, "- date: %s\n- tool: %s\n- executed on: %s (%s)\n", c.Date, c.Tool, c.Device.Name, c.Device.Kind)
	fmt.Fprintf(&b, "- **what a pass shows**: %s\n", c.Device.Verifies)
	keys := make([]string, 0, len(c.Device.Details))
	for k := range c.Device.Details {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "- %s: %s\n", k, c.Device.Details[k])
	}
	fmt.Fprintf(&b, "- golden suite: %s (%s", c.Golden.Suite, c.Golden.Source)
	if c.Golden.Generator != "" {
		fmt.Fprintf(&b, ", generator %s", c.Golden.Generator)
	}
	fmt.Fprintf(&b, ")\n- summary: %v\n\n## Sources\n\n| module | source sha256 | declared schedule |\n|---|---|---|\n", c.Summary)
	for _, m := range c.Sources {
		fmt.Fprintf(&b, "| %s | %.16s… | %s |\n", m.Module, m.SourceSHA256, m.Schedule)
	}
	fmt.Fprintf(&b, "\n## Verdicts\n\n| check | kernel | claim | reference | result | inputs | seconds | detail |\n|---|---|---|---|---|---|---|---|\n")
	for _, v := range c.Verdicts {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | **%s** | %d | %.2f | %s |\n", v.Check, v.Kernel, v.Claim, v.Reference, v.Result,
			v.Inputs, v.Seconds, strings.ReplaceAll(v.Detail, "|", "\\|"))
	}
	return b.String()
}
