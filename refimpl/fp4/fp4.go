// Package fp4 is the reference for the 4-bit E2M1 float of the OCP MX and
// NVIDIA NVFP4 formats: exact decoding, and encoding from float32 under
// named profiles that capture where public implementations disagree.
//
// An E2M1 code is 4 bits: bit 3 is the sign, bits 0..2 index the
// magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6. There is no infinity and no NaN,
// so every float32 must land on one of the 16 codes; the profiles differ
// only in how ties, NaN, infinities and the sign of a zero result land.
//
// Encoding is integer work on the float32 bit pattern (no float arithmetic),
// so results are identical on every GOARCH, including wasip1.
package fp4

import (
	"fmt"
	"math"
)

// Decode returns the exact value of the E2M1 code in the low 4 bits of c
// (bit 3 sign; magnitudes 0..7 = 0, 0.5, 1, 1.5, 2, 3, 4, 6). The high
// bits of c are ignored. Code 0x8 decodes to -0.
func Decode(c uint8) float32 { return values[c&0xF] }

var values = [16]float32{
	0, 0.5, 1, 1.5, 2, 3, 4, 6,
	float32(math.Copysign(0, -1)), -0.5, -1, -1.5, -2, -3, -4, -6,
}

// Tie says where a float32 exactly halfway between two neighbouring E2M1
// magnitudes goes. The midpoints are 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.
// The constants are spelled Tie..., not Ties..., because TiesAway and
// TiesTowardZero are the names of profiles.
type Tie uint8

const (
	// TieToEven picks the magnitude whose mantissa bit is 0 (IEEE 754
	// roundTiesToEven): 0.25->0, 0.75->1, 1.25->1, 1.75->2, 2.5->2,
	// 3.5->4, 5->4.
	TieToEven Tie = iota
	// TieAway picks the larger magnitude (roundTiesToAway).
	TieAway
	// TieTowardZero picks the smaller magnitude.
	TieTowardZero
	numTies
)

func (t Tie) String() string {
	switch t {
	case TieToEven:
		return "ties-to-even"
	case TieAway:
		return "ties-away"
	case TieTowardZero:
		return "ties-toward-zero"
	}
	return fmt.Sprintf("Tie(%d)", uint8(t))
}

// ZeroSign says which zero code a result of magnitude zero gets.
type ZeroSign uint8

const (
	// ZeroKeepsSign gives 0x8 (-0) to every input with the float32 sign
	// bit set that rounds to zero: -0, negative subnormals, -0.1, -0.25.
	ZeroKeepsSign ZeroSign = iota
	// ZeroPositive always gives 0x0: the encoder never produces 0x8.
	ZeroPositive
	numZeroSigns
)

func (z ZeroSign) String() string {
	switch z {
	case ZeroKeepsSign:
		return "zero-keeps-sign"
	case ZeroPositive:
		return "zero-positive"
	}
	return fmt.Sprintf("ZeroSign(%d)", uint8(z))
}

// Profile is one implementation's float32 -> E2M1 rule, as data. All
// profiles share one conversion routine (Profile.Encode); the fields are
// the only places where sources disagree.
//
// Two rules are the same for every source surveyed and are therefore not
// fields: a finite |x| > 6 encodes as sign|7 (6 is the nearest code, and
// no source maps finite values to anything else), and float32 subnormals
// are ordinary values below 0.25, so they round to a zero whose code
// follows Zero (no source surveyed flushes inputs in a way that changes
// the code).
type Profile struct {
	// Name is the registry key used by Lookup and by the "profile" op
	// parameter.
	Name string
	// Source names the implementation modelled, as repository:path.
	Source string
	// Summary says in one line what the profile does where public
	// implementations differ (diagnoses and docs show it beside the name).
	Summary string
	// float32Errors replaces the nearest-value rule by ggml's argmin of
	// float32 errors (GGML); the other fields then only describe it.
	float32Errors bool
	// Tie is the rounding of exact midpoints.
	Tie Tie
	// NaNPos and NaNNeg are the codes for a NaN with the sign bit clear
	// and set, whatever the payload (quiet or signalling).
	NaNPos, NaNNeg uint8
	// InfPos and InfNeg are the codes for +Inf and -Inf.
	InfPos, InfNeg uint8
	// Zero is the sign rule for results of magnitude zero.
	Zero ZeroSign
}

