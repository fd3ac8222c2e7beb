package half_test

import (
	"fmt"

	"github.com/bitexact/bitexact/refimpl/half"
)

func Example() {
	x := float32(1 + 1.0/256) // the BF16 midpoint between 1 and 1+2^-7
	fmt.Printf("bf16 %#04x fp16 %#04x\n", half.EncodeBF16(x), half.EncodeFP16(x))
	fmt.Printf("fp16(65520) %#04x -> %g\n", half.EncodeFP16(65520), half.DecodeFP16(half.EncodeFP16(65520)))
	fmt.Println(half.DecodeBF16(0x3f81), half.DecodeFP16(0x0001))
	// Output:
	// bf16 0x3f80 fp16 0x3c04
	// fp16(65520) 0x7c00 -> +Inf
	// 1.0078125 5.9604645e-08
}
