package mxfp4_test

import (
	"fmt"

	"github.com/bitexact/bitexact/refimpl/mxfp4"
)

func Example() {
	x := make([]float32, 32)
	copy(x, []float32{8, 7, 5, -10, 0.25})
	q, err := mxfp4.Quantize(x, 1, 32, mxfp4.Default)
	if err != nil {
		panic(err)
	}
	fmt.Printf("scale %d packed % x\n", q.Scales[0], q.Packed[:3])
	y, _ := mxfp4.Dequantize(q)
	fmt.Println(y[:5])
	// Output:
	// scale 128 packed 66 e4 00
	// [8 8 4 -8 0]
}
