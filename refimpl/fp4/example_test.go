package fp4_test

import (
	"fmt"
	"math"

	"github.com/bitexact/bitexact/refimpl/fp4"
)

func ExampleEncode() {
	for _, x := range []float32{0.25, 0.75, 2.5, 5, -0.1, 7, float32(math.Inf(-1))} {
		c := fp4.Encode(x)
		fmt.Printf("%5g -> %#x (%g)\n", x, c, fp4.Decode(c))
	}
	// Output:
	//  0.25 -> 0x0 (0)
	//  0.75 -> 0x2 (1)
	//   2.5 -> 0x4 (2)
	//     5 -> 0x6 (4)
	//  -0.1 -> 0x8 (-0)
	//     7 -> 0x7 (6)
	//  -Inf -> 0xf (-6)
}

func ExampleProfile_Encode() {
	negNaN := math.Float32frombits(0xFFC00000)
	for _, p := range fp4.Profiles() {
		fmt.Printf("%-16s 0.75->%#x  5->%#x  -NaN->%#x\n", p.Name, p.Encode(0.75), p.Encode(5), p.Encode(negNaN))
	}
	// Output:
	// nvidia           0.75->0x2  5->0x6  -NaN->0x7
	// sw-sm121         0.75->0x2  5->0x6  -NaN->0xf
	// ml_dtypes        0.75->0x2  5->0x6  -NaN->0x0
	// cutlass          0.75->0x2  5->0x6  -NaN->0xf
	// ties-away        0.75->0x2  5->0x7  -NaN->0x7
	// ties-toward-zero 0.75->0x1  5->0x6  -NaN->0x0
}

func ExampleLookup() {
	p, err := fp4.Lookup("ml_dtypes")
	fmt.Println(p.Name, p.Tie, err)
	_, err = fp4.Lookup("rne")
	fmt.Println(err)
	// Output:
	// ml_dtypes ties-to-even <nil>
	// fp4: unknown profile "rne" (known: [nvidia sw-sm121 ml_dtypes cutlass ties-away ties-toward-zero ggml])
}

func ExamplePack() {
	codes := []uint8{fp4.Encode(1), fp4.Encode(-6), fp4.Encode(3)}
	packed := fp4.Pack(codes) // odd length: padded with +0
	fmt.Printf("% x\n", packed)
	fmt.Printf("% x\n", fp4.Unpack(packed, len(codes)))
	// Output:
	// f2 05
	// 02 0f 05
}
