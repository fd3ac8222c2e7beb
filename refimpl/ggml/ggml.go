// Package ggml is the reference of llama.cpp's (ggml's) block_mxfp4 and
// block_q8_1 formats: their byte layout, their reference quantizers, and
// their dequantization.
//
// Sources (ggml-org/llama.cpp): ggml/src/ggml-common.h (block layouts,
// kvalues_mxfp4), ggml/src/ggml-quants.c (quantize_row_mxfp4_ref,
// quantize_row_q8_1_ref, dequantize_row_mxfp4), ggml/src/ggml-impl.h
// (GGML_E8M0_TO_FP32_HALF), ggml/src/ggml-cuda/quantize.cu (quantize_q8_1).
package ggml

import (
	"fmt"
	"math"
)

// QK is the number of elements in one block of either format.
const QK = 32

// Block sizes in bytes.
const (
	MXFP4BlockBytes = 1 + QK/2 // uint8 e; uint8 qs[16]
	Q8_1BlockBytes  = 2 + 2 + QK
)

// KValuesMXFP4 is kvalues_mxfp4: twice the E2M1 value of each code, so
// that a code times the half scale 2^(e-128) is the element.
var KValuesMXFP4 = [16]int8{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}

// E8M0ToFP32Half is GGML_E8M0_TO_FP32_HALF: 2^(e-128), built from bits. It
// has no NaN: e = 0xFF gives 2^127, e = 0 gives the subnormal 2^-128.
func E8M0ToFP32Half(e uint8) float32 {
	if e < 2 {
		return math.Float32frombits(0x00200000 << e)
	}
	return math.Float32frombits(uint32(e-1) << 23)
}

// E8M0ToFP32 is ggml_e8m0_to_fp32 (src/ggml-impl.h): 2^(e-127) built
// from bits, code 0 the subnormal 2^-127. Its NaN branch is commented out
// in ggml ("we don't need to handle NaNs"), so code 0xFF gives 0x7F800000,
// +Inf, where the E8M0 reference decode (e8m0.Decode) gives NaN.
// Recorded for all 256 codes from ggml compiled unmodified
// (conformance/harness/ggml/records/e8m0-decode.*.json).
func E8M0ToFP32(e uint8) float32 {
	if e == 0 {
		return math.Float32frombits(0x00400000)
	}
	return math.Float32frombits(uint32(e) << 23)
}

// canonNaN is the NaN every NaN result is replaced by, so that Go and wasm
// agree bit for bit.
var canonNaN = math.Float32frombits(0x7FC00000)

func checkLen(n int) error {
	if n%QK != 0 {
		return fmt.Errorf("ggml: %d values are not a whole number of %d-element blocks", n, QK)
	}
	return nil
}
