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
// encodes to it: its fields, its special codes, its exact decoding, and
// the ops and golden data that carry it through the rest of the project.
// It is the format's one description: the golden catalogue's edge,
// random and decode cases, the vendor suites (float32, fp16 and bf16
// inputs, and decoding), the diagnosis's code alternatives, the demo, the
// semantics tables, the ecosystem page's order and the CLI's format list
// are derived from it, and cmd/bitexact's TestFormatFacets fails, naming
// the facet, when one of them is missing for a declared format.
type Format struct {
	// Name is the format's name in conversion names and logical tensor
	// formats: "e2m1", "e4m3", "e5m2", "e8m0", "bf16", "fp16", "e2m3",
	// "e4m3fnuz", ...
	Name string
	// Title is the format's name in headings: "FP8 E4M3".
	Title  string
	Fields Fields
	// Specials says, in one line, which codes are not ordinary numbers.
	Specials string
	// Decode returns the exact value of a code (decoding has no profile).
	Decode func(uint32) float32
	// Code names one code as a tensor element in suite docs: "FP8 E4M3
	// (float8_e4m3fn) code".
	Code string
	// Family groups the format's golden cases in reports ("fp8" for both
	// FP8 formats).
	Family string
	// Encode is the op that converts float32 (or, declared by its
	// parameter input, fp16 or bf16) x to this format's codes.
	Encode EncodeOp
	// DecodeOp is the op that decodes this format's codes to float32.
	DecodeOp DecodeOp
	// Seed offsets the seed of the format's random golden inputs from
	// 0x5eed0000; unique per format, and never changed once a golden set
	// holds the format (a changed seed changes its inputs).
	Seed uint64
	// Rationale is the repository path of the document that gives the
	// sources of the format and its profiles.
	Rationale string
	// Peers are formats of at most 8 bits whose codes kernels convert to
	// and from this format's (OCP and FNUZ FP8): the golden set holds the
	// conversion of every code each way, under every profile of the
	// target, and each direction is a suite ("e4m3fnuz-from-e4m3").
	// One side of a pair declares it.
	Peers []string
}

// PeerPair is a conversion between two code formats: every code of
// From, decoded exactly, encoded to To.
type PeerPair struct{ From, To Format }

// PeerPairs lists every conversion between peer formats, both directions
// of each declared pair, in Formats order.
func PeerPairs() []PeerPair {
	var pairs []PeerPair
	for _, f := range formats {
		for _, name := range f.Peers {
			g := mustFormat(name)
			pairs = append(pairs, PeerPair{From: g, To: f}, PeerPair{From: f, To: g})
		}
	}
	return pairs
}

// EncodeOp names the refimpl/ops op (by name: this package does not
// import ops) that encodes to a format, with the parameters that select it.
type EncodeOp struct {
	Op string
	// Params are the op's fixed parameters for this format ("format":
	// "e4m3" for fp8.encode).
	Params map[string]string
	// ProfileParam is the parameter whose value is the conversion's
	// profile ("profile", or "rounding" for e8m0.encode).
	ProfileParam string
	// Output is the op's code tensor ("codes"; "y" for bf16 and fp16).
	Output string
	// SuiteNote ends the float32 suite's doc (a list of the profiles'
	// effects), or is empty.
	SuiteNote string
}

// DecodeOp names the refimpl/ops op that decodes a format's codes.
type DecodeOp struct {
	Op     string
	Params map[string]string
	// Input is the op's code tensor, of dtype DType ("U8" for codes of up
	// to 8 bits, one per byte; "BF16", "F16") and logical format Logical.
	Input, DType, Logical string
	// ProfileParam, when set, is the parameter naming how the decoder
	// treats special codes, and Profiles its values, the op's default
	// first (e8m0.decode's ocp and ggml).
	ProfileParam string
	Profiles     []DecodeProfile
	// Doc is the golden decode case's description ("every E2M1 code to
	// float32"); SuiteNote ends the decode suite's doc.
	Doc, SuiteNote string
	// NoGolden, when set, says why the golden set has no decode case and
	// no decode suite for the format (BF16 and FP16 widening is pinned by
	// refimpl/half's tests instead).
	NoGolden string
}

// DecodeProfile is one value of a decode op's profile parameter.
type DecodeProfile struct {
	Name string
	// Doc is the golden case's description under this profile.
	Doc string
}

