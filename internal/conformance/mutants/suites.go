package mutants

import (
	"math"

	"github.com/bitexact/bitexact/refimpl/awq"
	"github.com/bitexact/bitexact/refimpl/e8m0"
	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/fp8"
	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/mxfp4"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/sparse24"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// Mutants of the decoders, dequantizers, layout ops, the AWQ quantizers
// and the fp16/bf16-input suites. Each Doc names the public code or report
// that went wrong the same way.

// mapF32 rewrites every element of the F32 output name.
func mapF32(name string, f func(uint32) uint32) func(ops.Tensors) ops.Tensors {
	return func(out ops.Tensors) ops.Tensors {
		t := out[name]
		b := t.Bits32()
		for i, v := range b {
			b[i] = f(v)
		}
		y := tensor.FromBits32(tensor.F32, t.Shape, b)
		y.Logical = t.Logical
		out[name] = y
		return out
	}
}

// mapF16 rewrites every element of the F16 output name.
func mapF16(name string, f func(uint16) uint16) func(ops.Tensors) ops.Tensors {
	return func(out ops.Tensors) ops.Tensors {
		t := out[name]
		b := t.Bits16()
		for i, v := range b {
			b[i] = f(v)
		}
		y := tensor.FromBits16(t.DType, t.Shape, b)
		y.Logical = t.Logical
		out[name] = y
		return out
	}
}

// rewriteInput runs op on its inputs with the bytes of one input rewritten:
// the kernel reads that input in another layout.
func rewriteInput(op, name string, f func([]byte) []byte) func(ops.Params, ops.Tensors) (ops.Tensors, error) {
	return func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
		q := ops.Tensors{}
		for k, v := range in {
			q[k] = v
		}
		x := q[name]
		x.Data = f(append([]byte{}, x.Data...))
		q[name] = x
		return ops.Run(op, p, q)
	}
}

func eachByte(f func(byte) byte) func([]byte) []byte {
	return func(d []byte) []byte {
		for i, b := range d {
			d[i] = f(b)
		}
		return d
	}
}

func swapByte(b byte) byte { return b<<4 | b>>4 }

// decodeCodes maps the U8 input "codes" to a float32 output "x".
func decodeCodes(f func(ops.Params, uint8) float32) func(ops.Params, ops.Tensors) (ops.Tensors, error) {
	return func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
		c := in["codes"]
		if err := c.Expect("codes", tensor.U8); err != nil {
			return nil, err
		}
		y := make([]float32, len(c.Data))
		for i, b := range c.Data {
			y[i] = f(p, b)
		}
		return ops.Tensors{"x": tensor.FromF32(c.Shape, y)}, nil
	}
}

// formulaDecode decodes a sign-magnitude minifloat code as
// (-1)^s 2^(e-bias) (1 + m/2^M) for every code: no subnormal, zero or
// special-value branch.
func formulaDecode(b uint8, expBits, manBits, bias int) float32 {
	w := 1 + expBits + manBits
	mag := int(b) & (1<<(w-1) - 1)
	e, m := mag>>manBits, mag&(1<<manBits-1)
	v := float32(math.Ldexp(1+float64(m)/float64(int(1)<<manBits), e-bias))
	if b>>(w-1)&1 == 1 {
		v = -v
	}
	return v
}

func fp8Of(p ops.Params) fp8.Format {
	f, err := fp8.LookupFormat(p.Get("format", "e4m3"))
	if err != nil {
		return fp8.E4M3
	}
	return f
}

// awqDequant is vLLM's AWQ dequantization (GEMM layout) written out:
// nibble p of a word holds column 8j+order[p]; w = fp16((u - (z+zeroPlus)) * s),
// the product correctly rounded; negZero keeps a -0 product (triton),
// otherwise -0 becomes +0 (the CUDA kernel's fma with +0); zeroIgnored uses
// the implicit zero point 8.
func awqDequant(order [8]int, zeroPlus int, negZero, zeroIgnored bool) func(ops.Params, ops.Tensors) (ops.Tensors, error) {
	return func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
		qw, qz, sc := in["qweight"], in["qzeros"], in["scales"]
		if err := qw.Expect("qweight", tensor.I32, -1, -1); err != nil {
			return nil, err
		}
		ic, oc := qw.Shape[0], 8*qw.Shape[1]
		g := ic / sc.Shape[0]
		words, zw, s := qw.I32(), qz.I32(), sc.Bits16()
		nib := func(w int32, col int) int {
			for p, c := range order {
				if c == col%8 {
					return int(uint32(w) >> (4 * p) & 15)
				}
			}
			panic("order")
		}
		out := make([]uint16, ic*oc)
		for k := 0; k < ic; k++ {
			for n := 0; n < oc; n++ {
				u := nib(words[k*oc/8+n/8], n)
				z := (nib(zw[(k/g)*oc/8+n/8], n) + zeroPlus) & 15
				if zeroIgnored {
					z = 8
				}
				v := float32(u-z) * half.DecodeFP16(s[(k/g)*oc+n])
				h := half.EncodeFP16(v)
				switch {
				case v != v:
					h = 0x7FFF // NVIDIA's canonical fp16 NaN
				case h == 0x8000 && !negZero:
					h = 0
				}
				out[k*oc+n] = h
			}
		}
		return ops.Tensors{"w": tensor.FromBits16(tensor.F16, []int{ic, oc}, out)}, nil
	}
}

// reorderMeta is sparse24.reorder_meta written out with layout l, one of
// refimpl/sparse24's layouts with a field changed (wide: 32-bit
// metadata).
func reorderMeta(wide bool, l sparse24.MetaReorder) func(ops.Params, ops.Tensors) (ops.Tensors, error) {
	return func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
		m := in["meta"]
		n, k := m.Shape[0], 8*m.Shape[1]
		at := func(r, c int) int { return l.Offset(r, c, n) }
		if wide {
			v, err := sparse24.MetaTo32(m.Data, n, k)
			if err != nil {
				return nil, err
			}
			return ops.Tensors{"meta_reordered": tensor.FromBits32(tensor.I32, []int{n, k / 32}, permuted(v, n, k/32, at))}, nil
		}
		v, err := sparse24.MetaTo16(m.Data, n, k)
		if err != nil {
			return nil, err
		}
		return ops.Tensors{"meta_reordered": tensor.FromBits16(tensor.I16, []int{n, k / 16}, permuted(v, n, k/16, at))}, nil
	}
}

