package e8m0

import (
	"fmt"
	"math"
)

// The E8M0 shared-scale rules measured or read in public code beyond the
// four of torchao's ScaleCalculationMode (Floor, Ceil, Even, RCeil). Each
// is named after the code it reproduces; Source gives the repository, the
// file and the commit or pull request where the rule is written. Their
// rules start at firstWild, past the library rules (which start at
// scaleAOFloor), so that SharedScale hands them to wildScale.
const (
	firstWild scaleRule = iota + 48
	wildRFloor
	wildVLLM075
	wildRoundHalfUp
	wildAiterHalfUp
	wildMLXNearest
	wildTwiceOCP
	wildBF16Amax
	wildLog2Floor
)

// The wild scale modes.
var (
	// RFloor is X = 2^floor(log2(amax/maxElem)), the quotient one float32
	// division rounded to nearest even: RCeil rounded down instead of up.
	// vLLM's MXFP4 W4A4 MoE CUTLASS kernel before vllm-project/vllm#43557
	// took the exponent field of vecMax * reciprocal_approximate_ftz(6.0f)
	// (csrc/libtorch_stable/quantization/fp4/nvfp4_utils.cuh); with the
	// correctly rounded reciprocal 0x3e2aaaab that product has the same
	// exponent as the quotient for every float32 amax (TestRFloorReciprocal).
	// A quotient below 2^-127 gives code 0, as the exponent field of a
	// float32 subnormal (or the flush to zero) does.
	RFloor = ScaleMode{Name: "rfloor",
		Summary: "E8M0 scale floor(log2(amax/max)): one step below OCP on many blocks (vLLM MXFP4 MoE before #43557)",
		Source:  "vllm-project/vllm csrc/libtorch_stable/quantization/fp4/nvfp4_utils.cuh before PR #43557: biased exponent of vecMax * reciprocal_approximate_ftz(6.0f) (code read)",
		rule:    wildRFloor}
	// VLLM075 is vLLM's fix in vllm-project/vllm#43557: the exponent of
	// amax after adding 1<<21 to its float32 bits (so a mantissa of at
	// least 0.75 rounds up to the next power of two), minus emaxElem. For
	// E2M1 this equals Even (whose half element ulp is also 1<<21); for
	// wider elements the threshold stays at 0.75. A result below -127
	// clamps to code 0 (the kernel's uint8 arithmetic wraps there instead:
	// not modelled) and one above 127 gives code 0xFF.
	VLLM075 = ScaleMode{Name: "vllm-0.75",
		Summary: "E8M0 scale from amax rounded up at mantissa >= 0.75, minus emax (vLLM MXFP4 MoE after #43557)",
		Source:  "vllm-project/vllm PR #43557 csrc/libtorch_stable/quantization/fp4/nvfp4_utils.cuh: (max_bits + (1u << 21)) & 0xFF800000, biased exponent - 2 (code read)",
		rule:    wildVLLM075}
	// RoundHalfUp is the E8M0 of amax/maxElem (one float32 division)
	// rounded half up on the mantissa (a quotient of at least 1.5*2^e goes
	// to 2^(e+1): the arithmetic midpoint, not the geometric one): FlyDSL's
	// f32_to_e8m0(amax / max_normal) that ROCm/FlyDSL#590 measured one step
	// below Quark's even rule on 67.9% of MXFP6 E2M3 scale bytes, and
	// aiter's f32_to_e8m0 (the same function). f32_to_e8m0's rounding is
	// Torch's: a subnormal quotient rounds up only above 2^-127, 0xFE
	// rounding up gives 0xFF.
	RoundHalfUp = ScaleMode{Name: "flydsl-nearest",
		Summary: "E8M0 of amax/max rounded half up on the mantissa (FlyDSL and legacy aiter f32_to_e8m0)",
		Source: "ROCm/FlyDSL tests/kernels/utils/fp4_utils.py f32_to_e8m0(amax / max_normal), described in ROCm/FlyDSL PR #590; " +
			"ROCm/aiter aiter/utility/fp4_utils.py f32_to_e8m0 (round_case on bit 22, removed in ROCm/aiter PR #3212) (code read)",
		rule: wildRoundHalfUp}
	// AiterHalfUp is f32_to_e8m0 (half up, as RoundHalfUp) applied to
	// amax / 2^emaxElem instead of amax / maxElem: aiter's FP6 helpers
	// divide by the largest power of two not above the element maximum
	// (F6E2M3_TARGET_MAX_POW2 = 2), so the scale is the exponent of amax
	// rounded half up, minus emaxElem.
	AiterHalfUp = ScaleMode{Name: "aiter-halfup",
		Summary: "E8M0 of amax/2^emax rounded half up on the mantissa (aiter MXFP6 helpers, FlyDSL-derived)",
		Source:  "ROCm/aiter MXFP6 E2M3 helpers: f32_to_e8m0 'carried over verbatim from the FlyDSL reference', dividing by 2**F6E2M3_TARGET_MAX_POW2 (code read)",
		rule:    wildAiterHalfUp}
	// MLXNearest is MLX's to_fp8_e8m0(amax / max) for mode="mxfp8" and
	// "mxfp4" before ml-explore/mlx#4353: n = std::round(std::log2(q)) in
	// float32 (ties away from zero), clamped to [-127, 127]; q = amax/max
	// is one float32 division. Rounding log2 to nearest puts the threshold
	// at sqrt(2)*2^e, the geometric midpoint; log2f is modelled correctly
	// rounded, so at the float32 neighbours of sqrt(2)*2^e whose log2
	// rounds to e+0.5 the half goes away from zero (up for e >= 0, down for
	// e < 0). q = 0 gives code 0 (log2 -Inf clamps to -127).
	MLXNearest = ScaleMode{Name: "mlx-nearest",
		Summary: "E8M0 scale round(log2(amax/max)), the geometric midpoint (MLX mxfp8/mxfp4 before #4353)",
		Source:  "ml-explore/mlx mlx/backend/cpu/quantized.cpp @ 0e18bb05ac13a17a986f51bf172681c188136a0f to_fp8_e8m0 and fp_quantize_dequantize (code read); ml-explore/mlx PR #4353",
		rule:    wildMLXNearest}
	// TwiceOCP is the OCP floor scale times two (code + 1): AWS Trainium's
	// nki.isa.quantize_mx "uses a block scale that is two times larger"
	// than the OCP sample algorithm, so the largest elements round without
	// saturating.
	TwiceOCP = ScaleMode{Name: "trainium-2x",
		Summary: "E8M0 scale twice the OCP floor scale (AWS Trainium nki.isa.quantize_mx)",
		Source:  "AWS Neuron documentation nki.isa.quantize_mx (Neuron 2.32.0): 'a block scale that is two times larger' than the OCP sample conversion (documentation read)",
		rule:    wildTwiceOCP}
	// BF16Amax is the OCP floor rule applied to amax first rounded to
	// bfloat16 (nearest even): an amax just below a power of two rounds
	// up to it and doubles the scale. PTO-ISA/SuperNPUBench's Ascend
	// dynamic_mx_quant narrowed the float32 row maximum to bf16 (TCVT)
	// before masking the exponent.
	BF16Amax = ScaleMode{Name: "ascend-bf16",
		Summary: "E8M0 scale floor(log2(bf16(amax))) - emax: amax narrowed to bf16 first (Ascend dynamic_mx_quant)",
		Source:  "PTO-ISA/SuperNPUBench PR #111 benchmark/one-level-arch/kernels/multi_thread/quant/dynamic_mx_quant/dynamic_mx_quant_nontail_ocp_fp4.hpp: TCVT(max_bf, max_f) before the exponent mask (code read)",
		rule:    wildBF16Amax}
	// Log2Floor is the OCP floor rule computed as microxcaling does:
	// floor(log2(amax)) with log2 evaluated in float32 (torch.log2), which
	// rounds log2 of an amax just below 2^k up to k once |k| is large
	// enough, so such an amax gets the scale of 2^k. log2 is modelled
	// correctly rounded; amax = 0 uses the smallest normal, as
	// microxcaling does.
	Log2Floor = ScaleMode{Name: "microxcaling",
		Summary: "E8M0 scale floor(float32 log2(amax)) - emax: a float32 log2 rounds just-below-2^k up (microxcaling)",
		Source:  "microsoft/microxcaling mx/mx_ops.py @ 7bc41952 _shared_exponents: torch.floor(torch.log2(amax)) (code read)",
		rule:    wildLog2Floor}
)

