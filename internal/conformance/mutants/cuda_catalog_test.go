package mutants

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bitexact/bitexact/backends/cuda"
	"github.com/bitexact/bitexact/conformance/diagnose"
	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
)

// kernelsDir is backends/cuda/kernels; go test runs in the package directory.
var kernelsDir = filepath.Join("..", "..", "..", "backends", "cuda", "kernels")

// kernelSources reads every kernel source file (*.cu, *.cuh) by name.
func kernelSources(t testing.TB) map[string]string {
	t.Helper()
	srcs := map[string]string{}
	for _, pat := range []string{"*.cu", "*.cuh"} {
		names, err := filepath.Glob(filepath.Join(kernelsDir, pat))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			b, err := os.ReadFile(n)
			if err != nil {
				t.Fatal(err)
			}
			srcs[filepath.Base(n)] = string(b)
		}
	}
	if len(srcs) == 0 {
		t.Fatalf("no kernel sources under %s", kernelsDir)
	}
	return srcs
}

// TestCUDACatalog checks, without a GPU or nvcc, that every CUDA mutant
// still applies to the current kernel sources (its Find occurs exactly
// once) and names things that exist: a module whose sources include the
// patched file, a kernel that is an entry point of the module's embedded
// PTX (the Kernels table itself is behind the cuda build tag; the PTX is
// embedded in every build and TestPTXMatchesSources keeps it in step with
// the sources), a suite and claimed profile of the golden set, and a
// diagnosis class the library can produce for that suite.
func TestCUDACatalog(t *testing.T) {
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	srcs := kernelSources(t)
	cat := CUDACatalog()
	if len(cat) < 12 {
		t.Fatalf("CUDA catalog has %d mutants, want at least 12", len(cat))
	}
	names := map[string]bool{}
	for _, m := range cat {
		if names[m.Name] {
			t.Fatalf("duplicate CUDA mutant %s", m.Name)
		}
		names[m.Name] = true
		t.Run(m.Name, func(t *testing.T) {
			mod, err := cuda.LookupModule(m.Module)
			if err != nil {
				t.Fatal(err)
			}
			deps := map[string]bool{}
			for _, f := range mod.Sources() {
				deps[strings.TrimPrefix(f, "kernels/")] = true
			}
			if !deps[m.Source()] {
				t.Errorf("module %s is not built from %s (its sources: %v)", m.Module, m.Source(), mod.Sources())
			}
			src, ok := srcs[m.Source()]
			if !ok {
				t.Fatalf("no kernel source %s", m.Source())
			}
			patched, err := m.Apply(src)
			if err != nil {
				t.Fatal(err)
			}
			if patched == src {
				t.Error("the patch leaves the source unchanged")
			}
			ptx, err := mod.PTX()
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(ptx, ".entry "+m.Kernel+"(") {
				t.Errorf("kernel %s is not an entry point of module %s", m.Kernel, m.Module)
			}
			s, err := suite.Resolve(set, m.Suite)
			if err != nil {
				t.Fatal(err)
			}
			if !s.HasProfile(m.Claim) {
				t.Fatalf("suite %s has no profile %s (profiles: %v)", m.Suite, m.Claim, s.Profiles)
			}
			if m.Class != "" {
				classes := diagnose.Classes(s, m.Claim)
				if i := sort.SearchStrings(classes, m.Class); i == len(classes) || classes[i] != m.Class {
					t.Errorf("class %s is not one the diagnosis of suite %s can name (classes: %v)", m.Class, m.Suite, classes)
				}
			}
		})
	}
}

// TestApplyRejectsStalePatches: a patch whose text is gone, or occurs
// twice, is an error naming the mutant, never a silent no-op.
func TestApplyRejectsStalePatches(t *testing.T) {
	m := CUDAMutant{Name: "m", Module: "e2m1", Find: "a > b", Replace: "a >= b"}
	for _, c := range []struct {
		name, src, want string
	}{
		{"absent", "x = a < b;", "no longer occurs in e2m1.cu"},
		{"twice", "x = a > b; y = a > b;", "occurs 2 times"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := m.Apply(c.src); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "mutant m") {
				t.Errorf("Apply: err %v, want one containing %q", err, c.want)
			}
		})
	}
	got, err := m.Apply("x = a > b;")
	if err != nil || got != "x = a >= b;" {
		t.Errorf("Apply = %q, %v; want %q", got, err, "x = a >= b;")
	}
	if _, err := (CUDAMutant{Name: "m", Find: "a", Replace: "a"}).Apply("a"); err == nil {
		t.Error("Apply accepted a patch that changes nothing")
	}
}

