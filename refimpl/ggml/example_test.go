package ggml_test

import (
	"fmt"

	"github.com/bitexact/bitexact/refimpl/ggml"
)

func Example() {
	x := make([]float32, 32)
	copy(x, []float32{1, 2, 3, 6})
	x[16] = -6
	bs, err := ggml.QuantizeMXFP4(x, ggml.DefaultMXFP4)
	if err != nil {
		panic(err)
	}
	// qs[0] holds element 0 (low nibble) and element 16 (high nibble).
	fmt.Printf("e=%d qs[0]=%#02x bytes=%d\n", bs[0].E, bs[0].Qs[0], len(ggml.AppendMXFP4(nil, bs)))
	fmt.Println(ggml.DequantizeMXFP4(bs)[:4], bs[0].Value(16))

	q, _ := ggml.QuantizeQ8_1(x, ggml.Q8_1CPU)
	fmt.Println(q[0].Qs[:4], q[0].Qs[16])
	// Output:
	// e=127 qs[0]=0xf2 bytes=17
	// [1 2 3 6] -6
	// [21 42 64 127] -127
}
