package suite_test

import (
	"fmt"

	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
)

func Example() {
	set, err := golden.Default()
	if err != nil {
		panic(err)
	}
	s, err := suite.Resolve(set, "e4m3")
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Op, s.Profiles)
	for _, t := range s.Tasks {
		fmt.Println(t.Name, t.Params, t.Cases["nosat"].Name, suite.ResultFile(t.Name))
	}
	// Output:
	// fp8.encode [nosat satfinite]
	// edges.e4m3 map[format:e4m3] e4m3.edges.nosat edges.e4m3.safetensors
	// random.e4m3 map[format:e4m3] e4m3.random.nosat random.e4m3.safetensors
}
