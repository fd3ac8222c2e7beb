package gemv_test

import (
	"fmt"

	"github.com/bitexact/bitexact/refimpl/gemv"
)

func ExampleLookup() {
	s, _ := gemv.Lookup("sparse-v7")
	fmt.Println(s)
	// A spec string names any schedule; native kernels declare theirs so.
	t, _ := gemv.Lookup("chunk=32,lanes=0,group=1,fma=1,acc=fp32,partial=fp32,reduce=pairwise,out=fp32")
	fmt.Println(t.ChunkK, t.Reduce, t.Fused)
	// Output:
	// chunk=64,lanes=0,group=8,fma=1,acc=fp32,partial=fp16,reduce=strided4,out=fp16
	// 32 pairwise true
}

func ExampleSparseFP4GEMV() {
	// One expert, K=8, one output column. Group 0 keeps positions 0 and 1
	// with E2M1 1.0 (code 0x2) and 2.0 (0x4); group 1 keeps 2 and 3 with
	// -0.5 (0x9) and 6.0 (0x7). Scale E4M3 0x40 = 2 times global 0.5.
	in := gemv.SparseFP4{
		E: 1, K: 8, N: 1, ScaleK: 8,
		Comp:    []uint8{0x42, 0x79},
		Meta:    []uint8{0 | 1<<2 | 2<<4 | 3<<6},
		Scales:  []uint8{0x40},
		Global:  []float32{0.5},
		Act:     []uint16{0x3C00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600, 0x4700, 0x4800}, // 1..8
		Experts: []int32{0},
	}
	y, err := gemv.SparseFP4GEMV(in, gemv.SparseV7)
	fmt.Println(y, err)
	// Output: [49.5] <nil>
}

func ExampleMXFP4Q81GEMV() {
	// One row, one block: element 0 is code 0x2 (kvalue 2), element 16 code
	// 0xF (kvalue -12), both in qs[0]; e = 127 gives 2^0 * 0.5.
	w := make([]byte, gemv.MXFP4BlockBytes)
	w[0], w[1] = 127, 0xF2
	act := make([]byte, gemv.Q81BlockBytes)
	act[1] = 0x3C          // d = fp16 1.0 (0x3C00, little-endian)
	act[4], act[20] = 3, 1 // q[0] = 3, q[16] = 1
	y, err := gemv.MXFP4Q81GEMV(w, act, 1, 32, gemv.MMVQ)
	fmt.Println(y, err)
	// Output: [-3] <nil>
}

func ExampleF16GEMV() {
	// x = [1, 3*2^-12]: the float32 sum 1.000732421875 rounds to fp16
	// 1.0009765625 when the kernel writes fp16.
	w := []uint16{0x3C00, 0x3C00} // W [IC=2, OC=1] = 1, 1
	x := []uint16{0x3C00, 0x1200}
	y32, _ := gemv.F16GEMV(w, x, 2, 1, gemv.Seq)
	y16, _ := gemv.F16GEMV(w, x, 2, 1, gemv.SeqF16Out)
	fmt.Println(y32, y16)
	// Output: [1.0007324] [1.0009766]
}

func ExampleBound() {
	// Catastrophic cancellation: 2^24 + 1 - 2^24 is 1, a sequential float32
	// kernel returns 0. That is 2^23 ulps off, yet within the bound of an
	// unknown summation order: the verdict is "within bound".
	w := []float64{4096, 1, -4096}
	x := []float64{4096, 1, 4096}
	v, _ := gemv.Bound(w, x, gemv.BoundModel{}, 0)
	fmt.Printf("exact %v, error %.0f ulp, bound %.0f ulp, within %v\n", v.ExactValue, v.ULPError, v.BoundULP, v.Within)
	// Output: exact 1, error 8388608 ulp, bound 33554437 ulp, within true
}
