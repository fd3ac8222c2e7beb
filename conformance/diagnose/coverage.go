package diagnose

import (
	"math"

	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/refimpl/awq"
	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
	"github.com/bitexact/bitexact/refimpl/unary"
)

// Classes of the decoders, dequantizers and layout ops: each is a small
// transform of the reference's outputs, or the reference rerun on inputs
// read in another layout. Sources are in the docs and in RATIONALE.md.

// decodeOps are the ops besides the code formats' decoders (refimpl/unary
// Format.DecodeOp) whose float outputs are a pure function of codes.
var decodeOps = map[string]bool{
	"nvfp4.dequantize": true, "mxfp4.dequantize": true,
	"ggml.mxfp4.dequantize": true, "ggml.q8_1.dequantize": true,
	"awq.dequantize": true,
}

// dequantOps compute a float product; the others only widen a code.
var dequantOps = map[string]bool{
	"nvfp4.dequantize": true, "mxfp4.dequantize": true,
	"ggml.mxfp4.dequantize": true, "ggml.q8_1.dequantize": true,
}

// coverageAlternatives are the classes of the decoders, dequantizers,
// unpack and layout ops of suite s.
func coverageAlternatives(s *suite.Suite) []Alternative {
	var alts []Alternative
	// The code formats that s decodes, if it is a format's decoder.
	formats := decodedFormats(s.Op, s.Filter)
	if decodeOps[s.Op] || isBlockDequantize(s.Op) || len(formats) > 0 {
		alts = append(alts, Alternative{Class: "negative-zero-cleared", Doc: "results of magnitude zero always +0 (a value table or integer LUT with +0 at the -0 code, as ggml's kvalues_mxfp4)",
			Compute: floatOutputs(func(f floatFormat, b uint32) uint32 {
				if b == f.sign {
					return 0
				}
				return b
			})})
		// A format without NaN codes (E2M1), or whose values are all
		// normal float32s (E2M1, FP8), would make these two equal the
		// reference on every input.
		if len(formats) == 0 || anyFormat(formats, unary.Format.HasNaN) {
			alts = append(alts, Alternative{Class: "nan-sign-cleared", Doc: "every NaN result is the positive canonical NaN (0x7fc00000 / 0x7e00): the decoder drops the code's sign",
				Compute: floatOutputs(func(f floatFormat, b uint32) uint32 {
					if b&^f.sign > f.inf {
						return f.qnan
					}
					return b
				})})
		}
		if len(formats) == 0 || anyFormat(formats, unary.Format.HasSubnormalValues) {
			alts = append(alts, Alternative{Class: "ftz-outputs", Doc: "subnormal results flushed to zero of the same sign (FTZ on the output, or a decoder that builds the float from the exponent bits alone: 2^-127 -> 0)",
				Compute: floatOutputs(func(f floatFormat, b uint32) uint32 {
					if b&f.inf == 0 {
						return b & f.sign
					}
					return b
				})})
		}
	}
	if dequantOps[s.Op] || isBlockDequantize(s.Op) {
		alts = append(alts, Alternative{Class: "f16-arithmetic",
			Doc: "each float32 result rounded to fp16 (nearest even, NaN as the canonical fp16 NaN 0x7FFF) and widened: the product computed in half precision (llama.cpp's GGML_CUDA_F16 __hmul2 dequantize path)",
			Compute: floatOutputs(func(f floatFormat, b uint32) uint32 {
				x := math.Float32frombits(b)
				if x != x {
					return math.Float32bits(half.DecodeFP16(0x7FFF))
				}
				return math.Float32bits(half.DecodeFP16(half.EncodeFP16(x)))
			})})
	}
	alts = append(alts, layoutAlternatives(s)...)
	if anyFormat(formats, func(f unary.Format) bool { return f.Fields.Sign == 1 && f.Fields.Man > 0 }) {
		alts = append(alts,
			Alternative{Class: "subnormals-as-normal", Doc: "codes of exponent field 0 (zeros and subnormals) decoded with the normal formula 2^(0-bias)*(1+m/2^M), as a decoder without the subnormal branch does",
				Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) { return naiveDecode(s, t, true, false) }},
			Alternative{Class: "nan-as-finite", Doc: "NaN (and E5M2 infinity) codes decoded with the normal formula as finite values (E4M3 0x7F -> 480), as a decoder without the special-value branch does",
				Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) { return naiveDecode(s, t, false, true) }})
	}
	switch s.Op {
	case "ggml.mxfp4.dequantize":
		alts = append(alts, Alternative{Class: "llama-adjacent-pairs", Doc: "block_mxfp4 qs read as adjacent pairs (element 2j from the low nibble of qs[j], 2j+1 from its high nibble) instead of llama.cpp's split halves (j and j+16)",
			Compute: ggmlAdjacentRead})
	case "awq.unpack", "awq.dequantize":
		alts = append(alts,
			Alternative{Class: "awq-nibble-order", Doc: "words read in sequential nibble order (nibble p -> column 8j+p) instead of AWQ's [0,2,4,6,1,3,5,7]",
				Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) { return awqReadAs(s, t, true, 0) }},
			Alternative{Class: "gptq-zero-plus-one", Doc: "stored zero points read plus one within the 4-bit field, 15 wrapping to 0 (z+1 added to the packed nibble)",
				Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) { return awqReadAs(s, t, false, 1) }},
			Alternative{Class: "gptq-v1-zero-plus-one", Doc: "stored zero points read plus one in integer arithmetic, 15 giving 16 (a GPTQ v1 reader's zeros + 1 after unpacking, applied to an AWQ checkpoint)",
				Compute: awqZeroPlusOneUnwrapped})
	case "sparse24.select":
		alts = append(alts,
			Alternative{Class: "sparse24-indices-swapped", Doc: "the two 2-bit indices of each metadata nibble swapped (i1 | i0<<2)",
				Compute: selectIndicesSwapped},
			Alternative{Class: "sparse24-ties-higher-index", Doc: "among equal magnitudes the higher index is kept (an unstable top-k, or a >= comparison)",
				Compute: selectTiesHigher})
	case "sparse24.decompress":
		alts = append(alts, Alternative{Class: "sparse24-indices-swapped", Doc: "the two indices of each metadata nibble read swapped, or equally the two value nibbles of each kept pair read swapped",
			Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
				return rerunWith(s, t, "meta", func(b byte) byte { return swapIdx(b&15) | swapIdx(b>>4)<<4 })
			}},
			Alternative{Class: "sparse24-meta-nibble-swap", Doc: "the two group nibbles of each metadata byte read swapped (group 2p from the high nibble)",
				Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
					return rerunWith(s, t, "meta", func(b byte) byte { return b<<4 | b>>4 })
				}})
	case "sparse24.compress":
		alts = append(alts, Alternative{Class: "sparse24-meta-nibble-swap", Doc: "the two group nibbles of each metadata byte swapped (group 2p in the high nibble)",
			Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
				m, ok := t.Reference["meta"]
				if !ok {
					return nil, false, nil
				}
				out := ops.Tensors{}
				for k, v := range t.Reference {
					out[k] = v
				}
				out["meta"] = mapBytes(m, func(b byte) byte { return b<<4 | b>>4 })
				return out, true, nil
			}})
	}
	return alts
}

