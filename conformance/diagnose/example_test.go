package diagnose_test

import (
	"fmt"

	"github.com/bitexact/bitexact/conformance/diagnose"
	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
)

func ExampleClasses() {
	set, _ := golden.Default()
	s, _ := suite.Resolve(set, "e4m3")
	fmt.Println(diagnose.Classes(s, "satfinite"))
	// Output:
	// [ftz-inputs ftz-outputs nan-sign-cleared nan-sign-kept negative-zero-cleared nibble-swap profile:nosat ties-away ties-toward-zero truncation]
}
