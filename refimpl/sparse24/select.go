// Package sparse24 is the reference for 2:4 structured sparsity over FP4
// (E2M1) codes: which two of each group of four values are kept, the
// compressed values and 2-bit index metadata in the layouts that sparse
// FP4 GEMV kernels read, and the CUTLASS/PyTorch reordered metadata layout.
//
// A matrix of codes is [N][K] (output rows by reduction dimension, one
// E2M1 code per byte in the low nibble); groups are four consecutive
// codes along K. A group's metadata nibble is i0 | i1<<2 with i0 < i1 the
// kept positions.
package sparse24

import (
	"fmt"
	"sync"

	"github.com/bitexact/bitexact/refimpl/fp4"
)

// Metric is what a tie rule ranks the four values of a group by.
type Metric int

const (
	// Magnitude ranks by |Decode(code)|; -0 and +0 rank equal.
	Magnitude Metric = iota + 1
	// SignedValue ranks by Decode(code), so negatives rank below zero.
	SignedValue
)

// Degenerate is how a group with fewer than two nonzero values is handled.
type Degenerate int

const (
	// DegenerateRanked applies the rule's ranking to zeros as to any value.
	DegenerateRanked Degenerate = iota + 1
	// DegenerateCUTLASS keeps the positions PyTorch's CUTLASS converter
	// chooses (torch/sparse/_semi_structured_conversions.py
	// sparse_semi_structured_from_dense_cutlass, the bit0..bit3 formulas
	// over the nonzero mask; checked against torch 2.11.0 on an H100): no
	// nonzero, or only position 2 or 3 -> (2,3) 0xE; only 0 -> (0,2) 0x8;
	// only 1 -> (1,2) 0x9.
	DegenerateCUTLASS
)

// TieRule is a named selection rule. Values of distinct rank are kept by
// rank; among equal ranks the lower index wins, in every rule.
type TieRule struct {
	Name       string
	Metric     Metric
	Degenerate Degenerate
	Source     string
	// Summary says in one line what the tie rule does where public
	// implementations differ (diagnoses and docs show it beside the name).
	Summary string
}

// The tie rules.
var (
	// LowerIndex (canonical): keep the two largest magnitudes, the lower
	// index winning among equal magnitudes, also when fewer than two values
	// are nonzero (an all-zero group keeps (0,1), metadata 0x4).
	LowerIndex = TieRule{Name: "lower-index", Summary: "keep the two largest magnitudes, the lower index winning ties, also in groups with fewer than two nonzeros", Metric: Magnitude, Degenerate: DegenerateRanked,
		Source: "bitexact canonical rule (public pruners leave ties unspecified)"}
	// CUTLASS: as LowerIndex when at least two values are nonzero; a group
	// with fewer takes the positions of PyTorch's CUTLASS metadata
	// converter.
	CUTLASS = TieRule{Name: "cutlass", Summary: "as lower-index, but a group with fewer than two nonzeros takes the positions of PyTorch's CUTLASS metadata converter", Metric: Magnitude, Degenerate: DegenerateCUTLASS,
		Source: "pytorch/pytorch:torch/sparse/_semi_structured_conversions.py _sparse_semi_structured_from_dense"}
	// Signed: keep the two largest signed values, lower index on ties, as
	// PyTorch's tile pruner ranks by default.
	Signed = TieRule{Name: "signed", Summary: "keep the two largest signed values, lower index on ties (PyTorch's tile pruner)", Metric: SignedValue, Degenerate: DegenerateRanked,
		Source: "pytorch/pytorch:torch/sparse/_semi_structured_conversions.py _sparse_semi_structured_tile (sorts values descending, signed)"}
)

// TieRules lists the rules, canonical first.
func TieRules() []TieRule { return []TieRule{LowerIndex, CUTLASS, Signed} }

// TieRuleByName finds a rule.
func TieRuleByName(name string) (TieRule, error) {
	for _, r := range TieRules() {
		if r.Name == name {
			return r, nil
		}
	}
	return TieRule{}, fmt.Errorf("sparse24: unknown tie rule %q (known: lower-index, cutlass, signed)", name)
}

// rank orders codes by each metric with small integers: equal values
// (including -0 and +0) share a rank.
var magRank, signedRank [16]int8

func init() {
	for c := 0; c < 16; c++ {
		v := fp4.Decode(uint8(c))
		for d := 0; d < 16; d++ {
			w := fp4.Decode(uint8(d))
			if abs32(w) < abs32(v) {
				magRank[c]++
			}
			if w < v {
				signedRank[c]++
			}
		}
	}
}

func abs32(x float32) float32 {
	if x < 0 {
		return -x
	}
	return x
}

// cutlassDegenerate maps the nonzero mask of a group with fewer than two
// nonzeros (bit i set when position i is nonzero) to its metadata nibble.
func cutlassDegenerate(mask uint8) uint8 {
	switch mask {
	case 0b0001: // only 0
		return 0 | 2<<2
	case 0b0010: // only 1
		return 1 | 2<<2
	default: // none, only 2, only 3
		return 2 | 3<<2
	}
}

