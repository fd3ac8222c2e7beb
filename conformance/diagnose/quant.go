package diagnose

import (
	"math"

	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/refimpl/awq"
	"github.com/bitexact/bitexact/refimpl/e8m0"
	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/mxfp4"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// The truncating scale cast and the reciprocal element scaling, modelled
// for NVFP4 in nvfp4Steps, for MXFP4 and AWQ.
//
// MXFP4's scale is a power of two, so the element scaling x / 2^E and
// x * (1/2^E) are the same correctly rounded product on every input (1/2^E
// is exact for every E8M0 code; TestMXFP4ReciprocalEquivalent checks it):
// there is no reciprocal class to tell apart. Its truncating cast is the
// RCEIL recipe (amax / 6 cast to E8M0) with cvt.rz.satfinite.ue8m0x2 in
// place of cvt.rp: the scale exponent floor(log2(amax/6)).

// mxfp4RZ is mxfp4.quantize with the scale code e8m0.RZ(float32(amax/6)),
// the elements scaled and encoded as the reference does.
func mxfp4RZ(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
	x, ok := t.Inputs["x"]
	if !ok || x.DType != tensor.F32 || len(x.Shape) != 2 || x.Shape[1]%mxfp4.BlockSize != 0 {
		return nil, false, nil
	}
	p, err := fp4.Lookup(t.Params.Get("profile", "nvidia"))
	if err != nil {
		return nil, false, nil
	}
	xs := x.F32()
	qnan := math.Float32frombits(0x7fc00000)
	scales := make([]uint8, len(xs)/mxfp4.BlockSize)
	packed := make([]uint8, len(xs)/2)
	for blk := range scales {
		bx := xs[blk*mxfp4.BlockSize : (blk+1)*mxfp4.BlockSize]
		amax := mxfp4.BlockAmax(bx)
		sc := uint8(mxfp4.NaNScale)
		if amax == amax && !math.IsInf(float64(amax), 0) {
			sc = e8m0.RZ.Encode(amax / mxfp4.MaxElem)
		}
		scales[blk] = sc
		out := packed[blk*mxfp4.BlockSize/2 : (blk+1)*mxfp4.BlockSize/2]
		if sc == mxfp4.NaNScale {
			c := p.Encode(qnan) & 0xF
			for i := range out {
				out[i] = c | c<<4
			}
			continue
		}
		inv := mxfp4.Pow2(127 - int(sc))
		el := func(v float32) uint8 {
			if v != v {
				return p.Encode(qnan)
			}
			return p.Encode(v * inv)
		}
		for i := 0; i < mxfp4.BlockSize; i += 2 {
			out[i/2] = el(bx[i])&0xF | el(bx[i+1])<<4
		}
	}
	m, k := x.Shape[0], x.Shape[1]
	pt := tensor.FromU8([]int{m, k / 2}, packed)
	pt.Logical = "e2m1x2"
	st := tensor.FromU8([]int{m, k / mxfp4.BlockSize}, scales)
	st.Logical = "e8m0"
	return ops.Tensors{"packed": pt, "scales": st}, true, nil
}

// fp16RZ rounds a float32 to fp16 toward zero; finite values past the range
// give the largest finite fp16 of their sign.
func fp16RZ(x float32) uint16 {
	h := half.EncodeFP16(x)
	if x != x || math.IsInf(float64(x), 0) {
		return h
	}
	if v := half.DecodeFP16(h); math.Abs(float64(v)) > math.Abs(float64(x)) {
		h-- // one magnitude step down, same sign (Inf steps to 0x7bff)
	}
	return h
}

// awqForgeSteps is the forge quantizer (refimpl/awq Forge) written out, with
// the fp16 scale cast rounding toward zero (rz) or the division w / s done
// as w * float32(1/s) (rcp). With neither it equals awq.Quantize under
// Forge (TestAWQForgeSteps). Other quantizers do not apply.
func awqForgeSteps(t Task, rz, rcp bool) (ops.Tensors, bool, error) {
	if t.Params.Get("quantizer", "forge") != "forge" {
		return nil, false, nil
	}
	w, ic, oc, g, ok := awqQuantizeShape(t)
	if !ok {
		return nil, false, nil
	}
	wb := w.Bits16()
	q := make([]int32, ic*oc)
	zs := make([]int32, ic/g*oc)
	sc := make([]uint16, ic/g*oc)
	for grp := 0; grp < ic/g; grp++ {
		for n := 0; n < oc; n++ {
			var absmax float32
			for k := grp * g; k < (grp+1)*g; k++ {
				b := wb[k*oc+n]
				if b&0x7C00 == 0x7C00 {
					return nil, false, nil // forge refuses non-finite weights
				}
				absmax = max(absmax, half.DecodeFP16(b&0x7FFF))
			}
			var s uint16
			if rz {
				s = fp16RZ(absmax / 7)
			} else {
				s = half.EncodeFP16(absmax / 7)
			}
			sc[grp*oc+n], zs[grp*oc+n] = s, 8
			sf := half.DecodeFP16(s)
			r := 1 / sf
			for k := grp * g; k < (grp+1)*g; k++ {
				v := 0.0
				if sf != 0 {
					x := half.DecodeFP16(wb[k*oc+n])
					if rcp {
						v = math.RoundToEven(float64(x * r))
					} else {
						v = math.RoundToEven(float64(x / sf))
					}
					v = math.Max(-8, math.Min(7, v))
				}
				q[k*oc+n] = int32(v) + 8
			}
		}
	}
	return ops.Tensors{
		"qweight": packWords(q, ic, oc, awq.OrderAWQ),
		"qzeros":  packWords(zs, ic/g, oc, awq.OrderAWQ),
		"scales":  tensor.FromBits16(tensor.F16, []int{ic / g, oc}, sc),
	}, true, nil
}

func mxfp4StepAlternatives() []Alternative {
	return []Alternative{{Class: "scale-cast:rz", Doc: "E8M0 scale cast of amax/6 rounding toward zero (cvt.rz.satfinite.ue8m0x2 where the RCEIL recipe rounds up): exponent floor(log2(amax/6))",
		Compute: mxfp4RZ}}
}

func awqStepAlternatives() []Alternative {
	return []Alternative{
		{Class: "scale-cast:rz", Doc: "fp16 scale cast rounding toward zero (__float2half_rz) instead of to nearest even",
			Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) { return awqForgeSteps(t, true, false) }},
		{Class: "element-rule:mul-rcp-d", Doc: "weights scaled by w * float32(1/s) instead of w / s",
			Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) { return awqForgeSteps(t, false, true) }},
	}
}

// awqQuantizeShape reads an awq.quantize task's fp16 weight [ic, oc] and
// group size (-1: the whole of ic); ok is false where the task is not one
// the AWQ alternatives can rerun.
func awqQuantizeShape(t Task) (w tensor.Tensor, ic, oc, g int, ok bool) {
	w, ok = t.Inputs["w"]
	if !ok || w.DType != tensor.F16 || len(w.Shape) != 2 {
		return w, 0, 0, 0, false
	}
	ic, oc = w.Shape[0], w.Shape[1]
	g, err := t.Params.Int("group", 128)
	if err != nil {
		return w, 0, 0, 0, false
	}
	if g == -1 {
		g = ic
	}
	return w, ic, oc, g, g > 0 && ic%g == 0 && oc%8 == 0
}
