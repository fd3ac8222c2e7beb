package gguf_test

import (
	"fmt"

	"github.com/bitexact/bitexact/refimpl/gguf"
)

// Quantize a q8_0 block as ggml's x86-64 build does, and read it back.
func ExampleQuantize() {
	x := make([]float32, 32)
	x[0], x[1], x[2], x[3] = 127, 0.49999997, 0.5, -2.5
	b, err := gguf.Quantize(gguf.Q8_0, x, gguf.NoFMA)
	if err != nil {
		panic(err)
	}
	fmt.Printf("d % x, qs % x\n", b[:2], b[2:6])
	y, _ := gguf.Dequantize(gguf.Q8_0, b, gguf.NoFMA)
	fmt.Println(y[:4])
	// Output:
	// d 00 3c, qs 7f 00 01 fd
	// [127 0 1 -3]
}

// The dot product of a q4_0 weight row with activations quantized to
// q8_0, as ggml's generic CPU code computes it (the C build for
// Haswell, run on the same input, printed 176.115234375).
func ExampleDot_VecDot() {
	x := make([]float32, 32)
	w := make([]float32, 32)
	for i := range x {
		x[i] = float32(i%8) - 4
		w[i] = float32(i%16) - 8
	}
	p := gguf.FMA
	wb, _ := gguf.Quantize(gguf.Q4_0, w, p)
	xb, _ := gguf.DotQ4_0Q8_0.QuantizeAct(x, p)
	s, err := gguf.DotQ4_0Q8_0.VecDot(wb, xb, p)
	fmt.Println(s, err)
	// Output:
	// 176.11523 <nil>
}
