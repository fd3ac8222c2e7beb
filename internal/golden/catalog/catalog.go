// Package catalog is the case catalogue of the golden set: every input set
// (a name, a seed and a deterministic generator) and every case (an op with
// its parameters applied to an input set) that `bitexact golden gen`
// computes through the reference. Package golden builds, verifies and loads
// the set; this package only says what is in it.
//
// Each family of cases is a function returning its input sets and cases,
// and All concatenates an explicit list of them: there is no registration
// by init and no package state, so the catalogue is what All's list says.
// Input generators use only RNG, integer arithmetic and exactly specified
// float32 operations, so that every host and Go release makes the same
// bytes (golden verify holds the committed set to that).
package catalog

import (
	"fmt"
	"slices"
	"strings"

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

// families is the catalogue, one function per family. A new family is a
// function returning its input sets and cases, added here; the order does
// not matter (All's callers sort by name), names must be unique across the
// list (Validate).
var families = []func() ([]Inputs, []Case){
	unaryCatalog,
	decodeCatalog,
	blocksCatalog,
	nvfp4EdgeCatalog,
	gemvCraftedCatalog,
	separationCatalog,
	halfInputCatalog,
	peerCatalog,
	blockFormatCatalog,
}

// All returns every input set and case of the catalogue, in the order of
// the family list, whether or not the op is registered in refimpl/ops.
// Each call builds fresh slices.
func All() ([]Inputs, []Case) {
	var ins []Inputs
	var cs []Case
	for _, f := range families {
		i, c := f()
		ins = append(ins, i...)
		cs = append(cs, c...)
	}
	return ins, cs
}

// Registered returns the input sets and cases of the current suite, sorted
// by name: All without the cases whose op is not registered in refimpl/ops
// (a family not yet written) and without the input sets no remaining case
// uses. Skipped lists what was left out.
func Registered() ([]Inputs, []Case) {
	all, allCases := All()
	cases := make([]Case, 0, len(allCases))
	used := map[string]bool{}
	for _, c := range allCases {
		if _, err := ops.Lookup(c.Op); err != nil {
			continue
		}
		cases = append(cases, c)
		used[c.Inputs] = true
	}
	var ins []Inputs
	for _, in := range all {
		if used[in.Name] {
			ins = append(ins, in)
		}
	}
	slices.SortFunc(ins, func(a, b Inputs) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(cases, func(a, b Case) int { return strings.Compare(a.Name, b.Name) })
	return ins, cases
}

// Skipped lists the catalogue's cases whose op is not registered, in All's
// order.
func Skipped() []Case {
	_, cs := All()
	var s []Case
	for _, c := range cs {
		if _, err := ops.Lookup(c.Op); err != nil {
			s = append(s, c)
		}
	}
	return s
}

// Validate checks that input set and case names are unique and that every
// case names an input set of the catalogue; a failure is a programming
// error in a family function, caught by the tests and by golden.Build.
func Validate() error { return validate(All()) }

func validate(ins []Inputs, cs []Case) error {
	in := map[string]bool{}
	for _, x := range ins {
		if in[x.Name] {
			return fmt.Errorf("duplicate input set %q", x.Name)
		}
		in[x.Name] = true
	}
	seen := map[string]bool{}
	for _, c := range cs {
		if seen[c.Name] {
			return fmt.Errorf("duplicate case %q", c.Name)
		}
		seen[c.Name] = true
		if !in[c.Inputs] {
			return fmt.Errorf("case %q: unknown input set %q", c.Name, c.Inputs)
		}
	}
	return nil
}

// table collects one family's input sets and cases in the order written.
type table struct {
	inputs []Inputs
	cases  []Case
}

func (t *table) addInputs(in Inputs) { t.inputs = append(t.inputs, in) }
func (t *table) addCase(c Case)      { t.cases = append(t.cases, c) }
