package nvfp4

import (
	"math"
	"sync"

	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/fp8"
	"github.com/bitexact/bitexact/refimpl/unary"
)

// codeTable holds the code of every float32 pattern under one 4- or 8-bit
// unary conversion (E2M1 elements, E4M3 block scales) as a function of its top 13 bits and of whether its low 19 bits
// are zero: entry 2k+1 is the code of pattern k<<19, entry 2k that of
// every other pattern of bucket k. That such a table gives the profile's
// Encode for every input is refimpl/unary's invariant (checked over all
// 2^32 inputs by its TestEncodeRangeExhaustive and the committed digests);
// this one is filled from unary's EncodeRange of the two patterns k<<19 and
// k<<19 + 1, so it holds the same bytes.
//
// Quantize looks codes up instead of calling fp4.Profile.Encode per
// element and fp8.Format.Encode per block: under GOARCH=wasm a call costs
// more than the lookup.
type codeTable [2 << 13]uint8

func (t *codeTable) code(x float32) uint8 {
	b := math.Float32bits(x)
	// (b&low - 1) >> 31 is 1 exactly when the low 19 bits are zero.
	return t[(b>>19<<1|(b&(1<<19-1)-1)>>31)&(uint32(len(t))-1)]
}

// e2m1Tables and e4m3Tables map each fp4 and fp8 profile that unary lists
// (the whole struct, so that a modified copy does not match) to its table,
// built on first use.
var (
	e2m1Tables = tables(fp4.Profiles(), func(p fp4.Profile) string { return "e2m1/" + p.Name })
	e4m3Tables = tables(fp8.Profiles(), func(p fp8.Profile) string { return "e4m3/" + p.Name })
)

func tables[P comparable](profiles []P, name func(P) string) map[P]func() *codeTable {
	m := map[P]func() *codeTable{}
	for _, p := range profiles {
		c, err := unary.Lookup(name(p))
		if err != nil {
			continue
		}
		m[p] = sync.OnceValue(func() *codeTable {
			t := new(codeTable)
			var two [2]byte
			for k := range len(t) / 2 {
				c.EncodeRange(uint32(k)<<19, two[:])
				t[2*k+1], t[2*k] = two[0], two[1]
			}
			return t
		})
	}
	return m
}

// lookupTable returns m's table for p, or nil.
func lookupTable[P comparable](m map[P]func() *codeTable, p P) *codeTable {
	if build, ok := m[p]; ok {
		return build()
	}
	return nil
}
