package certificate

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/bitexact/bitexact/internal/golden/safeio"
)

// GateFormat names the layout of a Gate record.
const GateFormat = "bitexact-gate/1"

// Results of a Verdict.
const (
	Pass = "pass"
	Fail = "fail"
	// ExpectedDifference is a third-party kernel held to a profile it does
	// not claim that differs from it exactly where it is documented to.
	ExpectedDifference = "expected-difference"
)

// Verdict is one kernel's outcome on one check of a gate run
// (gate): the same fields whichever backend ran the kernel.
type Verdict struct {
	Kernel string `json:"kernel"`
	// Claim is what the kernel was held to: a conversion, or an op with
	// parameters.
	Claim string `json:"claim"`
	// Check names the runner: "golden", "exhaustive", "random",
	// "declared-schedule", "table", "third-party" or "suite".
	Check string `json:"check"`
	// Reference says what the outputs were compared with.
	Reference string `json:"reference"`
	// Result is Pass, Fail or ExpectedDifference; bit-exact, no tolerance.
	Result string `json:"result"`
	// Inputs counts the inputs swept or the output elements compared.
	Inputs  uint64  `json:"inputs"`
	Seconds float64 `json:"seconds"`
	Detail  string  `json:"detail,omitempty"`
}

// Source records which kernel source or binary module ran.
type Source struct {
	Module       string `json:"module"`
	SourceSHA256 string `json:"source_sha256"`
	// Arch and Compiler describe a compiled module (CUDA PTX).
	Arch     string `json:"arch,omitempty"`
	Compiler string `json:"compiler,omitempty"`
	// Loaded is false for a module the device could not load (its kernels
	// then have no verdict); nil where every module loads.
	Loaded *bool `json:"loaded,omitempty"`
	// Schedule is the float schedule the module declares, if any.
	Schedule string `json:"declared_schedule,omitempty"`
}

// GateGolden records which reference data a gate run used.
type GateGolden struct {
	Suite     string `json:"suite"`
	Source    string `json:"source"`
	Generator string `json:"generator,omitempty"`
	// Digests says where the exhaustive sweeps' expected digests come from.
	Digests string `json:"exhaustive_digests,omitempty"`
}

// Gate is the record of one gate run: the kernels of one backend held to
// the reference by the runners of gate, one Verdict per kernel
// and check. Where a check certifies a kernel on a vendor suite, its
// Certificate is the one `bitexact certify` writes; Gate gathers the
// verdicts. Add is safe for concurrent use.
type Gate struct {
	Format string `json:"format"`
	Tool   string `json:"tool"`
	Date   string `json:"date"`
	// Backend is what executed the kernels ("cuda", "metal-gpu",
	// "cpu-emulation").
	Backend string `json:"backend"`
	// Device names it (GPU, or compiler and host).
	Device string `json:"device"`
	// Verifies says in one sentence what a pass on this backend shows.
	Verifies string            `json:"verifies,omitempty"`
	Details  map[string]string `json:"details,omitempty"`
	Sources  []Source          `json:"sources"`
	Golden   GateGolden        `json:"golden"`
	Verdicts []Verdict         `json:"verdicts"`
	Summary  map[string]int    `json:"summary"`

	mu sync.Mutex
}

// Add records verdicts.
func (g *Gate) Add(vs ...Verdict) {
	g.mu.Lock()
	g.Verdicts = append(g.Verdicts, vs...)
	g.mu.Unlock()
}

// Finish sorts the verdicts by check and kernel and counts them by result.
func (g *Gate) Finish() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.Format = GateFormat
	sort.SliceStable(g.Verdicts, func(i, j int) bool {
		if g.Verdicts[i].Check != g.Verdicts[j].Check {
			return g.Verdicts[i].Check < g.Verdicts[j].Check
		}
		return g.Verdicts[i].Kernel < g.Verdicts[j].Kernel
	})
	g.Summary = map[string]int{}
	for _, v := range g.Verdicts {
		g.Summary[v.Result]++
	}
}

// JSON is the record as written to gate.json (after Finish).
func (g *Gate) JSON() ([]byte, error) {
	g.Finish()
	g.mu.Lock()
	defer g.mu.Unlock()
	b, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Markdown renders the record for people (after Finish).
func (g *Gate) Markdown() []byte {
	g.Finish()
	g.mu.Lock()
	defer g.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "# bitexact gate: %s\n\n", g.Backend)
	fmt.Fprintf(&b, "- date: %s\n- tool: %s\n- executed on: %s\n", g.Date, g.Tool, mdText(g.Device))
	if g.Verifies != "" {
		fmt.Fprintf(&b, "- **what a pass shows**: %s\n", mdText(g.Verifies))
	}
	keys := make([]string, 0, len(g.Details))
	for k := range g.Details {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "- %s: %s\n", k, mdText(g.Details[k]))
	}
	fmt.Fprintf(&b, "- golden suite: %s (%s", g.Golden.Suite, mdText(g.Golden.Source))
	if g.Golden.Generator != "" {
		fmt.Fprintf(&b, ", generator %s", g.Golden.Generator)
	}
	b.WriteString(")\n")
	if g.Golden.Digests != "" {
		fmt.Fprintf(&b, "- exhaustive digests: %s\n", mdText(g.Golden.Digests))
	}
	results := make([]string, 0, len(g.Summary))
	for r, n := range g.Summary {
		results = append(results, fmt.Sprintf("%s %d", r, n))
	}
	sort.Strings(results)
	fmt.Fprintf(&b, "- summary: %s\n\n## Sources\n\n| module | source sha256 | arch | compiler | loaded | declared schedule |\n|---|---|---|---|---|---|\n", strings.Join(results, ", "))
	for _, s := range g.Sources {
		loaded := "yes"
		if s.Loaded != nil && !*s.Loaded {
			loaded = "no"
		}
		fmt.Fprintf(&b, "| %s | %.16s… | %s | %s | %s | %s |\n", s.Module, s.SourceSHA256, s.Arch, mdText(s.Compiler), loaded, s.Schedule)
	}
	b.WriteString("\n## Verdicts\n\n| check | kernel | claim | reference | result | inputs | seconds | detail |\n|---|---|---|---|---|---|---|---|\n")
	for _, v := range g.Verdicts {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | **%s** | %d | %.2f | %s |\n", v.Check, v.Kernel, mdText(v.Claim), mdText(v.Reference),
			v.Result, v.Inputs, v.Seconds, mdText(v.Detail))
	}
	return []byte(b.String())
}

// WriteDir writes gate.json and gate.md into dir: a gate record, not a
// certificate (certificate.json is always a Certificate, which verify-cert
// reads).
func (g *Gate) WriteDir(dir string) error {
	j, err := g.JSON()
	if err != nil {
		return err
	}
	d, err := safeio.OpenOutDir(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.WriteFile("gate.json", j, 0o644); err != nil {
		return err
	}
	return d.WriteFile("gate.md", g.Markdown(), 0o644)
}
