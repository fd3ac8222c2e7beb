package mxfp4

import (
	"math"

	"github.com/bitexact/bitexact/refimpl/e8m0"
	"github.com/bitexact/bitexact/refimpl/half"
)

// Input is the dtype x had before the exact widening to float32 (the
// mxfp4.quantize parameter input): libraries that compute in x's dtype
// (microxcaling, compressed-tensors) round every step to it.
type Input uint8

const (
	// F32 is a float32 x.
	F32 Input = iota
	// BF16 is a bfloat16 x.
	BF16
	// F16 is an IEEE binary16 x.
	F16
)

// LookupInput maps the mxfp4.quantize input parameter (fp32, bf16, fp16;
// empty is fp32) to an Input.
func LookupInput(name string) (Input, bool) {
	switch name {
	case "", "fp32":
		return F32, true
	case "bf16":
		return BF16, true
	case "fp16":
		return F16, true
	}
	return F32, false
}

// round is torch's rounding of a float32 op result to the dtype: every
// elementwise op on a 16-bit tensor computes in float32 and rounds once,
// to nearest even.
func (in Input) round(v float32) float32 {
	switch in {
	case BF16:
		return half.DecodeBF16(half.EncodeBF16(v))
	case F16:
		return half.DecodeFP16(half.EncodeFP16(v))
	}
	return v
}

// log2 is torch.log2 in the dtype.
func (in Input) log2(v float32) float32 { return in.round(e8m0.Log2F32(v)) }

// castNaN is float-to-integer conversion of a NaN or ±Inf on the device,
// low byte kept (x86-64: INT_MIN, byte 0; CUDA: saturated).
func (d Device) castUint8(v float64) uint8 { return e8m0.CastUint8(v, d == CUDA) }

// modelOptQuantize is ModelOpt 5a4242fa MXFP4QTensor.quantize for one
// block: amax = max |x| in float32 (any NaN makes it NaN), e =
// ceil(max(log2(amax/6), -127)) (ModelOptExp), x / exp2(e) in float32,
// and the code sign_bit*8 + #{bounds b : |y| > b} with sign_bit =
// (2 - sign(y)) // 2, so a zero of either sign is 0x8, every tie goes
// toward zero, and a NaN y (a NaN scale or element) is 0x8 too, as
// torch.sign(NaN) is 0. On CUDA, exp2(-127) is 0x003FFFFF, one ulp below
// 2^-127 (exp2f; the records' ties in a block of amax 2^-126 round away
// from zero there), so those quotients are larger. The scale
// code is (e + 127) cast to uint8 (NaN and Inf by the device's cast).
func (r Recipe) modelOptQuantize(xs []float32, out, sc []uint8) {
	cuda := r.device == CUDA
	var amax float32
	for _, v := range xs {
		if v != v {
			amax = float32(math.NaN())
			break
		}
		if a := float32(math.Abs(float64(v))); a > amax {
			amax = a
		}
	}
	e := e8m0.ModelOptExp(amax, MaxElem, cuda)
	sc[0] = e8m0.CastUint8(e+127, cuda)
	s := float32(math.Exp2(e)) // exact: e is an integer in [-127, 126], or Inf/NaN
	if cuda && e == -127 {
		s = math.Float32frombits(0x003FFFFF)
	}
	codes := make([]uint8, len(xs))
	for i, v := range xs {
		y := v / s
		var sign float64 // torch.sign: (0 < y) - (y < 0), so 0 for NaN
		switch {
		case y > 0:
			sign = 1
		case y < 0:
			sign = -1
		}
		signBit := math.Floor((2 - sign) / 2)
		ord := 0
		for _, b := range [...]float32{0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5} {
			if float32(math.Abs(float64(y))) > b {
				ord++
			}
		}
		codes[i] = r.device.castUint8(signBit*8 + float64(ord))
	}
	for i := range out {
		out[i] = codes[2*i+1]<<4 + codes[2*i]
	}
}

