package half

import (
	"fmt"
	"strings"
)

// NaNRule is what a profile writes for a float32 NaN.
type NaNRule int

// The NaN rules implementations were measured to follow.
const (
	// NaNQuiet keeps the sign and the top payload bits and sets the quiet
	// bit (x448/float16, ggml_compute_fp32_to_bf16, torch CPU fp16).
	NaNQuiet NaNRule = iota
	// NaN7FFF writes 0x7FFF for every NaN, whatever its sign and payload
	// (CUDA __float2half_rn / __float2bfloat16_rn, PTX cvt.rn.{f16,bf16}.f32).
	NaN7FFF
	// NaNSign keeps the sign and drops the payload: sign | 0x7E00 (FP16),
	// sign | 0x7FC0 (BF16) (ggml_compute_fp32_to_fp16; Eigen half and
	// bfloat16).
	NaNSign
	// NaNFFFF writes 0xFFFF for every NaN (torch CPU bfloat16).
	NaNFFFF
	// NaNTruncate keeps the sign and the top payload bits without setting
	// the quiet bit, so a signalling NaN stays signalling; a payload whose
	// kept bits are all zero becomes 1, which keeps the result a NaN
	// (numpy npy_floatbits_to_halfbits).
	NaNTruncate
)

// Profile is how an implementation rounds float32 to a 16-bit float at the
// edges. Finite values in range round to nearest even in every profile;
// profiles differ in what a NaN becomes and in whether overflow saturates.
// It is data for the one pair of routines EncodeBF16/EncodeFP16.
type Profile struct {
	// Name is the registry key ("rne", "canonical-nan", ...).
	Name string
	// Source names where the behaviour was run and recorded (the records
	// under conformance/harness hold the measurements).
	Source string
	// NaN is the NaN rule.
	NaN NaNRule
	// Satfinite, when set, makes values that round beyond the largest
	// finite value, and the infinities, the largest finite value of
	// their sign instead of infinity.
	Satfinite bool
	// Formats limits the profile to "bf16" or "fp16"; empty means both.
	// An implementation measured for one format only is not claimed
	// for the other.
	Formats string
	// bf16Summary and fp16Summary are Summary's lines: the codes and the
	// implementations differ between the formats.
	bf16Summary, fp16Summary string
}

// Summary says in one line what the profile does to format "bf16" or
// "fp16" where public implementations differ; "" for a format it does not
// have.
func (p Profile) Summary(format string) string {
	switch {
	case !p.Has(format):
		return ""
	case format == "bf16":
		return p.bf16Summary
	case format == "fp16":
		return p.fp16Summary
	}
	return ""
}

var (
	// RNE keeps a NaN's sign and payload (IEEE 754 leaves the payload to
	// the implementation; keeping it is what x448/float16 does).
	RNE = Profile{
		Name:        "rne",
		bf16Summary: "NaN keeps sign and top payload bits, quieted (ggml fp32_to_bf16)",
		fp16Summary: "NaN keeps sign and top payload bits, quieted (torch CPU float16)",
		Source: "IEEE 754 roundTiesToEven; NaN keeps sign and top payload bits, quieted: x448/float16; " +
			"ggml-org/ggml src/ggml-impl.h ggml_compute_fp32_to_bf16 (bf16, run); torch 2.11 CPU x.to(torch.float16) (fp16, run)",
	}
	// CanonicalNaN is what CUDA writes for any NaN: 0x7FFF.
	CanonicalNaN = Profile{
		Name:        "canonical-nan",
		bf16Summary: "every NaN -> 0x7FFF (CUDA __float2bfloat16_rn, cvt.rn.bf16.f32)",
		fp16Summary: "every NaN -> 0x7FFF (CUDA __float2half_rn, cvt.rn.f16.f32)",
		Source: "every NaN -> 0x7FFF: CUDA 13.0 __float2half_rn / __float2bfloat16_rn, PTX cvt.rn.f16.f32 / cvt.rn.bf16.f32, " +
			"torch 2.11 CUDA x.to(torch.bfloat16 / torch.float16) (all run on an H100)",
		NaN: NaN7FFF,
	}
	// SignNaN keeps a NaN's sign and drops its payload. ggml's FP16
	// conversion builds it from the bits (sign | 0x7E00); Eigen's half
	// (float_to_half_rtne) and bfloat16 (float_to_bfloat16_rtne, which
	// ml_dtypes' bfloat16 is) write the canonical quiet NaN of the sign.
	SignNaN = Profile{
		Name:        "sign-nan",
		bf16Summary: "NaN keeps its sign, payload dropped: sign | 0x7FC0 (Eigen bfloat16, ml_dtypes)",
		fp16Summary: "NaN keeps its sign, payload dropped: sign | 0x7E00 (ggml fp32_to_fp16, Eigen half)",
		Source: "NaN -> sign | 0x7E00 (fp16) / sign | 0x7FC0 (bf16): ggml-org/ggml src/ggml-impl.h ggml_compute_fp32_to_fp16 " +
			"(fp16, run); Eigen Eigen/src/Core/arch/Default/Half.h float_to_half_rtne and BFloat16.h float_to_bfloat16_rtne " +
			"(the commit jax-ml/ml_dtypes pins; run, and ml_dtypes 0.6.0 bfloat16 in Python)",
		NaN: NaNSign,
	}
	// TorchCPU is torch's CPU bfloat16 conversion: every NaN, of either
	// sign, becomes 0xFFFF (c10::BFloat16's round_to_nearest_even returns
	// UINT16_C(0xFFFF) for NaN). torch's CPU fp16 conversion is RNE.
	TorchCPU = Profile{
		Name:        "torch-cpu",
		bf16Summary: "every NaN -> 0xFFFF (torch CPU bfloat16)",
		Source:      "torch 2.11 CPU x.to(torch.bfloat16) (run): every NaN -> 0xFFFF (pytorch c10/util/BFloat16.h round_to_nearest_even)",
		NaN:         NaNFFFF,
		Formats:     "bf16",
	}
	// NumPy is numpy's float16 cast: payload truncated but not quieted.
	NumPy = Profile{
		Name:        "numpy",
		fp16Summary: "signalling NaN not quieted, payload truncated (numpy astype(float16))",
		Source:      "numpy 2.5.2 x.astype(numpy.float16) (run): numpy/_core/src/npymath/halffloat.cpp npy_floatbits_to_halfbits, NaN -> sign | 0x7C00 | payload>>13 (0 -> 1)",
		NaN:         NaNTruncate,
		Formats:     "fp16",
	}
	// Satfinite is PTX cvt.rn.satfinite.{f16,bf16}.f32: overflow and the
	// infinities give the largest finite value of the sign (0x7BFF,
	// 0x7F7F), NaN gives 0x7FFF.
	Satfinite = Profile{
		Name:        "satfinite",
		bf16Summary: "overflow and Inf saturate to the largest finite bf16 (cvt.rn.satfinite.bf16.f32)",
		fp16Summary: "overflow and Inf saturate to 65504 (cvt.rn.satfinite.f16.f32)",
		Source:      "PTX cvt.rn.satfinite.f16.f32 / cvt.rn.satfinite.bf16.f32 (run on an H100, CUDA 13.0): overflow and +-Inf -> +-max finite, NaN -> 0x7FFF",
		NaN:         NaN7FFF,
		Satfinite:   true,
	}
)

