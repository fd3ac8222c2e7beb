// Package unary lists every scalar conversion of the reference, float32 in
// and a code out, under every named profile, behind one uniform type. It is
// the table that the exhaustive digests, the `encode` command, the
// disagreement matrix in docs/semantics.md and the unary kernel ABIs walk.
package unary

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/bitexact/bitexact/refimpl/e8m0"
	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/fp8"
	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/internal/codetable"
)

// Conversion is one format under one profile.
type Conversion struct {
	// Name is "format/profile", e.g. "e2m1/nvidia", "e4m3/satfinite".
	Name            string
	Format, Profile string
	// Bits is the code width: 4 (E2M1), 6 (FP6), 8 (FP8, E8M0) or 16
	// (BF16, FP16).
	Bits int
	// Fields are the code's sign, exponent and mantissa widths and bias,
	// those of the format (LookupFormat).
	Fields Fields
	// Source says where the profile's behaviour comes from.
	Source string
	// Summary says in one line what the profile does at the edges; empty
	// for the conversions whose package gives it beside the op
	// (refimpl/ops' Choices).
	Summary string
	Encode  func(float32) uint32
	Decode  func(uint32) float32

	// encodeRange is the package's fast EncodeRange body: a table lookup
	// (tabulated) or a direct call of the encoder, where the loop over
	// Encode pays an indirect call per element (costly under GOARCH=wasm).
	// It gives exactly Encode's codes (TestEncodeRangeExhaustive); nil, as
	// in a Conversion built elsewhere, falls back to the loop over Encode.
	encodeRange func(start uint32, out []byte)
	// table builds (once) the code table of a 4- or 8-bit conversion.
	table func() *codetable.Table
}

// Describe spells a code with its decoded value and its fields: for
// e4m3 0x7e, "0x7e = 448 (s=0 e=1111 m=110)".
func (c Conversion) Describe(code uint32) string {
	return Format{Name: c.Format, Fields: c.Fields, Decode: c.Decode}.Describe(code)
}

// Table returns the conversion's code table, built on first use, for the
// package's 4- and 8-bit conversions whose codes are constant over the
// table's buckets; nil otherwise (16-bit codes, E2M1 under ggml, or a
// Conversion built elsewhere). The ops of refimpl that encode whole
// tensors look codes up in it rather than call Encode per element.
func (c Conversion) Table() *codetable.Table {
	if c.table == nil {
		return nil
	}
	return c.table()
}

// Width is the number of bytes one code occupies in an output stream:
// 1 for codes of up to 8 bits, 2 (little-endian) for 16-bit codes.
func (c Conversion) Width() int {
	if c.Bits > 8 {
		return 2
	}
	return 1
}

// EncodeRange writes the codes of the float32 inputs with bit patterns
// start, start+1, ... into out, Width() bytes each, for len(out)/Width()
// inputs. The input sequence wraps around after 0xFFFFFFFF. For the
// package's conversions it uses a faster equivalent of Encode, so a copy
// whose Encode field was replaced should be built afresh instead.
func (c Conversion) EncodeRange(start uint32, out []byte) {
	if c.encodeRange != nil {
		c.encodeRange(start, out)
		return
	}
	if c.Width() == 1 {
		for i := range out {
			out[i] = byte(c.Encode(math.Float32frombits(start + uint32(i))))
		}
		return
	}
	for i := 0; i+1 < len(out); i += 2 {
		v := c.Encode(math.Float32frombits(start + uint32(i/2)))
		out[i] = byte(v)
		out[i+1] = byte(v >> 8)
	}
}

// tabulated returns the table of enc (built on first use) and an
// EncodeRange body that reads it. A table lookup per element is several
// times cheaper than calling an encoder, most of all under GOARCH=wasm,
// where a call costs more than the conversion.
func tabulated(enc func(b uint32) uint8) (table func() *codetable.Table, encodeRange func(start uint32, out []byte)) {
	table = codetable.Lazy(enc)
	return table, func(start uint32, out []byte) { table().EncodeRange(start, out) }
}

var all []Conversion

// conversion is the Conversion of the named format under a profile: the
// format gives the width, fields and decoder.
func conversion(format, profile, source string, enc func(float32) uint32) Conversion {
	f := mustFormat(format)
	return Conversion{Name: format + "/" + profile, Format: format, Profile: profile, Bits: f.Fields.Bits(),
		Fields: f.Fields, Source: source, Encode: enc, Decode: f.Decode}
}