// microxcalingQuantize is microxcaling 7bc41952 _quantize_mx for one
// block of fp4_e2m1 with scale_bits 8, every op in x's dtype (torch
// computes each in float32 and rounds once to the dtype):
//
//	se = floor(log2(amax + 2^-126*(amax==0))) - 2; se > 127 -> NaN; se < -127 -> -127
//	A  = x / 2^se
//	pe = max(floor(log2(|A| + (A==0))), 0)
//	t  = A / 2^pe * 2;  t = round(t);  q = clamp(t / 2 * 2^pe, -6, 6);  q = ±Inf where A is
//
// with round nearest sign(t)*floor(|t|+0.5), even the same less 1 where
// (|t|-0.5) % 2 == 0, floor sign(t)*floor(|t|). log2 is a float32
// function rounded to the dtype, so an amax or |A| just below a power of
// two can take that power's exponent; 2^se underflows to 0 in float16
// below 2^-24 (then A is ±Inf, or NaN for a zero). The element code is q's
// E2M1 code with q's sign bit; ±Inf is sign|7 (E2M1 has no Inf; 7 is the
// saturated code) and NaN, every element of a NaN-exponent block included,
// is 0x7: the codes the harness reads microxcaling's values as.
func (r Recipe) microxcalingQuantize(xs []float32, out, sc []uint8, in Input) {
	var amax float32
	for _, v := range xs {
		if v != v {
			amax = v
			break
		}
		if a := float32(math.Abs(float64(v))); a > amax {
			amax = a
		}
	}
	shared := amax
	if amax == 0 {
		shared = in.round(0x1p-126)
	}
	se := math.Floor(float64(in.log2(shared))) - EmaxElem
	switch {
	case se != se || se > 127:
		se = math.NaN()
	case se < -127:
		se = -127
	}
	if se != se {
		sc[0] = NaNScale
	} else {
		sc[0] = uint8(int(se) + 127)
	}
	p := in.round(float32(math.Exp2(se)))
	codes := make([]uint8, len(xs))
	for i, x := range xs {
		a := in.round(x / p)
		codes[i] = r.mxElement(a, in)
	}
	for i := range out {
		out[i] = codes[2*i+1]<<4 | codes[2*i]
	}
}

// mxElement is _quantize_elemwise_core for one scaled element a, as a
// code (see microxcalingQuantize).
func (r Recipe) mxElement(a float32, in Input) uint8 {
	switch {
	case a != a:
		return 0x7
	case math.IsInf(float64(a), 0):
		return 0x7 | uint8(math.Float32bits(a)>>28)&8
	}
	abs := float32(math.Abs(float64(a)))
	z := float32(0)
	if a == 0 {
		z = 1
	}
	pe := float32(math.Max(math.Floor(float64(in.log2(in.round(abs+z)))), 0))
	p2 := in.round(float32(math.Exp2(float64(pe))))
	t := in.round(in.round(a/p2) * 2)
	var sign float32 // torch.sign: +0 for either zero
	switch {
	case t > 0:
		sign = 1
	case t < 0:
		sign = -1
	}
	at := float32(math.Abs(float64(t)))
	var m float32
	switch r.style {
	case mxNearest:
		m = float32(math.Floor(float64(in.round(at + 0.5))))
	case mxEven:
		d := in.round(at - 0.5)
		rem := in.round(d - float32(math.Floor(float64(d/2)))*2)
		m = float32(math.Floor(float64(in.round(at + 0.5))))
		if rem == 0 {
			m = in.round(m - 1)
		}
	case mxFloor:
		m = float32(math.Floor(float64(at)))
	}
	q := in.round(in.round(in.round(sign*m)/2) * p2)
	q = float32(math.Max(-MaxElem, math.Min(MaxElem, float64(q))))
	return e2m1Code(q)
}

// e2m1Code is the E2M1 code of a value on the E2M1 grid, sign from its
// sign bit.
func e2m1Code(q float32) uint8 {
	s := uint8(math.Float32bits(q)>>28) & 8
	switch v := math.Abs(float64(q)); {
	case v < 0.25:
		return s
	case v < 0.75:
		return s | 1
	case v < 1.25:
		return s | 2
	case v < 1.75:
		return s | 3
	case v < 2.5:
		return s | 4
	case v < 3.5:
		return s | 5
	case v < 5:
		return s | 6
	}
	return s | 7
}

