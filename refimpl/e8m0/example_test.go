package e8m0_test

import (
	"fmt"

	"github.com/bitexact/bitexact/refimpl/e8m0"
)

func Example() {
	for _, r := range e8m0.Roundings() {
		fmt.Printf("%-9s 1.5->%#02x 3->%#02x -4->%#02x 0->%#02x\n", r.Name,
			r.Encode(1.5), r.Encode(3), r.Encode(-4), r.Encode(0))
	}
	fmt.Println(e8m0.Decode(0x7f), e8m0.Decode(0x00), e8m0.Decode(0xff))
	// Output:
	// rz        1.5->0x7f 3->0x80 -4->0x81 0->0x00
	// rp        1.5->0x80 3->0x81 -4->0x81 0->0x00
	// torch     1.5->0x80 3->0x81 -4->0x81 0->0x00
	// ml_dtypes 1.5->0x80 3->0x81 -4->0xff 0->0xff
	// 1 5.877472e-39 NaN
}

func ExampleSharedScale() {
	// An MXFP4 block (E2M1 elements: emax 2, max 6) whose absolute maximum is 7.
	for _, m := range e8m0.ScaleModes() {
		c := e8m0.SharedScale(7, m, 2, 6)
		fmt.Printf("%-5s %d (scale %g)\n", m, c, e8m0.Decode(c))
	}
	// Output:
	// floor 127 (scale 1)
	// ceil  128 (scale 2)
	// even  128 (scale 2)
	// rceil 128 (scale 2)
}
