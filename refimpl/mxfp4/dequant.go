package mxfp4

import (
	"math"

	"github.com/bitexact/bitexact/refimpl/fp4"
)

// Dequantizer is one way to expand MXFP4 to float32, as data: the value
// of mxfp4.dequantize's "profile" parameter. DequantDefault is the
// reference (Dequantize, with the NaN convention of the op's nan
// parameter); every other one is a library's dequantize recorded on one
// device, NaN bits included, and internal/conformance/record's tests hold it to the
// records under conformance/harness/<library>/records/mxfp4-dequantize.
type Dequantizer struct {
	// Name is <library>-<version|commit>-<cpu|cuda>, the library recipes'
	// scheme (the quantize recipe of the same library and device has the
	// same name), or "default".
	Name string
	// Summary says in one line what the dequantizer does differently.
	Summary string
	// Source is the code reproduced: repository, path, commit.
	Source string
	style  dequantStyle
	device Device
}

type dequantStyle uint8

const (
	// dequantReference is Dequantize.
	dequantReference dequantStyle = iota
	// dequantModelOpt is ModelOpt 5a4242fa MXFP4QTensor.dequantize
	// (modelOptDequantize).
	dequantModelOpt
)

// The dequantizers.
var (
	DequantDefault = Dequantizer{Name: "default",
		Summary: "OCP MX v1.0: float32(e2m1(c) * 2^(scale-127)), every element of a scale-0xFF block NaN (bits per the nan convention)",
		Source:  "OCP Microscaling Formats (MX) v1.0 §5.3, §6.3"}
	ModelOptDequantCPU = Dequantizer{Name: "modelopt-5a4242fa-cpu",
		Summary: "ModelOpt MXFP4QTensor.dequantize on the CPU: (±e2m1) * exp2(scale-127), so scale 0xFF gives ±Inf, and ±0 * Inf the x86 default NaN 0xFFC00000",
		Source:  moDequantSource, style: dequantModelOpt, device: CPU}
	ModelOptDequantCUDA = Dequantizer{Name: "modelopt-5a4242fa-cuda",
		Summary: "ModelOpt MXFP4QTensor.dequantize on CUDA: as on the CPU, with exp2(-127) = 0x003FFFFF (one ulp low) and 0x7FFFFFFF for ±0 * Inf",
		Source:  moDequantSource, style: dequantModelOpt, device: CUDA}
)

const moDequantSource = "NVIDIA/Model-Optimizer modelopt/torch/quantization/qtensor/mxfp4_tensor.py MXFP4QTensor.dequantize at 5a4242faf414 (run on CPU and CUDA by conformance/harness/modelopt/mx.py)"

var dequantizers = []Dequantizer{DequantDefault, ModelOptDequantCPU, ModelOptDequantCUDA}

// Dequantizers lists the dequantizers, DequantDefault first.
func Dequantizers() []Dequantizer { return append([]Dequantizer(nil), dequantizers...) }

// LookupDequantizer returns the dequantizer with the given name.
func LookupDequantizer(name string) (Dequantizer, bool) {
	for _, d := range dequantizers {
		if d.Name == name {
			return d, true
		}
	}
	return Dequantizer{}, false
}

// String returns the dequantizer's name.
func (d Dequantizer) String() string { return d.Name }

// Recorded reports whether d is a library's recorded dequantizer, whose
// NaN bits are its device's (no NaN convention applies to it).
func (d Dequantizer) Recorded() bool { return d.style != dequantReference }

// Dequantize expands q to row-major float32 as d does (DequantDefault:
// Dequantize).
func (d Dequantizer) Dequantize(q Quantized) ([]float32, error) {
	if d.style == dequantReference {
		return Dequantize(q)
	}
	if err := q.check(); err != nil {
		return nil, err
	}
	y := make([]float32, q.Rows*q.Cols)
	for blk, sc := range q.Scales {
		s := d.modelOptScale(sc)
		for i := 0; i < BlockSize; i++ {
			j := blk*BlockSize + i
			y[j] = d.device.mul(fp4.Decode(q.code(j)), s)
		}
	}
	return y, nil
}

// modelOptScale is ModelOpt's torch.exp2(scale.float() - 127) on d's
// device: 2^(code-127) exactly, +Inf for code 0xFF (2^128 overflows),
// except that CUDA's exp2 gives 2^-127 one ulp low, 0x003FFFFF (the
// record's scale-code-0 row: 1.0 * exp2(-127) is 0x003FFFFF; every other
// code's power is exact there). The elements are sign * e2m1 value, exact,
// so y is one float32 product: ±Inf for a nonzero element of a 0xFF block
// and the device's NaN for ±0 * Inf.
func (d Dequantizer) modelOptScale(sc uint8) float32 {
	switch {
	case sc == NaNScale:
		return float32(math.Inf(1))
	case sc == 0 && d.device == CUDA:
		return math.Float32frombits(0x003FFFFF)
	}
	return Pow2(int(sc) - 127)
}
