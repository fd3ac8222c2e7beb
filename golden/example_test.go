package golden_test

import (
	"context"
	"fmt"

	"github.com/bitexact/bitexact/golden"
)

// Check the embedded golden set against the native reference: the core of
// `bitexact certify`. Any Engine (the wasm build, a results directory, a
// GPU backend) can take Native's place.
func ExampleCheck() {
	set, err := golden.Default()
	if err != nil {
		fmt.Println(err)
		return
	}
	results, err := golden.Check(context.Background(), golden.Native{}, set, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	bad := 0
	for _, r := range results {
		if !r.OK() {
			bad++
		}
	}
	fmt.Printf("schema %d, %d cases differ\n", set.Manifest.Schema, bad)
	// Output: schema 1, 0 cases differ
}

// Read one case's inputs and expected outputs.
func ExampleSet_Expected() {
	set, err := golden.Default()
	if err != nil {
		fmt.Println(err)
		return
	}
	c, ok := set.Case("e2m1.edges.nvidia")
	if !ok {
		fmt.Println("no such case")
		return
	}
	in, _ := set.Inputs(c)
	want, _ := set.Expected(c)
	x, codes := in["x"].F32(), want["codes"].Data
	for i := range x {
		if x[i] == 0.75 || x[i] == 5 {
			fmt.Printf("%s %v -> 0x%x\n", c.Op, x[i], codes[i])
		}
	}
	// Output:
	// e2m1.encode 0.75 -> 0x2
	// e2m1.encode 5 -> 0x6
}

// Verify regenerates the set and requires byte identity.
func ExampleVerify() {
	err := golden.Verify(context.Background(), golden.Native{}, golden.DataFS(), nil)
	fmt.Println(err)
	// Output: <nil>
}
