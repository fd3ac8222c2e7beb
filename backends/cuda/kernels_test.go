package cuda

import (
	"strings"
	"testing"
)

// TestPTXMatchesSources fails when an embedded PTX file was not built from
// the current kernel sources with the current nvcc flags: regenerate with
// `make ptx` on a machine with nvcc and commit the PTX.
func TestPTXMatchesSources(t *testing.T) {
	for _, m := range Modules {
		t.Run(m.Name, func(t *testing.T) {
			if err := m.checkPTX(); err != nil {
				t.Fatal(err)
			}
			h, _ := m.Header()
			if !strings.HasPrefix(h.Compiler, "Cuda compilation tools") {
				t.Errorf("ptx/%s.ptx: no nvcc identification line (got %q)", m.Name, h.Compiler)
			}
		})
	}
}

// TestCheckPTXDetectsStaleSource checks that the check can fail: a header
// recorded for other sources or other flags is rejected.
func TestCheckPTXDetectsStaleSource(t *testing.T) {
	m := Modules[0]
	sum, err := m.SourceHash()
	if err != nil {
		t.Fatal(err)
	}
	if len(sum) != 64 {
		t.Fatalf("SourceHash = %q, want 64 hex digits", sum)
	}
	other := Module{Name: "nonexistent", Arch: "compute_89"}
	if err := other.checkPTX(); err == nil {
		t.Error("checkPTX accepted a module without sources or PTX")
	}
}
