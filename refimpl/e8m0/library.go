package e8m0

import (
	"math"
)

// The library scale modes: the E8M0 scale a library's own MXFP4 code
// computes for a block amax, recorded by running that code on CPU and CUDA
// (conformance/harness/<library>/records; go test ./internal/conformance/record/ holds
// each mode to its record). They are values of e8m0.shared_scale's mode
// parameter beside the four rounding rules. Where a library converts a
// non-finite float to an integer (undefined behaviour in C++), the mode is
// per device: x86-64 converts through cvttss2si, which gives INT_MIN for
// NaN, ±Inf and out-of-range values; CUDA's cvt.rzi saturates (NaN to 0).
var (
	// TorchAO017Floor is torchao v0.16-v0.18 FLOOR: the float32 exponent
	// field read as a finite exponent, so an infinite amax gives
	// 255-127-emax, code 253 for E2M1; only a NaN amax gives 0xFF.
	TorchAO017Floor = ScaleMode{Name: "torchao-0.17-floor", Summary: "torchao 0.16-0.18 FLOOR: floor, but an infinite amax gives code 253",
		Source: aoSrc, rule: scaleAOFloor}
	// TorchAO017Ceil is torchao v0.16-v0.18 CEIL: as TorchAO017Floor,
	// rounding up.
	TorchAO017Ceil = ScaleMode{Name: "torchao-0.17-ceil", Summary: "torchao 0.16-0.18 CEIL: ceil, but an infinite amax gives code 253",
		Source: aoSrc, rule: scaleAOCeil}
	// TorchAO017Even is torchao v0.16-v0.18 EVEN: an amax whose rounding
	// carries into the exponent field 255, and an infinite amax, give 253.
	TorchAO017Even = ScaleMode{Name: "torchao-0.17-even", Summary: "torchao 0.16-0.18 EVEN: even, but a carry to (or an amax of) Inf gives code 253",
		Source: aoSrc, rule: scaleAOEven}
	// TorchAO017RCeil is torchao v0.16-v0.18 RCEIL: ceil(log2(amax/max))
	// with log2 a float32 function (a quotient just above 2^k whose log2
	// rounds to k gives k), clamped to [-127, 127]; NaN gives 0xFF.
	TorchAO017RCeil = ScaleMode{Name: "torchao-0.17-rceil", Summary: "torchao 0.16-0.18 RCEIL: ceil of float32 log2(amax/6) clamped to [-127, 127]",
		Source: aoSrc, rule: scaleAORCeil}
	// ModelOpt5a4242faCPU is ModelOpt MXFP4QTensor.quantize on the CPU:
	// ceil(max(log2(amax/max), -127)) with a float32 log2, cast to uint8
	// after adding 127; a NaN or infinite amax casts to 0 (x86-64).
	ModelOpt5a4242faCPU = ScaleMode{Name: "modelopt-5a4242fa-cpu", Summary: "ModelOpt MXFP4QTensor: ceil(max(float32 log2(amax/6), -127)); NaN/Inf amax -> 0 (x86 cast)",
		Source: moSrc, rule: scaleMOCPU}
	// ModelOpt5a4242faCUDA is ModelOpt on CUDA: amax times float32(1/max)
	// (torch on CUDA divides by a scalar through its reciprocal); an
	// infinite amax casts to 0xFF and a NaN amax to 0 (saturating cvt).
	ModelOpt5a4242faCUDA = ScaleMode{Name: "modelopt-5a4242fa-cuda", Summary: "ModelOpt MXFP4QTensor on CUDA: amax*(1/6), float32 log2, ceil; Inf amax -> 0xFF, NaN -> 0",
		Source: moSrc, rule: scaleMOCUDA}
	// Microxcaling7bc41952 is microxcaling's _shared_exponents and
	// _quantize_mx: floor(log2(amax)) with a float32 log2 (an amax just
	// below 2^k gives k), amax 0 replaced by 2^-126, minus emax; above 127
	// is NaN (0xFF), below -127 clamps to -127. CPU and CUDA agree.
	Microxcaling7bc41952 = ScaleMode{Name: "microxcaling-7bc41952", Summary: "microxcaling: floor of float32 log2(amax) - emax; above 127 NaN (0xFF)",
		Source: mxSrc, rule: scaleMX}
	// CompressedTensorsAc8e2ba8CPU is compressed-tensors' MXFP4 scale on
	// the CPU: amax's float32 bits plus half an E2M1 ulp (1<<21), masked
	// to sign and exponent (so a carry rounds up, as Even), log2, minus
	// emax, clamped to [0, 255] as a uint8 code, then back through
	// 2^(code-127) and 127 + int32(floor(log2)), cast to uint8. A carry
	// to Inf ends as int32(Inf) = INT_MIN on x86-64: code 0x7F. A NaN amax
	// is taken with its own bits, sign cleared, as torch's scalar loop
	// passes it (the record's NaN sits in the scalar tail of its tensor;
	// torch's vectorized minimum/maximum would make it 0xFFFFFFFF, code 0,
	// which the mxfp4 recipe models by position): 0x7FC00000 carries to
	// Inf, code 0x7F.
	CompressedTensorsAc8e2ba8CPU = ScaleMode{Name: "compressed-tensors-ac8e2ba8-cpu", Summary: "compressed-tensors MXFP4: even by a bit carry; Inf -> 0x7F (x86 int32 cast)",
		Source: ctSrc, rule: scaleCTCPU}
	// CompressedTensorsAc8e2ba8CUDA is compressed-tensors on CUDA: a carry
	// to Inf gives int32(Inf) = INT_MAX, code 0x7E; a NaN amax is
	// 0x7FFFFFFF, whose carry clears every bit but the sign: -0, code 0.
	CompressedTensorsAc8e2ba8CUDA = ScaleMode{Name: "compressed-tensors-ac8e2ba8-cuda", Summary: "compressed-tensors MXFP4 on CUDA: even by a bit carry; Inf -> 0x7E, NaN -> 0",
		Source: ctSrc, rule: scaleCTCUDA}
)

