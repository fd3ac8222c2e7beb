package diagnose

import (
	"math"

	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
	"github.com/bitexact/bitexact/refimpl/unary"
)

// Alternatives of the scalar conversions (encode and decode of one code
// format): the code formats an op reads and writes, code-level faults
// (ties, neighbours, flushes) and codes passed through unconverted.

// codeFormat describes a sign-magnitude code of up to 16 bits whose
// magnitude codes are ordered by value (true of E2M1, FP8, bf16 and fp16),
// so that one magnitude step is one code step.
type codeFormat struct {
	sign, mag uint16
	// man masks the mantissa: a code with magnitude in 1..man is subnormal.
	man    uint16
	decode func(uint16) float32
	// out is the op's code output; wide codes are 16-bit tensors.
	out  string
	wide bool
}

// formatOf is the code format of a unary encode op's output, from the
// description of the refimpl/unary format whose encode op is op and whose
// fixed parameters p holds (fp8.encode names its format in the required
// "format" parameter; without it there is no format to diagnose in).
func formatOf(op string, p ops.Params) (codeFormat, bool) {
	f, ok := encodedFormat(op, p)
	if !ok || f.Fields.Sign != 1 {
		return codeFormat{}, false
	}
	fl := f.Fields
	return codeFormat{
		sign:   1 << (fl.Exp + fl.Man),
		mag:    1<<(fl.Exp+fl.Man) - 1,
		man:    1<<fl.Man - 1,
		decode: func(c uint16) float32 { return f.Decode(uint32(c)) },
		out:    f.Encode.Output,
		wide:   fl.Bits() > 8,
	}, true
}

// encodedFormat finds the format that op encodes to under parameters p.
func encodedFormat(op string, p ops.Params) (unary.Format, bool) {
	for _, f := range unary.Formats() {
		if f.Encode.Op == op && paramsHold(p, f.Encode.Params) {
			return f, true
		}
	}
	return unary.Format{}, false
}

// decodedFormats lists the formats whose decode op is op, with fixed
// parameters that filter holds where filter names them (the fp8-decode
// suite decodes both FP8 formats).
func decodedFormats(op string, filter map[string]string) []unary.Format {
	var fs []unary.Format
	for _, f := range unary.Formats() {
		if f.DecodeOp.Op != op {
			continue
		}
		keep := true
		for k, v := range filter {
			if w, ok := f.DecodeOp.Params[k]; ok && w != v {
				keep = false
			}
		}
		if keep {
			fs = append(fs, f)
		}
	}
	return fs
}

// encodesSignedFormat reports whether op encodes to a sign-magnitude
// format (the unary code alternatives apply to it).
func encodesSignedFormat(op string) bool {
	for _, f := range unary.Formats() {
		if f.Encode.Op == op && f.Fields.Sign == 1 {
			return true
		}
	}
	return false
}

// paramsHold reports whether p has every key of want with its value.
func paramsHold(p ops.Params, want map[string]string) bool {
	for k, v := range want {
		if p[k] != v {
			return false
		}
	}
	return true
}

func isFinite(v float32) bool { return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) }

// mapCodes applies f(x, refCode) to every element of a unary task.
func mapCodes(s *suite.Suite, t Task, f func(cf codeFormat, x float32, c uint16) uint16) (ops.Tensors, bool, error) {
	cf, ok := formatOf(s.Op, t.Params)
	if !ok {
		return nil, false, nil
	}
	x, okx := t.Inputs["x"]
	ref, okr := t.Reference[cf.out]
	if !okx || !okr || ref.Len() != x.Len() || (ref.DType.Size() == 2) != cf.wide {
		return nil, false, nil
	}
	var xs []float32
	switch x.DType {
	case tensor.F32:
		xs = x.F32()
	case tensor.F16, tensor.BF16:
		// A 16-bit input is read as its exactly widened float32 value.
		w, _, _ := widened(ops.Tensors{"x": x})
		xs = w["x"].F32()
	case tensor.U8:
		// Codes of a peer format (the parameter input names it) are
		// read as their exact values.
		src, err := unary.LookupFormat(t.Params.Get("input", ""))
		if err != nil || src.Fields.Bits() > 8 {
			return nil, false, nil
		}
		xs = make([]float32, len(x.Data))
		for i, c := range x.Data {
			xs[i] = src.Decode(uint32(c))
		}
	default:
		return nil, false, nil
	}
	if cf.wide {
		codes := ref.Bits16()
		out := make([]uint16, len(codes))
		for i, c := range codes {
			out[i] = f(cf, xs[i], c)
		}
		r := tensor.FromBits16(ref.DType, ref.Shape, out)
		r.Logical = ref.Logical
		return ops.Tensors{cf.out: r}, true, nil
	}
	out := make([]uint8, len(ref.Data))
	for i, c := range ref.Data {
		out[i] = uint8(f(cf, xs[i], uint16(c)))
	}
	r := tensor.FromU8(ref.Shape, out)
	r.DType = ref.DType
	r.Logical = ref.Logical
	return ops.Tensors{cf.out: r}, true, nil
}

