package half

import "fmt"

// Profile is how an implementation treats NaN when it rounds float32 to a
// 16-bit float; finite values and infinities round to nearest even in every
// profile. It is data for the one pair of routines EncodeBF16/EncodeFP16.
type Profile struct {
	// Name is the registry key ("rne", "canonical-nan").
	Name string
	// Source names where the behaviour was read or run.
	Source string
	// CanonicalNaN, when set, turns every NaN, whatever its sign and
	// payload, into the single pattern 0x7FFF; otherwise a NaN keeps its
	// sign and top payload bits and is made quiet.
	CanonicalNaN bool
}

var (
	// RNE keeps a NaN's sign and payload (IEEE 754 leaves the payload to
	// the implementation; keeping it is what x448/float16 does, and what
	// torch 2.11's fp16 cast on the CPU was certified to do).
	RNE = Profile{
		Name:   "rne",
		Source: "IEEE 754 roundTiesToEven; NaN keeps sign and top payload bits, quieted (x448/float16; torch 2.11 fp16 on the CPU)",
	}
	// CanonicalNaN is what CUDA's __float2half_rn / __float2bfloat16_rn
	// write for any NaN: 0x7FFF. Run on the H100 with torch 2.11.0+cu130,
	// x.to(torch.bfloat16) on CUDA conforms to this profile over the golden
	// bf16 inputs (every NaN of either sign -> 0x7FFF). torch's CPU bf16
	// cast is not this profile: it wrote 0xFFFF for most NaNs, which no
	// profile models yet.
	CanonicalNaN = Profile{
		Name:         "canonical-nan",
		Source:       "CUDA __float2half_rn / __float2bfloat16_rn (H100); torch 2.11 x.to(torch.bfloat16) on CUDA (certified): every NaN -> 0x7FFF",
		CanonicalNaN: true,
	}
)

var profiles = []Profile{RNE, CanonicalNaN}

// Profiles returns the named profiles, RNE first.
func Profiles() []Profile { return append([]Profile(nil), profiles...) }

// LookupProfile returns the profile with the given name, or an error listing
// the known names.
func LookupProfile(name string) (Profile, error) {
	for _, p := range profiles {
		if p.Name == name {
			return p, nil
		}
	}
	return Profile{}, fmt.Errorf("half: unknown profile %q (known: rne, canonical-nan)", name)
}

// EncodeBF16 is the package's EncodeBF16 under profile p.
func (p Profile) EncodeBF16(x float32) uint16 {
	if p.CanonicalNaN && x != x {
		return 0x7FFF
	}
	return EncodeBF16(x)
}

// EncodeFP16 is the package's EncodeFP16 under profile p.
func (p Profile) EncodeFP16(x float32) uint16 {
	if p.CanonicalNaN && x != x {
		return 0x7FFF
	}
	return EncodeFP16(x)
}