var profiles = []Profile{RNE, CanonicalNaN, SignNaN, TorchCPU, NumPy, Satfinite}

// Profiles returns the named profiles, RNE first.
func Profiles() []Profile { return append([]Profile(nil), profiles...) }

// Has reports whether the profile is defined for format "bf16" or "fp16".
func (p Profile) Has(format string) bool { return p.Formats == "" || p.Formats == format }

// LookupProfile returns the profile with the given name, or an error listing
// the known names.
func LookupProfile(name string) (Profile, error) {
	names := make([]string, len(profiles))
	for i, p := range profiles {
		if p.Name == name {
			return p, nil
		}
		names[i] = p.Name
	}
	return Profile{}, fmt.Errorf("half: unknown profile %q (known: %s)", name, strings.Join(names, ", "))
}

// EncodeBF16 is the package's EncodeBF16 under profile p.
func (p Profile) EncodeBF16(x float32) uint16 { return p.BF16Bits(float32bits(x)) }

// EncodeFP16 is the package's EncodeFP16 under profile p.
func (p Profile) EncodeFP16(x float32) uint16 { return p.FP16Bits(float32bits(x)) }

// BF16Bits is EncodeBF16 of the float32 with bit pattern b.
func (p Profile) BF16Bits(b uint32) uint16 {
	if b&0x7fffffff > 0x7f800000 {
		return p.nan(b, 0x7fc0, 7)
	}
	v := EncodeBF16(float32frombits(b))
	if p.Satfinite && v&0x7fff == 0x7f80 {
		v = v&0x8000 | 0x7f7f
	}
	return v
}

// FP16Bits is EncodeFP16 of the float32 with bit pattern b.
func (p Profile) FP16Bits(b uint32) uint16 {
	if b&0x7fffffff > 0x7f800000 {
		return p.nan(b, 0x7e00, 10)
	}
	v := EncodeFP16(float32frombits(b))
	if p.Satfinite && v&0x7fff == 0x7c00 {
		v = v&0x8000 | 0x7bff
	}
	return v
}

// nan is the code of NaN pattern b in a format whose quiet NaN of
// positive sign is quiet and which keeps the top keep payload bits.
func (p Profile) nan(b uint32, quiet uint16, keep uint) uint16 {
	sign := uint16(b>>16) & 0x8000
	payload := uint16((b & 0x7fffff) >> (23 - keep))
	inf := quiet &^ (1 << (keep - 1)) // exponent all ones, mantissa 0
	switch p.NaN {
	case NaN7FFF:
		return 0x7fff
	case NaNSign:
		return sign | quiet
	case NaNFFFF:
		return 0xffff
	case NaNTruncate:
		if payload == 0 {
			payload = 1
		}
		return sign | inf | payload
	}
	return sign | quiet | payload
}
