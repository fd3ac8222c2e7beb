package minifloat

import (
	"fmt"
	"math"
	"sort"
	"testing"

	"github.com/bitexact/bitexact/refimpl/internal/sweep"
)

var (
	e2m3     = Format{ExpBits: 2, ManBits: 3, Bias: 1, Specials: Finite}
	e3m2     = Format{ExpBits: 3, ManBits: 2, Bias: 3, Specials: Finite}
	e4m3fnuz = Format{ExpBits: 4, ManBits: 3, Bias: 8, Specials: NaNAtNegZero}
	e5m2fnuz = Format{ExpBits: 5, ManBits: 2, Bias: 16, Specials: NaNAtNegZero}

	saturating = Profile{Name: "sat", Saturate: true, NaN: NaNToFlippedZero}
	nonSat     = Profile{Name: "nosat", NaN: NaNToNaN}
	satToNaN   = Profile{Name: "sat-nan", Saturate: true, NaN: NaNToNaN}
)

func negZero() float32 { return float32(math.Copysign(0, -1)) }

// TestDecode pins the values the OCP MX v1.0 (FP6) and LLVM/ml_dtypes
// (FNUZ) tables give at the edges of each format.
func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    Format
		code uint8
		want float64
	}{
		{"e2m3 max", e2m3, 0x1f, 7.5},
		{"e2m3 -max", e2m3, 0x3f, -7.5},
		{"e2m3 min normal", e2m3, 0x08, 1},
		{"e2m3 min subnormal", e2m3, 0x01, 0.125},
		{"e2m3 -0", e2m3, 0x20, math.Copysign(0, -1)},
		{"e3m2 max", e3m2, 0x1f, 28},
		{"e3m2 min normal", e3m2, 0x04, 0.25},
		{"e3m2 min subnormal", e3m2, 0x01, 0.0625},
		{"e4m3fnuz max", e4m3fnuz, 0x7f, 240},
		{"e4m3fnuz -max", e4m3fnuz, 0xff, -240},
		{"e4m3fnuz one", e4m3fnuz, 0x40, 1},
		{"e4m3fnuz min subnormal", e4m3fnuz, 0x01, 0x1p-10},
		{"e5m2fnuz max", e5m2fnuz, 0x7f, 57344},
		{"e5m2fnuz one", e5m2fnuz, 0x40, 1},
		{"e5m2fnuz min subnormal", e5m2fnuz, 0x01, 0x1p-17},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := float64(tc.f.Decode(tc.code))
			if got != tc.want || math.Signbit(got) != math.Signbit(tc.want) {
				t.Errorf("Decode(%#x) = %g, want %g", tc.code, got, tc.want)
			}
		})
	}
	for _, f := range []Format{e4m3fnuz, e5m2fnuz} {
		if b := math.Float32bits(f.Decode(0x80)); b != 0xffc00000 {
			t.Errorf("%+v: Decode(0x80) = %#08x, want the NaN 0xffc00000", f, b)
		}
	}
}

// TestEncodeEdges: ties, overflow, infinities, NaN and zeros under each
// rule.
func TestEncodeEdges(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	negNaN := math.Float32frombits(0xffc00000)
	for _, tc := range []struct {
		name string
		f    Format
		p    Profile
		x    float32
		want uint8
	}{
		{"e2m3 tie 1.0625 to even 1", e2m3, saturating, 1.0625, 0x08},
		{"e2m3 tie 1.1875 to even 1.25", e2m3, saturating, 1.1875, 0x0a},
		{"e2m3 subnormal tie 0.0625 to 0", e2m3, saturating, 0.0625, 0x00},
		{"e2m3 -subnormal tie to -0", e2m3, saturating, -0.0625, 0x20},
		{"e2m3 just above the subnormal tie", e2m3, saturating, math.Nextafter32(0.0625, 1), 0x01},
		{"e2m3 7.75 saturates", e2m3, saturating, 7.75, 0x1f},
		{"e2m3 -Inf saturates", e2m3, saturating, -inf, 0x3f},
		{"e2m3 NaN to -0", e2m3, saturating, nan, 0x20},
		{"e2m3 -NaN to +0", e2m3, saturating, negNaN, 0x00},
		{"e2m3 -0 keeps its sign", e2m3, saturating, negZero(), 0x20},
		{"e3m2 30 saturates", e3m2, saturating, 30, 0x1f},
		{"e3m2 tie 26 to even 24", e3m2, saturating, 26, 0x1e},
		{"e4m3fnuz 240", e4m3fnuz, nonSat, 240, 0x7f},
		{"e4m3fnuz tie 248 overflows to NaN", e4m3fnuz, nonSat, 248, 0x80},
		{"e4m3fnuz just below the overflow tie", e4m3fnuz, nonSat, math.Nextafter32(248, 0), 0x7f},
		{"e4m3fnuz 248 saturates", e4m3fnuz, satToNaN, 248, 0x7f},
		{"e4m3fnuz -Inf to NaN", e4m3fnuz, nonSat, -inf, 0x80},
		{"e4m3fnuz -Inf saturates", e4m3fnuz, satToNaN, -inf, 0xff},
		{"e4m3fnuz -NaN to NaN", e4m3fnuz, nonSat, negNaN, 0x80},
		{"e4m3fnuz -0 to +0", e4m3fnuz, nonSat, negZero(), 0x00},
		{"e4m3fnuz -tiny to +0", e4m3fnuz, nonSat, -0x1p-12, 0x00},
		{"e4m3fnuz -min subnormal", e4m3fnuz, nonSat, -0x1p-10, 0x81},
		{"e5m2fnuz tie 61440 overflows", e5m2fnuz, nonSat, 61440, 0x80},
		{"e5m2fnuz -57344", e5m2fnuz, nonSat, -57344, 0xff},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.f.Encode(tc.x, tc.p); got != tc.want {
				t.Errorf("Encode(%g) = %#x, want %#x", tc.x, got, tc.want)
			}
		})
	}
}

