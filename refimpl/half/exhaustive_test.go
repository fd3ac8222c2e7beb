package half

import (
	"fmt"
	"math"
	"sort"
	"sync"
	"testing"

	"github.com/bitexact/bitexact/refimpl/internal/sweep"
)

// The exhaustive tests share one sweep over the float32 magnitudes (every
// one under BITEXACT_EXHAUSTIVE=1, make exhaustive; a sample otherwise:
// package refimpl/internal/sweep): each is encoded with both signs to
// binary16 and bfloat16 and checked against a float64 nearest-even oracle
// over the format's code table, plus NaN, sign symmetry and monotonicity.

// fp16Value64 is the float64 value of a finite binary16 magnitude code,
// computed from the format definition (also one past the largest finite
// code: 2^16).
func fp16Value64(c int) float64 {
	e, m := c>>10, float64(c&0x3ff)
	if e == 0 {
		return math.Ldexp(m, -24)
	}
	return math.Ldexp(1+m/1024, e-15)
}

func bf16Value64(c int) float64 {
	e, m := c>>7, float64(c&0x7f)
	if e == 0 {
		return math.Ldexp(m, -133)
	}
	return math.Ldexp(1+m/128, e-127)
}

// halfFormat is one 16-bit format under test.
type halfFormat struct {
	name          string
	enc           func(float32) uint16
	vals          []float64 // values of codes 0 ..= maxF+1
	maxF, infCode int
}

func newHalfFormat(name string, enc func(float32) uint16, val func(int) float64, maxF, infCode int) halfFormat {
	f := halfFormat{name: name, enc: enc, vals: make([]float64, maxF+2), maxF: maxF, infCode: infCode}
	for c := range f.vals {
		f.vals[c] = val(c)
	}
	return f
}

var (
	sweepOnce  sync.Once
	sweptFails [2][]string // per format: first failures (bounded)
)

func halfFormats() []halfFormat {
	return []halfFormat{
		newHalfFormat("fp16", EncodeFP16, fp16Value64, 0x7bff, 0x7c00),
		newHalfFormat("bf16", EncodeBF16, bf16Value64, 0x7f7f, 0x7f80),
	}
}

func exhaustive(t *testing.T, i int) []string {
	t.Helper()
	if testing.Short() {
		t.Skip("exhaustive sweep skipped under -short")
	}
	sweepOnce.Do(func() {
		fs := halfFormats()
		ws := make([][2][]string, sweep.Workers())
		sweep.Run(t, "fp16+bf16", func(w, lo, hi int) {
			for i, f := range fs {
				f.check(&ws[w][i], uint32(lo), uint32(hi))
			}
		})
		for _, w := range ws {
			for i := range fs {
				sweptFails[i] = append(sweptFails[i], w[i]...)
			}
		}
	})
	return sweptFails[i]
}

func TestExhaustiveFP16(t *testing.T) {
	for _, f := range exhaustive(t, 0) {
		t.Error(f)
	}
}

func TestExhaustiveBF16(t *testing.T) {
	for _, f := range exhaustive(t, 1) {
		t.Error(f)
	}
}

// check checks the magnitudes [lo, hi) under f.
func (f halfFormat) check(fails *[]string, lo, hi uint32) {
	// idx: the largest code whose value is at most the input.
	idx := sort.Search(f.maxF+1, func(c int) bool { return f.vals[c+1] > float64(math.Float32frombits(lo)) })
	var prev uint16
	if lo > 0 {
		prev = f.enc(math.Float32frombits(lo - 1))
	}
	for b := lo; b < hi; b++ {
		x := math.Float32frombits(b)
		got, ngot := f.enc(x), f.enc(math.Float32frombits(b|0x80000000))
		var want uint16
		switch {
		case b > 0x7f800000:
			if got&0x7fff <= uint16(f.infCode) || ngot != got|0x8000 {
				want = 0xffff // any NaN; report
			} else {
				want = got
			}
		case b == 0x7f800000:
			want = uint16(f.infCode)
		default:
			v := float64(x)
			for idx <= f.maxF && v >= f.vals[idx+1] {
				idx++
			}
			c := idx
			if idx <= f.maxF {
				mid := (f.vals[idx] + f.vals[idx+1]) / 2
				if v > mid || v == mid && idx&1 == 1 {
					c = idx + 1
				}
			}
			want = uint16(min(c, f.infCode))
		}
		if (got != want || ngot != want|0x8000 || b <= 0x7f800000 && got < prev) && len(*fails) < 10 {
			*fails = append(*fails, fmt.Sprintf("%s: encode(±%g [%#08x]) = %#04x/%#04x, oracle %#04x, previous %#04x", f.name, x, b, got, ngot, want, prev))
		}
		prev = got
	}
}
