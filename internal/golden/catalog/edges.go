package catalog

import (
	"math"
	"sort"

	"github.com/bitexact/bitexact/refimpl/unary"
)

// Edge classes of float32 inputs to a unary conversion, as recorded beside
// each edge input. They are derived from the target format alone (its
// Decode table), so every profile of a format is tested on the same inputs.
const (
	ClassValue       = "value"         // exactly representable, either sign
	ClassValueUlp    = "value±1ulp"    // float32 neighbours of a representable value
	ClassMidpoint    = "midpoint"      // exact midpoint of two consecutive magnitudes: a tie
	ClassMidpointUlp = "midpoint±1ulp" // float32 neighbours of a tie
	ClassZero        = "zero"          // +0 and -0
	ClassSubnormal   = "f32-subnormal" // float32 denormals, both signs
	ClassOverflow    = "overflow"      // beyond the largest finite magnitude
	ClassInf         = "inf"
	ClassNaN         = "nan" // quiet and signalling, both signs, several payloads
)

// Edge is one edge-class input.
type Edge struct {
	Class string
	Bits  uint32 // the float32 input's bit pattern
}

// magnitudes returns the distinct finite non-negative values of c's codes,
// ascending (+0 included when the format has it).
func magnitudes(c unary.Conversion) []float32 {
	seen := map[uint32]bool{}
	var v []float32
	for code := uint32(0); code < 1<<c.Bits; code++ {
		x := c.Decode(code)
		if x != x || math.IsInf(float64(x), 0) {
			continue
		}
		x = float32(math.Abs(float64(x)))
		b := math.Float32bits(x)
		if !seen[b] {
			seen[b] = true
			v = append(v, x)
		}
	}
	sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
	return v
}

// Edges returns the edge-class inputs of c's format, without duplicates
// (an input in two classes keeps the first), in a fixed order:
// for each pair of consecutive magnitudes a < b, both signs of a, a±1ulp,
// the midpoint (a+b)/2 and its ±1ulp; then overflow, zeros, float32
// subnormals, infinities and NaNs. For 16-bit formats the ±1ulp neighbours
// of representable values are left out (they lie strictly inside a rounding
// interval, so they test nothing a tie's neighbours do not, and they would
// add a third of a megabyte per format to the committed set); the
// exhaustive digests cover every input anyway.
func Edges(c unary.Conversion) []Edge {
	var out []Edge
	seen := map[uint32]bool{}
	add := func(class string, x float32) {
		for _, b := range []uint32{math.Float32bits(x), math.Float32bits(x) ^ 0x80000000} {
			if !seen[b] {
				seen[b] = true
				out = append(out, Edge{class, b})
			}
		}
	}
	addBits := func(class string, b uint32) {
		if !seen[b] {
			seen[b] = true
			out = append(out, Edge{class, b})
		}
	}
	finite := func(f float64) (float32, bool) {
		x := float32(f)
		return x, float64(x) == f && !math.IsInf(float64(x), 0)
	}
	mags := magnitudes(c)
	for i, a := range mags {
		add(ClassValue, a)
		if c.Bits <= 8 {
			if a != 0 {
				add(ClassValueUlp, math.Nextafter32(a, 0))
			}
			add(ClassValueUlp, math.Nextafter32(a, float32(math.Inf(1))))
		}
		if i+1 < len(mags) {
			// The midpoint of two format values is exact in float64 and, for
			// every format here (at most 11 significant bits), in float32.
			if m, ok := finite((float64(a) + float64(mags[i+1])) / 2); ok {
				add(ClassMidpoint, m)
				add(ClassMidpointUlp, math.Nextafter32(m, 0))
				add(ClassMidpointUlp, math.Nextafter32(m, float32(math.Inf(1))))
			}
		}
	}
	if n := len(mags); n >= 2 {
		max, step := float64(mags[n-1]), float64(mags[n-1])-float64(mags[n-2])
		// The tie between the largest value and the next one the format
		// would have with one more exponent step, and the values around it.
		for _, f := range []float64{max + step/2, max + step, 2 * max} {
			if x, ok := finite(f); ok {
				add(ClassOverflow, math.Nextafter32(x, 0))
				add(ClassOverflow, x)
				add(ClassOverflow, math.Nextafter32(x, float32(math.Inf(1))))
			}
		}
		add(ClassOverflow, math.MaxFloat32)
	}
	add(ClassZero, 0)
	for _, b := range []uint32{0x00000001, 0x00000002, 0x00400000, 0x007fffff} {
		add(ClassSubnormal, math.Float32frombits(b))
	}
	add(ClassInf, float32(math.Inf(1)))
	for _, b := range []uint32{
		0x7fc00000, // canonical quiet NaN
		0x7fc00001, // quiet, low payload bit
		0x7fffffff, // quiet, all payload bits
		0x7f800001, // signalling, smallest payload
		0x7fa00000, // signalling, high payload
		0x7fbfffff, // signalling, all payload bits
	} {
		addBits(ClassNaN, b)
		addBits(ClassNaN, b|0x80000000)
	}
	return out
}