// The profiles. Each Source is where the rule was read or run; see
// docs/rationale/fp4.md for the evidence behind every field.
var (
	// NVIDIA is the canonical profile: PTX cvt.rn.satfinite.e2m1x2.f32 as
	// modelled by the software fallback of __nv_cvt_float2_to_fp4x2 in
	// CUDA 13.0 cuda_fp4.hpp (run on an H100). Nearest-even, |x| > 6 and
	// +-Inf saturate to sign|7, NaN of either sign -> 0x7 ("NaN converts to
	// positive FP4_MAXNORM"), -0 and negatives rounding to zero -> 0x8.
	NVIDIA = Profile{
		Name:    "nvidia",
		Summary: "PTX cvt.rn.satfinite.e2m1x2: ties to even, NaN -> +6, -0 kept",
		Source:  "NVIDIA CUDA 13.0 include/cuda_fp4.hpp (__nv_cvt_float2_to_fp4x2 fallback for cvt.rn.satfinite.e2m1x2.f32)",
		Tie:     TieToEven, NaNPos: 0x7, NaNNeg: 0x7, InfPos: 0x7, InfNeg: 0xF, Zero: ZeroKeepsSign,
	}
	// SWSM121 is the software E2M1 of the dgx-vllm SM121 patch: threshold
	// compares that equal nearest-even, sign taken from bit 31. Every
	// compare is false for NaN, so NaN falls through to magnitude 7 with
	// its sign kept: -NaN -> 0xF, where the instruction gives 0x7.
	SWSM121 = Profile{
		Name:    "sw-sm121",
		Summary: "NaN sign kept (-NaN -> -6): dgx-vllm software E2M1",
		Source:  "Avarok-Cybersecurity/dgx-vllm:patch_nvfp4_utils_sw_e2m1.py (_sw_float_to_e2m1)",
		Tie:     TieToEven, NaNPos: 0x7, NaNNeg: 0xF, InfPos: 0x7, InfNeg: 0xF, Zero: ZeroKeepsSign,
	}
	// MLDtypes is ml_dtypes float4_e2m1fn (0.6.0, run): nearest-even,
	// overflow and +-Inf -> +-6, +NaN -> 0x8 (-0), -NaN -> 0x0 (+0).
	MLDtypes = Profile{
		Name:    "ml_dtypes",
		Summary: "NaN -> -0 / +0 (ml_dtypes float4_e2m1fn)",
		Source:  "jax-ml/ml_dtypes:ml_dtypes/include/mxfloat.h (float4_e2m1fn, ml_dtypes 0.6.0)",
		Tie:     TieToEven, NaNPos: 0x8, NaNNeg: 0x0, InfPos: 0x7, InfNeg: 0xF, Zero: ZeroKeepsSign,
	}
	// CUTLASS is cutlass::float_e2m1_t's host conversion: nearest-even,
	// saturating, NaN -> 0x7|sign. It equals SWSM121 on every input.
	CUTLASS = Profile{
		Name:    "cutlass",
		Summary: "NaN sign kept (-NaN -> -6): cutlass float_e2m1_t",
		Source:  "NVIDIA/cutlass:include/cutlass/exmy_base.h (float_e2m1_t convert_from_float)",
		Tie:     TieToEven, NaNPos: 0x7, NaNNeg: 0xF, InfPos: 0x7, InfNeg: 0xF, Zero: ZeroKeepsSign,
	}
	// TiesAway is microsoft/microxcaling's default round="nearest"
	// (sign(x)*floor(|x|+0.5) in elemwise_ops.py, rd_away in
	// cpp/quantize.cuh): ties away from zero. With saturate_normals (which
	// MX conversion requires) +-Inf saturate to +-6. microxcaling outputs a
	// float, and a NaN stays NaN, which E2M1 cannot hold: this profile
	// takes NVIDIA's 0x7 so that it differs from NVIDIA in ties only.
	TiesAway = Profile{
		Name:    "ties-away",
		Summary: "ties away from zero (microxcaling round=nearest)",
		Source:  "microsoft/microxcaling:mx/elemwise_ops.py (_round_mantissa round=\"nearest\"), mx/cpp/quantize.cuh (rd_away)",
		Tie:     TieAway, NaNPos: 0x7, NaNNeg: 0x7, InfPos: 0x7, InfNeg: 0xF, Zero: ZeroKeepsSign,
	}
	// TiesTowardZero is a rule, not a recorded implementation: the argmin
	// of |v - x| over the E2M1 values v in code order with strict <, in
	// exact arithmetic. That is the nearest E2M1 value, ties to the smaller
	// magnitude, every zero result index 0 (never 0x8), NaN and +-Inf code
	// 0x0. No implementation run follows it on all 2^32 inputs: llama.cpp's
	// best_index_mxfp4 computes the errors in float32 (profile GGML,
	// recorded) and agrees with it only below |x| = 0x4c000003 (just above
	// 2^25), which covers every input quantize_row_mxfp4_ref passes it;
	// modelopt's MXFP4 ties toward zero too but writes 0x8 for +0 and NaN.
	TiesTowardZero = Profile{
		Name:    "ties-toward-zero",
		Summary: "ties toward zero, -0 cleared, NaN and Inf -> 0 (an argmin over the E2M1 values in code order, exact arithmetic)",
		Source:  "rule, no implementation: argmin |v - x| over the E2M1 values in code order with strict <, exact arithmetic (llama.cpp's float32 best_index_mxfp4, profile ggml, agrees below |x| = 0x4c000003)",
		Tie:     TieTowardZero, NaNPos: 0x0, NaNNeg: 0x0, InfPos: 0x0, InfNeg: 0x0, Zero: ZeroPositive,
	}
	// GGML is best_index_mxfp4(x, 0.5) as ggml compiles it, the E2M1 step
	// of quantize_row_mxfp4_ref at unit scale (d = 0.5 multiplies
	// kvalues_mxfp4, twice the E2M1 values): the first index i, in index
	// order, minimising fabsf(float32(kvalues[i]*0.5) - x) under strict <,
	// each difference a correctly rounded float32 subtraction. It is
	// TiesTowardZero for |x| < 0x4c000003; above, the float32 errors of
	// neighbouring codes round to equal values and the first index (the
	// smaller magnitude) wins (0x4c000003 gives code 0x4: x-2, x-3, x-4
	// and x-6 all round to 2^25+8), and from 2^28 on every error rounds to
	// |x|, so the code is 0. NaN and +-Inf give 0 (no comparison holds, or every
	// error is +Inf). Recorded over all 2^32 inputs from ggml compiled
	// unmodified (gcc -O3, x86-64, and aarch64 under qemu).
	//
	// GGML is not in Profiles(): those are nearest-value rules, and above
	// 2^25 GGML's code is not the nearest value.
	GGML = Profile{
		Name:    "ggml",
		Summary: "ggml best_index_mxfp4 as compiled: float32 errors, first index wins; huge inputs -> smaller codes, from 2^28 code 0",
		Source:  "ggml-org/ggml src/ggml-quants.c best_index_mxfp4(x, 0.5f), compiled unmodified and run over all 2^32 inputs",
		Tie:     TieTowardZero, NaNPos: 0x0, NaNNeg: 0x0, InfPos: 0x0, InfNeg: 0x0, Zero: ZeroPositive,
		float32Errors: true,
	}
)