func init() {
	for _, p := range fp4.Profiles() {
		p := p
		table, encodeRange := tabulated(func(b uint32) uint8 { return p.Encode(math.Float32frombits(b)) })
		c := conversion("e2m1", p.Name, p.Source, func(x float32) uint32 { return uint32(p.Encode(x)) })
		c.encodeRange, c.table = encodeRange, table
		all = append(all, c)
	}
	// ggml's E2M1 is not constant over the buckets codetable assumes
	// (its float32 errors round with the low bits of large inputs), so it
	// has no table of its own. Below 0x4c000000 it is ties-toward-zero
	// (the first differing magnitude is 0x4c000003), and from 2^28
	// (0x4d800000) on, and for Inf and NaN, it is code 0 (every float32
	// error rounds to |x|): only the patterns between are encoded one by
	// one. golden/exhaustive's digest, computed through Encode, checks it.
	ttz := fp4.TiesTowardZero
	ttzTable, _ := tabulated(func(b uint32) uint8 { return ttz.Encode(math.Float32frombits(b)) })
	ggml := conversion("e2m1", fp4.GGML.Name, fp4.GGML.Source, func(x float32) uint32 { return uint32(fp4.GGML.Encode(x)) })
	ggml.encodeRange = func(start uint32, out []byte) {
		t := ttzTable()
		for i := range out {
			b := start + uint32(i)
			switch a := b & 0x7fffffff; {
			case a < 0x4c000000:
				out[i] = t.Code(b)
			case a >= 0x4d800000:
				out[i] = 0
			default:
				out[i] = fp4.GGML.Encode(math.Float32frombits(b))
			}
		}
	}
	all = append(all, ggml)
	for _, f := range []fp8.Format{fp8.E4M3, fp8.E5M2} {
		for _, p := range fp8.Profiles() {
			f, p := f, p
			if !p.Has(f.Name) {
				continue
			}
			table, encodeRange := tabulated(func(b uint32) uint8 { return f.Encode(math.Float32frombits(b), p) })
			c := conversion(f.Name, p.Name, p.Source, func(x float32) uint32 { return uint32(f.Encode(x, p)) })
			c.encodeRange, c.table = encodeRange, table
			all = append(all, c)
		}
	}
	for _, r := range e8m0.Roundings() {
		r := r
		table, encodeRange := tabulated(func(b uint32) uint8 { return r.Encode(math.Float32frombits(b)) })
		c := conversion("e8m0", r.Name, r.Source, func(x float32) uint32 { return uint32(r.Encode(x)) })
		c.encodeRange, c.table = encodeRange, table
		all = append(all, c)
	}
	for _, p := range half.Profiles() {
		p := p
		if !p.Has("bf16") {
			continue
		}
		c := conversion("bf16", p.Name, "bfloat16: roundTiesToEven on the top 16 bits; "+p.Source, func(x float32) uint32 { return uint32(p.EncodeBF16(x)) })
		c.encodeRange = func(start uint32, out []byte) { encodeBF16Range(p, start, out) }
		all = append(all, c)
	}
	for _, p := range half.Profiles() {
		p := p
		if !p.Has("fp16") {
			continue
		}
		c := conversion("fp16", p.Name, "IEEE binary16 through github.com/x448/float16; "+p.Source, func(x float32) uint32 { return uint32(p.EncodeFP16(x)) })
		c.encodeRange = func(start uint32, out []byte) { encodeFP16Range(p, start, out) }
		all = append(all, c)
	}
	// The declared formats follow the others, sorted by name: the order
	// of Formats and All must not hang on file names.
	i := 0
	for i < len(formats) && declared[formats[i].Name] == nil {
		i++
	}
	slices.SortFunc(formats[i:], func(a, b Format) int { return strings.Compare(a.Name, b.Name) })
	for _, f := range formats {
		for _, p := range declared[f.Name] {
			table, encodeRange := tabulated(func(b uint32) uint8 { return p.Encode(math.Float32frombits(b)) })
			c := conversion(f.Name, p.Name, p.Source, func(x float32) uint32 { return uint32(p.Encode(x)) })
			c.Summary, c.encodeRange, c.table = p.Summary, encodeRange, table
			all = append(all, c)
		}
	}
}

// All returns every conversion, grouped by format with each format's
// canonical profile first.
func All() []Conversion { return append([]Conversion(nil), all...) }

// Lookup finds a conversion by "format/profile" name.
func Lookup(name string) (Conversion, error) {
	for _, c := range all {
		if c.Name == name {
			return c, nil
		}
	}
	names := make([]string, len(all))
	for i, c := range all {
		names[i] = c.Name
	}
	return Conversion{}, fmt.Errorf("unknown conversion %q (known: %s)", name, strings.Join(names, ", "))
}
