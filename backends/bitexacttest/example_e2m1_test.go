package bitexacttest_test

import (
	"fmt"
	"math"

	"github.com/bitexact/bitexact/backends/bitexacttest"
)

// encodeE2M1 is the kernel under test, written without the reference:
// float32 -> E2M1 code, round to nearest with ties to even, saturating at
// 6, NaN -> +6, the sign of zero kept (PTX cvt.rn.satfinite.e2m1x2).
func encodeE2M1(x float32) uint8 {
	if x != x {
		return 0x7
	}
	var s uint8
	if math.Signbit(float64(x)) {
		s = 8
	}
	switch a := math.Abs(float64(x)); {
	case a <= 0.25:
		return s
	case a < 0.75:
		return s | 1
	case a <= 1.25:
		return s | 2
	case a < 1.75:
		return s | 3
	case a <= 2.5:
		return s | 4
	case a < 3.5:
		return s | 5
	case a <= 5:
		return s | 6
	}
	return s | 7
}

// An E2M1 gate. In a _test.go file it is one call:
//
//	func TestE2M1(t *testing.T) {
//		bitexacttest.Unary(t, "e2m1/nvidia", encodeE2M1)
//	}
//
// which sweeps all 2^32 float32 inputs (go test -short: the golden, edge
// and 2^20 random inputs). CheckUnary is the same check returning its
// report; here it runs sampled, so that the example stays quick.
func ExampleUnary() {
	r, err := bitexacttest.CheckUnary("e2m1/nvidia", encodeE2M1, bitexacttest.Sampled(0))
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Conforms, r.Inputs)
	// Output:
	// true 1065088
}
