package e8m0

import (
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/bitexact/bitexact/refimpl/internal/sweep"
)

// The exhaustive tests share one sweep over the float32 magnitudes (every
// one under BITEXACT_EXHAUSTIVE=1, make exhaustive; a sample otherwise:
// package refimpl/internal/sweep). For each magnitude it encodes both
// signs under every Rounding against an independent float64 oracle, checks
// monotonicity, counts pairwise disagreements, and checks SharedScale
// under every ScaleMode (E2M1's emax 2 and max 6) against a float64 model.

// mag is a positive finite float32 magnitude v = f * 2^k, f in [1, 2), as
// math.Frexp gives it: computed once, read by every oracle.
type mag struct {
	v, f float64
	k    int
}

func newMag(v float64) mag {
	frac, exp := math.Frexp(v) // v = frac * 2^exp, frac in [0.5, 1)
	return mag{v, frac * 2, exp - 1}
}

// oracle is an independent float64 model of rounding r for a positive
// finite non-zero magnitude m; ok is false for a rounding it does not know.
func oracle(r Rounding, m mag) (c uint8, ok bool) {
	var e int
	switch {
	case r.Name != "rz" && r.Name != "rp" && r.Name != "torch" && r.Name != "ml_dtypes":
		return 0, false
	case m.k < -126: // float32 subnormal: code 0 is 2^-127, code 1 is 2^-126
		e = -127
		if r.Name != "rz" && m.v > 0x1p-127 {
			e = -126
		}
	case r.Name == "rz":
		e = m.k
	case r.Name == "rp":
		e = m.k
		if m.f > 1 {
			e++
		}
	default: // torch, ml_dtypes: the midpoint is arithmetic, 1.5 * 2^k
		e = m.k
		if m.f >= 1.5 {
			e++
		}
	}
	if e > 127 {
		if r.satfinite {
			return 0xfe, true
		}
		return 0xff, true
	}
	return uint8(e + 127), true
}

// scaleOracle models SharedScale(v, mode, 2, 6) for a finite non-negative
// magnitude m (v = 0 has m.v == 0); ok is false for an unknown mode.
func scaleOracle(mode ScaleMode, m mag) (c uint8, ok bool) {
	if m.v == 0 {
		return 0, true
	}
	k := m.k
	switch mode.Name {
	case "floor":
	case "ceil":
		if m.f != 1 {
			k++
		}
	case "even":
		// torchao adds half an E2M1 ulp (2^21) to the float32 bits: a
		// normal amax with significand >= 1.75 moves to the next binade.
		if m.v >= 0x1p-126 && m.f >= 1.75 {
			k++
		}
		if k > 127 {
			return 0xff, true
		}
	case "rceil":
		// The float64 quotient rounded to float32 is the float32
		// division, correctly rounded.
		return ceilCode(float64(float32(m.v / 6))), true
	default:
		return 0, false
	}
	return clampCode(k - 2), true
}

// ceilCode is the rounded-up E8M0 code of a positive float32 value q.
func ceilCode(q float64) uint8 {
	if q == 0 {
		return 0
	}
	if math.IsInf(q, 0) {
		return 0xff
	}
	frac, exp := math.Frexp(q)
	k := exp - 1
	if frac != 0.5 {
		k++
	}
	return clampCode(k)
}

func clampCode(k int) uint8 {
	switch {
	case k < -127:
		return 0
	case k > 127:
		return 0xff
	}
	return uint8(k + 127)
}

// wantPairs are the pairwise disagreement counts over all 2^32 inputs,
// derived from the classes in docs/rationale/fp8-e8m0-half.md: H = 2^22
// mantissas per half binade, 253 binades below the top one, NEG = the
// 2^31 - (2^23-1) negative non-NaN inputs.
func wantPairs() map[[2]string]uint64 {
	const H, M, NEG = 1 << 22, 1 << 23, 1<<31 - (1<<23 - 1)
	return map[[2]string]uint64{
		{"rz", "rp"}:           2 * (253*(M-1) + H - 1),
		{"rz", "torch"}:        2 * 255 * H,
		{"rz", "ml_dtypes"}:    255*H + 1 + NEG,
		{"rp", "torch"}:        2 * (254*H - 252),
		{"rp", "ml_dtypes"}:    254*H - 251 + NEG,
		{"torch", "ml_dtypes"}: NEG - H,
	}
}

type sweepResult struct {
	pairs     [][]uint64 // [i][j], i < j: inputs where roundings i and j differ
	recipDiff uint64     // amax where amax*(1/6) and amax/6 give different rceil codes
	encode    []string   // first Encode failures (bounded)
	scale     []string   // first SharedScale failures (bounded)
}