// withoutSwap is layout l without its 2x2 swap.
func withoutSwap(l sparse24.MetaReorder) sparse24.MetaReorder {
	l.Swap = false
	return l
}

// permuted moves element (r, c) of the n x cols row-major v to at(r, c).
func permuted[T uint16 | uint32](v []T, n, cols int, at func(r, c int) int) []T {
	o := make([]T, len(v))
	for r := 0; r < n; r++ {
		for c := 0; c < cols; c++ {
			o[at(r, c)] = v[r*cols+c]
		}
	}
	return o
}

// unreorderNoSwap inverts the 16-bit reorder without the 2x2 swap.
func unreorderNoSwap(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	m := in["meta_reordered"]
	n, cols := m.Shape[0], m.Shape[1]
	v := m.Bits16()
	o := make([]uint16, len(v))
	l := withoutSwap(sparse24.Meta16)
	for r := 0; r < n; r++ {
		for c := 0; c < cols; c++ {
			o[r*cols+c] = v[l.Offset(r, c, n)]
		}
	}
	b, err := sparse24.MetaFrom16(o, n, 16*cols)
	if err != nil {
		return nil, err
	}
	return ops.Tensors{"meta": tensor.FromU8([]int{n, 2 * cols}, b)}, nil
}

// swizzleFault is one way of getting the 128x4 scale layout wrong.
type swizzleFault int

const (
	// swizzleExact is the layout as nvfp4.swizzle writes it.
	swizzleExact swizzleFault = iota
	// swizzleTilesFloor rounds the count of 4-column tiles down.
	swizzleTilesFloor
	// swizzleTileRowMajor stores each 128x4 tile row-major instead of
	// the 32x4x4 interleave.
	swizzleTileRowMajor
	// swizzleTileColMajor stores each 128x4 tile column-major.
	swizzleTileColMajor
	// swizzleLinear writes the scales row-major, each row padded to a
	// multiple of 4 (no swizzle at all).
	swizzleLinear
)

// swizzleOffset is the 128x4 scale layout's offset of scale (m, k) under
// a fault.
func swizzleOffset(m, k, sfCols int, fault swizzleFault) int {
	nKt := (sfCols + 3) / 4
	switch fault {
	case swizzleTilesFloor:
		nKt = sfCols / 4
	case swizzleTileColMajor:
		return ((m/128)*nKt+k/4)*512 + (k%4)*128 + m%128
	case swizzleLinear:
		return m*((sfCols+3)/4*4) + k
	}
	in := (m%32)*16 + ((m/32)%4)*4
	if fault == swizzleTileRowMajor {
		in = (m % 128) * 4
	}
	return ((m/128)*nKt+k/4)*512 + in + k%4
}

func swizzledLen(rows, cols int) int { return (rows + 127) / 128 * 128 * ((cols + 3) / 4 * 4) }

// swizzle is nvfp4.swizzle written out with a fault.
func swizzle(fault swizzleFault) func(ops.Params, ops.Tensors) (ops.Tensors, error) {
	return func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
		s := in["scales"]
		rows, cols := s.Shape[0], s.Shape[1]
		out := make([]uint8, swizzledLen(rows, cols))
		for m := 0; m < rows; m++ {
			for k := 0; k < cols; k++ {
				if o := swizzleOffset(m, k, cols, fault); o < len(out) {
					out[o] = s.Data[m*cols+k]
				}
			}
		}
		t := tensor.FromU8([]int{len(out)}, out)
		t.Logical = s.Logical
		return ops.Tensors{"swizzled": t}, nil
	}
}

// unswizzle is nvfp4.unswizzle written out with a fault.
func unswizzle(fault swizzleFault) func(ops.Params, ops.Tensors) (ops.Tensors, error) {
	return func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
		rows, err := p.Int("rows", 0)
		if err != nil {
			return nil, err
		}
		cols, err := p.Int("sf_cols", 0)
		if err != nil {
			return nil, err
		}
		s := in["swizzled"]
		out := make([]uint8, rows*cols)
		for m := 0; m < rows; m++ {
			for k := 0; k < cols; k++ {
				if o := swizzleOffset(m, k, cols, fault); o < len(s.Data) {
					out[m*cols+k] = s.Data[o]
				}
			}
		}
		t := tensor.FromU8([]int{rows, cols}, out)
		t.Logical = s.Logical
		return ops.Tensors{"scales": t}, nil
	}
}

// selectTiesHigher is sparse24.select by magnitude where a later index
// wins ties (a >= comparison, or an unstable top-k).
func selectTiesHigher(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	c := in["codes"]
	kept := make([]uint8, len(c.Data))
	meta := make([]uint8, len(c.Data)/4)
	for g := range meta {
		x := c.Data[4*g : 4*g+4]
		idx := []int{0, 1, 2, 3}
		// Stable sort by descending magnitude, then take the last of
		// each run of equals first: sort ascending by (magnitude, index)
		// and keep the top two.
		for i := 1; i < 4; i++ {
			for j := i; j > 0 && x[idx[j-1]]&7 > x[idx[j]]&7; j-- {
				idx[j-1], idx[j] = idx[j], idx[j-1]
			}
		}
		a, b := idx[2], idx[3]
		if a > b {
			a, b = b, a
		}
		kept[4*g+a], kept[4*g+b] = x[a], x[b]
		meta[g] = uint8(a | b<<2)
	}
	k := tensor.FromU8(c.Shape, kept)
	k.Logical = "e2m1"
	shape := append(append([]int{}, c.Shape[:len(c.Shape)-1]...), c.Shape[len(c.Shape)-1]/4)
	return ops.Tensors{"kept": k, "meta": tensor.FromU8(shape, meta)}, nil
}

// fp8TiesAway encodes both FP8 formats by nearest-value search with ties
// to the larger magnitude.
func fp8TiesAway(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	f := fp8Of(p)
	return codes(p.Get("format", "e4m3"), nearestTiesAway(f))(p, in)
}

// bf16Bias is the rounding-bias float32 -> bf16 conversion without a NaN
// guard: (bits + 0x7FFF + lsb) >> 16. A NaN whose payload lies in the low
// 16 bits becomes Inf, and one with a full payload carries into the sign.
func bf16Bias(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	x := in["x"]
	b := x.Bits32()
	o := make([]uint16, len(b))
	for i, v := range b {
		o[i] = uint16((v + 0x7FFF + (v>>16)&1) >> 16)
	}
	return ops.Tensors{"y": tensor.FromBits16(tensor.BF16, x.Shape, o)}, nil
}

