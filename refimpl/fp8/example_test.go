package fp8_test

import (
	"fmt"
	"math"

	"github.com/bitexact/bitexact/refimpl/fp8"
)

func Example() {
	for _, x := range []float32{1.0625, 464, 480, float32(math.Inf(-1))} {
		fmt.Printf("%g: satfinite %#02x, nosat %#02x\n", x,
			fp8.E4M3.Encode(x, fp8.Satfinite), fp8.E4M3.Encode(x, fp8.NoSat))
	}
	fmt.Println(fp8.E4M3.Decode(0x7e), fp8.E5M2.Decode(0x7b), fp8.E5M2.Decode(0xfc))
	// Output:
	// 1.0625: satfinite 0x38, nosat 0x38
	// 464: satfinite 0x7e, nosat 0x7e
	// 480: satfinite 0x7e, nosat 0x7f
	// -Inf: satfinite 0xfe, nosat 0xff
	// 448 57344 -Inf
}

func ExampleLookupProfile() {
	p, err := fp8.LookupProfile("nosat")
	if err != nil {
		panic(err)
	}
	f, _ := fp8.LookupFormat("e5m2")
	fmt.Printf("%#02x %#02x\n", f.Encode(61440, p), f.Encode(float32(math.NaN()), p))
	// Output: 0x7c 0x7f
}