// EncodeParams returns the encode op's parameters for a conversion of
// the format under profile.
func (f Format) EncodeParams(profile string) map[string]string {
	p := map[string]string{}
	for k, v := range f.Encode.Params {
		p[k] = v
	}
	p[f.Encode.ProfileParam] = profile
	return p
}

// DecodeParams returns a copy of the decode op's fixed parameters.
func (f Format) DecodeParams() map[string]string {
	p := map[string]string{}
	for k, v := range f.DecodeOp.Params {
		p[k] = v
	}
	return p
}

// Canonical is the format's canonical profile: the first of its
// conversions in All, the one a claim names when it names none.
func (f Format) Canonical() string {
	for _, c := range all {
		if c.Format == f.Name {
			return c.Profile
		}
	}
	return ""
}

// Conversions lists the format's conversions, canonical first.
func (f Format) Conversions() []Conversion {
	var cs []Conversion
	for _, c := range all {
		if c.Format == f.Name {
			cs = append(cs, c)
		}
	}
	return cs
}

// HasNaN reports whether some code decodes to NaN.
func (f Format) HasNaN() bool { return f.any(func(v float32) bool { return v != v }) }

// HasSubnormalValues reports whether some code decodes to a float32
// subnormal (E8M0's 2^-127).
func (f Format) HasSubnormalValues() bool {
	return f.any(func(v float32) bool { b := math.Float32bits(v) & 0x7fffffff; return b != 0 && b < 0x00800000 })
}

