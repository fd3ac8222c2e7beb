package fp8

import (
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/bitexact/bitexact/refimpl/internal/sweep"
)

// The exhaustive tests share one sweep over the float32 magnitudes (every
// one under BITEXACT_EXHAUSTIVE=1, make exhaustive; a sample otherwise:
// package refimpl/internal/sweep): each magnitude is encoded with both
// signs, in both formats, under both profiles, against a float64
// nearest-even oracle, with a monotonicity check and a census of where the
// profiles disagree.

// Documented disagreement classes between Satfinite and NoSat, over all
// 2^32 float32 inputs (docs/rationale/fp8-e8m0-half.md).
type disagreement struct{ overflow, inf, negNaN, other uint64 }

func wantDisagreement(f Format) disagreement {
	// Finite magnitudes at or beyond the first that rounds past the largest
	// finite value: above 464 for E4M3 (the tie 464 goes to even 0x7e),
	// from the tie 61440 for E5M2 (57344 is 0x7b, odd, so the tie goes up).
	var first uint32
	if f.HasInf {
		first = math.Float32bits(61440)
	} else {
		first = math.Float32bits(464) + 1
	}
	return disagreement{
		overflow: 2 * uint64(0x7f7fffff-first+1),
		inf:      2,
		negNaN:   1<<23 - 1,
	}
}

func (d *disagreement) add(e disagreement) {
	d.overflow += e.overflow
	d.inf += e.inf
	d.negNaN += e.negNaN
	d.other += e.other
}

// formats are the formats the sweep covers, in the order of its results.
var formats = []Format{E4M3, E5M2}

type sweepResult struct {
	sum   [2]disagreement // per format
	fails [2][]string     // first failures per format (bounded)
}

var (
	sweepOnce sync.Once
	swept     sweepResult
)

func exhaustive(t *testing.T) *sweepResult {
	t.Helper()
	if testing.Short() {
		t.Skip("exhaustive sweep skipped under -short")
	}
	sweepOnce.Do(func() { runSweep(t) })
	return &swept
}

func runSweep(t *testing.T) {
	var vals [2][]float64 // value64 of codes 0 ..= MaxFinite+1, per format
	for i, f := range formats {
		maxF := int(f.MaxFinite())
		vals[i] = make([]float64, maxF+2)
		for c := range vals[i] {
			vals[i][c] = value64(f, c)
		}
	}
	ws := make([]sweepResult, sweep.Workers())
	sweep.Run(t, "fp8", func(w, lo, hi int) {
		for i, f := range formats {
			checkRange(f, vals[i], &ws[w].sum[i], &ws[w].fails[i], uint32(lo), uint32(hi))
		}
	})
	for _, w := range ws {
		for i := range formats {
			swept.sum[i].add(w.sum[i])
			swept.fails[i] = append(swept.fails[i], w.fails[i]...)
		}
	}
}

// checkRange checks magnitudes [lo, hi) of f under both profiles: vals
// are the float64 values of the codes up to one past the largest finite.
func checkRange(f Format, vals []float64, sum *disagreement, fails *[]string, lo, hi uint32) {
	fail := func(x float32, p Profile, got, want uint8) {
		if len(*fails) < 10 {
			*fails = append(*fails, fmt.Sprintf("%s %s: Encode(%g [%#08x]) = %#02x, oracle %#02x", f.Name, p.Name, x, math.Float32bits(x), got, want))
		}
	}
	maxF := int(f.MaxFinite())
	var d disagreement
	idx := 0
	var prevS, prevN uint8
	if lo > 0 {
		prev := math.Float32frombits(lo - 1)
		prevS, prevN = f.Encode(prev, Satfinite), f.Encode(prev, NoSat)
	}
	for bits := lo; bits < hi; bits++ {
		x := math.Float32frombits(bits)
		nx := math.Float32frombits(bits | 0x80000000)
		s, ns := f.Encode(x, Satfinite), f.Encode(nx, Satfinite)
		q, nq := f.Encode(x, NoSat), f.Encode(nx, NoSat)
		var ws, wq uint8 // oracle magnitudes
		switch {
		case bits > 0x7f800000:
			if s != 0x7f || ns != 0x7f || q != 0x7f || nq != 0xff {
				fail(nx, NoSat, nq, 0xff)
				fail(x, Satfinite, s, 0x7f)
			}
			if nq != ns {
				d.negNaN++
			}
			continue
		case bits == 0x7f800000:
			ws, wq = f.MaxFinite(), f.Inf()
		default:
			v := float64(x)
			for idx <= maxF && v >= vals[idx+1] {
				idx++
			}
			c := idx
			if idx <= maxF {
				mid := (vals[idx] + vals[idx+1]) / 2
				if v > mid || v == mid && idx&1 == 1 {
					c = idx + 1
				}
			}
			if c > maxF {
				ws, wq = f.MaxFinite(), f.Inf()
			} else {
				ws, wq = uint8(c), uint8(c)
			}
		}
		if s != ws {
			fail(x, Satfinite, s, ws)
		}
		if ns != ws|0x80 {
			fail(nx, Satfinite, ns, ws|0x80)
		}
		if q != wq {
			fail(x, NoSat, q, wq)
		}
		if nq != wq|0x80 {
			fail(nx, NoSat, nq, wq|0x80)
		}
		if s < prevS || q < prevN {
			fail(x, Satfinite, s, prevS)
		}
		prevS, prevN = s, q
		if s != q {
			if bits == 0x7f800000 {
				d.inf += 2
			} else if ws == f.MaxFinite() && wq != ws {
				d.overflow += 2
			} else {
				d.other += 2
			}
		}
	}
	sum.add(d)
}

func TestExhaustiveE4M3(t *testing.T) { checkExhaustive(t, 0) }
func TestExhaustiveE5M2(t *testing.T) { checkExhaustive(t, 1) }

// checkExhaustive reports formats[i]'s oracle and monotonicity failures
// and checks its Satfinite vs NoSat disagreements (a sampled sweep: at
// most the full counts, none where the full sweep has none).
func checkExhaustive(t *testing.T, i int) {
	r, f, full := exhaustive(t), formats[i], sweep.Full()
	for _, m := range r.fails[i] {
		t.Error(m)
	}
	got, want := r.sum[i], wantDisagreement(f)
	over := func(g, w uint64) bool { return g > w || w == 0 && g != 0 }
	if full && got != want || over(got.overflow, want.overflow) || over(got.inf, want.inf) ||
		over(got.negNaN, want.negNaN) || over(got.other, want.other) {
		t.Errorf("%s satfinite vs nosat disagreements %+v, want %+v (full sweep: %v)", f.Name, got, want, full)
	}
	t.Logf("%s satfinite vs nosat disagree on %+v", f.Name, got)
}
