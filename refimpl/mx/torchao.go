package mx

import (
	"fmt"
	"math"

	"github.com/bitexact/bitexact/refimpl/e8m0"
)

// TorchAO is pytorch/ao's to_mx at v0.18.0 (torchao/prototype/mx_formats/
// mx_tensor.py, eager mode, block 32) for the MXFP8 (E4M3, E5M2) and
// MXFP6 (E2M3, E3M2) elements, run on the CPU or on CUDA. Per block, in
// float32:
//
//	amax  = max |x| (NaN if any x is NaN)
//	FLOOR, CEIL, EVEN (Mode e8m0.TorchAO017Floor, Ceil, Even):
//	  code  = the mode's E8M0 code (0xFF for a NaN amax)
//	  s     = max(float32 from bits code<<23, 2^-126)   (code 0 divides by 2^-126, not 2^-127; 0xFF by +Inf)
//	  q     = x / s
//	  FP8:  q = clamp(q, -max, max)
//	RCEIL (Mode e8m0.TorchAO017RCeil):
//	  d     = amax / max                              (on CUDA amax * float32(1/max): torch divides by a scalar through its reciprocal)
//	  code  = 0xFF for NaN d, 0xFE for Inf d, else clamp(ceil(log2 d), -127, 127) + 127
//	  r     = d for 0xFF, 2^-127 for 0xFE, 1 for code 0, else 2^(127-code)
//	  q     = clamp(x * r, -max, max)
//	elem  = FP8: torch's .to(float8_e4m3fn / float8_e5m2) (nearest even; NaN -> 0x7F with the NaN's sign)
//	        FP6: torchao's _f32_to_floatx_unpacked (nearest even, saturating; a NaN's code is what its bits compute)
//
// Every code and scale torchao wrote on the harness inputs, CPU and CUDA,
// is reproduced (TestRecordsTorchAO); the code-0 branch and CUDA's
// reciprocal, which those inputs do not reach, follow the source
// (torch's CUDA true division by a Python scalar multiplies by its
// float32 reciprocal, as ModelOpt's CUDA record measured) and are
// tested by hand-worked cases (TestTorchAOEdges). Where this differs from
// the family's Quantize under the same scale code: a block whose code is 0 is divided by 2^-126, so its elements are
// half what OCP gives (RCEIL multiplies them by 1); a block whose amax is
// NaN (code 0xFF) keeps its finite elements' signs as ±0 (FLOOR, CEIL,
// EVEN divide by +Inf) or makes every element NaN (RCEIL); and the NaN
// element codes carry the sign, and for FP6 the payload, of the float32
// NaN the device computed (CUDA: 0x7FFFFFFF for every NaN an operation
// makes; the CPU keeps a NaN operand's bits, quieted as x86 does, and
// makes the x86 default NaN 0xFFC00000 for Inf/Inf). For finite values
// the FP6 routine is the family's satfinite encoder (TestTorchAOFP6Finite).
type TorchAO struct {
	// Mode is one of e8m0.TorchAO017Floor, TorchAO017Ceil, TorchAO017Even,
	// TorchAO017RCeil (torchao v0.16 to v0.18 compute the same scales).
	Mode e8m0.ScaleMode
	// CUDA selects the CUDA device: its scalar division and its NaN bits.
	CUDA bool
}

// TorchAOSource is the code the TorchAO profiles reproduce.
const TorchAOSource = "pytorch/ao torchao/prototype/mx_formats/mx_tensor.py to_mx and _to_mx_rceil, " +
	"torchao/prototype/custom_fp_utils.py _f32_to_floatx_unpacked at v0.18.0 (5f2baf9d575c), " +
	"run on CPU and CUDA by conformance/harness/mx-family/run.py"

// Name is the profile's name: torchao-0.18-<mode>-<cpu|cuda>.
func (t TorchAO) Name() string {
	dev := "cpu"
	if t.CUDA {
		dev = "cuda"
	}
	return "torchao-0.18-" + t.modeName() + "-" + dev
}

func (t TorchAO) modeName() string {
	switch t.Mode.Name {
	case e8m0.TorchAO017Floor.Name:
		return "floor"
	case e8m0.TorchAO017Ceil.Name:
		return "ceil"
	case e8m0.TorchAO017Even.Name:
		return "even"
	case e8m0.TorchAO017RCeil.Name:
		return "rceil"
	}
	return ""
}