func (f Format) any(pred func(float32) bool) bool {
	for c := uint32(0); c < 1<<f.Fields.Bits(); c++ {
		if pred(f.Decode(c)) {
			return true
		}
	}
	return false
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

// formats are the code formats, in the order of All's conversions. A
// format of its own file (fp6.go) joins through declare.
var formats = []Format{
	{Name: "e2m1", Title: "FP4 E2M1", Fields: Fields{Sign: 1, Exp: 2, Man: 1, Bias: 1},
		Specials: "none: every code is a number (no Inf, no NaN); 0x8 is -0",
		Decode:   func(c uint32) float32 { return fp4.Decode(uint8(c)) },
		Code:     "E2M1 code (one code per byte, low nibble)", Family: "e2m1",
		Encode: EncodeOp{Op: "e2m1.encode", ProfileParam: "profile", Output: "codes"},
		DecodeOp: DecodeOp{Op: "e2m1.decode", Input: "codes", DType: "U8", Logical: "e2m1",
			Doc: "every E2M1 code to float32"},
		Seed: 0, Rationale: "docs/rationale/fp4.md"},
	fp8Format(fp8.E4M3, "FP8 E4M3", "FP8 E4M3 (float8_e4m3fn) code", 6,
		"S.1111.111 is NaN; there is no Inf (S.1111.110 = ±448 is a number)", "; 0x7F and 0xFF are NaN"),
	fp8Format(fp8.E5M2, "FP8 E5M2", "FP8 E5M2 code", 8,
		"exponent 11111: Inf (mantissa 0) or NaN, as in IEEE 754", ""),
	{Name: "e8m0", Title: "E8M0 (UE8M0 scale)", Fields: Fields{Exp: 8, Bias: 127},
		Specials: "0xff is NaN; no sign, no zero (0x00 is 2^-127)",
		Decode:   func(c uint32) float32 { return e8m0.Decode(uint8(c)) },
		Code:     "E8M0 scale code", Family: "e8m0",
		Encode: EncodeOp{Op: "e8m0.encode", ProfileParam: "rounding", Output: "codes"},
		DecodeOp: DecodeOp{Op: "e8m0.decode", Input: "codes", DType: "U8", Logical: "e8m0",
			ProfileParam: "profile", Profiles: []DecodeProfile{
				{Name: "ocp", Doc: "every E8M0 code to float32"},
				{Name: "ggml", Doc: "every E8M0 code to float32 as ggml_e8m0_to_fp32 decodes it (0xFF -> +Inf)"}},
			SuiteNote: " 2^(c-127); 0xFF is NaN (ocp) or +Inf (ggml)"},
		Seed: 10, Rationale: "docs/rationale/fp8-e8m0-half.md"},
	{Name: "bf16", Title: "BF16", Fields: Fields{Sign: 1, Exp: 8, Man: 7, Bias: 127},
		Specials: "exponent all ones: Inf (mantissa 0) or NaN, as in IEEE 754",
		Decode:   func(c uint32) float32 { return half.DecodeBF16(uint16(c)) },
		Code:     "bfloat16", Family: "half",
		Encode: EncodeOp{Op: "bf16.encode", ProfileParam: "profile", Output: "y",
			SuiteNote: ", round to nearest even; NaN and overflow profiles rne (payload kept), canonical-nan (0x7FFF), sign-nan (sign | 0x7FC0), torch-cpu (0xFFFF), satfinite (overflow to max finite)"},
		DecodeOp: DecodeOp{Op: "bf16.decode", Input: "y", DType: "BF16", NoGolden: halfDecodeNoGolden},
		Seed:     14, Rationale: "docs/rationale/fp8-e8m0-half.md"},
	{Name: "fp16", Title: "FP16 (IEEE binary16)", Fields: Fields{Sign: 1, Exp: 5, Man: 10, Bias: 15},
		Specials: "exponent all ones: Inf (mantissa 0) or NaN (IEEE 754 binary16)",
		Decode:   func(c uint32) float32 { return half.DecodeFP16(uint16(c)) },
		Code:     "IEEE binary16", Family: "half",
		Encode: EncodeOp{Op: "fp16.encode", ProfileParam: "profile", Output: "y",
			SuiteNote: ", round to nearest even; NaN and overflow profiles rne (payload kept), canonical-nan (0x7FFF), sign-nan (sign | 0x7E00), numpy (payload kept, not quieted), satfinite (overflow to max finite)"},
		DecodeOp: DecodeOp{Op: "fp16.decode", Input: "y", DType: "F16", NoGolden: halfDecodeNoGolden},
		Seed:     16, Rationale: "docs/rationale/fp8-e8m0-half.md"},
}

// halfDecodeNoGolden is why BF16 and FP16 decoding has no golden case.
const halfDecodeNoGolden = "an exact widening: 0.8 MB of golden data for what refimpl/half's tests already pin"

func fp8Format(f fp8.Format, title, code string, seed uint64, specials, decodeNote string) Format {
	return Format{Name: f.Name, Title: title, Fields: Fields{Sign: 1, Exp: f.ExpBits, Man: f.ManBits, Bias: f.Bias},
		Specials: specials, Decode: func(c uint32) float32 { return f.Decode(uint8(c)) },
		Code: code, Family: "fp8",
		Encode: EncodeOp{Op: "fp8.encode", Params: map[string]string{"format": f.Name}, ProfileParam: "profile", Output: "codes"},
		DecodeOp: DecodeOp{Op: "fp8.decode", Params: map[string]string{"format": f.Name}, Input: "codes", DType: "U8", Logical: f.Name,
			Doc: "every " + f.Name + " code to float32", SuiteNote: decodeNote},
		Seed: seed, Rationale: "docs/rationale/fp8-e8m0-half.md"}
}

// A Profile is one named encoding rule of a format declared in a file of
// its own (declare): its encoder, with the Summary and Source a
// Conversion carries.
type Profile struct {
	Name string
	// Summary says in one line what the profile does at the edges.
	Summary string
	// Source names the implementation the profile reproduces (run) or the
	// specification it states.
	Source string
	Encode func(float32) uint8
}

// declared holds the profiles of the formats added by declare, by format
// name, in declaration order; init builds their conversions after those
// of the formats above.
var declared = map[string][]Profile{}

// declare adds format f, of at most 8 bits, with its profiles (the first
// canonical) to the reference: a format of its own file (fp6.go, fnuz.go)
// is this one call, and everything derived from Formats and All picks it
// up. It panics on a duplicate or incomplete declaration, a programming
// error that every test of the package reports.
func declare(f Format, profiles ...Profile) Format {
	switch {
	case f.Name == "" || f.Title == "" || f.Code == "" || f.Family == "" || f.Rationale == "":
		panic("unary: format " + f.Name + " is declared without a name, title, code, family or rationale")
	case f.Fields.Bits() > 8 || f.Decode == nil:
		panic("unary: format " + f.Name + ": a declared format has a decoder and at most 8 bits")
	case len(profiles) == 0:
		panic("unary: format " + f.Name + " is declared without a profile")
	}
	for _, g := range formats {
		if g.Name == f.Name || g.Seed == f.Seed {
			panic("unary: format " + f.Name + " repeats the name or the seed of " + g.Name)
		}
	}
	for _, p := range f.Peers {
		if g, err := LookupFormat(p); err != nil || g.Fields.Bits() > 8 {
			panic("unary: format " + f.Name + ": peer " + p + " is no format of at most 8 bits declared before it")
		}
	}
	formats = append(formats, f)
	declared[f.Name] = profiles
	return f
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
