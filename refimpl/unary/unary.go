// Package unary lists every scalar conversion of the reference, float32 in
// and a code out, under every named profile, behind one uniform type. It is
// the table that the exhaustive digests, the `encode` command, the
// disagreement matrix in docs/semantics.md and the unary kernel ABIs walk.
package unary

import (
	"fmt"
	"math"
	"strings"

	"github.com/bitexact/bitexact/refimpl/e8m0"
	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/fp8"
	"github.com/bitexact/bitexact/refimpl/half"
)

// Conversion is one format under one profile.
type Conversion struct {
	// Name is "format/profile", e.g. "e2m1/nvidia", "e4m3/satfinite".
	Name            string
	Format, Profile string
	// Bits is the code width: 4 (E2M1), 8 (FP8, E8M0) or 16 (BF16, FP16).
	Bits int
	// Source says where the profile's behaviour comes from.
	Source string
	Encode func(float32) uint32
	Decode func(uint32) float32
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
// inputs. The input sequence wraps around after 0xFFFFFFFF.
func (c Conversion) EncodeRange(start uint32, out []byte) {
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

var all []Conversion

func init() {
	for _, p := range fp4.Profiles() {
		p := p
		all = append(all, Conversion{
			Name: "e2m1/" + p.Name, Format: "e2m1", Profile: p.Name, Bits: 4, Source: p.Source,
			Encode: func(x float32) uint32 { return uint32(p.Encode(x)) },
			Decode: func(c uint32) float32 { return fp4.Decode(uint8(c)) },
		})
	}
	for _, f := range []fp8.Format{fp8.E4M3, fp8.E5M2} {
		for _, p := range fp8.Profiles() {
			f, p := f, p
			all = append(all, Conversion{
				Name: f.Name + "/" + p.Name, Format: f.Name, Profile: p.Name, Bits: 8, Source: p.Source,
				Encode: func(x float32) uint32 { return uint32(f.Encode(x, p)) },
				Decode: func(c uint32) float32 { return f.Decode(uint8(c)) },
			})
		}
	}
	for _, r := range e8m0.Roundings() {
		r := r
		all = append(all, Conversion{
			Name: "e8m0/" + r.Name, Format: "e8m0", Profile: r.Name, Bits: 8, Source: r.Source,
			Encode: func(x float32) uint32 { return uint32(r.Encode(x)) },
			Decode: func(c uint32) float32 { return e8m0.Decode(uint8(c)) },
		})
	}
	all = append(all,
		Conversion{
			Name: "bf16/rne", Format: "bf16", Profile: "rne", Bits: 16,
			Source: "IEEE 754 roundTiesToEven on the top 16 bits; NaN stays NaN (quieted, sign kept)",
			Encode: func(x float32) uint32 { return uint32(half.EncodeBF16(x)) },
			Decode: func(c uint32) float32 { return half.DecodeBF16(uint16(c)) },
		},
		Conversion{
			Name: "fp16/rne", Format: "fp16", Profile: "rne", Bits: 16,
			Source: "IEEE 754 binary16 roundTiesToEven, through github.com/x448/float16",
			Encode: func(x float32) uint32 { return uint32(half.EncodeFP16(x)) },
			Decode: func(c uint32) float32 { return half.DecodeFP16(uint16(c)) },
		},
	)
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