var profiles = []Profile{NVIDIA, SWSM121, MLDtypes, CUTLASS, TiesAway, TiesTowardZero}

// Profiles returns the named profiles, canonical (NVIDIA) first. The slice
// is a copy.
func Profiles() []Profile { return append([]Profile(nil), profiles...) }

// Lookup returns the profile with the given name, or an error listing the
// known names.
func Lookup(name string) (Profile, error) {
	for _, p := range profiles {
		if p.Name == name {
			return p, nil
		}
	}
	if name == GGML.Name {
		return GGML, nil
	}
	names := make([]string, len(profiles), len(profiles)+1)
	for i, p := range profiles {
		names[i] = p.Name
	}
	names = append(names, GGML.Name)
	return Profile{}, fmt.Errorf("fp4: unknown profile %q (known: %v)", name, names)
}

// Validate reports whether every field of p is in range. The package's
// profiles are valid; Validate is for profiles built elsewhere.
func (p Profile) Validate() error {
	if p.Tie >= numTies {
		return fmt.Errorf("fp4: profile %q: unknown tie rule %v", p.Name, p.Tie)
	}
	if p.Zero >= numZeroSigns {
		return fmt.Errorf("fp4: profile %q: unknown zero-sign rule %v", p.Name, p.Zero)
	}
	for _, c := range [...]uint8{p.NaNPos, p.NaNNeg, p.InfPos, p.InfNeg} {
		if c > 0xF {
			return fmt.Errorf("fp4: profile %q: special-value code %#x does not fit in 4 bits", p.Name, c)
		}
	}
	return nil
}