// fp16DoubleShift is a software float -> fp16 rounder with the faults of
// hipdnn's float_to_half_bits: a subnormal branch that shifts the mantissa
// twice (every fp16-subnormal result a signed zero), and a NaN payload
// truncated without quieting (a NaN with payload only in the low 13 bits
// becomes Inf).
func fp16DoubleShift(subnormal, nan bool) func(ops.Params, ops.Tensors) (ops.Tensors, error) {
	return func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
		x := in["x"]
		b := x.Bits32()
		o := make([]uint16, len(b))
		for i, v := range b {
			h := half.EncodeFP16(math.Float32frombits(v))
			switch {
			case subnormal && h&0x7C00 == 0:
				h &= 0x8000
			case nan && v&0x7f800000 == 0x7f800000 && v&0x7fffff != 0:
				h = uint16(v>>16)&0x8000 | 0x7C00 | uint16(v>>13)&0x3FF
			}
			o[i] = h
		}
		return ops.Tensors{"y": tensor.FromBits16(tensor.F16, x.Shape, o)}, nil
	}
}

// canonNaN replaces a NaN by 0x7FC00000: a NaN that float arithmetic
// creates (0 * Inf) has a platform-dependent sign (x86-64's default NaN is
// negative, arm64's positive), and the mutants must be the same
// everywhere.
func canonNaN(x float32) float32 {
	if x != x {
		return math.Float32frombits(0x7fc00000)
	}
	return x
}

// f16Product is a float32 product as an fp16 multiply returns it, widened:
// rounded to nearest even, NaN as NVIDIA's canonical fp16 NaN 0x7FFF.
func f16Product(x float32) float32 {
	if x != x {
		return half.DecodeFP16(0x7FFF)
	}
	return half.DecodeFP16(half.EncodeFP16(x))
}

