package nvfp4_test

import (
	"fmt"

	"github.com/bitexact/bitexact/refimpl/nvfp4"
)

func Example() {
	x := []float32{6, 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5, -6, 0, 0, 0, 0, 0, 0, 0}
	q, err := nvfp4.QuantizeWithGlobal(x, 1, 16, 1, nvfp4.Canonical)
	if err != nil {
		panic(err)
	}
	fmt.Printf("scale %#02x packed % x\n", q.Scales[0], q.Packed)
	y, _ := nvfp4.Dequantize(q, nvfp4.Canonical.PerTensor)
	fmt.Println(y[:9])
	// Output:
	// scale 0x38 packed 07 22 44 66 0f 00 00 00
	// [6 0 1 1 2 2 4 4 -6]
}

func ExampleSwizzle() {
	scales := make([]uint8, 2*5) // 2 rows, 5 scale columns
	for i := range scales {
		scales[i] = uint8(i + 1)
	}
	sw, _ := nvfp4.Swizzle(scales, 2, 5)
	fmt.Println(len(sw), sw[0:5], sw[16:20], sw[512], sw[528])
	// Output:
	// 1024 [1 2 3 4 0] [6 7 8 9] 5 10
}
