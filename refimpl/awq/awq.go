// Package awq is the reference for 4-bit AWQ-style weight quantization
// (W4A16): group-wise quantizers, the packed int32 layouts that inference
// engines read, and dequantization exactly as vLLM's AWQ CUDA kernel does
// it.
//
// The logical weight is W[IC][OC] (input channels by output channels, the
// transpose of PyTorch's nn.Linear.weight), quantized in groups of G
// consecutive input channels per output column. A quantized weight is the
// unsigned nibble u in [0, 15] per element, one zero point z in [0, 15] and
// one fp16 scale s per (group, column); the weight it stands for is
// (u - z) * s.
//
// Every semantic choice (nibble order, zero encoding, scale arithmetic, the
// zero-absmax group, the sign of a zero product) is pinned in the doc
// comments below and in docs/rationale/awq-sparse24.md.
package awq

import "fmt"

// Quantized is a quantized weight before packing.
type Quantized struct {
	IC, OC, G int
	// Q holds the stored nibble u of each element, [IC][OC] row-major.
	Q []uint8
	// Zeros holds z per (group, column), [IC/G][OC].
	Zeros []uint8
	// Scales holds the fp16 bits of s per (group, column), [IC/G][OC].
	Scales []uint16
	// IntWeight holds, for the AutoAWQ quantizers, the int32 that
	// AutoAWQ's repack derives for each element, [IC][OC] (equal to Q
	// except on fp16 overflow; see Quantizer AutoAWQ); nil otherwise.
	IntWeight []int32
}

// CheckShape validates the dimensions of an AWQ weight: positive sizes, G
// dividing IC, and OC a multiple of 8 (eight output columns per int32 word
// of the AWQ GEMM layout).
func CheckShape(IC, OC, G int) error {
	if IC <= 0 || OC <= 0 {
		return fmt.Errorf("awq: IC=%d and OC=%d must be positive", IC, OC)
	}
	if G <= 0 {
		return fmt.Errorf("awq: group size %d must be positive", G)
	}
	if IC%G != 0 {
		return fmt.Errorf("awq: IC=%d is not a multiple of the group size %d", IC, G)
	}
	if OC%8 != 0 {
		return fmt.Errorf("awq: OC=%d is not a multiple of 8", OC)
	}
	return nil
}

func checkLen(name string, got, want int) error {
	if got != want {
		return fmt.Errorf("awq: %s has %d elements, want %d", name, got, want)
	}
	return nil
}
