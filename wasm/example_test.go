package wasm_test

import (
	"context"
	"fmt"
	"log"
	"math"

	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
	"github.com/bitexact/bitexact/wasm"
)

// Run an op and a unary conversion in the sandboxed reference. E2M1 holds
// 0, 0.5, 1, 1.5, 2, 3, 4, 6 (OCP MX spec v1.0, table 5): 0.25 and 5 are
// ties that go to the even code (0 and 4), and -7 saturates to -6 (code
// 0xf) under the nvidia profile.
func Example() {
	ctx := context.Background()
	r, err := wasm.New(ctx, wasm.Options{Instances: 1})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close(ctx)

	x := tensor.FromF32([]int{4}, []float32{1, 0.25, 5, -7})
	out, err := r.Run(ctx, "e2m1.encode", ops.Params{"profile": "nvidia"}, ops.Tensors{"x": x})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("e2m1.encode: % x\n", out["codes"].Data)

	// The codes of 1.0 and the next two float32 values up: all round to 1.
	codes := make([]byte, 3)
	if err := r.Unary(ctx, "e2m1/nvidia", math.Float32bits(1), codes); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("e2m1/nvidia: % x\n", codes)

	_, err = r.Run(ctx, "e2m1.encode", ops.Params{"profile": "nvidia"}, ops.Tensors{})
	fmt.Println(err)
	// Output:
	// e2m1.encode: 02 00 06 0f
	// e2m1/nvidia: 02 02 02
	// op e2m1.encode: missing input tensor "x"
}
