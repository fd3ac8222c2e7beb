package awq

import (
	"fmt"
	"math"

	"github.com/bitexact/bitexact/refimpl/half"
)

// Scheme is the arithmetic of a quantizer.
type Scheme int

const (
	// SymmetricF32 is the FORGE spec's quantizer: absmax per group, float32
	// arithmetic, signed q in [-8, 7] stored as u = q + 8 with z = 8.
	SymmetricF32 Scheme = iota + 1
	// AsymmetricF16 is AutoAWQ's zero-point quantizer, each operation
	// rounded to fp16 as the torch code computes it on fp16 tensors.
	AsymmetricF16
)

// IntCast is how a platform converts a float that is not a finite int32
// (NaN, ±Inf) to int32, the cast at the end of AutoAWQ's repack
// (torch's .to(torch.int)).
type IntCast int

const (
	// CastRefuse (the zero value) is no platform: a value that is not a
	// finite int32 is an error, because what the implementation stores
	// then depends on where it runs. No named quantizer uses it.
	CastRefuse IntCast = iota
	// CastX86 is x86-64's cvttss2si (and its AVX forms): NaN, ±Inf and
	// out-of-range values all give the "integer indefinite" 0x80000000.
	CastX86
	// CastSaturate is PTX cvt.rzi.s32.f32, the cast CUDA's
	// static_cast<int>(float) compiles to: +Inf -> 0x7FFFFFFF, -Inf ->
	// 0x80000000, NaN -> 0.
	CastSaturate
)

// Quantizer is a named quantization scheme.
type Quantizer struct {
	Name   string
	Scheme Scheme
	// Cast is the platform's float-to-int32 cast that AutoAWQ's repack
	// applies to its re-derived nibbles (AsymmetricF16 only).
	Cast IntCast
	// Source names where the behaviour comes from.
	Source string
	// Summary says in one line what the quantizer does where public
	// implementations differ (diagnoses and docs show it beside the name).
	Summary string
}