// MetaNibbles are the six valid metadata nibbles i0 | i1<<2 (i0 < i1),
// in the order of (i0, i1): (0,1) (0,2) (0,3) (1,2) (1,3) (2,3). Test
// inputs draw random valid metadata from it.
var MetaNibbles = [6]uint8{0 | 1<<2, 0 | 2<<2, 0 | 3<<2, 1 | 2<<2, 1 | 3<<2, 2 | 3<<2}

// Select returns the metadata nibble i0 | i1<<2 (i0 < i1) of the two
// codes of g that rule keeps. Only the low nibble of each code is read.
func (rule TieRule) Select(g [4]uint8) uint8 {
	rk := &magRank
	if rule.Metric == SignedValue {
		rk = &signedRank
	}
	if rule.Degenerate == DegenerateCUTLASS {
		var mask uint8
		for i, c := range g {
			if c&7 != 0 {
				mask |= 1 << i
			}
		}
		if mask&(mask-1) == 0 {
			return cutlassDegenerate(mask)
		}
	}
	// Best two by rank; a later index must beat, not tie, an earlier one.
	b0, b1 := 0, 1
	if rk[g[1]&0xF] > rk[g[0]&0xF] {
		b0, b1 = 1, 0
	}
	for i := 2; i < 4; i++ {
		r := rk[g[i]&0xF]
		if r > rk[g[b0]&0xF] {
			b0, b1 = i, b0
		} else if r > rk[g[b1]&0xF] {
			b1 = i
		}
	}
	if b0 > b1 {
		b0, b1 = b1, b0
	}
	return uint8(b0 | b1<<2)
}

// selectTables caches Select over all 65536 groups for each combination
// of Metric and Degenerate, built on first use.
var selectTables [4]struct {
	once sync.Once
	tab  [65536]uint8
}

// table returns the metadata nibble of every group, indexed by
// c0 | c1<<4 | c2<<8 | c3<<12, or nil for a rule outside the known
// metrics and degenerate modes.
func (rule TieRule) table() *[65536]uint8 {
	if rule.Metric < Magnitude || rule.Metric > SignedValue ||
		rule.Degenerate < DegenerateRanked || rule.Degenerate > DegenerateCUTLASS {
		return nil
	}
	st := &selectTables[int(rule.Metric-1)*2+int(rule.Degenerate-1)]
	st.once.Do(func() {
		for i := range st.tab {
			st.tab[i] = rule.Select([4]uint8{uint8(i) & 0xF, uint8(i>>4) & 0xF, uint8(i>>8) & 0xF, uint8(i >> 12)})
		}
	})
	return &st.tab
}

func (rule TieRule) check() error {
	if rule.table() == nil {
		return fmt.Errorf("sparse24: tie rule %q has an unknown metric or degenerate mode", rule.Name)
	}
	return nil
}

// selectFast is Select through the table.
func selectFast(tab *[65536]uint8, g []uint8) uint8 {
	return tab[uint16(g[0])|uint16(g[1])<<4|uint16(g[2])<<8|uint16(g[3])<<12]
}

// ValidMeta reports whether a metadata nibble names two distinct
// positions (PTX rejects 0b0000, 0b0101, 0b1010, 0b1111).
func ValidMeta(nib uint8) bool { return nib&3 != (nib>>2)&3 }

// Select applies rule to every group of codes [N][K]: kept is codes with
// the two dropped entries of each group set to code 0 (+0), meta holds one
// nibble per group, [N][K/4] one per byte.
func Select(codes []uint8, N, K int, rule TieRule) (kept, meta []uint8, err error) {
	if err := checkNK(len(codes), N, K, 4); err != nil {
		return nil, nil, err
	}
	if err := checkCodes(codes); err != nil {
		return nil, nil, err
	}
	if err := rule.check(); err != nil {
		return nil, nil, err
	}
	tab := rule.table()
	kept = make([]uint8, len(codes))
	meta = make([]uint8, len(codes)/4)
	for t := range meta {
		g := codes[4*t : 4*t+4]
		m := selectFast(tab, g)
		meta[t] = m
		kept[4*t+int(m&3)] = g[m&3]
		kept[4*t+int(m>>2)] = g[m>>2]
	}
	return kept, meta, nil
}

func checkNK(n, N, K, kmult int) error {
	if N <= 0 || K <= 0 {
		return fmt.Errorf("sparse24: N=%d and K=%d must be positive", N, K)
	}
	if K%kmult != 0 {
		return fmt.Errorf("sparse24: K=%d is not a multiple of %d", K, kmult)
	}
	if n != N*K {
		return fmt.Errorf("sparse24: codes have %d elements, want N*K = %d", n, N*K)
	}
	return nil
}

func checkCodes(codes []uint8) error {
	for i, c := range codes {
		if c > 15 {
			return fmt.Errorf("sparse24: code %d is %#x, not a 4-bit E2M1 code", i, c)
		}
	}
	return nil
}