// coverageCatalog lists a mutant or more for every suite the first
// catalogue left without one.
func coverageCatalog() []Mutant {
	negZeroF32 := func(b uint32) uint32 {
		if b == 0x80000000 {
			return 0
		}
		return b
	}
	return []Mutant{
		// e2m1-unpack
		{Name: "e2m1-unpack-high-first", Suite: "e2m1-unpack", Claim: "default", Class: "nibble-swap",
			Doc: "E2M1 unpack taking element 2i from the high nibble: PTX cvt.rn.satfinite.e2m1x2.f32 d, a, b puts a in d[7:4], so a caller passing (x0, x1) swaps them (PTX ISA, cvt; vLLM passes (hi=f1, lo=f0))",
			Run: rewriteInput("e2m1.unpack", "packed", eachByte(swapByte))},
		// e2m1-decode
		{Name: "e2m1-decode-negative-zero-cleared", Suite: "e2m1-decode", Claim: "default", Class: "negative-zero-cleared",
			Doc: "E2M1 code 0x8 decoded as +0: a signed value table with +0 at index 8, as ggml's kvalues_mxfp4 {0, 1, ..., 0, -1, ...} (ggml/src/ggml-common.h)",
			Run: transform("e2m1.decode", mapF32("x", negZeroF32))},
		{Name: "e2m1-decode-no-subnormal-branch", Suite: "e2m1-decode", Claim: "default", Class: "subnormals-as-normal",
			Doc: "E2M1 codes 0x0, 0x1, 0x8, 0x9 rebased as normal numbers (0x0 -> 0.5, 0x1 -> 0.75): tile-ai/tilelang issue 2704, _tir_u8_to_f4_to_bf16",
			Run: decodeCodes(func(_ ops.Params, b uint8) float32 { return formulaDecode(b&15, 2, 1, 1) })},
		// fp8-decode, e4m3-decode, e5m2-decode
		{Name: "fp8-decode-negative-zero-cleared", Suite: "fp8-decode", Claim: "default", Class: "negative-zero-cleared",
			Doc: "FP8 0x80 decoded as +0: the zero test matched only 0x00 (intel/llm-scaler PR 569, E4M3 signed-zero conversion)",
			Run: transform("fp8.decode", mapF32("x", negZeroF32))},
		{Name: "e4m3-decode-nan-as-480", Suite: "e4m3-decode", Claim: "default", Class: "nan-as-finite",
			Doc: "E4M3 0x7F/0xFF decoded as ±480 by the normal formula: tile-ai/tilelang issue 2702 (_tir_u8_to_f8_e4m3_to_f16), fixed in PR 2710; also dgx-vllm's host scale table",
			Run: decodeCodes(func(p ops.Params, b uint8) float32 {
				if b&0x7f == 0x7f {
					return formulaDecode(b, 4, 3, 7)
				}
				return fp8.E4M3.Decode(b)
			})},
		{Name: "e4m3-decode-no-subnormal-branch", Suite: "e4m3-decode", Claim: "default", Class: "subnormals-as-normal",
			Doc: "E4M3 exponent-0 codes (zeros and subnormals) decoded with the implicit leading 1 (0x00 -> 2^-7): tile-ai/tilelang issue 2702; ooples/AiDotNet.Tensors PR 801 review (Metal decode_e4m3)",
			Run: decodeCodes(func(p ops.Params, b uint8) float32 {
				if b&0x78 == 0 {
					return formulaDecode(b, 4, 3, 7)
				}
				return fp8.E4M3.Decode(b)
			})},
		{Name: "e4m3-decode-nan-sign-cleared", Suite: "e4m3-decode", Claim: "default", Class: "nan-sign-cleared",
			Doc: "E4M3 0xFF decoded as +NaN 0x7FC00000: a decoder returning one canonical NaN constant (ooples/AiDotNet.Tensors PR 801, Metal decode_e4m3: as_type<float>(0x7FC00000u))",
			Run: transform("fp8.decode", mapF32("x", func(b uint32) uint32 {
				if b&0x7fffffff > 0x7f800000 {
					return 0x7fc00000
				}
				return b
			}))},
		{Name: "e5m2-decode-nan-as-finite", Suite: "e5m2-decode", Claim: "default", Class: "nan-as-finite",
			Doc: "E5M2 infinity and NaN codes decoded by the normal formula as finite (0x7C -> 65536): the same missing special-value branch as tile-ai/tilelang issue 2702's E4M3 decoder",
			Run: decodeCodes(func(p ops.Params, b uint8) float32 {
				if b&0x7c == 0x7c {
					return formulaDecode(b, 5, 2, 15)
				}
				return fp8.E5M2.Decode(b)
			})},
		{Name: "e5m2-decode-via-fp16-bits", Suite: "e5m2-decode", Claim: "default", Class: "nan:propagate",
			Doc: "E5M2 decoded as the fp16 with the code as its top byte, widened: exact on numbers, but NaN payloads kept (0x7D -> 0x7FA00000 quieted as 0x7FE00000) where the reference gives the canonical quiet NaN: the propagate NaN convention (torch's E5M2 decode on the CPU), to be claimed as default,nan=propagate",
			Run: decodeCodes(func(p ops.Params, b uint8) float32 { return half.DecodeFP16(uint16(b) << 8) })},
		// e8m0-decode
		{Name: "e8m0-decode-ff-inf", Suite: "e8m0-decode", Claim: "ocp", Class: "profile:ggml",
			Doc: "E8M0 0xFF decoded as 2^128 = +Inf instead of NaN: ggml_e8m0_to_fp32 with its NaN branch commented out (ggml/src/ggml-impl.h)",
			Run: decodeCodes(func(p ops.Params, b uint8) float32 {
				if b == 0xFF {
					return float32(math.Inf(1))
				}
				return e8m0.Decode(b)
			})},
		{Name: "e8m0-decode-zero-code-flushed", Suite: "e8m0-decode", Claim: "ocp", Class: "ftz-outputs",
			Doc: "E8M0 0x00 decoded as +0: the float built as code<<23 without the special case for code 0 (2^-127 is subnormal), which ggml_e8m0_to_fp32 adds (ggml/src/ggml-impl.h); tile-ai/tilelang issue 2748 (1 << Scale)",
			Run: decodeCodes(func(p ops.Params, b uint8) float32 {
				if b == 0 {
					return 0
				}
				return e8m0.Decode(b)
			})},
		// nvfp4-dequantize, mxfp4-dequantize, ggml-mxfp4-dequantize, q8_1-dequantize
		{Name: "nvfp4-dequantize-nibble-swap", Suite: "nvfp4-dequantize", Claim: "canonical", Class: "nibble-swap",
			Doc: "NVFP4 dequantize reading element 2i from the high nibble (the cvt e2m1x2 operand order, see e2m1-unpack-high-first)",
			Run: rewriteInput("nvfp4.dequantize", "packed", eachByte(swapByte))},
		{Name: "nvfp4-dequantize-half-output", Suite: "nvfp4-dequantize", Claim: "canonical", Class: "f16-arithmetic",
			Doc: "NVFP4 dequantized in fp16 (the activation dtype of a dequantize-then-GEMM fallback) and widened to float32 by the harness",
			Run: transform("nvfp4.dequantize", mapF32("y", func(b uint32) uint32 {
				return math.Float32bits(f16Product(math.Float32frombits(b)))
			}))},
		{Name: "mxfp4-dequantize-nibble-swap", Suite: "mxfp4-dequantize", Claim: "default", Class: "nibble-swap",
			Doc: "MXFP4 dequantize reading element 2i from the high nibble",
			Run: rewriteInput("mxfp4.dequantize", "packed", eachByte(swapByte))},
		{Name: "mxfp4-dequantize-bias-125", Suite: "mxfp4-dequantize", Claim: "default", Class: "",
			Doc: "MXFP4 scale decoded with bias 125 (2^(c-125)), the non-standard scale format compressed-tensors wrote before vllm-project/compressed-tensors PR 538: outside the diagnosis library",
			Run: func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
				packed, scales := in["packed"], in["scales"]
				m, k := packed.Shape[0], 2*packed.Shape[1]
				y := make([]float32, m*k)
				for j := range y {
					sc := scales.Data[j/mxfp4.BlockSize]
					if sc == 0xFF {
						y[j] = math.Float32frombits(0x7fc00000)
						continue
					}
					c := packed.Data[j/2] >> (4 * (j % 2)) & 15
					y[j] = canonNaN(fp4.Decode(c) * float32(math.Ldexp(1, int(sc)-125)))
				}
				return ops.Tensors{"y": tensor.FromF32([]int{m, k}, y)}, nil
			}},
		{Name: "ggml-mxfp4-dequantize-adjacent-pairs", Suite: "ggml-mxfp4-dequantize", Claim: "default", Class: "llama-adjacent-pairs",
			Doc: "block_mxfp4 qs read as adjacent pairs instead of split halves (q[j] | q[j+16]<<4, ggml/src/ggml-quants.c dequantize_row_mxfp4)",
			Run: rewriteInput("ggml.mxfp4.dequantize", "blocks", func(d []byte) []byte {
				// The kernel reads q'[2j], q'[2j+1] from qs[j]; the
				// reference reads q[j], q[j+16] from qs[j]: store q' so.
				for off := 0; off+17 <= len(d); off += 17 {
					var q [32]uint8
					for j := 0; j < 16; j++ {
						q[2*j], q[2*j+1] = d[off+1+j]&15, d[off+1+j]>>4
					}
					for j := 0; j < 16; j++ {
						d[off+1+j] = q[j] | q[j+16]<<4
					}
				}
				return d
			})},
		{Name: "ggml-mxfp4-dequantize-full-e8m0", Suite: "ggml-mxfp4-dequantize", Claim: "default", Class: "",
			Doc: "block_mxfp4 scaled by GGML_E8M0_TO_FP32 where the doubled kvalues_mxfp4 table needs GGML_E8M0_TO_FP32_HALF (ggml/src/ggml-impl.h): every value doubled; outside the diagnosis library",
			Run: transform("ggml.mxfp4.dequantize", mapF32("y", func(b uint32) uint32 {
				return math.Float32bits(2 * math.Float32frombits(b))
			}))},
		{Name: "q8_1-dequantize-half-arithmetic", Suite: "q8_1-dequantize", Claim: "default", Class: "f16-arithmetic",
			Doc: "block_q8_1 dequantized as d * q in half precision, as llama.cpp's CUDA block dequantizers do under GGML_CUDA_F16 (ggml/src/ggml-cuda/dequantize.cuh: v = __hmul2(v, {d, d}))",
			Run: func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
				b := in["blocks"]
				y := make([]float32, len(b.Data)/36*32)
				for blk := 0; blk < len(b.Data)/36; blk++ {
					d := half.DecodeFP16(uint16(b.Data[36*blk]) | uint16(b.Data[36*blk+1])<<8)
					for j := 0; j < 32; j++ {
						y[32*blk+j] = f16Product(float32(int8(b.Data[36*blk+4+j])) * d)
					}
				}
				return ops.Tensors{"y": tensor.FromF32([]int{len(y)}, y)}, nil
			}},
		{Name: "q8_1-dequantize-s-as-scale", Suite: "q8_1-dequantize", Claim: "default", Class: "",
			Doc: "block_q8_1 scaled by ds.y (s, the block sum) instead of ds.x (d): the half2 ds fields read in the wrong order; outside the diagnosis library",
			Run: func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
				b := in["blocks"]
				y := make([]float32, len(b.Data)/36*32)
				for blk := 0; blk < len(b.Data)/36; blk++ {
					s := half.DecodeFP16(uint16(b.Data[36*blk+2]) | uint16(b.Data[36*blk+3])<<8)
					for j := 0; j < 32; j++ {
						y[32*blk+j] = canonNaN(float32(int8(b.Data[36*blk+4+j])) * s)
					}
				}
				return ops.Tensors{"y": tensor.FromF32([]int{len(y)}, y)}, nil
			}},
		// bf16, fp16, fp8
		{Name: "bf16-truncation", Suite: "bf16", Claim: "rne", Class: "truncation",
			Doc: "float32 -> bf16 by keeping the top 16 bits (bits >> 16): stillwater-sc/universal issue 1133 (fixed in PR 1134), tenstorrent/tt-metal PR 19882",
			Run: func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
				// NaN inputs keep the reference's encoding: a truncating
				// converter with a NaN guard (as PR 1134's).
				ref, err := ops.Run("bf16.encode", p, in)
				if err != nil {
					return nil, err
				}
				b := in["x"].Bits32()
				o := ref["y"].Bits16()
				for i, v := range b {
					if v&0x7fffffff <= 0x7f800000 {
						o[i] = uint16(v >> 16)
					}
				}
				return ops.Tensors{"y": tensor.FromBits16(tensor.BF16, ref["y"].Shape, o)}, nil
			}},
		{Name: "bf16-rounding-bias-no-nan-guard", Suite: "bf16", Claim: "rne", Class: "",
			Doc: "float32 -> bf16 as (bits + 0x7FFF + lsb) >> 16 without the NaN guard that stillwater-sc/universal PR 1134 adds to the same rounding bias: low-payload NaNs become Inf, full payloads carry into the sign; outside the diagnosis library",
			Run: bf16Bias},
		{Name: "fp16-subnormal-double-shift", Suite: "fp16", Claim: "rne", Class: "ftz-outputs",
			Doc: "float32 -> fp16 whose subnormal branch shifts the mantissa twice, so every fp16-subnormal result is a signed zero: ROCm/rocm-libraries PR 11325 (hipdnn float_to_half_bits); invergent-ai/surogate issue 162",
			Run: fp16DoubleShift(true, false)},
		{Name: "fp16-nan-not-quieted", Suite: "fp16", Claim: "rne", Class: "",
			Doc:  "float32 -> fp16 truncating NaN payloads without quieting, so a NaN with payload only in the low 13 bits becomes Inf (ROCm/rocm-libraries PR 11325): outside the diagnosis library; numpy's cast differs only in turning a zero truncated payload into 1, so the hint names profile:numpy",
			Hint: "profile:numpy",
			Run:  fp16DoubleShift(false, true)},
		{Name: "fp8-ties-away", Suite: "fp8", Claim: "satfinite", Class: "ties-away",
			Doc: "FP8 E4M3 and E5M2 by nearest-value search with ties to the larger magnitude (microsoft/microxcaling round='nearest' is floor(|x|+0.5))",
			Run: fp8TiesAway},
		// sparse24-select, sparse24-decompress, reorder, unreorder
		{Name: "sparse24-select-ties-higher-index", Suite: "sparse24-select", Claim: "lower-index", Class: "sparse24-ties-higher-index",
			Doc: "2:4 selection keeping the later index among equal magnitudes: torch.topk's tie order is unspecified and differs between CPU and CUDA (pytorch/pytorch issue 127196)",
			Run: selectTiesHigher},
		{Name: "sparse24-select-indices-swapped", Suite: "sparse24-select", Claim: "lower-index", Class: "sparse24-indices-swapped",
			Doc: "2:4 metadata nibble written i1 | i0<<2 (torch/sparse/_semi_structured_conversions.py builds idx0 | idx1 << 2)",
			Run: transform("sparse24.select", func(out ops.Tensors) ops.Tensors {
				m := out["meta"]
				m.Data = eachByte(func(b byte) byte { return b&0xF0 | (b&3)<<2 | (b>>2)&3 })(append([]byte{}, m.Data...))
				out["meta"] = m
				return out
			})},
		{Name: "sparse24-select-signed", Suite: "sparse24-select", Claim: "lower-index", Class: "profile:signed",
			Doc: "2:4 selection by signed value where magnitude is claimed, as PyTorch's tile pruner ranks (torch/sparse/_semi_structured_conversions.py _sparse_semi_structured_tile)",
			Run: withParams("sparse24.select", ops.Params{"tie": "signed"})},
		{Name: "sparse24-decompress-meta-nibble-swap", Suite: "sparse24-decompress", Claim: "default", Class: "sparse24-meta-nibble-swap",
			Doc: "2:4 metadata byte read with group 2p in the high nibble (the dgx-vllm v7 layout puts group 2p in bits 0-3)",
			Run: rewriteInput("sparse24.decompress", "meta", eachByte(swapByte))},
		{Name: "sparse24-decompress-values-swapped", Suite: "sparse24-decompress", Claim: "default", Class: "sparse24-indices-swapped",
			Doc: "2:4 kept pair read with v(i0) from the high nibble of comp",
			Run: rewriteInput("sparse24.decompress", "comp", eachByte(swapByte))},
		{Name: "sparse24-reorder-no-2x2-swap", Suite: "sparse24-reorder", Claim: "default", Class: "cutlass-reorder-no-swap",
			Doc: "CUTLASS metadata reorder without the 2x2 swap of (even row, odd column) and (odd row, even column) (torch/sparse/_semi_structured_conversions.py, the topright/bottomleft step)",
			Run: reorderMeta(false, withoutSwap(sparse24.Meta16))},
		{Name: "sparse24-reorder-int32-grouping", Suite: "sparse24-reorder", Claim: "default", Class: "cutlass-reorder-other-grouping",
			Doc: "16-bit metadata reordered with the int8 operand's row grouping (16 rows, interweave 2) instead of 32 and 4 (torch/sparse/_semi_structured_conversions.py picks them by meta dtype)",
			Run: reorderMeta(false, sparse24.Meta32)},
		{Name: "sparse24-reorder-i32-int16-grouping", Suite: "sparse24-reorder-i32", Claim: "default", Class: "cutlass-reorder-other-grouping",
			Doc: "32-bit metadata reordered with the 16-bit operand's row grouping (32 rows, interweave 4)",
			Run: reorderMeta(true, sparse24.Meta16)},
		{Name: "sparse24-unreorder-no-2x2-swap", Suite: "sparse24-unreorder", Claim: "default", Class: "cutlass-reorder-no-swap",
			Doc: "CUTLASS metadata unreorder without the 2x2 swap step",
			Run: unreorderNoSwap},
		// nvfp4-swizzle, nvfp4-unswizzle
		{Name: "nvfp4-swizzle-linear", Suite: "nvfp4-swizzle", Claim: "default", Class: "swizzle-linear",
			Doc: "NVFP4 block scales written linearly (row-major, padded) where the 128x4 swizzle is expected: vllm-project/vllm issue 50084 (V scales in the wrong layout), the inverse fault",
			Run: swizzle(swizzleLinear)},
		{Name: "nvfp4-swizzle-row-major-tile", Suite: "nvfp4-swizzle", Claim: "default", Class: "swizzle-row-major-tile",
			Doc: "128x4 tiles stored row-major (row m at (m%128)*4) instead of the 32x4x4 interleave (m%32)*16 + ((m/32)%4)*4 of torchao to_blocked / CUTLASS",
			Run: swizzle(swizzleTileRowMajor)},
		{Name: "nvfp4-swizzle-tile-count-floor", Suite: "nvfp4-swizzle", Claim: "default", Class: "swizzle-tile-count-floor",
			Doc: "tile count along K as sfCols/4 rounded down where torchao to_blocked uses ceil_div: scale columns not a multiple of 4 overlap the next tile row",
			Run: swizzle(swizzleTilesFloor)},
		{Name: "nvfp4-unswizzle-row-major-tile", Suite: "nvfp4-unswizzle", Claim: "default", Class: "swizzle-row-major-tile",
			Doc: "unswizzle reading 128x4 tiles row-major instead of the 32x4x4 interleave",
			Run: unswizzle(swizzleTileRowMajor)},
		{Name: "nvfp4-unswizzle-tile-count-floor", Suite: "nvfp4-unswizzle", Claim: "default", Class: "swizzle-tile-count-floor",
			Doc: "unswizzle with the tile count along K rounded down (sfCols/4)",
			Run: unswizzle(swizzleTilesFloor)},
		// awq-pack-ct, awq-unpack, awq-quantize, awq-dequantize
		{Name: "awq-pack-ct-awq-order", Suite: "awq-pack-ct", Claim: "compressed-tensors", Class: "awq-nibble-order",
			Doc: "compressed-tensors words packed in AWQ's [0,2,4,6,1,3,5,7] order instead of sequentially (compressed-tensors pack_to_int32 is sequential; mit-han-lab/llm-awq issue 91 on the AWQ order)",
			Run: func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
				l, err := awq.LayoutByName("compressed-tensors")
				if err != nil {
					return nil, err
				}
				l.Weight.Order = awq.OrderAWQ
				q := in["q"]
				w, ws, err := l.PackWeight(q.Data, q.Shape[0], q.Shape[1])
				if err != nil {
					return nil, err
				}
				return ops.Tensors{"qweight": tensor.FromI32(ws, w)}, nil
			}},
		{Name: "awq-unpack-sequential", Suite: "awq-unpack", Claim: "default", Class: "awq-nibble-order",
			Doc: "AWQ words unpacked in sequential nibble order instead of through AWQ_REVERSE_ORDER [0,4,1,5,2,6,3,7] (vLLM awq_triton.py; mit-han-lab/llm-awq issue 91)",
			Run: func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
				out, err := ops.Run("awq.unpack", p, in)
				if err != nil {
					return nil, err
				}
				for _, n := range []string{"q", "zeros"} {
					t := out[n]
					d := append([]byte{}, t.Data...)
					// Column 8j+p comes from nibble p, which holds the
					// reference's column 8j+OrderAWQ[p].
					for i := range d {
						d[i] = t.Data[i-i%8+awq.OrderAWQ[i%8]]
					}
					t.Data = d
					out[n] = t
				}
				return out, nil
			}},
		{Name: "awq-unpack-zeros-plus-one", Suite: "awq-unpack", Claim: "default", Class: "gptq-zero-plus-one",
			Doc: "AWQ zero points unpacked plus one, the GPTQ v1 reader's zeros + 1 (AutoGPTQ qlinear) applied to an AWQ checkpoint",
			Run: transform("awq.unpack", func(out ops.Tensors) ops.Tensors {
				t := out["zeros"]
				t.Data = eachByte(func(b byte) byte { return (b + 1) & 15 })(append([]byte{}, t.Data...))
				out["zeros"] = t
				return out
			})},
		{Name: "awq-quantize-sequential", Suite: "awq-quantize", Claim: "forge", Class: "awq-nibble-order",
			Doc: "AWQ quantizer packing weights and zeros sequentially instead of in the AWQ order (mit-han-lab/llm-awq issue 91)",
			Run: transform("awq.quantize", func(out ops.Tensors) ops.Tensors {
				for _, n := range []string{"qweight", "qzeros"} {
					t := out[n]
					w := t.I32()
					for i, v := range w {
						var o uint32
						for p, c := range awq.OrderAWQ {
							o |= (uint32(v) >> (4 * p) & 15) << (4 * c)
						}
						w[i] = int32(o)
					}
					out[n] = tensor.FromI32(t.Shape, w)
				}
				return out
			})},
		{Name: "awq-quantize-scale-rz", Suite: "awq-quantize", Claim: "forge", Class: "scale-cast:rz",
			Doc: "AWQ fp16 scale absmax/7 cast toward zero (__float2half_rz) where round to nearest is specified",
			Run: awqForge(true, false)},
		{Name: "awq-quantize-mul-rcp", Suite: "awq-quantize", Claim: "forge", Class: "element-rule:mul-rcp-d",
			Doc: "AWQ weights scaled by w * (1/s) where w / s is specified (PyTorch CUDA divides by a scalar as a reciprocal multiply, aten/src/ATen/backends/cuda/BinaryDivTrueKernel.cu)",
			Run: awqForge(false, true)},
		{Name: "awq-dequantize-triton-zero-sign", Suite: "awq-dequantize", Claim: "cuda", Class: "profile:triton",
			Doc: "AWQ dequantize rounding (u - z) * s once to fp16 but keeping a -0 product, where vLLM's CUDA kernel (fma.rn.f16x2 with +0, csrc/quantization/awq/gemm_kernels.cu) is claimed: vLLM's awq_triton.py, or a port computing the product in float32 and converting with __float2half_rn",
			Run: awqDequant(awq.OrderAWQ, 0, true, false)},
		{Name: "awq-dequantize-sequential", Suite: "awq-dequantize", Claim: "cuda", Class: "awq-nibble-order",
			Doc: "AWQ dequantize reading words in sequential nibble order (without AWQ_REVERSE_ORDER, vLLM awq_triton.py)",
			Run: awqDequant(awq.OrderSequential, 0, false, false)},
		{Name: "awq-dequantize-zeros-plus-one", Suite: "awq-dequantize", Claim: "cuda", Class: "gptq-zero-plus-one",
			Doc: "AWQ dequantize adding one to each stored zero point, the GPTQ v1 convention (AutoGPTQ qlinear zeros + 1)",
			Run: awqDequant(awq.OrderAWQ, 1, false, false)},
		{Name: "awq-dequantize-zero-ignored", Suite: "awq-dequantize", Claim: "cuda", Class: "awq-implicit-zero-8",
			Doc: "AWQ dequantize with the implicit zero point 8 instead of the stored one (the uint4b8 convention of Marlin and vLLM moe_wna16 without zero points)",
			Run: awqDequant(awq.OrderAWQ, 0, false, true)},
		// mxfp4 (quantize)
		{Name: "mxfp4-scale-rz", Suite: "mxfp4", Claim: "mode=floor,profile=nvidia", Class: "scale-cast:rz",
			Doc: "MXFP4 scale from amax/6 cast with cvt.rz.satfinite.ue8m0x2 where torchao's RCEIL uses cvt.rp (PTX ISA cvt ue8m0x2; torchao ScaleCalculationMode.RCEIL)",
			Run: mxfp4ScaleRZ},
	}
}