// neighbour returns the code one magnitude step from c (dir +1 or -1),
// same sign, if it is a finite value.
func neighbour(cf codeFormat, c uint16, dir int) (uint16, bool) {
	m := int(c & cf.mag)
	m += dir
	if m < 0 || m > int(cf.mag) {
		return 0, false
	}
	n := c&cf.sign | uint16(m)
	return n, isFinite(cf.decode(n))
}

// tieTo moves an exact midpoint to the neighbour of larger (away) or
// smaller magnitude.
func tieTo(away bool) func(cf codeFormat, x float32, c uint16) uint16 {
	return func(cf codeFormat, x float32, c uint16) uint16 {
		v := cf.decode(c)
		if !isFinite(x) || !isFinite(v) {
			return c
		}
		from := c
		if neg := math.Signbit(float64(x)); neg != (c&cf.sign != 0) {
			if v != 0 || !neg {
				return c
			}
			// A format without -0 (FNUZ) answers a negative input with
			// the zero code 0x00: its neighbours are those of the
			// input's sign.
			from = c | cf.sign
		}
		for _, dir := range []int{-1, 1} {
			n, ok := neighbour(cf, from, dir)
			if !ok {
				continue
			}
			w := cf.decode(n)
			if mid := (math.Abs(float64(v)) + math.Abs(float64(w))) / 2; mid != math.Abs(float64(x)) {
				continue
			}
			if (math.Abs(float64(w)) > math.Abs(float64(v))) == away {
				return n
			}
		}
		return c
	}
}

func unaryAlternatives() []Alternative {
	wrap := func(f func(cf codeFormat, x float32, c uint16) uint16) func(*suite.Suite, Task) (ops.Tensors, bool, error) {
		return func(s *suite.Suite, t Task) (ops.Tensors, bool, error) { return mapCodes(s, t, f) }
	}
	return []Alternative{
		{Class: "ties-away", Doc: "exact midpoints rounded away from zero instead of to even", Compute: wrap(tieTo(true))},
		{Class: "ties-toward-zero", Doc: "exact midpoints rounded toward zero instead of to even", Compute: wrap(tieTo(false))},
		{Class: "truncation", Doc: "round toward zero (truncation, e.g. the top 16 bits of a float32 for bf16) instead of to nearest", Compute: wrap(func(cf codeFormat, x float32, c uint16) uint16 {
			v := cf.decode(c)
			// A finite input that rounded to infinity truncates to the
			// largest finite code, as IEEE round-toward-zero overflows.
			if !isFinite(x) || math.IsNaN(float64(v)) || math.Abs(float64(v)) <= math.Abs(float64(x)) {
				return c
			}
			if n, ok := neighbour(cf, c, -1); ok {
				return n
			}
			return c
		})},
		{Class: "nan-sign-kept", Doc: "a negative NaN keeps its sign in the code", Compute: wrap(func(cf codeFormat, x float32, c uint16) uint16 {
			if x != x && math.Signbit(float64(x)) {
				return c | cf.sign
			}
			return c
		})},
		{Class: "nan-sign-cleared", Doc: "every NaN encodes with the sign bit clear", Compute: wrap(func(cf codeFormat, x float32, c uint16) uint16 {
			if x != x {
				return c &^ cf.sign
			}
			return c
		})},
		{Class: "ftz-outputs", Doc: "subnormal results flushed to zero of the same sign (FTZ on the output)", Compute: wrap(func(cf codeFormat, x float32, c uint16) uint16 {
			if m := c & cf.mag; m != 0 && m <= cf.man {
				return c & cf.sign
			}
			return c
		})},
		{Class: "negative-zero-cleared", Doc: "results of magnitude zero always +0 (the -0 code never produced)", Compute: wrap(func(cf codeFormat, x float32, c uint16) uint16 {
			if c == cf.sign {
				return 0
			}
			return c
		})},
	}
}

// codesReinterpreted is a conversion between code formats that copies the
// input bytes: it applies to a task whose x is U8 codes and whose output
// is U8 codes of the same shape.
func codesReinterpreted(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
	cf, ok := formatOf(s.Op, t.Params)
	x, okx := t.Inputs["x"]
	if !ok || !okx || x.DType != tensor.U8 || cf.wide {
		return nil, false, nil
	}
	ref, ok := t.Reference[cf.out]
	if !ok || ref.DType != tensor.U8 || ref.Len() != x.Len() {
		return nil, false, nil
	}
	r := tensor.FromU8(ref.Shape, append([]uint8(nil), x.Data...))
	r.Logical = ref.Logical
	return ops.Tensors{cf.out: r}, true, nil
}