func (r *sweepResult) failf(list *[]string, format string, args ...any) {
	if len(*list) < 20 {
		*list = append(*list, fmt.Sprintf(format, args...))
	}
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
	rs, modes := Roundings(), ScaleModes()
	for _, r := range rs {
		if _, ok := oracle(r, newMag(1)); !ok {
			t.Fatalf("no oracle for rounding %q: add one to oracle", r.Name)
		}
	}
	for _, m := range modes {
		if _, ok := scaleOracle(m, newMag(1)); !ok {
			t.Fatalf("no oracle for scale mode %q: add one to scaleOracle", m.Name)
		}
	}
	n := len(rs)
	ws := make([]sweepResult, sweep.Workers())
	for i := range ws {
		ws[i].pairs = make([][]uint64, n)
		for j := range n {
			ws[i].pairs[j] = make([]uint64, n)
		}
	}
	recip := float32(1.0 / 6.0)
	sweep.Run(t, "e8m0", func(wi, lo, hi int) {
		w := &ws[wi]
		pos, neg := make([]uint8, n), make([]uint8, n)
		want, prev := make([]uint8, n), make([]uint8, n)
		if lo > 0 {
			for i, r := range rs {
				prev[i] = r.Encode(math.Float32frombits(uint32(lo - 1)))
			}
		}
		for a := lo; a < hi; a++ {
			b := uint32(a)
			x, nx := math.Float32frombits(b), math.Float32frombits(b|0x80000000)
			v := float64(x)
			var m mag
			if b != 0 && b < 0x7f800000 {
				m = newMag(v)
			}
			for i, r := range rs {
				pos[i], neg[i] = r.Encode(x), r.Encode(nx)
				switch {
				case b > 0x7f800000:
					want[i] = 0xff
				case b == 0x7f800000:
					want[i] = 0xff
					if r.satfinite {
						want[i] = 0xfe
					}
				case b == 0:
					want[i] = 0
					if r.zeroNaN {
						want[i] = 0xff
					}
				default:
					want[i], _ = oracle(r, m)
				}
				wn := want[i]
				if r.negativeNaN {
					wn = 0xff
				}
				if pos[i] != want[i] || neg[i] != wn || b > 1 && b <= 0x7f800000 && pos[i] < prev[i] {
					w.failf(&w.encode, "%s: Encode(±%g [%#08x]) = %#02x/%#02x, oracle %#02x/%#02x, previous %#02x", r.Name, x, b, pos[i], neg[i], want[i], wn, prev[i])
				}
			}
			for i := range n {
				for j := i + 1; j < n; j++ {
					if pos[i] != pos[j] {
						w.pairs[i][j]++
					}
					if neg[i] != neg[j] {
						w.pairs[i][j]++
					}
				}
			}
			copy(prev, pos)
			if b >= 0x7f800000 {
				continue
			}
			for _, mode := range modes {
				got := SharedScale(x, mode, 2, 6)
				if c, _ := scaleOracle(mode, m); got != c {
					w.failf(&w.scale, "%s: SharedScale(%g [%#08x]) = %d, oracle %d", mode.Name, x, b, got, c)
				}
			}
			if ceilCode(float64(x*recip)) != ceilCode(float64(float32(v/6))) {
				w.recipDiff++
			}
		}
	})
	swept.pairs = ws[0].pairs
	for _, w := range ws[1:] {
		for i := range n {
			for j := range n {
				swept.pairs[i][j] += w.pairs[i][j]
			}
		}
		swept.recipDiff += w.recipDiff
	}
	swept.recipDiff += ws[0].recipDiff
	for _, w := range ws {
		swept.encode = append(swept.encode, w.encode...)
		swept.scale = append(swept.scale, w.scale...)
	}
}

// TestExhaustiveEncode: every Rounding's code for every float32 (both
// signs) is its float64 oracle's, and the code never decreases as a
// positive input grows.
func TestExhaustiveEncode(t *testing.T) {
	for _, f := range exhaustive(t).encode {
		t.Error(f)
	}
}

// TestExhaustiveDisagreement asserts the pairwise disagreement counts of
// the roundings over all 2^32 inputs (a sampled sweep: at most those
// counts).
func TestExhaustiveDisagreement(t *testing.T) {
	r, rs, full := exhaustive(t), Roundings(), sweep.Full()
	want := wantPairs()
	for i := range rs {
		for j := i + 1; j < len(rs); j++ {
			k := [2]string{rs[i].Name, rs[j].Name}
			w, ok := want[k]
			switch {
			case !ok:
				t.Errorf("%s vs %s: no derived disagreement count in wantPairs", k[0], k[1])
			case full && r.pairs[i][j] != w, r.pairs[i][j] > w:
				t.Errorf("%s vs %s disagree on %d inputs, want %d (full sweep: %v)", k[0], k[1], r.pairs[i][j], w, full)
			}
			t.Logf("%s vs %s disagree on %d inputs", k[0], k[1], r.pairs[i][j])
		}
	}
}

// TestExhaustiveSharedScale checks every finite float32 amax under each
// mode for E2M1 against a float64 model, and that torchao's RCEIL descale
// amax*float32(1/6) never picks a different code than amax/6.
func TestExhaustiveSharedScale(t *testing.T) {
	r := exhaustive(t)
	for _, f := range r.scale {
		t.Error(f)
	}
	if r.recipDiff != 0 {
		t.Errorf("rceil: amax*(1/6) and amax/6 pick different codes for %d amax values, want 0", r.recipDiff)
	}
}