// awqForge is the forge quantizer with the scale cast toward zero (rz) or
// the division done as a reciprocal multiply (rcp).
func awqForge(rz, rcp bool) func(ops.Params, ops.Tensors) (ops.Tensors, error) {
	return func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
		w := in["w"]
		ic, oc := w.Shape[0], w.Shape[1]
		g, err := p.Int("group", 128)
		if err != nil {
			return nil, err
		}
		wb := w.Bits16()
		qw := make([]int32, ic*oc/8)
		qz := make([]int32, ic/g*oc/8)
		sc := make([]uint16, ic/g*oc)
		// Zero points are all 8: nibble p of every zero word.
		for i := range qz {
			qz[i] = -0x77777778 // 0x88888888: every nibble 8
		}
		for grp := 0; grp < ic/g; grp++ {
			for n := 0; n < oc; n++ {
				var amax float32
				for k := grp * g; k < (grp+1)*g; k++ {
					amax = max(amax, float32(math.Abs(float64(half.DecodeFP16(wb[k*oc+n])))))
				}
				s := half.EncodeFP16(amax / 7)
				if rz && half.DecodeFP16(s) > amax/7 {
					s--
				}
				sc[grp*oc+n] = s
				sf := half.DecodeFP16(s)
				for k := grp * g; k < (grp+1)*g; k++ {
					u := 8
					if sf != 0 {
						x := half.DecodeFP16(wb[k*oc+n])
						q := float32(0)
						if rcp {
							q = x * (1 / sf)
						} else {
							q = x / sf
						}
						u += int(math.Max(-8, math.Min(7, math.RoundToEven(float64(q)))))
					}
					// Column n sits at nibble (n%2)*4 + (n%8)/2 of its word.
					qw[k*oc/8+n/8] |= int32(uint32(u) << (4 * ((n%2)*4 + (n%8)/2)))
				}
			}
		}
		return ops.Tensors{
			"qweight": tensor.FromI32([]int{ic, oc / 8}, qw),
			"qzeros":  tensor.FromI32([]int{ic / g, oc / 8}, qz),
			"scales":  tensor.FromBits16(tensor.F16, []int{ic / g, oc}, sc),
		}, nil
	}
}

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

