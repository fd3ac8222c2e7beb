package bitexacttest_test

import "math"

// nanSignKept is encodeE2M1 with a subtle bug: a negative NaN keeps its
// sign (-NaN -> -6), as cutlass's float_e2m1_t does.
func nanSignKept(x float32) uint8 {
	if x != x && math.Signbit(float64(x)) {
		return 0xf
	}
	return encodeE2M1(x)
}

// tieAt2_5 is encodeE2M1 with one tie rounded away from zero: 2.5 -> 3.
func tieAt2_5(x float32) uint8 {
	if math.Abs(float64(x)) == 2.5 {
		return encodeE2M1(x) + 1
	}
	return encodeE2M1(x)
}