// TorchAOProfiles lists the recorded torchao profiles: each scale mode on
// each device.
func TorchAOProfiles() []TorchAO {
	var p []TorchAO
	for _, m := range []e8m0.ScaleMode{e8m0.TorchAO017Floor, e8m0.TorchAO017Ceil, e8m0.TorchAO017Even, e8m0.TorchAO017RCeil} {
		p = append(p, TorchAO{Mode: m}, TorchAO{Mode: m, CUDA: true})
	}
	return p
}

// LookupTorchAO returns the profile with the given name.
func LookupTorchAO(name string) (TorchAO, error) {
	for _, p := range TorchAOProfiles() {
		if p.Name() == name {
			return p, nil
		}
	}
	return TorchAO{}, fmt.Errorf("mx: unknown torchao profile %q (known: torchao-0.18-{floor,ceil,even,rceil}-{cpu,cuda})", name)
}

// torchao's mbits per element (constants.py MBITS_*), which EVEN rounds
// amax to, and its exponent bits for _f32_to_floatx_unpacked.
func (e Element) aoBits() (ebits, mbits int, ok bool) {
	switch e.Name {
	case E4M3.Name:
		return 4, 3, true
	case E5M2.Name:
		return 5, 2, true
	case E2M3.Name:
		return 2, 3, true
	case E3M2.Name:
		return 3, 2, true
	}
	return 0, 0, false
}

// Quantize is to_mx of a row-major [rows, cols] matrix with blocks along
// dim (Dim1: to_mx of x.t().contiguous(), as torchao's dim1 cast).
func (t TorchAO) Quantize(x []float32, rows, cols int, dim Dim, e Element) (Quantized, error) {
	if t.modeName() == "" {
		return Quantized{}, fmt.Errorf("mx: torchao: mode %q is not a torchao-0.17 scale mode", t.Mode.Name)
	}
	ebits, mbits, ok := e.aoBits()
	if !ok {
		return Quantized{}, fmt.Errorf("mx: torchao: element %q is not one of e4m3, e5m2, e2m3, e3m2", e.Name)
	}
	if err := checkShape(len(x), rows, cols, dim); err != nil {
		return Quantized{}, err
	}
	if dim == Dim1 {
		x, rows, cols = Transpose(x, rows, cols), cols, rows
	}
	q := Quantized{Element: e, Dim: dim, Rows: rows, Cols: cols,
		Codes: make([]uint8, len(x)), Scales: make([]uint8, len(x)/BlockSize)}
	fp8 := e.Bits == 8
	var enc func(float32) uint8
	if fp8 {
		// Values reach the cast clamped to ±max: torch's non-saturating
		// cast, which keeps a NaN's sign.
		var err error
		if enc, err = e.Encoder(fp8NoSat); err != nil {
			return Quantized{}, err
		}
	}
	for blk := range q.Scales {
		xs := x[blk*BlockSize : (blk+1)*BlockSize]
		out := q.Codes[blk*BlockSize : (blk+1)*BlockSize]
		amax := BlockAmax(xs)
		var code uint8
		var op func(float32) float32
		if t.Mode.Name == e8m0.TorchAO017RCeil.Name {
			code, op = t.rceil(amax, e)
		} else {
			maxE := e.Max
			if t.Mode.Name == e8m0.TorchAO017Even.Name {
				maxE = float32(math.Ldexp(2-math.Ldexp(1, -mbits), e.Emax))
			}
			code = e8m0.SharedScale(amax, t.Mode, e.Emax, maxE)
			s := math.Float32frombits(uint32(code) << 23)
			s = max(s, 0x1p-126)
			op = func(v float32) float32 { return t.div(v, s) }
		}
		q.Scales[blk] = code
		for i, v := range xs {
			r := op(v)
			if fp8 || t.Mode.Name == e8m0.TorchAO017RCeil.Name {
				r = clampKeepNaN(r, e.Max)
			}
			if fp8 {
				out[i] = enc(r)
			} else {
				out[i] = floatxUnpacked(r, ebits, mbits)
			}
		}
	}
	return q, nil
}

