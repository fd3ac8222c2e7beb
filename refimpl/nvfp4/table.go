package nvfp4

import (
	"math"

	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/fp8"
	"github.com/bitexact/bitexact/refimpl/internal/codetable"
)

// e2m1Tables and e4m3Tables map each fp4 profile (fp4.Profiles: GGML,
// whose codes are not constant over the table's buckets, is not one) and
// each fp8 profile of E4M3 (the whole struct, so that a modified copy
// does not match) to its code table, built on first use. Quantize looks
// element codes and block-scale casts up there instead of calling
// fp4.Profile.Encode per element and fp8.Format.Encode per block: under
// GOARCH=wasm a call costs more than the lookup. The tables are those of
// refimpl/unary's conversions e2m1/P and e4m3/P (TestTablesAreUnarys).
var (
	e2m1Tables = map[fp4.Profile]func() *codetable.Table{}
	e4m3Tables = map[fp8.Profile]func() *codetable.Table{}
)

func init() {
	for _, p := range fp4.Profiles() {
		p := p
		e2m1Tables[p] = codetable.Lazy(func(b uint32) uint8 { return p.Encode(math.Float32frombits(b)) })
	}
	for _, p := range fp8.Profiles() {
		p := p
		if p.Has(fp8.E4M3.Name) {
			e4m3Tables[p] = codetable.Lazy(func(b uint32) uint8 { return fp8.E4M3.Encode(math.Float32frombits(b), p) })
		}
	}
}

// lookupTable returns m's table for p, or nil.
func lookupTable[P comparable](m map[P]func() *codetable.Table, p P) *codetable.Table {
	if table, ok := m[p]; ok {
		return table()
	}
	return nil
}