// nvfp4ByHand is the canonical NVFP4 recipe written out (per-tensor g =
// 2688/amax over the finite elements, block scale fp8(amax_b/6 * g) saturating, elements
// x / float32(s/g)) with two hooks: the block amax fold and the per-tensor
// value.
func nvfp4ByHand(amax func([]float32) float32, global func(amax float32) float32) func(ops.Params, ops.Tensors) (ops.Tensors, error) {
	return func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
		x := in["x"]
		if err := x.Expect("x", tensor.F32, -1, -1); err != nil {
			return nil, err
		}
		m, k := x.Shape[0], x.Shape[1]
		xs := x.F32()
		var ta float32
		for _, v := range xs {
			// The tensor amax ignores NaN (never greater) and ±Inf.
			if a := float32(math.Abs(float64(v))); a > ta && !math.IsInf(float64(a), 0) {
				ta = a
			}
		}
		g := global(ta)
		packed := make([]uint8, m*k/2)
		scales := make([]uint8, m*k/16)
		for b := range scales {
			bx := xs[16*b : 16*b+16]
			sc := fp8.E4M3.Encode(float32(amax(bx)/6)*g, fp8.Satfinite)
			scales[b] = sc
			d := float32(fp8.E4M3.Decode(sc) / g)
			for i, v := range bx {
				var q float32
				if d == 0 {
					q = v * 0
				} else {
					q = v / d
				}
				packed[(16*b+i)/2] |= (fp4.NVIDIA.Encode(q) & 15) << (4 * (i % 2))
			}
		}
		pt := tensor.FromU8([]int{m, k / 2}, packed)
		pt.Logical = "e2m1x2"
		st := tensor.FromU8([]int{m, k / 16}, scales)
		st.Logical = "e4m3"
		return ops.Tensors{"packed": pt, "scales": st, "global": tensor.FromF32([]int{1}, []float32{g})}, nil
	}
}

