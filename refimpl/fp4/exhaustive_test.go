package fp4

import (
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/bitexact/bitexact/refimpl/internal/sweep"
)

// The exhaustive tests share one sweep over all 2^32 float32 patterns: for
// each magnitude pattern a in [0, 2^31) both signs are encoded under every
// profile and checked against an independent float64 oracle, for
// monotonicity, and for disagreement with the canonical profile. The
// sweep covers every input under BITEXACT_EXHAUSTIVE=1 (make exhaustive)
// and a sample otherwise (package refimpl/internal/sweep).

// Input classes for the disagreement census.
const (
	classNaNPos = iota
	classNaNNeg
	classInfPos
	classInfNeg
	classMidPos  // +0.25, +0.75, ..., +5 exactly
	classMidNeg  // -0.25, ..., -5 exactly
	classNegTiny // sign bit set, |x| < 0.25: -0, negative subnormals, -0.1
	classOther
	numClasses
)

var classNames = [numClasses]string{"+NaN", "-NaN", "+Inf", "-Inf", "+midpoint", "-midpoint", "negative |x|<0.25", "other"}

type census [6][numClasses]uint64 // [profile][class] inputs where code != nvidia's

type sweepResult struct {
	diff     census
	pair     [6][6]uint64 // all-pairs disagreement counts
	oracle   []string     // first failures (bounded)
	monotone []string
}

var (
	sweepOnce sync.Once
	swept     sweepResult
)

func exhaustive(t *testing.T) *sweepResult {
	t.Helper()
	if testing.Short() {
		t.Skip("exhaustive 2^32 sweep skipped under -short")
	}
	sweepOnce.Do(func() { runSweep(t) })
	return &swept
}

// oracleMag returns the E2M1 magnitude index that is nearest to the finite
// non-negative float32 with pattern a, resolving exact ties by tie, using
// float64 distances to the decoded neighbours. For 0.125 <= v <= 6 both
// distances are exact in float64 (multiples of 2^-26 below 8); below 0.125
// the distances may round but are far from equal, and above 6 the nearest
// value is 6.
func oracleMag(a uint32, tie Tie) uint8 {
	v := float64(math.Float32frombits(a))
	if v >= 6 {
		return 7
	}
	k := 0
	for float64(Decode(uint8(k+1))) <= v {
		k++
	}
	lo, hi := float64(Decode(uint8(k))), float64(Decode(uint8(k+1)))
	dlo, dhi := v-lo, hi-v
	switch {
	case dlo < dhi:
		return uint8(k)
	case dhi < dlo:
		return uint8(k + 1)
	}
	switch tie {
	case TieAway:
		return uint8(k + 1)
	case TieTowardZero:
		return uint8(k)
	}
	if k%2 == 0 { // codes with an even index have mantissa bit 0
		return uint8(k)
	}
	return uint8(k + 1)
}

func classify(b uint32) int {
	a, neg := b&^signBit, b&signBit != 0
	switch {
	case a > infBits && neg:
		return classNaNNeg
	case a > infBits:
		return classNaNPos
	case a == infBits && neg:
		return classInfNeg
	case a == infBits:
		return classInfPos
	}
	for k := range 7 {
		if math.Float32frombits(a) == (values[k]+values[k+1])/2 {
			if neg {
				return classMidNeg
			}
			return classMidPos
		}
	}
	if neg && math.Float32frombits(a) < 0.25 {
		return classNegTiny
	}
	return classOther
}

const block = sweep.Unit

type worker struct {
	sweepResult
	prev  [6][2]uint8           // previous magnitude per profile and sign
	want  [numTies][block]uint8 // oracle magnitude per tie rule
	codes [2][block][6]uint8    // codes per sign, input and profile
}

func (w *worker) failf(list *[]string, format string, args ...any) {
	if len(*list) < 20 {
		*list = append(*list, fmt.Sprintf(format, args...))
	}
}

// run checks magnitudes [lo, hi), a multiple of block apart, block by
// block: oracle first, then one tight loop per profile and sign, then the
// cross-profile census on the stored codes.
func (w *worker) run(lo, hi uint32) {
	for i, p := range profiles {
		for s := range 2 {
			if lo > 0 {
				w.prev[i][s] = p.Encode(math.Float32frombits(lo-1|uint32(s)<<31)) & 7
			}
		}
	}
	for base := lo; base < hi; base += block {
		for j := range uint32(block) {
			a := base + j
			if a < infBits {
				for tie := range numTies {
					w.want[tie][j] = oracleMag(a, tie)
				}
			}
		}
		for i := range profiles {
			w.checkProfile(i, base)
		}
		w.census(base)
	}
}

