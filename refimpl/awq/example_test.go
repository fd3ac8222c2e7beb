package awq_test

import (
	"fmt"

	"github.com/bitexact/bitexact/refimpl/awq"
	"github.com/bitexact/bitexact/refimpl/half"
)

// Quantize a [2][8] weight as one group per column with the canonical
// FORGE quantizer, pack it in vLLM's AWQ layout and dequantize it back.
func Example() {
	const IC, OC, G = 2, 8, 2
	w := make([]uint16, IC*OC)
	for n := 0; n < OC; n++ {
		w[n] = half.EncodeFP16(7)                   // row 0: absmax 7 gives s = 1
		w[OC+n] = half.EncodeFP16(float32(n) - 3.5) // row 1: -3.5 .. 3.5
	}
	q, err := awq.Quantize(w, IC, OC, G, awq.Forge)
	if err != nil {
		panic(err)
	}
	qweight, _, _ := awq.AWQ.PackWeight(q.Q, IC, OC)
	qzeros, _, _ := awq.AWQ.PackZeros(q.Zeros, IC, OC, G)
	fmt.Printf("qweight %08x %08x, qzeros %08x\n", uint32(qweight[0]), uint32(qweight[1]), uint32(qzeros[0]))
	dq, _ := awq.Dequantize(qweight, qzeros, q.Scales, IC, OC, G)
	for _, b := range dq[OC:] {
		fmt.Print(half.DecodeFP16(b), " ")
	}
	fmt.Println()
	// Output:
	// qweight ffffffff ca86a864, qzeros 88888888
	// -4 -2 -2 0 0 2 2 4
}

// A certificate can name the layout a kernel author used.
func ExampleLayoutByName() {
	for _, name := range []string{"awq", "gptq-v1", "compressed-tensors"} {
		l, _ := awq.LayoutByName(name)
		shape, _ := l.WeightShape(4096, 11008)
		fmt.Println(name, shape)
	}
	// Output:
	// awq [4096 1376]
	// gptq-v1 [512 11008]
	// compressed-tensors [11008 512]
}
