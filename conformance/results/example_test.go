package results_test

import (
	"fmt"
	"os"

	"github.com/bitexact/bitexact/conformance/results"
	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// A results directory with the wrong shape for one task is refused with
// the file and tensor named.
func ExampleRead() {
	set, _ := golden.Default()
	s, _ := suite.Resolve(set, "e4m3")
	dir, _ := os.MkdirTemp("", "results")
	defer os.RemoveAll(dir)
	out := map[string]ops.Tensors{}
	for _, t := range s.Tasks {
		out[t.Name] = ops.Tensors{"codes": tensor.FromU8([]int{3}, []uint8{0, 0, 0})}
	}
	results.Write(dir, results.Manifest{Suite: "e4m3", SuiteVersion: s.Version, Implementation: "example"}, out)
	_, err := results.Read(dir, s, nil)
	fmt.Println(err)
	// Output:
	// edges.e4m3.safetensors: tensor "codes": shape [3], want [1556]
}
