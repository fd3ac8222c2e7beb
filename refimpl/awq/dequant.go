package awq

import (
	"fmt"
	"math"

	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/nanconv"
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

// mulF16Triton is vLLM's triton AWQ dequantization of one element
// (vllm/model_executor/layers/quantization/awq_triton.py,
// awq_dequantize_kernel: (iweights - zeros) * scales): the int32
// difference d converted to fp16 and multiplied by s with one rounding,
// no addend, so a zero product keeps the IEEE sign of d*s: d = 0 with
// s < 0 (or s = -0 with d > 0, or d < 0 with s = +0) gives -0 (0x8000),
// where the CUDA kernel's fma with +0 gives +0. A NaN product is NaNBits,
// as on the CUDA kernel.
func mulF16Triton(d int, s uint16) uint16 {
	p := float32(d) * half.DecodeFP16(s)
	if math.IsNaN(float64(p)) {
		return NaNBits
	}
	return half.EncodeFP16(p)
}

// Kernel names an AWQ dequantization kernel whose arithmetic the
// reference reproduces.
type Kernel struct {
	Name   string
	Source string
	// Summary says in one line what the kernel does where public
	// implementations differ (diagnoses and docs show it beside the name).
	Summary string
	mul     func(d int, s uint16) uint16
}

// The dequantization kernels.
var (
	// KernelCUDA (canonical) is vLLM's AWQ CUDA kernel: fma.rn.f16x2(d, s,
	// +0), a zero product is +0.
	KernelCUDA = Kernel{Name: "cuda", Summary: "vLLM AWQ CUDA dequantization: fma with +0, a zero product is +0", mul: mulF16,
		Source: "vllm-project/vllm csrc/quantization/awq/gemm_kernels.cu dequantize_weights (measured on an H100, testdata/vllm_fma_f16.cu)"}
	// KernelTriton is vLLM's triton AWQ dequantization: (u - z) * s in
	// fp16, a zero product keeps its IEEE sign (-0 where d = 0 and s < 0).
	KernelTriton = Kernel{Name: "triton", Summary: "vLLM triton AWQ dequantization: a zero product keeps its sign (-0 where u = z and s < 0)", mul: mulF16Triton,
		Source: "vllm-project/vllm@1e8e860 vllm/model_executor/layers/quantization/awq_triton.py awq_dequantize_kernel (measured with triton 3.6 on an H100, conformance/harness/vllm)"}
)

// WithNaN is k with its NaN results under convention c instead of
// NaNBits: a NaN scale is carried with its sign and payload
// (nanconv.CarriedFP16), an infinite scale times u - z = 0 is invalid
// (x86-64's default NaN); nanconv.Canonical and nanconv.CUDA keep NaNBits.
func (k Kernel) WithNaN(c nanconv.Convention) Kernel {
	mul := k.mul
	if mul == nil || c == nanconv.Canonical {
		return k
	}
	k.mul = func(d int, s uint16) uint16 {
		r := mul(d, s)
		if r&0x7FFF <= 0x7C00 {
			return r
		}
		carried := nanconv.X86Default
		if s&0x7FFF > 0x7C00 {
			carried = nanconv.CarriedFP16(s)
		}
		return c.Bits16(NaNBits, carried)
	}
	return k
}

// Kernels lists the dequantization kernels, canonical first.
func Kernels() []Kernel { return []Kernel{KernelCUDA, KernelTriton} }

// KernelByName finds a dequantization kernel.
func KernelByName(name string) (Kernel, error) {
	for _, k := range Kernels() {
		if k.Name == name {
			return k, nil
		}
	}
	return Kernel{}, fmt.Errorf("awq: unknown dequantization kernel %q (known: cuda, triton)", name)
}

// DequantizeUnpacked returns the fp16 bits of (u - z) * s for unpacked
// nibbles q [IC][OC], zero points z [IC/G][OC] and fp16 scales
// [IC/G][OC], rounded as Dequantize pins (vLLM's CUDA kernel).
func DequantizeUnpacked(q, zeros []uint8, scales []uint16, IC, OC, G int) ([]uint16, error) {
	return KernelCUDA.DequantizeUnpacked(q, zeros, scales, IC, OC, G)
}

// DequantizeUnpacked is the package function DequantizeUnpacked with k's
// product rule.
func (k Kernel) DequantizeUnpacked(q, zeros []uint8, scales []uint16, IC, OC, G int) ([]uint16, error) {
	if k.mul == nil {
		return nil, fmt.Errorf("awq: dequantization kernel %q has no product rule", k.Name)
	}
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
	for r := 0; r < IC; r++ {
		if r%G == 0 {
			g := r / G
			for n := 0; n < OC; n++ {
				for u := 0; u < 16; u++ {
					tab[16*n+u] = k.mul(u-int(zeros[g*OC+n]), scales[g*OC+n])
				}
			}
		}
		row := out[r*OC : (r+1)*OC]
		for n, u := range q[r*OC : (r+1)*OC] {
			if u > 15 {
				return nil, fmt.Errorf("awq: q element [%d,%d] is %d, not a 4-bit value", r, n, u)
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
	return KernelCUDA.Dequantize(qweight, qzeros, scales, IC, OC, G)
}

// Dequantize is the package function Dequantize with k's product rule.
func (k Kernel) Dequantize(qweight, qzeros []int32, scales []uint16, IC, OC, G int) ([]uint16, error) {
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
	return k.DequantizeUnpacked(q, z, scales, IC, OC, G)
}
