package unary

import "github.com/bitexact/bitexact/refimpl/minifloat"

// minifloatFormat completes the description of a format that
// refimpl/minifloat encodes and decodes: its fields and decoder come from
// mf, its ops are the generic minifloat.encode and minifloat.decode of
// refimpl/ops (parameter format = d.Name), its codes are one per byte.
// d gives the rest (name, title, code, family, specials, seed,
// rationale).
func minifloatFormat(mf minifloat.Format, d Format) Format {
	d.Fields = Fields{Sign: 1, Exp: mf.ExpBits, Man: mf.ManBits, Bias: mf.Bias}
	d.Decode = func(c uint32) float32 { return mf.Decode(uint8(c)) }
	d.Encode = EncodeOp{Op: "minifloat.encode", Params: map[string]string{"format": d.Name}, ProfileParam: "profile", Output: "codes"}
	d.DecodeOp = DecodeOp{Op: "minifloat.decode", Params: map[string]string{"format": d.Name}, Input: "codes", DType: "U8", Logical: d.Name,
		Doc: "every " + d.Name + " code to float32"}
	return d
}

// minifloatProfile is the Profile of mf under p.
func minifloatProfile(mf minifloat.Format, p minifloat.Profile) Profile {
	return Profile{Name: p.Name, Summary: p.Summary, Source: p.Source, Encode: func(x float32) uint8 { return mf.Encode(x, p) }}
}