func (w *worker) checkProfile(i int, base uint32) {
	p := profiles[i]
	want := &w.want[p.Tie]
	for s := range uint32(2) {
		prev := w.prev[i][s]
		codes := &w.codes[s]
		for j := range uint32(block) {
			a := base + j
			b := a | s<<31
			c := p.Encode(math.Float32frombits(b))
			codes[j][i] = c
			var exp uint8
			switch {
			case a < infBits:
				m := want[j]
				exp = m | uint8(s)<<3
				if m == 0 && p.Zero == ZeroPositive {
					exp = 0
				}
				// Magnitude is non-decreasing in |x| within a sign.
				if c&7 < prev {
					w.failf(&w.monotone, "%s: Encode(%#08x) = %#x after magnitude %d", p.Name, b, c, prev)
				}
				prev = c & 7
			case a > infBits && s == 1:
				exp = p.NaNNeg
			case a > infBits:
				exp = p.NaNPos
			case s == 1:
				exp = p.InfNeg
			default:
				exp = p.InfPos
			}
			if c != exp {
				w.failf(&w.oracle, "%s: Encode(%#08x) = %#x, oracle %#x", p.Name, b, c, exp)
			}
		}
		w.prev[i][s] = prev
	}
}

func (w *worker) census(base uint32) {
	for s := range uint32(2) {
		for j := range uint32(block) {
			cs := &w.codes[s][j]
			if *cs == [6]uint8{cs[0], cs[0], cs[0], cs[0], cs[0], cs[0]} {
				continue
			}
			cl := classify(base + j | s<<31)
			for i := range cs {
				if cs[i] != cs[0] {
					w.diff[i][cl]++
				}
				for k := i + 1; k < len(cs); k++ {
					if cs[i] != cs[k] {
						w.pair[i][k]++
						w.pair[k][i]++
					}
				}
			}
		}
	}
}

func runSweep(t *testing.T) {
	ws := make([]worker, sweep.Workers())
	sweep.Run(t, "e2m1", func(w, lo, hi int) { ws[w].run(uint32(lo), uint32(hi)) })
	for i := range ws {
		w := &ws[i]
		for p := range w.diff {
			for c := range w.diff[p] {
				swept.diff[p][c] += w.diff[p][c]
			}
			for q := range w.pair[p] {
				swept.pair[p][q] += w.pair[p][q]
			}
		}
		swept.oracle = append(swept.oracle, w.oracle...)
		swept.monotone = append(swept.monotone, w.monotone...)
	}
}

// TestExhaustiveNearest: every profile's code for every float32 is the
// nearest E2M1 value under its tie rule (finite inputs; NaN and Inf as the
// profile declares), by an independent float64 oracle.
func TestExhaustiveNearest(t *testing.T) {
	r := exhaustive(t)
	for _, f := range r.oracle {
		t.Error(f)
	}
}

// TestExhaustiveMonotonic: for finite inputs of one sign, the encoded
// magnitude never decreases as |x| grows.
func TestExhaustiveMonotonic(t *testing.T) {
	r := exhaustive(t)
	for _, f := range r.monotone {
		t.Error(f)
	}
}

// TestExhaustiveDisagreement asserts exactly where each profile differs from
// nvidia over all 2^32 inputs, by class. The counts are derived from the
// profile definitions: there are 2^23-1 NaN patterns per sign; the
// midpoints are 7 per sign; the negative patterns with |x| < 0.25 are
// 0x80000000..0xBE7FFFFF, i.e. 0x3E800000 of them.
func TestExhaustiveDisagreement(t *testing.T) {
	r := exhaustive(t)
	const nan = 1<<23 - 1
	want := census{
		// nvidia vs itself.
		{},
		// sw-sm121: -NaN -> 0xF instead of 0x7; nothing else.
		{classNaNNeg: nan},
		// ml_dtypes: +NaN -> 0x8, -NaN -> 0x0 instead of 0x7.
		{classNaNPos: nan, classNaNNeg: nan},
		// cutlass: -NaN -> 0xF.
		{classNaNNeg: nan},
		// ties-away: the 4 midpoints that nearest-even rounds down (0.25,
		// 1.25, 2.5, 5), per sign.
		{classMidPos: 4, classMidNeg: 4},
		// ties-toward-zero: NaN -> 0, Inf -> 0, the 3 midpoints nearest-even
		// rounds up (0.75, 1.75, 3.5) per sign, -0.25 -> 0x0 instead of 0x8,
		// and every other negative zero result.
		{classNaNPos: nan, classNaNNeg: nan, classInfPos: 1, classInfNeg: 1,
			classMidPos: 3, classMidNeg: 4, classNegTiny: 0x3E800000},
	}
	// A sampled sweep sees a subset of each class: at most the full count,
	// and none where the full sweep has none.
	full := sweep.Full()
	for i, p := range profiles {
		var total uint64
		for c := range numClasses {
			total += r.diff[i][c]
			if full && r.diff[i][c] != want[i][c] || r.diff[i][c] > want[i][c] || want[i][c] == 0 && r.diff[i][c] != 0 {
				t.Errorf("%s vs nvidia, class %s: %d inputs differ, want %d (full sweep: %v)", p.Name, classNames[c], r.diff[i][c], want[i][c], full)
			}
		}
		t.Logf("%-16s vs nvidia: %d inputs differ %v", p.Name, total, r.diff[i])
	}
	// cutlass and sw-sm121 are the same function.
	if r.pair[1][3] != 0 {
		t.Errorf("sw-sm121 vs cutlass: %d inputs differ, want 0", r.pair[1][3])
	}
	for i, p := range profiles {
		t.Logf("%-16s %v", p.Name, r.pair[i])
	}
}
