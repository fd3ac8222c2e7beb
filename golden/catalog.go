package golden

import (
	"fmt"
	"sort"

	"github.com/bitexact/bitexact/refimpl/ops"
)

// Inputs is a named, deterministic input set: Make(Seed) must return the
// same tensors on every host and every Go release (it may use RNG and
// integer arithmetic, exact float32 operations, nothing host-dependent).
// Several cases may share one input set (every profile of a conversion
// reads the same edge inputs), which keeps the committed set small.
type Inputs struct {
	Name        string
	Description string
	Seed        uint64
	Make        func(seed uint64) (ops.Tensors, error)
}

// Case is one golden case: Op run with Params on the input set named
// Inputs.
type Case struct {
	Name string
	// Family groups cases in reports: "e2m1", "fp8", "nvfp4", "gemv", ...
	Family      string
	Op          string
	Params      ops.Params
	Inputs      string
	Description string
}

var (
	catalogInputs []Inputs
	catalogCases  []Case
)

func addInputs(in Inputs) { catalogInputs = append(catalogInputs, in) }
func addCase(c Case)      { catalogCases = append(catalogCases, c) }

// Catalog returns the input sets and cases of the current suite, sorted by
// name. Cases whose op is not registered in refimpl/ops (a family not yet
// written) are left out, and so are input sets no remaining case uses;
// Skipped lists what was left out.
func Catalog() ([]Inputs, []Case) {
	cases := make([]Case, 0, len(catalogCases))
	used := map[string]bool{}
	for _, c := range catalogCases {
		if _, err := ops.Lookup(c.Op); err != nil {
			continue
		}
		cases = append(cases, c)
		used[c.Inputs] = true
	}
	var ins []Inputs
	for _, in := range catalogInputs {
		if used[in.Name] {
			ins = append(ins, in)
		}
	}
	sort.Slice(ins, func(i, j int) bool { return ins[i].Name < ins[j].Name })
	sort.Slice(cases, func(i, j int) bool { return cases[i].Name < cases[j].Name })
	return ins, cases
}

// Skipped lists the catalog's cases whose op is not registered.
func Skipped() []Case {
	var s []Case
	for _, c := range catalogCases {
		if _, err := ops.Lookup(c.Op); err != nil {
			s = append(s, c)
		}
	}
	return s
}

// checkCatalog verifies that names are unique and references resolve; a
// broken catalog is a programming error caught by the tests.
func checkCatalog() error {
	in := map[string]bool{}
	for _, x := range catalogInputs {
		if in[x.Name] {
			return fmt.Errorf("duplicate input set %q", x.Name)
		}
		in[x.Name] = true
	}
	cs := map[string]bool{}
	for _, c := range catalogCases {
		if cs[c.Name] {
			return fmt.Errorf("duplicate case %q", c.Name)
		}
		cs[c.Name] = true
		if !in[c.Inputs] {
			return fmt.Errorf("case %q: unknown input set %q", c.Name, c.Inputs)
		}
	}
	return nil
}