// The quantizers.
var (
	// Forge (canonical) is the quantizer of the "4BIT FORGE" W4 packing spec
	// (§2.5-2.6; an unpublished spec, written out in
	// docs/rationale/awq-sparse24.md): per (group, column)
	//
	//	s = fp16(float32(absmax) / 7)              one RN to float32, one RN to fp16
	//	q = clamp(rne(float32(w) / float32(s)), -8, 7)
	//	u = q + 8, z = 8
	//
	// The divisor is the stored fp16 scale, decoded back to float32, so that
	// (u - z) * s dequantizes what was quantized. The quotient is rounded to
	// float32 first and its ties are judged on that float32 value (round
	// half to even). A group whose stored scale is zero (absmax = 0, or
	// absmax <= 3*2^-24 so that absmax/7 rounds to fp16 zero) stores s = +0
	// (0x0000) and q = 0 everywhere (u = 8). Non-finite weights are an
	// error. The spec's "q & 0xF, two's complement" storage does not
	// dequantize correctly through vLLM's (u - z) * s; u = q + 8 with z = 8
	// does, and is the uint4b8 convention of Marlin and compressed-tensors.
	Forge = Quantizer{Name: "forge", Summary: "FORGE quantizer: s = fp16(absmax/7), u = q + 8, zero point 8", Scheme: SymmetricF32,
		Source: "bitexact: docs/rationale/awq-sparse24.md (the FORGE W4 packing spec's §2.5-2.6, §3.3 rule, written out)"}

	// AutoAWQ is casper-hansen/AutoAWQ awq/quantize/quantizer.py
	// pseudo_quantize_tensor with zero_point=True, run on fp16 tensors:
	//
	//	r = fp16(max - min), then max(r, fp16(1e-5) = 0x00A8)   clamp(min=1e-5)
	//	s = fp16(r / 15)                                         (see below)
	//	z = clamp(-rne(fp16(min / s)), 0, 15)
	//	u = clamp(fp16(rne(fp16(w / s)) + z), 0, 15)
	//
	// Each operation is computed in float32 and rounded once to fp16, which
	// equals the correctly rounded fp16 result (24 >= 2*11+2). On CUDA,
	// PyTorch divides by the Python scalar 15 as a multiplication by
	// float32(1/15) (aten/src/ATen/backends/cuda/BinaryDivTrueKernel.cu); for
	// every fp16 range that gives the same fp16 scale as the division
	// (checked exhaustively in the tests), so one rule serves CPU and CUDA.
	// A group whose fp16 range overflows (max - min = inf) or that holds a
	// NaN is an error: AutoAWQ asserts on the NaN that results. Checked
	// against torch 2.11.0 on CUDA and CPU (testdata/autoawq_torch.py).
	//
	// The packed words are what WQLinear_GEMM.from_linear
	// (awq/modules/linear/gemm.py) stores: it does not pack u but
	// re-derives it from the dequantized weight, per element
	//
	//	w_dq = fp16((u - z) * s)          pseudo_quantize_tensor's output
	//	v    = rne(fp16(fp16(w_dq + fp16(z * s)) / s))
	//	word |= int32(v) << 4p            (no mask; p the AWQ nibble slot)
	//
	// which gives back u except where fp16 overflows. A group whose fp16
	// range rounds to 65504 has s = 4368 (0x6C44), and 15 * 4368 = 65520
	// rounds (to even) to Inf: z*s is Inf where z = 15, w_dq is ±Inf where
	// u - z = ±15, and w_dq + z*s, which is u*s, is Inf where u = 15 even
	// when neither term overflows (-32752..32752 has z = 8 and its maximum
	// u = 15: 30576 + 34944 = 65520). Nearly every such group has an
	// element with u = 15, whatever its ends; -28392..37112 (z = 6, the
	// maximum's u = 14 by two ties to even) is one that does not. v is
	// then ±Inf or NaN, and the word holds its int32 cast ORed in
	// unmasked, which depends on the platform: autoawq is AutoAWQ where it
	// runs by default, on CUDA (its get_best_device picks the GPU), whose
	// cast saturates (CastSaturate: +Inf -> 0x7FFFFFFF, 0x7FFFFFFF << 4p
	// sets every bit from 4p up; -Inf -> 0x80000000; NaN -> 0); on an
	// x86-64 CPU it is autoawq-x86. Measured with torch 2.11 on an H100
	// (conformance/harness/autoawq).
	AutoAWQ = Quantizer{Name: "autoawq", Summary: "AutoAWQ quantizer: scale by reciprocal multiply, round half to even in fp32", Scheme: AsymmetricF16, Cast: CastSaturate,
		Source: "casper-hansen/AutoAWQ@88e4c76 awq/quantize/quantizer.py pseudo_quantize_tensor, awq/modules/linear/gemm.py from_linear, on torch 2.11 CUDA (H100); conformance/harness/autoawq"}

	// AutoAWQX86 is AutoAWQ (commit 88e4c76) run by torch on an x86-64
	// CPU: as autoawq, except that a re-derived nibble that is NaN or ±Inf
	// casts to 0x80000000 (CastX86), which sets the word's sign bit when it
	// is in nibble slot 0 and vanishes (shifted out) in slots 1-7.
	// Measured with torch 2.11 on x86-64 (conformance/harness/autoawq).
	AutoAWQX86 = Quantizer{Name: "autoawq-x86", Summary: "AutoAWQ on an x86-64 CPU: a repack that overflows fp16 stores 0x80000000 (cvttss2si) where CUDA saturates", Scheme: AsymmetricF16, Cast: CastX86,
		Source: "casper-hansen/AutoAWQ@88e4c76 on torch 2.11 CPU (x86-64); conformance/harness/autoawq"}
)

// Quantizers lists the named quantizers, canonical first.
func Quantizers() []Quantizer { return []Quantizer{Forge, AutoAWQ, AutoAWQX86} }

// QuantizerByName finds a quantizer.
func QuantizerByName(name string) (Quantizer, error) {
	for _, q := range Quantizers() {
		if q.Name == name {
			return q, nil
		}
	}
	return Quantizer{}, fmt.Errorf("awq: unknown quantizer %q (known: forge, autoawq, autoawq-x86)", name)
}

