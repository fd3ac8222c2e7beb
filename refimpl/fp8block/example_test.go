package fp8block_test

import (
	"fmt"

	"github.com/bitexact/bitexact/refimpl/fp8block"
)

func ExampleQuantize() {
	// One 1x4 group with amax 896 = 448*2: the scale is exactly 2.
	x := []float32{896, 1, -2, 0}
	for _, r := range []fp8block.Recipe{fp8block.DeepGEMM, fp8block.VLLMTriton} {
		q, err := fp8block.Quantize(x, 1, 4, 4, r)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: codes % x, scale %g\n", r.Name, q.Codes, q.Scales[0])
	}
	// Output:
	// deepgemm: codes 7e 30 b8 00, scale 2
	// vllm-triton: codes 7e 30 b8 00, scale 2
}

func ExampleLog2Ceil() {
	// Just above 2^-9 the float32 log2 rounds to -9, so exp2(ceil(log2 s))
	// keeps 2^-9 where the exact ceiling (BitCeil) gives 2^-8.
	s := float32(0x1p-9) * (1 + 0x1p-23)
	fmt.Println(fp8block.Log2Ceil(s) == 0x1p-9, fp8block.BitCeil(s) == 0x1p-8)
	// Output: true true
}

func ExamplePackUE8M0() {
	// Two rows of five UE8M0 scales (K = 640: packed K = 2), MN-major with
	// the rows padded to 4.
	s := []float32{1, 2, 0.5, 8, 32, 1, 1, 1, 1, 1}
	p, err := fp8block.PackUE8M0(s, 2, 5)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%#08x\n", p)
	// Output: [0x827e807f 0x7f7f7f7f 0x00000000 0x00000000 0x00000084 0x0000007f 0x00000000 0x00000000]
}
