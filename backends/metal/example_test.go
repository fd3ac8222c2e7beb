package metal_test

import (
	"context"
	"fmt"
	"os"

	"github.com/bitexact/bitexact/backends/metal"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// Run a Metal kernel on the CPU emulation (Linux check) through the same
// Engine that drives the GPU on a Mac.
func ExampleNewEmulator() {
	dir, _ := os.MkdirTemp("", "metal-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	emu, err := metal.NewEmulator(ctx, dir) // needs g++
	if err != nil {
		fmt.Println(err)
		return
	}
	defer emu.Close()
	x := tensor.FromF32([]int{4}, []float32{0.25, 0.75, -2.5, 7})
	out, err := metal.NewEngine(emu).Run(ctx, "e2m1.encode", ops.Params{"profile": "nvidia"}, ops.Tensors{"x": x})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("% x\n", out["codes"].Data)
}

func ExampleKernelFor() {
	k, ok := metal.KernelFor("gemv.mxfp4_q8_1", ops.Params{"schedule": metal.MXFP4Schedule.String()})
	fmt.Println(k.Name, ok)
	_, ok = metal.KernelFor("gemv.mxfp4_q8_1", ops.Params{"schedule": "mmvq"})
	fmt.Println(ok)
	// Output:
	// mxfp4_q8_1_gemv true
	// false
}
