package gate_test

import (
	"context"
	"fmt"

	"github.com/bitexact/bitexact/gate"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/ops"
)

// A kernel's claim is data: the op and the parameters that select it, and
// those it handles.
func ExampleKernel_Matches() {
	k := gate.Kernel{Name: "mxfp4_quantize", Op: "mxfp4.quantize", Params: ops.Params{"profile": "nvidia"},
		Optional: map[string][]string{"mode": {"floor", "ceil", "even", "rceil"}}}
	fmt.Println(k.Claim())
	fmt.Println(k.Matches("mxfp4.quantize", ops.Params{"mode": "rceil"}))
	fmt.Println(k.Matches("mxfp4.quantize", ops.Params{"mode": "nearest"}))
	// Output:
	// mxfp4.quantize profile=nvidia mode=floor|ceil|even|rceil
	// true
	// false
}

// Golden holds every kernel of a backend to the golden cases it claims;
// here the backend is the reference itself (goBackend, in the tests).
func ExampleGolden() {
	set, err := golden.Default()
	if err != nil {
		panic(err)
	}
	run, err := gate.Golden(context.Background(), newBackend("nvidia"), set, 1)
	if err != nil {
		panic(err)
	}
	for _, v := range run.Verdicts {
		fmt.Println(v.Check, v.Kernel, v.Claim, v.Result, v.Detail)
	}
	// Output:
	// golden e2m1_go e2m1/nvidia pass 2 cases
}
