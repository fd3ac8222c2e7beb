package awq

import (
	"fmt"
	"math"

	"github.com/bitexact/bitexact/refimpl/half"
)

// NaNBits is the fp16 NaN that DequantizeUnpacked returns when a product is
// NaN (a NaN scale, or an infinite scale times u - z = 0). PTX leaves the
// NaN of half-precision fma unspecified; NVIDIA GPUs return the canonical
// 0x7FFF.
const NaNBits uint16 = 0x7FFF

// mulF16 is vLLM's dequantization of one element: sub.f16x2 gives d = u - z
// exactly (an integer in [-15, 15]), then fma.rn.f16x2(d, s, +0) rounds
// d*s once to fp16. The +0 addend turns a -0 product (d = 0 with s < 0, or
// s = -0) into +0; a nonzero product never rounds to zero since
// |d*s| >= 2^-24. float32(d)*s is exact (4 + 11 significant bits).
func mulF16(d int, s uint16) uint16 {
	p := float32(d) * half.DecodeFP16(s)
	if math.IsNaN(float64(p)) {
		return NaNBits
	}
	if p == 0 {
		return 0
	}
	return half.EncodeFP16(p)
}

// DequantizeUnpacked returns the fp16 bits of (u - z) * s for unpacked
// nibbles q [IC][OC], zero points z [IC/G][OC] and fp16 scales
// [IC/G][OC], rounded as Dequantize pins.
func DequantizeUnpacked(q, zeros []uint8, scales []uint16, IC, OC, G int) ([]uint16, error) {
	if IC <= 0 || OC <= 0 || G <= 0 || IC%G != 0 {
		return nil, fmt.Errorf("awq: IC=%d, OC=%d, G=%d: need positive sizes and IC a multiple of G", IC, OC, G)
	}
	if err := checkLen("q", len(q), IC*OC); err != nil {
		return nil, err
	}
	if err := checkLen("zeros", len(zeros), IC/G*OC); err != nil {
		return nil, err
	}
	if err := checkLen("scales", len(scales), IC/G*OC); err != nil {
		return nil, err
	}
	// Each (group, column) has 16 possible outputs; tabulate them once
	// per group rather than multiplying per element.
	out := make([]uint16, IC*OC)
	tab := make([]uint16, 16*OC)
	for k := 0; k < IC; k++ {
		if k%G == 0 {
			g := k / G
			for n := 0; n < OC; n++ {
				for u := 0; u < 16; u++ {
					tab[16*n+u] = mulF16(u-int(zeros[g*OC+n]), scales[g*OC+n])
				}
			}
		}
		row := out[k*OC : (k+1)*OC]
		for n, u := range q[k*OC : (k+1)*OC] {
			if u > 15 {
				return nil, fmt.Errorf("awq: q element [%d,%d] is %d, not a 4-bit value", k, n, u)
			}
			row[n] = tab[16*n+int(u)]
		}
	}
	return out, nil
}

// Dequantize is vLLM's AWQ dequantization (csrc/quantization/awq/
// gemm_kernels.cu, dequantize_weights): qweight int32 [IC, OC/8] and qzeros
// int32 [IC/G, OC/8] in the AWQ nibble order, scales fp16 bits [IC/G, OC].
// Each output is one round-to-nearest-even fp16 of (u - z) * s, a zero
// result is +0 (0x0000), a NaN result is NaNBits. It returns the fp16 bits
// of W[IC][OC] row-major.
func Dequantize(qweight, qzeros []int32, scales []uint16, IC, OC, G int) ([]uint16, error) {
	if err := CheckShape(IC, OC, G); err != nil {
		return nil, err
	}
	q, err := AWQ.UnpackWeight(qweight, IC, OC)
	if err != nil {
		return nil, err
	}
	z, err := AWQ.UnpackZeros(qzeros, IC, OC, G)
	if err != nil {
		return nil, err
	}
	return DequantizeUnpacked(q, z, scales, IC, OC, G)
}
