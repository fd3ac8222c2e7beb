//go:build cuda

package mutants

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bitexact/bitexact/backends/cuda"
	"github.com/bitexact/bitexact/conformance/certificate"
	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/gate"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/ops"
)

// onDevice is a kernel on the GPU certified on a suite: its outputs come
// from the CUDA gate engine, whatever PTX is loaded for its module, and
// gate.Suite runs it on every task and builds the certificate, the code
// that certifies third-party PTX (backends/ptxabi) and bitexacttest's
// kernels; the certificate is built as for the Go mutants and `bitexact
// certify`.
type onDevice struct {
	e                      gate.Engine
	k                      gate.Kernel
	name, suiteName, claim string
}

// certifyOverridden loads ptx in place of module, certifies the kernel and
// restores the embedded module.
func certifyOverridden(t *testing.T, ctx context.Context, dev *cuda.Device, set *golden.Set, module string, ptx []byte, m onDevice) *certificate.Certificate {
	t.Helper()
	restore, err := dev.Override(ctx, module, ptx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := restore(); err != nil {
			t.Fatalf("restoring module %s: %v", module, err)
		}
	}()
	s, err := suite.Resolve(set, m.suiteName)
	if err != nil {
		t.Fatal(err)
	}
	c, err := gate.Suite(ctx, gate.SuiteOptions{Set: set, Suite: s, Profile: m.claim,
		Certificate: certificate.Input{Backend: "cuda", Implementation: m.name}},
		func(ctx context.Context, task gate.Task) (ops.Tensors, error) {
			out, err := m.e.RunKernel(ctx, m.k, task.Params, task.Inputs)
			if err != nil {
				return nil, fmt.Errorf("%s on task %s: %w", m.name, task.Name, err)
			}
			return out, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func classesOf(c *certificate.Certificate) string {
	if c.Diagnosis == nil {
		return "-"
	}
	if !c.Diagnosis.Explained {
		return "unexplained"
	}
	var got []string
	for _, cl := range c.Diagnosis.Classes {
		got = append(got, cl.Class)
	}
	return strings.Join(got, " ")
}

// TestCUDAMutants compiles every CUDA mutant with nvcc (the flags and
// -arch of the embedded module), loads it in place of its module on the
// GPU and certifies the kernel on its suite: certify must reject each
// mutant and its diagnosis must name the mutant's class (or, for a bug
// outside the library, explain nothing); a documented survivor must
// survive. The unpatched sources, compiled by the same nvcc and loaded the
// same way, must conform first, so that a rejection is the patch's doing
// and not the harness's or the compiler's.
func TestCUDAMutants(t *testing.T) {
	nvcc := findNVCC()
	if nvcc == "" {
		t.Skip("no nvcc ($NVCC, /usr/local/cuda/bin/nvcc or PATH): CUDA mutants need the compiler on the device machine")
	}
	dev, err := cuda.Open(0)
	if err != nil {
		t.Skipf("no CUDA device: %v", err)
	}
	defer dev.Close()
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	cat := CUDACatalog()
	e := cuda.NewEngine(dev)
	kernels := map[string]gate.Kernel{}
	for _, m := range cat {
		k, err := e.Lookup(m.Kernel)
		if err != nil {
			t.Fatalf("mutant %s: %v", m.Name, err)
		}
		s, err := suite.Resolve(set, m.Suite)
		if err != nil {
			t.Fatal(err)
		}
		if k.Module != m.Module || k.Op != s.Op {
			t.Fatalf("mutant %s: kernel %s is op %s of module %s, the mutant says module %s and suite %s (op %s)",
				m.Name, k.Name, k.Op, k.Module, m.Module, m.Suite, s.Op)
		}
		if !dev.Loaded(m.Module) {
			t.Fatalf("mutant %s: module %s is not loaded on this GPU (sm_%d)", m.Name, m.Module, dev.CC())
		}
		kernels[m.Kernel] = k
	}
	baseline, ptx := buildMutants(t, nvcc, cat)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	t0 := time.Now()
	checked := map[string]bool{}
	for _, m := range cat {
		key := m.Kernel + " " + m.Suite + " " + m.Claim
		if checked[key] {
			continue
		}
		checked[key] = true
		c := certifyOverridden(t, ctx, dev, set, m.Module, baseline[m.Module], onDevice{e, kernels[m.Kernel], "unpatched " + m.Kernel, m.Suite, m.Claim})
		if !c.Conforms {
			t.Fatalf("unpatched %s (module %s compiled by %s) does not conform to %s on suite %s: %s",
				m.Kernel, m.Module, nvcc, m.Claim, m.Suite, c.Verdict)
		}
		t.Logf("unpatched %s conforms to %s on suite %s", m.Kernel, m.Claim, m.Suite)
	}

	killed, diagnosable, diagnosed := 0, 0, 0
	var table []string
	for _, m := range cat {
		t.Run(m.Name, func(t *testing.T) {
			c := certifyOverridden(t, ctx, dev, set, m.Module, ptx[m.Name], onDevice{e, kernels[m.Kernel], "cuda mutant " + m.Name, m.Suite, m.Claim})
			k, d := judgeHint(t, c, m.Class, m.Survives, "")
			result := "survived"
			if k {
				killed++
				result = "killed"
				if m.Class != "" {
					diagnosable++
				}
			}
			if d {
				diagnosed++
			}
			want := m.Class
			if want == "" {
				want = "(outside the library)"
			}
			line := fmt.Sprintf("%-34s %-8s want %-40s got %s", m.Name, result, want, classesOf(c))
			t.Log(line)
			table = append(table, line)
		})
	}
	t.Logf("CUDA mutants, certified on the GPU in %v:\n%s", time.Since(t0).Round(time.Millisecond), strings.Join(table, "\n"))
	t.Logf("CUDA mutants: %d; killed %d (%.0f%%); diagnosed %d of %d with a class in the library (%.0f%%)",
		len(cat), killed, 100*float64(killed)/float64(len(cat)), diagnosed, diagnosable, 100*float64(diagnosed)/float64(max(diagnosable, 1)))
}