// fp16Clamp1e5 is 1e-5 rounded to fp16 (168 * 2^-24), the lower bound
// PyTorch's clamp(min=1e-5) applies to an fp16 tensor: the scalar bound is
// converted to the tensor's dtype before comparing.
const fp16Clamp1e5 = 0x00A8

// Quantize quantizes w, the fp16 bits of W[IC][OC] row-major, in groups of
// G input channels. G must divide IC; OC is unconstrained here (the AWQ
// layout itself needs OC % 8 == 0).
func Quantize(w []uint16, IC, OC, G int, qz Quantizer) (*Quantized, error) {
	if IC <= 0 || OC <= 0 {
		return nil, fmt.Errorf("awq: IC=%d and OC=%d must be positive", IC, OC)
	}
	if G <= 0 || IC%G != 0 {
		return nil, fmt.Errorf("awq: IC=%d is not a multiple of the group size %d", IC, G)
	}
	if err := checkLen("weight", len(w), IC*OC); err != nil {
		return nil, err
	}
	ng := IC / G
	out := &Quantized{IC: IC, OC: OC, G: G,
		Q: make([]uint8, IC*OC), Zeros: make([]uint8, ng*OC), Scales: make([]uint16, ng*OC)}
	for g := 0; g < ng; g++ {
		var err error
		switch qz.Scheme {
		case SymmetricF32:
			err = forgeGroup(w, out, g)
		case AsymmetricF16:
			err = autoAWQGroup(w, out, g, qz.Cast)
		default:
			err = fmt.Errorf("awq: quantizer %q has no scheme", qz.Name)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// forgeGroup quantizes the rows g*G..(g+1)*G-1 of every column, reading
// the weight row by row.
func forgeGroup(w []uint16, out *Quantized, g int) error {
	OC, G := out.OC, out.G
	absmax := make([]float32, OC)
	for k := g * G; k < (g+1)*G; k++ {
		for n, b := range w[k*OC : (k+1)*OC] {
			if b&0x7C00 == 0x7C00 {
				return fmt.Errorf("awq: forge: weight [%d,%d] is not finite (fp16 %#04x)", k, n, b)
			}
			absmax[n] = max(absmax[n], half.DecodeFP16(b&0x7FFF))
		}
	}
	sf := make([]float32, OC)
	for n := range absmax {
		s := half.EncodeFP16(absmax[n] / 7)
		out.Scales[g*OC+n] = s
		out.Zeros[g*OC+n] = 8
		sf[n] = half.DecodeFP16(s)
	}
	for k := g * G; k < (g+1)*G; k++ {
		row := out.Q[k*OC : (k+1)*OC]
		for n, b := range w[k*OC : (k+1)*OC] {
			q := 0.0
			if sf[n] != 0 {
				q = clampF(math.RoundToEven(float64(half.DecodeFP16(b)/sf[n])), -8, 7)
			}
			row[n] = uint8(int(q) + 8)
		}
	}
	return nil
}

// f16op rounds a float32 result to fp16 and back, the way a torch fp16
// elementwise op stores its result.
func f16op(x float32) float32 { return half.DecodeFP16(half.EncodeFP16(x)) }

// clampF clamps a non-NaN x to [lo, hi].
func clampF(x, lo, hi float64) float64 {
	if x < lo {
		return lo
	}
	if x > hi {
		return hi
	}
	return x
}

func autoAWQGroup(w []uint16, out *Quantized, g int, cast IntCast) error {
	OC, G := out.OC, out.G
	mx, mn := make([]float32, OC), make([]float32, OC)
	for n := range mx {
		mx[n], mn[n] = float32(math.Inf(-1)), float32(math.Inf(1))
	}
	for k := g * G; k < (g+1)*G; k++ {
		for n, b := range w[k*OC : (k+1)*OC] {
			x := half.DecodeFP16(b)
			if x != x {
				return fmt.Errorf("awq: autoawq: weight [%d,%d] is NaN", k, n)
			}
			mx[n] = max(mx[n], x)
			mn[n] = min(mn[n], x)
		}
	}
	s := make([]float32, OC)
	z := make([]float32, OC)
	for n := range s {
		r := f16op(mx[n] - mn[n])
		if math.IsInf(float64(r), 0) {
			return fmt.Errorf("awq: autoawq: group %d column %d: range max-min overflows fp16 (max %v, min %v)", g, n, mx[n], mn[n])
		}
		r = max(r, half.DecodeFP16(fp16Clamp1e5))
		sbits := half.EncodeFP16(r / 15)
		s[n] = half.DecodeFP16(sbits)
		z[n] = float32(clampF(-math.RoundToEven(float64(f16op(mn[n]/s[n]))), 0, 15))
		out.Scales[g*OC+n] = sbits
		out.Zeros[g*OC+n] = uint8(z[n])
	}
	if out.IntWeight == nil {
		out.IntWeight = make([]int32, len(out.Q))
	}
	for k := g * G; k < (g+1)*G; k++ {
		row := out.Q[k*OC : (k+1)*OC]
		iw := out.IntWeight[k*OC : (k+1)*OC]
		for n, b := range w[k*OC : (k+1)*OC] {
			t := float32(math.RoundToEven(float64(f16op(half.DecodeFP16(b) / s[n]))))
			u := uint8(clampF(float64(f16op(t+z[n])), 0, 15))
			row[n] = u
			// from_linear's re-derivation (see AutoAWQ): each product, sum
			// and quotient one fp16 operation.
			wdq := f16op(float32(int(u)-int(z[n])) * s[n])
			sz := f16op(z[n] * s[n])
			v := math.RoundToEven(float64(f16op(f16op(wdq+sz) / s[n])))
			c, ok := castInt32(v, cast)
			if !ok {
				return fmt.Errorf("awq: autoawq: weight [%d,%d] (group %d, column %d: scale %#04x, zero %d): AutoAWQ's repack "+
					"re-derives the nibble as round((w_dq + z*s)/s) = %v (fp16 overflow), and the word it stores then depends on "+
					"the platform's float-to-int cast, which this quantizer does not name: use autoawq (torch CUDA) or autoawq-x86 (torch CPU, x86-64)",
					k, n, g, n, out.Scales[g*OC+n], int(z[n]), v)
			}
			iw[n] = c
		}
	}
	return nil
}

// castInt32 converts an integer-valued float64 (from an fp16, so within
// int32 range when finite) to int32 under the platform cast; ok is false
// for a non-finite v under CastRefuse.
func castInt32(v float64, cast IntCast) (int32, bool) {
	switch {
	case !math.IsNaN(v) && !math.IsInf(v, 0):
		return int32(v), true
	case cast == CastX86:
		return math.MinInt32, true
	case cast == CastSaturate:
		switch {
		case math.IsInf(v, 1):
			return math.MaxInt32, true
		case math.IsInf(v, -1):
			return math.MinInt32, true
		}
		return 0, true
	}
	return 0, false
}

// PackAutoAWQ packs the re-derived nibbles of an AsymmetricF16 quantizer
// (Quantized.IntWeight) as AutoAWQ's from_linear does: qweight int32
// [IC, OC/8], word j of row k the OR over nibble slots p of
// int32(v[k][8j+OrderAWQ[p]]) << 4p, shifted as a 32-bit two's
// complement value and not masked to 4 bits. Where every v is in [0, 15]
// this equals AWQ.PackWeight of Q.
func (q *Quantized) PackAutoAWQ() ([]int32, []int, error) {
	if q.IntWeight == nil {
		return nil, nil, fmt.Errorf("awq: no AutoAWQ repack values (the quantizer is not an AutoAWQ one)")
	}
	shape, err := AWQ.WeightShape(q.IC, q.OC)
	if err != nil {
		return nil, nil, err
	}
	out := make([]int32, shape[0]*shape[1])
	for k := 0; k < q.IC; k++ {
		for j := 0; j < q.OC/8; j++ {
			var w uint32
			for p, e := range OrderAWQ {
				w |= uint32(q.IntWeight[k*q.OC+8*j+e]) << (4 * p)
			}
			out[k*shape[1]+j] = int32(w)
		}
	}
	return out, shape, nil
}
