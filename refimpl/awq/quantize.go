package awq

import (
	"fmt"
	"math"

	"github.com/bitexact/bitexact/refimpl/half"
)

// Scheme is the arithmetic of a quantizer.
type Scheme int

const (
	// SymmetricF32 is the FORGE seed quantizer: absmax per group, float32
	// arithmetic, signed q in [-8, 7] stored as u = q + 8 with z = 8.
	SymmetricF32 Scheme = iota + 1
	// AsymmetricF16 is AutoAWQ's zero-point quantizer, each operation
	// rounded to fp16 as the torch code computes it on fp16 tensors.
	AsymmetricF16
)

// Quantizer is a named quantization scheme.
type Quantizer struct {
	Name   string
	Scheme Scheme
	// Source names where the behaviour comes from.
	Source string
}

// The quantizers.
var (
	// Forge (canonical) is the FORGE W4 seed spec (shared/seeds/
	// forge-awq-pack-spec.md §2.5-2.6): per (group, column)
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
	// error. The seed's "q & 0xF, two's complement" storage does not
	// dequantize correctly through vLLM's (u - z) * s; u = q + 8 with z = 8
	// does, and is the uint4b8 convention of Marlin and compressed-tensors.
	Forge = Quantizer{Name: "forge", Scheme: SymmetricF32,
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
	// float32(1/15) (aten/src/ATen/native/cuda/BinaryDivTrueKernel.cu); for
	// every fp16 range that gives the same fp16 scale as the division
	// (checked exhaustively in the tests), so one rule serves CPU and CUDA.
	// A group whose fp16 range overflows (max - min = inf) or that holds a
	// NaN is an error: AutoAWQ asserts on the NaN that results. Checked
	// against torch 2.11.0 on CUDA and CPU (testdata/autoawq_torch.py).
	AutoAWQ = Quantizer{Name: "autoawq", Scheme: AsymmetricF16,
		Source: "casper-hansen/AutoAWQ:awq/quantize/quantizer.py pseudo_quantize_tensor"}
)

// Quantizers lists the named quantizers, canonical first.
func Quantizers() []Quantizer { return []Quantizer{Forge, AutoAWQ} }

// QuantizerByName finds a quantizer.
func QuantizerByName(name string) (Quantizer, error) {
	for _, q := range Quantizers() {
		if q.Name == name {
			return q, nil
		}
	}
	return Quantizer{}, fmt.Errorf("awq: unknown quantizer %q (known: forge, autoawq)", name)
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
			err = autoAWQGroup(w, out, g)
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

func autoAWQGroup(w []uint16, out *Quantized, g int) error {
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
	for k := g * G; k < (g+1)*G; k++ {
		row := out.Q[k*OC : (k+1)*OC]
		for n, b := range w[k*OC : (k+1)*OC] {
			t := float32(math.RoundToEven(float64(f16op(half.DecodeFP16(b) / s[n]))))
			row[n] = uint8(clampF(float64(f16op(t+z[n])), 0, 15))
		}
	}
	return nil
}
