package mutants

import (
	"math"

	"github.com/bitexact/bitexact/refimpl/e8m0"
	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/mxfp4"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// Faulty MXFP4 and llama.cpp ops the suites' mutants run: MXFP4 with an RZ
// scale, quantize_q8_1 with another rounding, and the MXFP4 x Q8_1 GEMV
// written out with ggml's NaN-free E8M0 decode.

// mxfp4ScaleRZ is MXFP4 quantize with the scale e8m0 RZ of amax/6.
func mxfp4ScaleRZ(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	x := in["x"]
	m, k := x.Shape[0], x.Shape[1]
	prof, err := fp4.Lookup(p.Get("profile", "nvidia"))
	if err != nil {
		return nil, err
	}
	xs := x.F32()
	packed := make([]uint8, m*k/2)
	scales := make([]uint8, m*k/32)
	for b := range scales {
		bx := xs[32*b : 32*b+32]
		var amax float32
		nonfinite := false
		for _, v := range bx {
			if v != v || math.IsInf(float64(v), 0) {
				nonfinite = true
			}
			amax = max(amax, float32(math.Abs(float64(v))))
		}
		sc := uint8(0xFF)
		if !nonfinite {
			sc = e8m0.RZ.Encode(amax / 6)
		}
		scales[b] = sc
		for i, v := range bx {
			var c uint8
			if sc == 0xFF || v != v {
				c = prof.Encode(math.Float32frombits(0x7fc00000))
			} else {
				c = prof.Encode(v * mxfp4.Pow2(127-int(sc)))
			}
			packed[(32*b+i)/2] |= (c & 15) << (4 * (i % 2))
		}
	}
	pt := tensor.FromU8([]int{m, k / 2}, packed)
	pt.Logical = "e2m1x2"
	st := tensor.FromU8([]int{m, k / 32}, scales)
	st.Logical = "e8m0"
	return ops.Tensors{"packed": pt, "scales": st}, nil
}

// q81CUDA is llama.cpp's quantize_q8_1 CUDA kernel written out, with the
// rounding of x/d given: math.Round (roundf, ties away) is the kernel.
func q81CUDA(round func(float64) float64) func(ops.Params, ops.Tensors) (ops.Tensors, error) {
	return func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
		return q81CUDAWith(round, in)
	}
}

func q81CUDAWith(round func(float64) float64, in ops.Tensors) (ops.Tensors, error) {
	x := in["x"]
	if err := x.Expect("x", tensor.F32); err != nil {
		return nil, err
	}
	xs := x.F32()
	out := make([]byte, 0, len(xs)/32*36)
	canon := func(v float32) float32 {
		if v != v {
			return math.Float32frombits(0x7fc00000)
		}
		return v
	}
	h := func(v float32) uint16 {
		if v != v {
			return 0x7FFF
		}
		return half.EncodeFP16(v)
	}
	for b := 0; b < len(xs)/32; b++ {
		bx := xs[32*b : 32*b+32]
		var amax float32
		for _, v := range bx {
			if a := float32(math.Abs(float64(v))); a > amax {
				amax = a
			}
		}
		var sum [32]float32
		copy(sum[:], bx)
		for off := 16; off > 0; off >>= 1 {
			for l := 0; l < off; l++ {
				sum[l] = canon(sum[l] + sum[l+off])
			}
		}
		d := amax / 127
		var qs [32]byte
		for j, v := range bx {
			if amax == 0 {
				continue
			}
			r := round(float64(canon(v / d)))
			var q int8
			switch {
			case r != r:
			case r >= math.MaxInt32:
				q = -1
			case r <= math.MinInt32:
			default:
				q = int8(int32(r))
			}
			qs[j] = byte(q)
		}
		hd, hs := h(d), h(sum[0])
		out = append(out, byte(hd), byte(hd>>8), byte(hs), byte(hs>>8))
		out = append(out, qs[:]...)
	}
	t := tensor.FromU8([]int{len(xs) / 32, 36}, out)
	t.Logical = "block_q8_1"
	return ops.Tensors{"blocks": t}, nil
}

// gemvMXFP4Seq is gemv.mxfp4_q8_1 under the seq schedule written out
// (one float32 accumulator over K in element order, acc = float32(d *
// float32(k*q)) + acc, d = float32(scale(e) * fp16(d8))), with the E8M0
// weight scale 2^(e-128) decoded by ggml's GGML_E8M0_TO_FP32_HALF (0xFF ->
// 2^127, finite) when ggmlHalf is set, else as the reference (0xFF ->
// NaN).
func gemvMXFP4Seq(ggmlHalf bool) func(ops.Params, ops.Tensors) (ops.Tensors, error) {
	return func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
		w, act := in["w"], in["act"]
		if err := w.Expect("w", tensor.U8, -1, -1, 17); err != nil {
			return nil, err
		}
		n, nb := w.Shape[0], w.Shape[1]
		kv := [16]float32{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}
		y := make([]float32, n)
		for row := 0; row < n; row++ {
			var acc float32
			for b := 0; b < nb; b++ {
				blk := w.Data[(row*nb+b)*17 : (row*nb+b+1)*17]
				a := act.Data[b*36 : (b+1)*36]
				d8 := half.DecodeFP16(uint16(a[0]) | uint16(a[1])<<8)
				sc := e8m0.Decode(blk[0]) * 0.5
				if ggmlHalf {
					sc = ggmlE8M0Half(blk[0])
				}
				d := sc * d8
				for j := 0; j < 32; j++ {
					c := blk[1+j%16] & 15
					if j >= 16 {
						c = blk[1+j%16] >> 4
					}
					prod := float32(kv[c] * float32(int8(a[4+j])))
					acc = float32(d*prod) + acc
				}
			}
			y[row] = canonNaN(acc)
		}
		return ops.Tensors{"y": tensor.FromF32([]int{n}, y)}, nil
	}
}

// ggmlE8M0Half is GGML_E8M0_TO_FP32_HALF (ggml/src/ggml-impl.h): 2^(e-128)
// from bits, with no NaN (0xFF -> 2^127).
func ggmlE8M0Half(e uint8) float32 {
	if e < 2 {
		return math.Float32frombits(0x00200000 << e)
	}
	return math.Float32frombits(uint32(e-1) << 23)
}