// findNVCC returns the nvcc to compile mutants with: $NVCC, CUDA's default
// install path, or nvcc on PATH; "" when there is none.
func findNVCC() string {
	if p := os.Getenv("NVCC"); p != "" {
		return p
	}
	if _, err := os.Stat("/usr/local/cuda/bin/nvcc"); err == nil {
		return "/usr/local/cuda/bin/nvcc"
	}
	if p, err := exec.LookPath("nvcc"); err == nil {
		return p
	}
	return ""
}

// ptxJob is one module to compile: the unpatched sources (mutant nil) or
// one mutant's.
type ptxJob struct {
	module cuda.Module
	mutant *CUDAMutant
	ptx    []byte
	err    error
}

func (j *ptxJob) name() string {
	if j.mutant == nil {
		return "baseline-" + j.module.Name
	}
	return j.mutant.Name
}

// buildPTX writes the kernel sources, the job's mutant applied, into dir
// and compiles the module exactly as genptx.sh does: cuda.NVCCFlags and
// the module's -arch.
func (j *ptxJob) build(ctx context.Context, nvcc, dir string, srcs map[string]string) {
	files := map[string]string{}
	for n, s := range srcs {
		files[n] = s
	}
	if m := j.mutant; m != nil {
		p, err := m.Apply(srcs[m.Source()])
		if err != nil {
			j.err = err
			return
		}
		files[m.Source()] = p
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		j.err = err
		return
	}
	for n, s := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(s), 0o644); err != nil {
			j.err = err
			return
		}
	}
	out := filepath.Join(dir, j.module.Name+".ptx")
	args := append(strings.Fields(cuda.NVCCFlags), "-arch="+j.module.Arch, "-I"+dir, "-o", out, filepath.Join(dir, j.module.Name+".cu"))
	cmd := exec.CommandContext(ctx, nvcc, args...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		j.err = fmt.Errorf("%s: %s %s: %v\n%s", j.name(), nvcc, strings.Join(args, " "), err, msg)
		return
	}
	j.ptx, j.err = os.ReadFile(out)
}

// buildMutants compiles every mutant of cat and the unpatched sources of
// every module they touch, runtime.NumCPU() at a time. It fails the test
// on any compile error, and on a mutant whose PTX equals its module's
// unpatched PTX (a patch the compiler erases is not a mutant of the
// kernel). It returns the baseline PTX by module and each mutant's PTX.
func buildMutants(t *testing.T, nvcc string, cat []CUDAMutant) (baseline map[string][]byte, mutant map[string][]byte) {
	t.Helper()
	srcs := kernelSources(t)
	var jobs []*ptxJob
	seen := map[string]bool{}
	for i := range cat {
		m := &cat[i]
		mod, err := cuda.LookupModule(m.Module)
		if err != nil {
			t.Fatal(err)
		}
		if !seen[m.Module] {
			seen[m.Module] = true
			jobs = append(jobs, &ptxJob{module: mod})
		}
		jobs = append(jobs, &ptxJob{module: mod, mutant: m})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	root := t.TempDir()
	t0 := time.Now()
	sem := make(chan struct{}, runtime.NumCPU())
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			j.build(ctx, nvcc, filepath.Join(root, j.name()), srcs)
		}()
	}
	wg.Wait()
	t.Logf("compiled %d modules (%d mutants) with %s in %v", len(jobs), len(cat), nvcc, time.Since(t0).Round(time.Millisecond))
	baseline, mutant = map[string][]byte{}, map[string][]byte{}
	for _, j := range jobs {
		if j.err != nil {
			t.Errorf("%v", j.err)
			continue
		}
		if j.mutant == nil {
			baseline[j.module.Name] = j.ptx
		} else {
			mutant[j.mutant.Name] = j.ptx
		}
	}
	for _, m := range cat {
		if b, p := baseline[m.Module], mutant[m.Name]; b != nil && p != nil && bytes.Equal(b, p) {
			t.Errorf("mutant %s compiles to the same PTX as the unpatched module %s", m.Name, m.Module)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return baseline, mutant
}

// TestCUDAMutantsCompile compiles every CUDA mutant where nvcc is
// installed (no GPU needed); it is skipped elsewhere and under -short.
func TestCUDAMutantsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("compiling CUDA mutants: skipped under -short")
	}
	nvcc := findNVCC()
	if nvcc == "" {
		t.Skip("no nvcc ($NVCC, /usr/local/cuda/bin/nvcc or PATH): CUDA mutants not compiled")
	}
	buildMutants(t, nvcc, CUDACatalog())
}