// TestExhaustive holds Encode to a float64 oracle, nearest value by
// search over the decoded codes with ties to the even code, on every
// float32 magnitude with both signs (BITEXACT_EXHAUSTIVE=1; a sample
// otherwise), for each format and rule.
func TestExhaustive(t *testing.T) {
	type pair struct {
		f Format
		p Profile
	}
	var pairs []pair
	for _, f := range []Format{e2m3, e3m2} {
		pairs = append(pairs, pair{f, saturating})
	}
	for _, f := range []Format{e4m3fnuz, e5m2fnuz} {
		pairs = append(pairs, pair{f, nonSat}, pair{f, satToNaN})
	}
	fails := make([][]string, sweep.Workers())
	sweep.Run(t, "minifloat", func(w, lo, hi int) {
		for b := uint32(lo); b < uint32(hi); b++ {
			for _, pp := range pairs {
				for _, s := range []uint32{0, 0x80000000} {
					x := math.Float32frombits(b | s)
					got, want := pp.f.Encode(x, pp.p), oracle(pp.f, pp.p, x)
					if got != want && len(fails[w]) < 5 {
						fails[w] = append(fails[w], fmt.Sprintf("%+v %s: Encode(%#08x) = %#x, oracle %#x", pp.f, pp.p.Name, b|s, got, want))
					}
				}
			}
		}
	})
	for _, f := range fails {
		for _, s := range f {
			t.Error(s)
		}
	}
}

// oracle is the encoder written the slow way: the nearest finite value in
// float64, ties to the code with mantissa bit 0, then the profile's rules.
func oracle(f Format, p Profile, x float32) uint8 {
	sign := uint8(0)
	if math.Signbit(float64(x)) {
		sign = f.signBit()
	}
	nan := f.NaN()
	if x != x {
		if p.NaN == NaNToFlippedZero {
			return sign ^ f.signBit()
		}
		return nan
	}
	a := math.Abs(float64(x))
	maxV := float64(f.Decode(f.MaxFinite()))
	over := f.MaxFinite() | sign
	if !p.Saturate && f.Specials == NaNAtNegZero {
		over = nan
	}
	if math.IsInf(a, 0) {
		return over
	}
	// The magnitudes grow with the code: the nearest is one of the two
	// codes around the first value not below a.
	vals := valueCache[f]
	i := sort.Search(len(vals), func(i int) bool { return vals[i] >= a })
	best := uint8(min(i, len(vals)-1))
	if i > 0 {
		lo := uint8(i - 1)
		if i == len(vals) || a-vals[lo] < vals[i]-a || a-vals[lo] == vals[i]-a && lo&1 == 0 {
			best = lo
		}
	}
	// Beyond the largest value by at least half a step (the step above
	// the largest value is that below it): overflow.
	step := maxV - float64(f.Decode(f.MaxFinite()-1))
	if a > maxV && (a-maxV > step/2 || a-maxV == step/2 && f.MaxFinite()&1 == 1) {
		return over
	}
	if best == 0 && f.Specials == NaNAtNegZero {
		return 0
	}
	return sign | best
}

// valueCache holds values of each format the tests use.
var valueCache = map[Format][]float64{e2m3: values(e2m3), e3m2: values(e3m2), e4m3fnuz: values(e4m3fnuz), e5m2fnuz: values(e5m2fnuz)}

// values are the magnitudes of codes 0 ..= MaxFinite, in float64.
func values(f Format) []float64 {
	v := make([]float64, int(f.MaxFinite())+1)
	for c := range v {
		v[c] = float64(f.Decode(uint8(c)))
	}
	return v
}