// floatFormat is the bit layout of an F32 or F16 output.
type floatFormat struct{ sign, inf, qnan uint32 }

// floatOutputs applies f to every F32 and F16 output element of the
// reference; it does not apply to a task without such outputs.
func floatOutputs(f func(floatFormat, uint32) uint32) func(*suite.Suite, Task) (ops.Tensors, bool, error) {
	return func(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
		out := ops.Tensors{}
		any := false
		for n, r := range t.Reference {
			switch r.DType {
			case tensor.F32:
				ff := floatFormat{0x80000000, 0x7f800000, 0x7fc00000}
				b := r.Bits32()
				for i, v := range b {
					b[i] = f(ff, v)
				}
				y := tensor.FromBits32(tensor.F32, r.Shape, b)
				y.Logical = r.Logical
				r, any = y, true
			case tensor.F16:
				ff := floatFormat{0x8000, 0x7c00, 0x7e00}
				b := r.Bits16()
				for i, v := range b {
					b[i] = uint16(f(ff, uint32(v)))
				}
				y := tensor.FromBits16(tensor.F16, r.Shape, b)
				y.Logical = r.Logical
				r, any = y, true
			}
			out[n] = r
		}
		return out, any, nil
	}
}

// naiveDecode decodes the codes of a sign-magnitude format (E2M1, FP8)
// with the normal-number formula
// where the reference has a special case: for exponent-0 codes
// (subnormal) and for the NaN and infinity codes (special).
func naiveDecode(s *suite.Suite, t Task, subnormal, special bool) (ops.Tensors, bool, error) {
	c, ok := t.Inputs["codes"]
	ref, okr := t.Reference["x"]
	if !ok || !okr || c.DType != tensor.U8 || ref.DType != tensor.F32 || ref.Len() != c.Len() {
		return nil, false, nil
	}
	fs := decodedFormats(s.Op, t.Params)
	if len(fs) != 1 || fs[0].Fields.Sign != 1 {
		return nil, false, nil
	}
	f := fs[0]
	expBits, manBits, bias := f.Fields.Exp, f.Fields.Man, f.Fields.Bias
	// A special code is one that decodes to no finite value.
	isSpecial := func(b uint8) bool { return !isFinite(f.Decode(uint32(b))) }
	width := 1 + expBits + manBits
	y := ref.F32()
	for i, b := range c.Data {
		sign := b >> (width - 1) & 1
		mag := b & (1<<(width-1) - 1)
		e := int(mag >> manBits)
		m := int(mag) & (1<<manBits - 1)
		if subnormal && e == 0 || special && isSpecial(b) {
			v := float32(math.Ldexp(1+float64(m)/float64(int(1)<<manBits), e-bias))
			if sign == 1 {
				v = -v
			}
			y[i] = v
		}
	}
	out := tensor.FromF32(ref.Shape, y)
	out.Logical = ref.Logical
	return ops.Tensors{"x": out}, true, nil
}

