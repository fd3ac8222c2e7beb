//go:build cuda

package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/bitexact/bitexact/native/cuda"
)

// Verdict is one kernel's outcome on one check.
type Verdict struct {
	Kernel string `json:"kernel"`
	// Claim is what the kernel was held to: a conversion or an op with
	// parameters.
	Claim string `json:"claim"`
	// Check is "golden", "exhaustive", "table" or "third-party".
	Check string `json:"check"`
	// Reference says what the outputs were compared with.
	Reference string `json:"reference"`
	// Result is "pass", "fail", or "expected-difference" (a third-party
	// kernel that differs from a profile it does not claim exactly where
	// it is documented to).
	Result  string  `json:"result"`
	Inputs  uint64  `json:"inputs"`
	Seconds float64 `json:"seconds"`
	Detail  string  `json:"detail,omitempty"`
}

// Certificate is what a conformance run writes.
type Certificate struct {
	Tool     string                 `json:"tool"`
	Date     string                 `json:"date"`
	Device   cuda.Info              `json:"device"`
	PTX      []ModuleProvenance     `json:"ptx"`
	Golden   GoldenProvenance       `json:"golden"`
	Verdicts []Verdict              `json:"verdicts"`
	Summary  map[string]int         `json:"summary"`
	Extra    map[string]interface{} `json:"extra,omitempty"`
}

// ModuleProvenance records which PTX ran.
type ModuleProvenance struct {
	Module       string `json:"module"`
	Arch         string `json:"arch"`
	SourceSHA256 string `json:"source_sha256"`
	Compiler     string `json:"compiler"`
	Loaded       bool   `json:"loaded"`
}

// GoldenProvenance records which reference data was used.
type GoldenProvenance struct {
	Suite     string `json:"suite"`
	Source    string `json:"source"`
	Generator string `json:"generator,omitempty"`
	Digests   string `json:"exhaustive_digests"`
}

var (
	certMu   sync.Mutex
	verdicts []Verdict
)

func record(v Verdict) {
	certMu.Lock()
	verdicts = append(verdicts, v)
	certMu.Unlock()
}

func writeCertificate(dir string, c Certificate) error {
	certMu.Lock()
	c.Verdicts = append([]Verdict(nil), verdicts...)
	certMu.Unlock()
	sort.SliceStable(c.Verdicts, func(i, j int) bool {
		if c.Verdicts[i].Check != c.Verdicts[j].Check {
			return c.Verdicts[i].Check < c.Verdicts[j].Check
		}
		return c.Verdicts[i].Kernel < c.Verdicts[j].Kernel
	})
	c.Summary = map[string]int{}
	for _, v := range c.Verdicts {
		c.Summary[v.Result]++
	}
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
	return os.WriteFile(filepath.Join(dir, "certificate.md"), []byte(markdown(c)), 0o644)
}

func markdown(c Certificate) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# bitexact CUDA certificate\n\n")
	fmt.Fprintf(&b, "- date: %s\n- GPU: %s (sm %s, %d SMs, %.1f GiB)\n- driver: %s\n- driver CUDA version: %d.%d\n",
		c.Date, c.Device.Name, c.Device.CC, c.Device.SMs, float64(c.Device.MemBytes)/(1<<30), c.Device.Driver,
		c.Device.DriverAPI/1000, c.Device.DriverAPI%1000/10)
	fmt.Fprintf(&b, "- golden suite: %s (%s", c.Golden.Suite, c.Golden.Source)
	if c.Golden.Generator != "" {
		fmt.Fprintf(&b, ", generator %s", c.Golden.Generator)
	}
	fmt.Fprintf(&b, ")\n- exhaustive digests: %s\n", c.Golden.Digests)
	fmt.Fprintf(&b, "- summary: %v\n\n## PTX\n\n| module | arch | source sha256 | compiler | loaded |\n|---|---|---|---|---|\n", c.Summary)
	for _, m := range c.PTX {
		fmt.Fprintf(&b, "| %s | %s | %.16s… | %s | %v |\n", m.Module, m.Arch, m.SourceSHA256, m.Compiler, m.Loaded)
	}
	fmt.Fprintf(&b, "\n## Verdicts\n\n| check | kernel | claim | reference | result | inputs | seconds | detail |\n|---|---|---|---|---|---|---|---|\n")
	for _, v := range c.Verdicts {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | **%s** | %d | %.2f | %s |\n", v.Check, v.Kernel, v.Claim, v.Reference, v.Result, v.Inputs, v.Seconds,
			strings.ReplaceAll(v.Detail, "|", "\\|"))
	}
	return b.String()
}

func now() string { return time.Now().UTC().Format(time.RFC3339) }