const (
	aoSrc = "pytorch/ao torchao/prototype/mx_formats/mx_tensor.py to_mx at v0.17.0 (02105d46; v0.16.0 3c1065ca and v0.18.0 5f2baf9d compute the same scales), recorded by conformance/harness/torchao/mx.py"
	moSrc = "NVIDIA/Model-Optimizer modelopt/torch/quantization/qtensor/mxfp4_tensor.py MXFP4QTensor.quantize at 5a4242faf414, recorded by conformance/harness/modelopt/mx.py"
	mxSrc = "microsoft/microxcaling mx/mx_ops.py _shared_exponents and _quantize_mx at 7bc41952de39, recorded by conformance/harness/microxcaling/run.py"
	ctSrc = "vllm-project/compressed-tensors src/compressed_tensors/quantization/utils/mxfp_utils.py generate_mx_scales and compressors/mx_utils.py compress_mx_scale at ac8e2ba82f4e, recorded by conformance/harness/compressed-tensors/mx.py"
)

const (
	scaleAOFloor scaleRule = iota + 16
	scaleAOCeil
	scaleAOEven
	scaleAORCeil
	scaleMOCPU
	scaleMOCUDA
	scaleMX
	scaleCTCPU
	scaleCTCUDA
)

// LibraryScaleModes lists the library scale modes.
func LibraryScaleModes() []ScaleMode {
	return []ScaleMode{TorchAO017Floor, TorchAO017Ceil, TorchAO017Even, TorchAO017RCeil, ModelOpt5a4242faCPU, ModelOpt5a4242faCUDA,
		Microxcaling7bc41952, CompressedTensorsAc8e2ba8CPU, CompressedTensorsAc8e2ba8CUDA}
}

// Log2F32 is log2 as a float32 function: float32(log2(x)) rounded once
// from float64, which is what torch's float32 log2 returns on every
// input the records hold (CPU and CUDA agree on them).
func Log2F32(x float32) float32 { return float32(math.Log2(float64(x))) }

// CastInt32 converts float64 v, truncating toward zero, as C++'s
// static_cast<int32_t> compiles on the device: x86-64 cvttss2si gives
// INT_MIN for NaN, ±Inf and out-of-range values; CUDA (cvt.rzi.s32)
// saturates and gives 0 for NaN.
func CastInt32(v float64, cuda bool) int32 {
	switch {
	case v != v:
		if cuda {
			return 0
		}
		return math.MinInt32
	case v >= 1<<31:
		if cuda {
			return math.MaxInt32
		}
		return math.MinInt32
	case v <= -1<<31-1:
		return math.MinInt32
	}
	return int32(v)
}

// CastUint8 converts float64 v to uint8 as torch's .to(torch.uint8) does
// on the device: the CPU truncates through int32 (CastInt32) and keeps
// the low byte; CUDA saturates to [0, 255], NaN to 0.
func CastUint8(v float64, cuda bool) uint8 {
	if cuda {
		switch {
		case v != v || v <= 0:
			return 0
		case v >= 255:
			return 255
		}
		return uint8(v)
	}
	return uint8(CastInt32(v, false))
}