// WildScaleModes lists the scale modes measured or read in public code
// beyond ScaleModes.
func WildScaleModes() []ScaleMode {
	return []ScaleMode{RFloor, VLLM075, RoundHalfUp, AiterHalfUp, MLXNearest, TwiceOCP, BF16Amax, Log2Floor}
}

// LookupAnyScaleMode finds a scale mode of ScaleModes or WildScaleModes.
func LookupAnyScaleMode(name string) (ScaleMode, error) {
	if m, err := LookupScaleMode(name); err == nil {
		return m, nil
	}
	for _, m := range WildScaleModes() {
		if m.Name == name {
			return m, nil
		}
	}
	var names []string
	for _, m := range append(ScaleModes(), WildScaleModes()...) {
		names = append(names, m.Name)
	}
	return ScaleMode{}, fmt.Errorf("e8m0: unknown scale mode %q (known: %v)", name, names)
}

// wildScale is SharedScale for the wild rules; a is |amax|'s finite bits.
func wildScale(a uint32, rule scaleRule, emaxElem int, maxElem float32) uint8 {
	quotient := func() uint32 {
		return math.Float32bits(math.Float32frombits(a)/maxElem) & 0x7fffffff
	}
	switch rule {
	case wildRFloor:
		q := quotient()
		if q >= 0x7f800000 {
			return NaN
		}
		return biasClamp(log2Floor(q, false))
	case wildVLLM075:
		r := (a + 1<<21) & 0xff800000
		if a == 0 {
			return 0
		}
		return biasClamp(int(r>>23) - 127 - emaxElem)
	case wildRoundHalfUp:
		q := quotient()
		if q >= 0x7f800000 {
			return NaN
		}
		return Torch.Encode(math.Float32frombits(q))
	case wildAiterHalfUp:
		// Dividing by 2^emaxElem is exact above the subnormal range; the
		// half-up rounding of amax's own mantissa then sets the exponent.
		q := math.Float32bits(math.Float32frombits(a)*pow2f(-emaxElem)) & 0x7fffffff
		return Torch.Encode(math.Float32frombits(q))
	case wildMLXNearest:
		q := quotient()
		if q >= 0x7f800000 {
			return NaN
		}
		if q == 0 {
			return 0
		}
		l := log2F32(q)
		n := int(math.Round(float64(l))) // half away from zero, as std::round
		n = max(-127, min(127, n))
		return uint8(n + 127)
	case wildTwiceOCP:
		c := biasClamp(log2Floor(a, false) - emaxElem + 1)
		return c
	case wildBF16Amax:
		b := roundBF16(a)
		if b >= 0x7f800000 {
			return NaN
		}
		return biasClamp(log2Floor(b, false) - emaxElem)
	case wildLog2Floor:
		if a == 0 {
			a = 0x00800000 // microxcaling adds FP32_MIN_NORMAL to a zero amax
		}
		l := log2F32(a)
		return biasClamp(int(math.Floor(float64(l))) - emaxElem)
	}
	panic("e8m0: unknown wild scale rule")
}

// pow2f is 2^k for k in [-126, 127].
func pow2f(k int) float32 { return math.Float32frombits(uint32(k+127) << 23) }

// roundBF16 rounds the non-negative float32 bits a to bfloat16, nearest
// even, returning float32 bits (NaN is not passed here).
func roundBF16(a uint32) uint32 {
	lsb := a >> 16 & 1
	return (a + 0x7fff + lsb) &^ 0xffff
}

// log2F32 is log2 of the positive finite float32 with bits a, rounded to
// float32: the exponent part is exact and the fraction part is computed
// in float64 (math.Log2 of a value in [1, 2)), whose error is far below
// the float32 rounding it then takes, so the result is the correctly
// rounded log2f except where log2 lies within about 1e-15 of a float32
// rounding boundary.
func log2F32(a uint32) float32 {
	e := int(a>>23) - 127
	m := a & 0x7fffff
	if a < 1<<23 { // subnormal: normalise
		for m&0x800000 == 0 {
			m <<= 1
			e--
		}
		e++
		m &= 0x7fffff
	}
	frac := math.Log2(float64(math.Float32frombits(0x3f800000 | m)))
	return float32(float64(e) + frac)
}
