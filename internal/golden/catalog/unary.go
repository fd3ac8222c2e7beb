package catalog

import (
	"fmt"
	"math"

	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
	"github.com/bitexact/bitexact/refimpl/unary"
)

// unaryOp names the op and parameters that compute conversion c on a
// tensor "x" of float32, and the family of its cases, from the format's
// description (refimpl/unary.Format.Encode).
func unaryOp(c unary.Conversion) (op string, p ops.Params, family string) {
	f, err := unary.LookupFormat(c.Format)
	if err != nil {
		panic("golden: conversion " + c.Name + " of no declared format") // unary builds every conversion from a format
	}
	return f.Encode.Op, ops.Params(f.EncodeParams(c.Profile)), f.Family
}

// Unary random inputs per format.
const unaryRandom = 16384

// unaryCatalog lists, for every format with a unary conversion, its edge
// inputs and random inputs, and one case per profile and input set.
func unaryCatalog() ([]Inputs, []Case) {
	var t table
	seen := map[string]bool{}
	for _, c := range unary.All() {
		op, params, family := unaryOp(c)
		if !seen[c.Format] {
			seen[c.Format] = true
			f, _ := unary.LookupFormat(c.Format)
			seed := f.Seed
			conv := c
			t.addInputs(Inputs{
				Name: "edges." + c.Format,
				Description: fmt.Sprintf("every %s edge class from its decode table: each representable value and its float32 ±1ulp, "+
					"each midpoint of consecutive magnitudes and its ±1ulp, both signs; overflow ties; ±0; float32 subnormals; ±Inf; "+
					"quiet and signalling NaNs of both signs with several payloads", c.Format),
				Make: func(uint64) (ops.Tensors, error) {
					e := Edges(conv)
					b := make([]uint32, len(e))
					for i, x := range e {
						b[i] = x.Bits
					}
					return ops.Tensors{"x": tensor.FromBits32(tensor.F32, []int{len(b)}, b)}, nil
				},
			})
			t.addInputs(Inputs{
				Name: "random." + c.Format,
				Description: fmt.Sprintf("%d float32 inputs: half approximately normal, scaled to a quarter of the largest %s magnitude, "+
					"half uniformly random bit patterns (every class)", unaryRandom, c.Format),
				Seed: 0x5eed0000 + seed,
				Make: func(seed uint64) (ops.Tensors, error) {
					mags := magnitudes(conv)
					scale := mags[len(mags)-1] / 4
					r := NewRNG(seed)
					v := make([]uint32, unaryRandom)
					for i := range v {
						if i%2 == 0 {
							v[i] = math.Float32bits(float32(r.Normal() * scale))
						} else {
							v[i] = r.Uint32()
						}
					}
					return ops.Tensors{"x": tensor.FromBits32(tensor.F32, []int{len(v)}, v)}, nil
				},
			})
		}
		for _, set := range []string{"edges", "random"} {
			t.addCase(Case{
				Name:        fmt.Sprintf("%s.%s.%s", c.Format, set, c.Profile),
				Family:      family,
				Op:          op,
				Params:      params,
				Inputs:      set + "." + c.Format,
				Description: fmt.Sprintf("%s %s inputs under profile %s (source: unary.Lookup(%q).Source)", c.Format, set, c.Profile, c.Name),
			})
		}
	}
	return t.inputs, t.cases
}

// peerCatalog is the conversions between peer code formats (OCP and FNUZ
// FP8, unary.PeerPairs): every code of the source format, one per byte
// (all.FORMAT), converted under every profile of the target. The
// expected code is the target conversion of the code's exact value; the
// case names its input format in the parameter input.
func peerCatalog() ([]Inputs, []Case) {
	var t table
	added := map[string]bool{}
	for _, pp := range unary.PeerPairs() {
		src := pp.From
		in := "all." + src.Name
		if !added[in] {
			added[in] = true
			n := 1 << src.Fields.Bits()
			t.addInputs(Inputs{Name: in,
				Description: fmt.Sprintf("every %s code, 0x00 to %#02x in order (x U8 [%d], logical %s)", src.Name, n-1, n, src.Name),
				Make: func(uint64) (ops.Tensors, error) {
					c := make([]uint8, n)
					for i := range c {
						c[i] = uint8(i)
					}
					x := tensor.FromU8([]int{n}, c)
					x.Logical = src.Name
					return ops.Tensors{"x": x}, nil
				}})
		}
		for _, c := range pp.To.Conversions() {
			op, params, family := unaryOp(c)
			params["input"] = src.Name
			t.addCase(Case{
				Name:   fmt.Sprintf("%s.from-%s.%s", c.Format, src.Name, c.Profile),
				Family: family, Op: op, Params: params, Inputs: in,
				Description: fmt.Sprintf("every %s code converted to %s under profile %s: the conversion of its exact value (source: unary.Lookup(%q).Source)",
					src.Name, c.Format, c.Profile, c.Name),
			})
		}
	}
	return t.inputs, t.cases
}
