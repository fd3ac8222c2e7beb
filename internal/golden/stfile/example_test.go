package stfile_test

import (
	"fmt"

	"github.com/bitexact/bitexact/internal/golden/stfile"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// Write and read a safetensors file with a packed FP4 tensor: the logical
// element format travels in the file's __metadata__.
func ExampleEncode() {
	t := tensor.FromU8([]int{2}, []uint8{0x21, 0x7f})
	t.Logical = "e2m1x2"
	b, err := stfile.Encode(ops.Tensors{"packed": t}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	ts, _, err := stfile.Decode("example.safetensors", b)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ts["packed"].DType, ts["packed"].Logical, ts["packed"].Shape, len(b))

	_, _, err = stfile.Decode("example.safetensors", b[:len(b)-1])
	fmt.Println(err)
	// Output:
	// U8 e2m1x2 [2] 114
	// example.safetensors: malformed safetensors: metadata incomplete buffer
}
