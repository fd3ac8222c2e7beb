package sparse24_test

import (
	"fmt"

	"github.com/bitexact/bitexact/refimpl/sparse24"
)

// Compress one row of eight E2M1 codes and read back the dense row.
func Example() {
	// 0, 1.5, 0, 3 | 6, 0, 0, 1  (E2M1 codes 0 3 0 5 | 7 0 0 2)
	codes := []uint8{0, 3, 0, 5, 7, 0, 0, 2}
	comp, meta, err := sparse24.Compress(codes, 1, 1, 8, sparse24.LowerIndex, sparse24.RowMajor)
	if err != nil {
		panic(err)
	}
	fmt.Printf("comp % x, meta % x\n", comp, meta)
	dense, _ := sparse24.Decompress(comp, meta, 1, 1, 8, sparse24.RowMajor)
	fmt.Println(dense)
	// Output:
	// comp 53 27, meta cd
	// [0 3 0 5 7 0 0 2]
}

// The tie rules differ only where magnitudes tie or fewer than two values
// are nonzero.
func ExampleTieRule_Select() {
	for _, g := range [][4]uint8{{0, 0, 0, 0}, {0, 2, 0, 0}, {2, 0xA, 2, 0xA}} {
		rules := sparse24.TieRules()
		fmt.Printf("%s=%#x %s=%#x %s=%#x\n", rules[0].Name, rules[0].Select(g),
			rules[1].Name, rules[1].Select(g), rules[2].Name, rules[2].Select(g))
	}
	// Output:
	// lower-index=0x4 cutlass=0xe signed=0x4
	// lower-index=0x4 cutlass=0x9 signed=0x4
	// lower-index=0x4 cutlass=0x4 signed=0x8
}

// Reorder metadata for CUTLASS's sparse GEMM with a 16-bit dense operand.
func ExampleReorderMeta16() {
	const N, K = 32, 32 // two 16-bit metadata elements per row
	meta := make([]uint8, N*K/8)
	for i := range meta {
		meta[i] = 0x44 // every group keeps (0,1)
	}
	m16, _ := sparse24.MetaTo16(meta, N, K)
	re, _ := sparse24.ReorderMeta16(m16, N, K/16)
	back, _ := sparse24.UnreorderMeta16(re, N, K/16)
	fmt.Printf("%#x %d\n", re[0], len(back))
	// Output:
	// 0x4444 64
}
