package nvfp4

import (
	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/fp8"
	"github.com/bitexact/bitexact/refimpl/unary"
)

// e2m1Tables and e4m3Tables map each fp4 and fp8 profile that unary lists
// (the whole struct, so that a modified copy does not match) to its
// unary.CodeTable, built on first use. Quantize looks element codes and
// block-scale casts up there instead of calling fp4.Profile.Encode per
// element and fp8.Format.Encode per block: under GOARCH=wasm a call costs
// more than the lookup.
var (
	e2m1Tables = tables(fp4.Profiles(), func(p fp4.Profile) string { return "e2m1/" + p.Name })
	e4m3Tables = tables(fp8.Profiles(), func(p fp8.Profile) string { return "e4m3/" + p.Name })
)

func tables[P comparable](profiles []P, name func(P) string) map[P]func() *unary.CodeTable {
	m := map[P]func() *unary.CodeTable{}
	for _, p := range profiles {
		if c, err := unary.Lookup(name(p)); err == nil {
			m[p] = c.Table
		}
	}
	return m
}

// lookupTable returns m's table for p, or nil.
func lookupTable[P comparable](m map[P]func() *unary.CodeTable, p P) *unary.CodeTable {
	if table, ok := m[p]; ok {
		return table()
	}
	return nil
}
