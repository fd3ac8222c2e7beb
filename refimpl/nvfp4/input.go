package nvfp4

import (
	"math"

	"github.com/bitexact/bitexact/refimpl/half"
)

// Input is the dtype of the tensor a recipe quantizes. The reference
// recipes see only its exact float32 widening; a library recipe may
// compute in the input's own dtype, as the library does.
type Input uint8

// The input dtypes: float32, bfloat16, IEEE binary16.
const (
	InputF32 Input = iota
	InputBF16
	InputFP16
)

// String is the dtype's name as parameter input spells it.
func (in Input) String() string { return [...]string{"fp32", "bf16", "fp16"}[in] }

// round rounds v to the input dtype and widens it back (nearest-even,
// overflow to infinity; a NaN as the machine converts it: see nan16).
func (in Input) round(v float32, a arith) float32 {
	if v != v {
		return a.nan16(v, in)
	}
	switch in {
	case InputBF16:
		return half.DecodeBF16(half.EncodeBF16(v))
	case InputFP16:
		return half.DecodeFP16(half.EncodeFP16(v))
	}
	return v
}

// tiny is torch.finfo(dtype).tiny: the smallest normal of the input dtype.
func (in Input) tiny() float32 {
	if in == InputFP16 {
		return 0x1p-14
	}
	return 0x1p-126
}

// nan16 is the NaN a float32 NaN becomes when a torch elementwise kernel
// writes it to a 16-bit dtype, widened back: on x86 torch's vectorized
// float-to-bfloat16 conversion (cvtfp32_bf16) blends every NaN to 0xFFFF,
// and F16C's fp16 conversion keeps the sign and the top payload bits and
// sets the quiet bit (half.EncodeFP16); CUDA's __float2bfloat16 and
// __float2half return 0x7FFF, which widens to 0x7FFF0000 (bfloat16, a
// shift) and 0x7FFFFFFF (fp16: cvt.f32.f16 returns CUDA's NaN).
func (a arith) nan16(v float32, in Input) float32 {
	switch {
	case in == InputF32:
		return v
	case Arith(a) == CUDA && in == InputBF16:
		return math.Float32frombits(0x7FFF0000)
	case Arith(a) == CUDA:
		return math.Float32frombits(cudaNaN)
	case in == InputBF16:
		return math.Float32frombits(0xFFFF0000)
	}
	return math.Float32frombits(math.Float32bits(half.DecodeFP16(half.EncodeFP16(v))))
}