const (
	signBit = 1 << 31
	infBits = 0x7F800000
)

// thresholds[t][k] is the smallest |x| bit pattern that rounds to
// magnitude k+1 or above under tie rule t. Float32 bit patterns of
// non-negative values order like the values, so rounding is a count of
// thresholds reached. A midpoint m rounds up when the pattern m itself is
// a threshold, down when the threshold is m+1 (the next float32).
var thresholds = func() (th [numTies][7]uint32) {
	for k := range 7 {
		mid := math.Float32bits((values[k] + values[k+1]) / 2) // exact: one more bit
		upEven := (k+1)%2 == 0                                 // code k+1 has mantissa bit 0
		th[TieToEven][k] = mid + 1
		if upEven {
			th[TieToEven][k] = mid
		}
		th[TieAway][k] = mid
		th[TieTowardZero][k] = mid + 1
	}
	return th
}()

// Encode returns the E2M1 code (low 4 bits) of x under profile p. It
// panics if p fails Validate; the package's profiles never do.
func (p Profile) Encode(x float32) uint8 {
	// Passing the rule fields (not p, which holds two strings) lets this
	// wrapper inline and keeps the call in registers.
	if p.float32Errors {
		return bestIndexGGML(x)
	}
	return encode(math.Float32bits(x), p.Tie, p.Zero, p.NaNPos, p.NaNNeg, p.InfPos, p.InfNeg)
}

func encode(b uint32, tie Tie, zero ZeroSign, nanPos, nanNeg, infPos, infNeg uint8) uint8 {
	a := b &^ signBit
	if a >= infBits {
		neg := b&signBit != 0
		switch {
		case a > infBits && neg:
			return nanNeg
		case a > infBits:
			return nanPos
		case neg:
			return infNeg
		}
		return infPos
	}
	// Count the thresholds a reaches, without branches: a and t are below
	// 2^31, so t-1-a wraps (top bit set) exactly when a >= t.
	t := &thresholds[tie]
	m := uint8((t[0]-1-a)>>31 + (t[1]-1-a)>>31 + (t[2]-1-a)>>31 + (t[3]-1-a)>>31 +
		(t[4]-1-a)>>31 + (t[5]-1-a)>>31 + (t[6]-1-a)>>31)
	if m == 0 && zero == ZeroPositive {
		return 0
	}
	return uint8(b>>28)&8 | m
}

// kvaluesHalf are ggml's kvalues_mxfp4 times 0.5 (exact): the E2M1
// values in code order, index 8 being +0.
var kvaluesHalf = [16]float32{0, 0.5, 1, 1.5, 2, 3, 4, 6, 0, -0.5, -1, -1.5, -2, -3, -4, -6}

// bestIndexGGML is best_index_mxfp4(x, 0.5f): Go's float32 subtraction is
// the correctly rounded one C does (no contraction is possible here).
func bestIndexGGML(x float32) uint8 {
	best := uint8(0)
	bestErr := math.Float32frombits(math.Float32bits(kvaluesHalf[0]-x) &^ signBit)
	for i := 1; i < 16; i++ {
		if err := math.Float32frombits(math.Float32bits(kvaluesHalf[i]-x) &^ signBit); err < bestErr {
			best, bestErr = uint8(i), err
		}
	}
	return best
}

// IsNearest reports whether p is a nearest-value rule (every profile in
// Profiles()); GGML is not.
func (p Profile) IsNearest() bool { return !p.float32Errors }

// Encode returns the E2M1 code of x under the canonical NVIDIA profile.
func Encode(x float32) uint8 { return NVIDIA.Encode(x) }