// ggmlAdjacentRead permutes each 32-element block of the reference output:
// the kernel's element 2j is the reference's j, its 2j+1 the reference's
// j+16.
func ggmlAdjacentRead(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
	ref, ok := t.Reference["y"]
	if !ok || ref.DType != tensor.F32 || ref.Len()%32 != 0 {
		return nil, false, nil
	}
	y := ref.Bits32()
	o := make([]uint32, len(y))
	for b := 0; b < len(y); b += 32 {
		for j := 0; j < 16; j++ {
			o[b+2*j], o[b+2*j+1] = y[b+j], y[b+j+16]
		}
	}
	return ops.Tensors{"y": tensor.FromBits32(tensor.F32, ref.Shape, o)}, true, nil
}

// awqReadAs reruns the reference on AWQ words rewritten so that the
// reference's reading equals a kernel that reads nibble p as column 8j+p
// (sequential) and/or adds zeroPlus to every stored zero point.
func awqReadAs(s *suite.Suite, t Task, sequential bool, zeroPlus int) (ops.Tensors, bool, error) {
	if t.Params.Get("layout", "awq") != "awq" {
		return nil, false, nil
	}
	var inv [8]int // inv[c] is the nibble that holds column 8j+c
	for p, c := range awq.OrderAWQ {
		inv[c] = p
	}
	rewrite := func(x tensor.Tensor, plus int) tensor.Tensor {
		w := x.I32()
		for i, v := range w {
			u := uint32(v)
			if sequential {
				var n uint32
				for p := 0; p < 8; p++ {
					// The kernel's column 8j+p is nibble p; the reference
					// reads column 8j+p from nibble inv[p].
					n |= (u >> (4 * p) & 15) << (4 * inv[p])
				}
				u = n
			}
			if plus != 0 {
				var n uint32
				for p := 0; p < 8; p++ {
					n |= (u>>(4*p) + uint32(plus)) & 15 << (4 * p)
				}
				u = n
			}
			w[i] = int32(u)
		}
		return tensor.FromI32(x.Shape, w)
	}
	in := ops.Tensors{}
	for k, v := range t.Inputs {
		in[k] = v
	}
	qw, ok := in["qweight"]
	qz, okz := in["qzeros"]
	if !ok || !okz || qw.DType != tensor.I32 || qz.DType != tensor.I32 {
		return nil, false, nil
	}
	if sequential {
		in["qweight"] = rewrite(qw, 0)
	}
	in["qzeros"] = rewrite(qz, zeroPlus)
	out, err := ops.Run(s.Op, t.Params, in)
	if err != nil {
		return nil, false, nil
	}
	return out, true, nil
}

func swapIdx(n uint8) uint8 { return (n&3)<<2 | (n>>2)&3 }

func mapBytes(x tensor.Tensor, f func(byte) byte) tensor.Tensor {
	d := make([]byte, len(x.Data))
	for i, b := range x.Data {
		d[i] = f(b)
	}
	return tensor.Tensor{DType: x.DType, Shape: x.Shape, Logical: x.Logical, Data: d}
}

// rerunWith reruns the reference with one byte input rewritten.
func rerunWith(s *suite.Suite, t Task, name string, f func(byte) byte) (ops.Tensors, bool, error) {
	x, ok := t.Inputs[name]
	if !ok || x.DType != tensor.U8 {
		return nil, false, nil
	}
	in := ops.Tensors{}
	for k, v := range t.Inputs {
		in[k] = v
	}
	in[name] = mapBytes(x, f)
	out, err := ops.Run(s.Op, t.Params, in)
	if err != nil {
		return nil, false, nil // e.g. a rewritten nibble names a position twice
	}
	return out, true, nil
}

