package unary

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/bitexact/bitexact/refimpl/e8m0"
	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/fp8"
	"github.com/bitexact/bitexact/refimpl/half"
)

// Fields are the widths in bits of a binary floating-point code's sign,
// exponent and mantissa fields, most significant first, and its exponent
// bias: a normal code is (-1)^s * 1.m * 2^(e-Bias), a subnormal one (e = 0)
// 0.m * 2^(1-Bias). A width may be 0 (E8M0 has no sign and no mantissa);
// which codes are Inf or NaN is the format's (see Format.Specials).
type Fields struct {
	Sign, Exp, Man int
	Bias           int
}

// Float32Fields are the fields of an IEEE 754 binary32 pattern, for
// describing float32 tensors beside the formats' codes.
var Float32Fields = Fields{Sign: 1, Exp: 8, Man: 23, Bias: 127}

// Bits is the code width, Sign+Exp+Man.
func (f Fields) Bits() int { return f.Sign + f.Exp + f.Man }

// Split returns code's sign, exponent and mantissa fields. Bits of code
// above Bits() are ignored.
func (f Fields) Split(code uint32) (sign, exp, man uint32) {
	mask := func(n int) uint32 { return 1<<n - 1 }
	return code >> (f.Exp + f.Man) & mask(f.Sign), code >> f.Man & mask(f.Exp), code & mask(f.Man)
}

// Binary returns code's sign, exponent and mantissa fields in binary, each
// as wide as its field; "-" for a field of width 0.
func (f Fields) Binary(code uint32) (sign, exp, man string) {
	s, e, m := f.Split(code)
	bin := func(v uint32, n int) string {
		if n == 0 {
			return "-"
		}
		return fmt.Sprintf("%0*b", n, v)
	}
	return bin(s, f.Sign), bin(e, f.Exp), bin(m, f.Man)
}

// Describe spells code field by field, "s=0 e=1111 m=110", leaving out a
// field of width 0. A code that is only an exponent (E8M0) also gets the
// power it scales by: "e=11111110 (2^127)".
func (f Fields) Describe(code uint32) string {
	s, e, m := f.Binary(code)
	var parts []string
	if f.Sign > 0 {
		parts = append(parts, "s="+s)
	}
	if f.Exp > 0 {
		parts = append(parts, "e="+e)
	}
	if f.Man > 0 {
		parts = append(parts, "m="+m)
	}
	if f.Sign == 0 && f.Man == 0 {
		_, ev, _ := f.Split(code)
		parts = append(parts, fmt.Sprintf("(2^%d)", int(ev)-f.Bias))
	}
	return strings.Join(parts, " ")
}

// Format is one code format of the reference, whatever the profile that
// encodes to it: its fields, its special codes and its exact decoding.
type Format struct {
	// Name is the format's name in conversion names and logical tensor
	// formats: "e2m1", "e4m3", "e5m2", "e8m0", "bf16", "fp16".
	Name   string
	Fields Fields
	// Specials says, in one line, which codes are not ordinary numbers.
	Specials string
	// Decode returns the exact value of a code (decoding has no profile).
	Decode func(uint32) float32
}

// Describe spells a code with its value and fields: for E4M3 0x7e,
// "0x7e = 448 (s=0 e=1111 m=110)".
func (f Format) Describe(code uint32) string {
	return fmt.Sprintf("0x%0*x = %s (%s)", (f.Fields.Bits()+3)/4, code, FormatValue(f.Decode(code)), f.Fields.Describe(code))
}

// FormatValue prints a float32 exactly (shortest round-trip form),
// keeping the sign of zero and of a NaN and a NaN's bits: "-0",
// "NaN(0x7fc00000)", "-NaN(0xffc00001)".
func FormatValue(v float32) string {
	if v != v {
		b := math.Float32bits(v)
		sign := ""
		if b>>31 != 0 {
			sign = "-"
		}
		return fmt.Sprintf("%sNaN(0x%08x)", sign, b)
	}
	return strconv.FormatFloat(float64(v), 'g', -1, 32)
}

// formats are the code formats, in the order of All's conversions.
var formats = []Format{
	{Name: "e2m1", Fields: Fields{Sign: 1, Exp: 2, Man: 1, Bias: 1},
		Specials: "none: every code is a number (no Inf, no NaN); 0x8 is -0",
		Decode:   func(c uint32) float32 { return fp4.Decode(uint8(c)) }},
	fp8Format(fp8.E4M3, "S.1111.111 is NaN; there is no Inf (S.1111.110 = ±448 is a number)"),
	fp8Format(fp8.E5M2, "exponent 11111: Inf (mantissa 0) or NaN, as in IEEE 754"),
	{Name: "e8m0", Fields: Fields{Exp: 8, Bias: 127},
		Specials: "0xff is NaN; no sign, no zero (0x00 is 2^-127)",
		Decode:   func(c uint32) float32 { return e8m0.Decode(uint8(c)) }},
	{Name: "bf16", Fields: Fields{Sign: 1, Exp: 8, Man: 7, Bias: 127},
		Specials: "exponent all ones: Inf (mantissa 0) or NaN, as in IEEE 754",
		Decode:   func(c uint32) float32 { return half.DecodeBF16(uint16(c)) }},
	{Name: "fp16", Fields: Fields{Sign: 1, Exp: 5, Man: 10, Bias: 15},
		Specials: "exponent all ones: Inf (mantissa 0) or NaN (IEEE 754 binary16)",
		Decode:   func(c uint32) float32 { return half.DecodeFP16(uint16(c)) }},
}

func fp8Format(f fp8.Format, specials string) Format {
	return Format{Name: f.Name, Fields: Fields{Sign: 1, Exp: f.ExpBits, Man: f.ManBits, Bias: f.Bias},
		Specials: specials, Decode: func(c uint32) float32 { return f.Decode(uint8(c)) }}
}

// Formats returns every code format, in the order of All's conversions.
func Formats() []Format { return append([]Format(nil), formats...) }

// LookupFormat finds a code format by name ("e4m3").
func LookupFormat(name string) (Format, error) {
	for _, f := range formats {
		if f.Name == name {
			return f, nil
		}
	}
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = f.Name
	}
	return Format{}, fmt.Errorf("unknown format %q (known: %s)", name, strings.Join(names, ", "))
}

func mustFormat(name string) Format {
	f, err := LookupFormat(name)
	if err != nil {
		panic(err)
	}
	return f
}
