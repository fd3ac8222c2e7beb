package certificate

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
	"github.com/bitexact/bitexact/refimpl/unary"
)

// Mismatch is one differing output element, decoded.
type Mismatch struct {
	Tensor string `json:"tensor"`
	// Index is the flat element index; Position the multi-index.
	Index    int   `json:"index"`
	Position []int `json:"position"`
	// Inputs are the float32 inputs the element is computed from, when
	// the op maps inputs to outputs element-wise (unary conversions: one;
	// packed E2M1 pairs: two); empty for block and matrix ops.
	Inputs   []Value `json:"inputs,omitempty"`
	Expected Code    `json:"expected"`
	Got      Code    `json:"got"`
}

// Value is an input value with its bits.
type Value struct {
	Value string `json:"value"`
	Bits  string `json:"bits"`
}

// Code is an output element: its stored bits, the value they decode to and
// the fields (sign, exponent, mantissa; or both nibbles of a packed byte).
type Code struct {
	Code   string `json:"code"`
	Value  string `json:"value"`
	Fields string `json:"fields"`
}

func (v Value) String() string { return v.Value + " (" + v.Bits + ")" }
func (c Code) String() string  { return fmt.Sprintf("%s = %s [%s]", c.Code, c.Value, c.Fields) }

func firstMismatches(inputs, want, got ops.Tensors, max int) []Mismatch {
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	sort.Strings(names)
	var ms []Mismatch
	x, hasX := inputs["x"]
	if hasX && x.DType != tensor.F32 {
		hasX = false
	}
	for _, n := range names {
		w := want[n]
		g, ok := got[n]
		if !ok || g.DType != w.DType || len(g.Data) != len(w.Data) {
			continue
		}
		sz := w.DType.Size()
		count := len(w.Data) / sz
		for i := 0; i < count && len(ms) < max; i++ {
			a, b := w.Data[i*sz:(i+1)*sz], g.Data[i*sz:(i+1)*sz]
			if string(a) == string(b) {
				continue
			}
			m := Mismatch{Tensor: n, Index: i, Position: position(w.Shape, i),
				Expected: DecodeElement(w.DType, w.Logical, a), Got: DecodeElement(w.DType, w.Logical, b)}
			if hasX {
				xs := x.Bits32()
				switch {
				case len(xs) == count:
					m.Inputs = []Value{value(xs[i])}
				case w.Logical == "e2m1x2" && len(xs) == 2*count:
					m.Inputs = []Value{value(xs[2*i]), value(xs[2*i+1])}
				}
			}
			ms = append(ms, m)
		}
	}
	return ms
}

func value(bits uint32) Value {
	return Value{Value: fmtFloat(float64(math.Float32frombits(bits))), Bits: fmt.Sprintf("0x%08x", bits)}
}

func fmtFloat(v float64) string {
	if v == 0 && math.Signbit(v) {
		return "-0"
	}
	return fmt.Sprintf("%g", v)
}

func position(shape []int, flat int) []int {
	idx := make([]int, len(shape))
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] > 0 {
			idx[i] = flat % shape[i]
			flat /= shape[i]
		}
	}
	return idx
}

func bitsStr(v uint32, n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%0*b", n, v)
}

// codeOf decodes one code of a reference format: its value and fields.
func codeOf(code string, f unary.Format, c uint32) Code {
	return Code{code, fmtFloat(float64(f.Decode(c))), f.Fields.Describe(c)}
}

// DecodeElement decodes one stored element of a tensor of dtype d and
// logical format logical.
func DecodeElement(d tensor.DType, logical string, b []byte) Code {
	var u uint64
	for i := len(b) - 1; i >= 0; i-- {
		u = u<<8 | uint64(b[i])
	}
	code := fmt.Sprintf("0x%0*x", 2*len(b), u)
	if f, err := unary.LookupFormat(logical); err == nil && f.Fields.Bits() <= 8 && len(b) == 1 {
		return codeOf(code, f, uint32(b[0]))
	}
	switch {
	case logical == "e2m1x2" && len(b) == 1:
		e2m1 := mustFormat("e2m1")
		lo, hi := codeOf(code, e2m1, uint32(b[0]&15)), codeOf(code, e2m1, uint32(b[0]>>4))
		return Code{code, "lo " + lo.Value + ", hi " + hi.Value, "lo: " + lo.Fields + "; hi: " + hi.Fields}
	case d == tensor.F32:
		v := uint32(u)
		return Code{code, fmtFloat(float64(math.Float32frombits(v))), unary.Float32Fields.Describe(v)}
	case d == tensor.F16:
		return codeOf(code, mustFormat("fp16"), uint32(u))
	case d == tensor.BF16:
		return codeOf(code, mustFormat("bf16"), uint32(u))
	case d == tensor.I32 || d == tensor.U32:
		var nib []string
		for i := 7; i >= 0; i-- {
			nib = append(nib, fmt.Sprintf("%x", u>>(4*i)&15))
		}
		return Code{code, fmt.Sprint(int32(uint32(u))), "nibbles 7..0: " + strings.Join(nib, " ")}
	}
	return Code{code, fmt.Sprint(u), "byte " + bitsStr(uint32(u), 8*len(b))}
}

// mustFormat is a format that unary lists.
func mustFormat(name string) unary.Format {
	f, err := unary.LookupFormat(name)
	if err != nil {
		panic(err)
	}
	return f
}