func selectIndicesSwapped(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
	m, ok := t.Reference["meta"]
	if !ok {
		return nil, false, nil
	}
	out := ops.Tensors{}
	for k, v := range t.Reference {
		out[k] = v
	}
	out["meta"] = mapBytes(m, func(b byte) byte { return b&0xF0 | swapIdx(b&15) })
	return out, true, nil
}

// selectTiesHigher is sparse24.select by magnitude with the higher index
// winning among equal magnitudes (-0 and +0 equal), for the lower-index
// claim only (the cutlass and signed rules differ elsewhere too).
func selectTiesHigher(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
	if t.Params.Get("tie", "lower-index") != "lower-index" {
		return nil, false, nil
	}
	c, ok := t.Inputs["codes"]
	kept, okk := t.Reference["kept"]
	meta, okm := t.Reference["meta"]
	if !ok || !okk || !okm || c.Len()%4 != 0 || meta.Len() != c.Len()/4 {
		return nil, false, nil
	}
	mag := func(b byte) int { return int(b & 7) } // E2M1 magnitudes are ordered by code
	k := make([]byte, len(c.Data))
	m := make([]byte, len(meta.Data))
	for g := 0; g < len(c.Data)/4; g++ {
		x := c.Data[4*g : 4*g+4]
		// Best two by magnitude; a later index wins ties.
		b0, b1 := 0, 1
		if mag(x[1]) >= mag(x[0]) {
			b0, b1 = 1, 0
		}
		for i := 2; i < 4; i++ {
			if mag(x[i]) >= mag(x[b0]) {
				b0, b1 = i, b0
			} else if mag(x[i]) >= mag(x[b1]) {
				b1 = i
			}
		}
		if b0 > b1 {
			b0, b1 = b1, b0
		}
		k[4*g+b0], k[4*g+b1] = x[b0], x[b1]
		m[g] = uint8(b0 | b1<<2)
	}
	kt := tensor.Tensor{DType: kept.DType, Shape: kept.Shape, Logical: kept.Logical, Data: k}
	mt := tensor.Tensor{DType: meta.DType, Shape: meta.Shape, Logical: meta.Logical, Data: m}
	return ops.Tensors{"kept": kt, "meta": mt}, true, nil
}

// awqZeroPlusOneUnwrapped is the reference with every unpacked zero point
// z read as z+1 in integer arithmetic (15 gives 16), as a GPTQ v1 reader
// adds it after unpacking: awq.unpack's zeros output plus one, or
// awq.dequantize's (u - (z+1)) * s under the task's kernel.
func awqZeroPlusOneUnwrapped(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
	if t.Params.Get("layout", "awq") != "awq" {
		return nil, false, nil
	}
	switch s.Op {
	case "awq.unpack":
		out, err := ops.Run(s.Op, t.Params, t.Inputs)
		if err != nil {
			return nil, false, nil
		}
		z, ok := out["zeros"]
		if !ok {
			return nil, false, nil
		}
		out["zeros"] = mapBytes(z, func(b byte) byte { return b + 1 })
		return out, true, nil
	case "awq.dequantize":
		qw, qz, sc := t.Inputs["qweight"], t.Inputs["qzeros"], t.Inputs["scales"]
		if qw.DType != tensor.I32 || qz.DType != tensor.I32 || sc.DType != tensor.F16 || len(qw.Shape) != 2 || len(sc.Shape) != 2 || sc.Shape[0] == 0 {
			return nil, false, nil
		}
		ic, oc := qw.Shape[0], 8*qw.Shape[1]
		g, err := t.Params.Int("group", ic/sc.Shape[0])
		if err != nil || g == -1 {
			g = ic
		}
		k, err := awq.KernelByName(t.Params.Get("kernel", awq.KernelCUDA.Name))
		if err != nil || g <= 0 {
			return nil, false, nil
		}
		q, err := awq.AWQ.UnpackWeight(qw.I32(), ic, oc)
		if err != nil {
			return nil, false, nil
		}
		z, err := awq.AWQ.UnpackZeros(qz.I32(), ic, oc, g)
		if err != nil {
			return nil, false, nil
		}
		for i := range z {
			z[i]++
		}
		w, err := k.DequantizeUnpacked(q, z, sc.Bits16(), ic, oc, g)
		if err != nil {
			return nil, false, nil
		}
		return ops.Tensors{"w": tensor.FromBits16(tensor.F16, []int{ic, oc}, w)}, true, nil
	}
	return nil, false, nil
}

// anyFormat reports whether pred holds for one of fs.
func anyFormat(fs []unary.Format, pred func(unary.Format) bool) bool {
	for _, f := range fs {
		if pred(f) {
			return true
		}
	}
	return false
}
