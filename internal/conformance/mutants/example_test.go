package mutants_test

import (
	"fmt"

	"github.com/bitexact/bitexact/internal/conformance/mutants"
)

func ExampleCatalog() {
	for _, m := range mutants.Catalog()[:2] {
		fmt.Printf("%s: suite %s, claims %s, bug class %s\n", m.Name, m.Suite, m.Claim, m.Class)
	}
	// Output:
	// e2m1-ties-away: suite e2m1, claims nvidia, bug class ties-away
	// e2m1-ties-toward-zero: suite e2m1, claims nvidia, bug class ties-toward-zero
}
