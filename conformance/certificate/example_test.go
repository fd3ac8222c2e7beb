package certificate_test

import (
	"fmt"

	"github.com/bitexact/bitexact/conformance/certificate"
	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/ops"
)

// Certify the reference's nosat outputs as an implementation that claims
// nothing: it conforms to nosat and differs from satfinite.
func Example() {
	set, err := golden.Default()
	if err != nil {
		panic(err)
	}
	s, err := suite.Resolve(set, "e4m3")
	if err != nil {
		panic(err)
	}
	outputs := map[string]ops.Tensors{}
	for _, t := range s.Tasks {
		in, _ := set.Inputs(t.Cases["nosat"])
		outputs[t.Name], err = ops.Run(s.Op, ops.Params{"format": "e4m3", "profile": "nosat"}, in)
		if err != nil {
			panic(err)
		}
	}
	// The manifest digest names the golden set; only a released set's
	// makes a certificate valid.
	md, err := suite.ManifestDigest(golden.DataFS())
	if err != nil {
		panic(err)
	}
	c, err := certificate.Build(certificate.Input{Suite: s, Set: set, GoldenSHA256: md, Backend: "results", Implementation: "example", Outputs: outputs})
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Conforms, c.Against)
	fmt.Println(c.Verdict)
	// Output:
	// true nosat
	// conforms to `nosat`; differs from `satfinite` on 3853 elements
}
