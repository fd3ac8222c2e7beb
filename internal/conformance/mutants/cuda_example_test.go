package mutants_test

import (
	"fmt"

	"github.com/bitexact/bitexact/internal/conformance/mutants"
)

// A CUDA mutant is a patch of a kernel source; it applies only while the
// text it replaces occurs exactly once.
func ExampleCUDAMutant_Apply() {
	m := mutants.CUDAMutant{Name: "one-tie-up", Module: "e2m1", File: "e2m1.cuh",
		Find: "(u32)(ax > 2.5f)", Replace: "(u32)(ax >= 2.5f)"}
	out, err := m.Apply("mag += (u32)(ax > 2.5f);")
	fmt.Println(out, err)
	_, err = m.Apply("mag += (u32)(ax > 5.0f);")
	fmt.Println(err)
	// Output:
	// mag += (u32)(ax >= 2.5f); <nil>
	// mutant one-tie-up: the text to replace no longer occurs in e2m1.cuh (the kernel changed: update the mutant)
}