// rceil is _to_mx_rceil's code and the multiply it applies.
func (t TorchAO) rceil(amax float32, e Element) (uint8, func(float32) float32) {
	var d float32
	if t.CUDA {
		d = amax * (1 / e.Max)
	} else {
		d = amax / e.Max
	}
	var code uint8
	var r float32
	switch {
	case d != d:
		code, r = NaNScale, d
	case math.IsInf(float64(d), 0):
		code, r = 0xFE, 0x1p-127
	default:
		c := math.Ceil(float64(e8m0.Log2F32(d)))
		code = uint8(math.Max(-127, math.Min(127, c)) + 127)
		if code == 0 {
			r = 1
		} else {
			r = pow2(127 - int(code))
		}
	}
	return code, func(v float32) float32 { return t.mul(v, r) }
}

// The float32 operations with the device's NaN: an operand NaN passes its
// bits on the CPU (quieted); CUDA returns 0x7FFFFFFF for any NaN result;
// an invalid operation (Inf/Inf, 0*Inf) makes the x86 default NaN
// 0xFFC00000 on the CPU.
func (t TorchAO) div(a, b float32) float32 { return t.nan(a, b, a/b) }
func (t TorchAO) mul(a, b float32) float32 { return t.nan(a, b, a*b) }

func (t TorchAO) nan(a, b, r float32) float32 {
	if r == r {
		return r
	}
	if t.CUDA {
		return math.Float32frombits(0x7FFFFFFF)
	}
	for _, v := range []float32{a, b} {
		if v != v {
			return math.Float32frombits(math.Float32bits(v) | 0x400000)
		}
	}
	return math.Float32frombits(0xFFC00000)
}

// clampKeepNaN is torch.clamp(v, -m, m), which returns a NaN unchanged.
func clampKeepNaN(v, m float32) float32 {
	if v != v {
		return v
	}
	return max(-m, min(m, v))
}

// fp8NoSat is the refimpl/fp8 profile of torch's float32 to
// float8_e4m3fn / float8_e5m2 cast (c10 Float8_e4m3fn.h, Float8_e5m2.h):
// nearest even, NaN -> 0x7F with the NaN's sign.
const fp8NoSat = "nosat"

// floatxUnpacked is torchao's _f32_to_floatx_unpacked for one float32, in
// its int32 arithmetic: the sign saved; |x| >= max_normal saturates to
// the largest code; |x| below min_normal is rounded by the float32 sum
// |x| + 2^(denorm_exp-127), whose low bits are the code; otherwise the
// exponent is rebiased and the mantissa rounded to nearest even by a
// magic add. A NaN compares false to both bounds and takes the normal
// branch: its code is the low byte of that arithmetic on its bits, ORed
// with its sign (torch's int32 to uint8 conversion wraps).
func floatxUnpacked(x float32, ebits, mbits int) uint8 {
	const f32Bias, f32M = 127, 23
	expBias := 1<<(ebits-1) - 1
	maxInt := uint8(1<<(ebits+mbits) - 1)
	signMask := uint8(1 << (ebits + mbits))
	magic := int32(1<<(f32M-mbits-1) - 1)
	maxNormal := float32(math.Ldexp(float64(int(1)<<(mbits+1)-1), 1<<ebits-1-expBias-mbits))
	minNormal := float32(math.Ldexp(1, 1-expBias))
	denormExp := (f32Bias - expBias) + (f32M - mbits) + 1
	denormMaskInt := int32(denormExp << f32M)
	denormMaskFloat := math.Float32frombits(uint32(denormMaskInt))

	b := int32(math.Float32bits(x))
	sign := b & math.MinInt32
	b ^= sign
	a := math.Float32frombits(uint32(b))
	var c uint8
	switch {
	case a >= maxNormal:
		c = maxInt
	case a < minNormal:
		d := int32(math.Float32bits(a+denormMaskFloat)) - denormMaskInt
		c = uint8(d)
	default:
		odd := (b >> (f32M - mbits)) & 1
		n := b + int32((expBias-f32Bias)<<f32M) + magic
		n += odd
		c = uint8(n >> (f32M - mbits))
	}
	signLP := uint8(sign>>(f32M+8-mbits-ebits)) & signMask
	return c | signLP
}