// amaxIgnoreNaN is the canonical fold: the largest |x| of the non-NaN
// elements.
func amaxIgnoreNaN(bx []float32) float32 {
	var m float32
	for _, v := range bx {
		if a := float32(math.Abs(float64(v))); a > m {
			m = a
		}
	}
	return m
}

// amaxSeededFirst folds with m = |x0| and `a > m ? a : m`: a NaN in
// position 0 poisons the block, a NaN anywhere else is skipped.
func amaxSeededFirst(bx []float32) float32 {
	m := float32(math.Abs(float64(bx[0])))
	for _, v := range bx[1:] {
		if a := float32(math.Abs(float64(v))); a > m {
			m = a
		}
	}
	return m
}

func globalEncode(amax float32) float32 {
	g := float32(2688) / amax
	if g > math.MaxFloat32 {
		g = math.MaxFloat32
	}
	return g
}

// globalViaDecode is the reciprocal of the decode scale amax/2688, as a
// kernel given torchao's per_tensor_scale computes 1/pts.
func globalViaDecode(amax float32) float32 {
	g := 1 / (amax / 2688)
	if g > math.MaxFloat32 {
		g = math.MaxFloat32
	}
	return g
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

// extraCatalog lists the mutants of issue 17 §2's blind spots (NaN in
// the amax fold, the per-tensor formula, special scale codes).
func extraCatalog() []Mutant {
	return []Mutant{
		{Name: "gemv-mxfp4-e8m0-ff-finite", Suite: "gemv-mxfp4", Claim: "seq", Class: "",
			Doc: "MXFP4 x Q8_1 GEMV decoding the weight scale with GGML_E8M0_TO_FP32_HALF, which has no NaN (0xFF -> 2^127; ggml/src/ggml-impl.h, the CPU vec_dot_mxfp4_q8_0 path), where the reference follows CUDA >= 12.8's __nv_cvt_e8m0_to_bf16raw (0xFF -> NaN): outside the diagnosis library",
			Run: gemvMXFP4Seq(true)},
		{Name: "q8_1-cuda-round-half-even", Suite: "q8_1", Claim: "cuda", Class: "",
			Doc: "block_q8_1 quants rounded half to even where quantize_q8_1 uses roundf (ties away), as ggml's AVX2 quantize_row_q8_1 rounds with _mm256_round_ps(v, _MM_ROUND_NEAREST) (ggml-quants.c, now ggml/src/ggml-cpu/arch/x86/quants.c): outside the diagnosis library",
			Run: q81CUDA(math.RoundToEven)},
		{Name: "nvfp4-swizzle-tile-column-major", Suite: "nvfp4-swizzle", Claim: "default", Class: "swizzle-column-major-tile",
			Doc: "each 128x4 swizzle tile stored transposed (column-major: column k at (k%4)*128 + m%128)",
			Run: swizzle(swizzleTileColMajor)},
		{Name: "awq-dequantize-zero-not-subtracted", Suite: "awq-dequantize", Claim: "cuda", Class: "awq-zero-not-subtracted",
			Doc: "AWQ dequantize as u * s, the zero point never subtracted (issue 17's example; a symmetric-kernel path applied to an asymmetric checkpoint)",
			Run: func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
				q := ops.Tensors{}
				for k, v := range in {
					q[k] = v
				}
				z := in["qzeros"]
				q["qzeros"] = tensor.FromI32(z.Shape, make([]int32, z.Len()))
				return ops.Run("awq.dequantize", p, q)
			}},
		{Name: "nvfp4-amax-nan-first-only", Suite: "nvfp4", Claim: "recipe=canonical,swizzle=0", Class: "",
			Doc: "NVFP4 block amax folded as m = |x0|, then a > m ? a : m: a NaN is noticed only in the block's first position (issue 17 §2: NaN handled by an amax fold at one position); outside the diagnosis library",
			Run: nvfp4ByHand(amaxSeededFirst, globalEncode)},
		{Name: "nvfp4-global-reciprocal-of-decode", Suite: "nvfp4", Claim: "recipe=canonical,swizzle=0", Class: "per-tensor-rule:rcp-of-decode",
			Doc: "NVFP4 per-tensor value 1/(amax/2688) where 2688/amax is the recipe: the reciprocal of torchao's per_tensor_scale (torchao NVFP4Tensor), which rounds differently for about a quarter of amax values (issue 17 §2)",
			Run: nvfp4ByHand(amaxIgnoreNaN, globalViaDecode)},
		{Name: "mxfp4-dequantize-ff-as-2^128", Suite: "mxfp4-dequantize", Claim: "default", Class: "",
			Doc: "MXFP4 scale 0xFF decoded as 2^128 = +Inf instead of NaN (a decoder building the float from code<<23, as ggml_e8m0_to_fp32 does with its NaN branch commented out): outside the diagnosis library",
			Run: func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
				packed, scales := in["packed"], in["scales"]
				m, k := packed.Shape[0], 2*packed.Shape[1]
				y := make([]float32, m*k)
				for j := range y {
					sc := scales.Data[j/mxfp4.BlockSize]
					c := packed.Data[j/2] >> (4 * (j % 2)) & 15
					s := e8m0.Decode(sc)
					if sc == 0xFF {
						s = float32(math.Inf(1))
					}
					y[j] = canonNaN(fp4.Decode(c) * s)
				}
				return ops.Tensors{"y": tensor.FromF32([]int{m, k}, y)}, nil
			}},
		{Name: "nvfp4-dequantize-dgx-lut", Suite: "nvfp4-dequantize", Claim: "canonical", Class: "",
			Doc: "NVFP4 block scale 0x7F/0xFF decoded as ±480 (dgx-vllm's host E4M3 table, sparse_fp4_v7.cu) instead of NaN: outside the diagnosis library",
			Run: func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
				out, err := ops.Run("nvfp4.dequantize", p, in)
				if err != nil {
					return nil, err
				}
				packed, scales, g := in["packed"], in["scales"], in["global"].F32()[0]
				y := out["y"].F32()
				for j := range y {
					sc := scales.Data[j/16]
					if sc&0x7f != 0x7f {
						continue
					}
					s := float32(480)
					if sc == 0xFF {
						s = -480
					}
					c := packed.Data[j/2] >> (4 * (j % 2)) & 15
					y[j] = canonNaN(fp4.Decode(c) * float32(s/g))
				}
				return ops.Tensors{"y": tensor.FromF32(out["y"].Shape, y)}, nil
			}},
		{Name: "gemv-sparse-fp4-dgx-lut", Suite: "gemv-sparse-fp4", Claim: "schedule=sparse-v7,scale_decode=e4m3fn", Class: "profile:schedule=sparse-v7,scale_decode=dgx_lut",
			Doc: "sparse FP4 GEMV decoding E4M3 scales with dgx-vllm's host table (0x7F = 480, 0xFF = -480) where e4m3fn (NaN) is claimed",
			Run: withParams("gemv.sparse_fp4", ops.Params{"scale_decode": "dgx_lut"})},
	}
}
