package certificate

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/bitexact/bitexact/refimpl/e8m0"
	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/fp8"
	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
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

func e2m1Fields(c uint8) string {
	return fmt.Sprintf("s=%d e=%s m=%s", c>>3&1, bitsStr(uint32(c>>1&3), 2), bitsStr(uint32(c&1), 1))
}

// DecodeElement decodes one stored element of a tensor of dtype d and
// logical format logical.
func DecodeElement(d tensor.DType, logical string, b []byte) Code {
	var u uint64
	for i := len(b) - 1; i >= 0; i-- {
		u = u<<8 | uint64(b[i])
	}
	code := fmt.Sprintf("0x%0*x", 2*len(b), u)
	switch {
	case logical == "e2m1" && len(b) == 1:
		return Code{code, fmtFloat(float64(fp4.Decode(b[0]))), e2m1Fields(b[0] & 15)}
	case logical == "e2m1x2" && len(b) == 1:
		lo, hi := b[0]&15, b[0]>>4
		return Code{code, fmt.Sprintf("lo %s, hi %s", fmtFloat(float64(fp4.Decode(lo))), fmtFloat(float64(fp4.Decode(hi)))),
			"lo: " + e2m1Fields(lo) + "; hi: " + e2m1Fields(hi)}
	case (logical == "e4m3" || logical == "e5m2") && len(b) == 1:
		f, _ := fp8.LookupFormat(logical)
		c := b[0]
		return Code{code, fmtFloat(float64(f.Decode(c))),
			fmt.Sprintf("s=%d e=%s m=%s", c>>7, bitsStr(uint32(c>>f.ManBits)&(1<<f.ExpBits-1), f.ExpBits), bitsStr(uint32(c)&(1<<f.ManBits-1), f.ManBits))}
	case logical == "e8m0" && len(b) == 1:
		return Code{code, fmtFloat(float64(e8m0.Decode(b[0]))), fmt.Sprintf("e=%d (2^%d)", b[0], int(b[0])-127)}
	case d == tensor.F32:
		v := uint32(u)
		return Code{code, fmtFloat(float64(math.Float32frombits(v))), fmt.Sprintf("s=%d e=%s m=%s", v>>31, bitsStr(v>>23&0xff, 8), bitsStr(v&0x7fffff, 23))}
	case d == tensor.F16:
		v := uint16(u)
		return Code{code, fmtFloat(float64(half.DecodeFP16(v))), fmt.Sprintf("s=%d e=%s m=%s", v>>15, bitsStr(uint32(v>>10&0x1f), 5), bitsStr(uint32(v&0x3ff), 10))}
	case d == tensor.BF16:
		v := uint16(u)
		return Code{code, fmtFloat(float64(half.DecodeBF16(v))), fmt.Sprintf("s=%d e=%s m=%s", v>>15, bitsStr(uint32(v>>7&0xff), 8), bitsStr(uint32(v&0x7f), 7))}
	case d == tensor.I32 || d == tensor.U32:
		var nib []string
		for i := 7; i >= 0; i-- {
			nib = append(nib, fmt.Sprintf("%x", u>>(4*i)&15))
		}
		return Code{code, fmt.Sprint(int32(uint32(u))), "nibbles 7..0: " + strings.Join(nib, " ")}
	}
	return Code{code, fmt.Sprint(u), "byte " + bitsStr(uint32(u), 8*len(b))}
}