// libraryScale is SharedScale for the library modes.
func libraryScale(amax float32, mode ScaleMode, emaxElem int, maxElem float32) uint8 {
	a := math.Float32bits(amax) &^ (1 << 31)
	switch mode.rule {
	case scaleAOFloor, scaleAOCeil, scaleAOEven:
		if a > 0x7F800000 {
			return NaN
		}
		if mode.rule == scaleAOEven {
			if mb := mantissaBits(maxElem); mb < 23 {
				a += 1 << (22 - mb)
			}
			a &= 0x7F800000
		}
		if a == 0x7F800000 {
			// The exponent field 255 read as the exponent 128.
			return biasClamp(128 - emaxElem)
		}
		return biasClamp(log2Floor(a, mode.rule == scaleAOCeil) - emaxElem)
	case scaleAORCeil:
		if a > 0x7F800000 {
			return NaN
		}
		c := math.Ceil(float64(Log2F32(math.Float32frombits(a) / maxElem)))
		return uint8(math.Max(-127, math.Min(127, c)) + 127)
	case scaleMOCPU, scaleMOCUDA:
		return ModelOptScale(math.Float32frombits(a), maxElem, mode.rule == scaleMOCUDA)
	case scaleMX:
		se := MicroxcalingExp(math.Float32frombits(a), emaxElem)
		if se != se {
			return NaN
		}
		return uint8(int(se) + 127)
	case scaleCTCPU, scaleCTCUDA:
		if cuda := mode.rule == scaleCTCUDA; cuda && a > 0x7F800000 {
			// torch on CUDA returns 0x7FFFFFFF for the NaN of max_val_pos.
			a = 0x7FFFFFFF
		}
		return CompressedTensorsScale(a, emaxElem, mode.rule == scaleCTCUDA)
	}
	panic("e8m0: not a library scale mode")
}

// ModelOptScale is ModelOpt's E8M0 code for a block amax (non-negative,
// or NaN): (ceil(max(log2(amax/max), -127)) + 127).to(uint8), the
// division a float32 one on the CPU and amax*float32(1/max) on CUDA.
func ModelOptScale(amax, maxElem float32, cuda bool) uint8 {
	return CastUint8(ModelOptExp(amax, maxElem, cuda)+127, cuda)
}

// ModelOptExp is ModelOpt's unbiased scale exponent, as a float (NaN and
// +Inf included): ceil(max(log2(descale), -127)).
func ModelOptExp(amax, maxElem float32, cuda bool) float64 {
	var d float32
	if cuda {
		d = amax * (1 / maxElem)
	} else {
		d = amax / maxElem
	}
	l := float64(Log2F32(d))
	if l != l {
		return l
	}
	return math.Ceil(math.Max(l, -127))
}

// MicroxcalingExp is microxcaling's shared exponent for a float32 amax
// (non-negative, or NaN): floor(log2(amax)) with amax 0 read as 2^-126,
// minus emaxElem; NaN above 127, -127 below -127.
func MicroxcalingExp(amax float32, emaxElem int) float64 {
	if amax == 0 {
		amax = 0x1p-126
	}
	se := math.Floor(float64(Log2F32(amax))) - float64(emaxElem)
	switch {
	case se != se || se > 127:
		return math.NaN()
	case se < -127:
		return -127
	}
	return se
}

// CompressedTensorsScale is compressed-tensors' E8M0 code for the float32
// bits of a block's max_val_pos (max(|min|, |max|), which torch leaves a
// NaN's payload in): round_to_power_2 (bits + 1<<21, masked to sign and
// exponent), 127 + floor(log2) - emaxElem clamped to [0, 255] and rounded
// to uint8, back to 2^(code-127) as float32, and 127 + int32(floor(log2))
// cast to uint8.
func CompressedTensorsScale(bits uint32, emaxElem int, cuda bool) uint8 {
	p := math.Float32frombits((bits + 1<<21) & 0xFF800000)
	v := 127 + math.Floor(float64(Log2F32(p))) - float64(emaxElem)
	v = math.Round(clampNaN(v, 0, 255))
	c := float64(CastUint8(v, cuda))
	s := float32(math.Pow(2, c-127))
	e := CastInt32(math.Floor(float64(Log2F32(s))), cuda)
	return uint8(127 + e)
}

// clampNaN is torch.clamp: NaN stays NaN.
func clampNaN(v, lo, hi float64) float64 {
	if v != v {
		return v
	}
	return math.Max(lo, math.Min(hi, v))
}