// compressedTensorsQuantize is compressed-tensors ac8e2ba8 MXFP4A16 for
// one group of 32 (calculate_qparams on the group's amin and amax, then
// MXFP4PackedCompressor.compress), every op in x's dtype:
//
//	m  = max(|min(amin, 0)|, |max(amax, 0)|)
//	p  = bits(m) + half an E2M1 ulp, masked to sign and exponent (round_to_power_2)
//	c  = uint8(round(clamp(127 + floor(log2 p) - 2, 0, 255)))
//	s  = dtype(2^(c-127)), 1 where that is 0
//	y  = clamp(x / s, -6, 6) rounded to E2M1 ties to even (cast_to_fp4), times sign(x/s)
//	scale code = uint8(127 + int32(floor(log2 s)))
//
// The element code is E2M1 of |y| (through int8(2y)) with y's sign bit;
// a NaN y converts to index 0 with its sign bit (see below). A NaN m is
// 0x7FFFFFFF on CUDA; on the CPU it is 0xFFFFFFFF where torch's
// vectorized minimum/maximum computed it (cpuVecChunk) and the first NaN
// of the group, sign cleared, in the scalar tail.
func (r Recipe) compressedTensorsQuantize(xs []float32, out, sc []uint8, in Input, blk, nblk int) {
	cuda := r.device == CUDA
	vec := blk < nblk-nblk%cpuVecChunk
	n := nblk * BlockSize
	var m float32
	for _, v := range xs {
		if v != v {
			switch {
			case cuda:
				m = math.Float32frombits(0x7FFFFFFF)
			case vec:
				m = math.Float32frombits(0xFFFFFFFF)
			default:
				m = float32(math.Abs(float64(v)))
			}
			break
		}
		if a := float32(math.Abs(float64(v))); a > m {
			m = a
		}
	}
	p := in.powerOf2(m)
	e := math.Floor(float64(in.log2(p)))
	v := float64(in.round(in.round(float32(127+e)) - EmaxElem))
	if v == v {
		v = math.Max(0, math.Min(255, v))
	}
	c := float64(e8m0.CastUint8(math.RoundToEven(v), cuda))
	s := in.round(float32(math.Pow(2, c-127)))
	if s == 0 {
		s = 1
	}
	sc[0] = uint8(127 + e8m0.CastInt32(math.Floor(float64(in.log2(s))), cuda))
	codes := make([]uint8, len(xs))
	for i, x := range xs {
		y := in.round(x / s)
		if y == y {
			y = float32(math.Max(-MaxElem, math.Min(MaxElem, float64(y))))
		}
		var sign float32
		switch {
		case y > 0:
			sign = 1
		case y < 0:
			sign = -1
		}
		a := float32(math.Abs(float64(y)))
		var q float32
		switch {
		case a != a:
			q = a
		case a <= 0.25:
			q = 0
		case a < 0.75:
			q = 0.5
		case a <= 1.25:
			q = 1
		case a < 1.75:
			q = 1.5
		case a <= 2.5:
			q = 2
		case a < 3.5:
			q = 3
		case a <= 5:
			q = 4
		default:
			q = 6
		}
		if q != q {
			// x * sign is a positive NaN; on the CPU torch's vectorized
			// float32-to-bfloat16 conversion writes every NaN as 0xFFFF, so
			// a bfloat16 NaN has its sign bit set outside the scalar tail.
			codes[i] = 0
			if e := blk*BlockSize + i; !cuda && in == BF16 && e < n-n%(2*cpuVecChunk) {
				codes[i] = 8
			}
			continue
		}
		q *= sign
		codes[i] = e2m1Code(q)
	}
	for i := range out {
		out[i] = codes[2*i+1]<<4 | codes[2*i]
	}
}

// cpuVecChunk is the number of elements torch's CPU elementwise loop
// handles per vectorized step (two AVX2 vectors of 8 float32); the
// remainder of a tensor, at its end, takes the scalar loop. The two
// differ in the NaN torch.minimum and torch.maximum return: the
// vectorized one ORs in an all-ones NaN mask (0xFFFFFFFF), the scalar one
// returns the NaN operand.
const cpuVecChunk = 16

// powerOf2 is compressed-tensors' round_to_power_2 of v in the dtype: its
// bits plus 1 << (mantissa - 2), masked to sign and exponent.
func (in Input) powerOf2(v float32) float32 {
	switch in {
	case BF16:
		b := half.EncodeBF16(v)
		return half.DecodeBF16((b + 1<<5) & 0xFF80)
	case F16:
		b := half.EncodeFP16(v)
		return half.DecodeFP16((b + 1<<8) & 0xFC00)
	}
	return math.Float32frombits((math.Float32bits(v) + 1<<21) & 0xFF800000)
}
