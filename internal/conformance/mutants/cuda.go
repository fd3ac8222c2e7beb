package mutants

import (
	"fmt"
	"strings"
)

// CUDAMutant is a deliberate bug in one of bitexact's own CUDA kernels,
// written as a textual patch of the kernel's current source
// (backends/cuda/kernels): Find must occur exactly once in File, and the
// mutant is that source with Find replaced by Replace, compiled to PTX as
// the embedded module is and run in its place. Patching the real source
// keeps the mutant in step with the kernel: when the kernel changes so
// that Find no longer occurs, the catalog test fails instead of testing a
// stale copy.
type CUDAMutant struct {
	Name string
	// Module is the backends/cuda module (kernels/<Module>.cu) rebuilt from
	// the patched sources and loaded in place of the embedded PTX.
	Module string
	// File is the source patched, relative to backends/cuda/kernels: the
	// module's own .cu when empty, or a shared header (e2m1.cuh) that the
	// module includes.
	File string
	// Kernel is the backends/cuda Kernels entry that is certified: its
	// claim's op is the suite's op.
	Kernel string
	// Suite and Claim are as for Mutant: the vendor suite, and the
	// profile the unpatched kernel conforms to.
	Suite, Claim  string
	Find, Replace string
	// Class is the diagnosis class that names the bug, or "" when it is
	// outside the diagnosis library.
	Class string
	Doc   string
	// Survives, when set, says why the golden inputs cannot tell this
	// mutant from the kernel; the test then requires that it survives.
	Survives string
}

// Source is the kernel source file the mutant patches, relative to
// backends/cuda/kernels.
func (m CUDAMutant) Source() string {
	if m.File != "" {
		return m.File
	}
	return m.Module + ".cu"
}

// Apply returns src with the mutant's patch applied. It fails unless Find
// occurs exactly once in src and Replace differs from it.
func (m CUDAMutant) Apply(src string) (string, error) {
	if m.Find == "" || m.Find == m.Replace {
		return "", fmt.Errorf("mutant %s: empty patch", m.Name)
	}
	switch n := strings.Count(src, m.Find); n {
	case 1:
		return strings.Replace(src, m.Find, m.Replace, 1), nil
	case 0:
		return "", fmt.Errorf("mutant %s: the text to replace no longer occurs in %s (the kernel changed: update the mutant)", m.Name, m.Source())
	default:
		return "", fmt.Errorf("mutant %s: the text to replace occurs %d times in %s, want once (lengthen Find)", m.Name, n, m.Source())
	}
}

// cudaSets are the CUDA mutants, one slice per group of kernel families,
// each in its own file (cuda_<group>.go), so that a group is added by
// appending its slice here.
var cudaSets = [][]CUDAMutant{
	cudaConversionMutants, // e2m1, fp8
	cudaBlockMutants,      // nvfp4, mxfp4
	cudaPackingMutants,    // awq, sparse24, gemv_mxfp4
}

// CUDACatalog lists the CUDA kernel mutants.
func CUDACatalog() []CUDAMutant {
	var all []CUDAMutant
	for _, s := range cudaSets {
		all = append(all, s...)
	}
	return all
}
