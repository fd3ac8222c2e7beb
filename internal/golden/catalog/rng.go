package catalog

import (
	"math"
	"math/bits"
)

// RNG is SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom
// number generators", OOPSLA 2014; constants as in Vigna's reference
// splitmix64.c). It is implemented here, not taken from math/rand, because
// golden inputs must be the same stream forever: math/rand and math/rand/v2
// make no such promise across Go releases.
type RNG struct{ state uint64 }

// NewRNG seeds a generator.
func NewRNG(seed uint64) *RNG { return &RNG{state: seed} }

// Uint64 returns the next 64 random bits.
func (r *RNG) Uint64() uint64 {
	r.state += 0x9e3779b97f4a7c15
	z := r.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Uint32 returns the high 32 bits of the next output.
func (r *RNG) Uint32() uint32 { return uint32(r.Uint64() >> 32) }

// Intn returns a value in [0, n) by multiply-shift (Lemire), with the small
// bias that implies for n far from a power of two; n must be positive.
func (r *RNG) Intn(n int) int {
	hi, _ := bits.Mul64(r.Uint64(), uint64(n))
	return int(hi)
}

// Unit returns a float32 uniform on [0, 1) with 24 random bits, built from
// integers only so that no host float behaviour enters the stream.
func (r *RNG) Unit() float32 {
	return float32(r.Uint64()>>40) * (1.0 / (1 << 24))
}

// Normal returns an approximately standard-normal float32: the sum of four
// uniforms on [-1, 1), rescaled. Central-limit sums avoid log/sqrt/cos, whose
// last bits the Go spec does not pin across architectures; every step here
// is an exactly specified float32 operation, so the stream is identical on
// every host (only the values matter, not their distribution's fidelity).
func (r *RNG) Normal() float32 {
	var s float32
	for i := 0; i < 4; i++ {
		s += float32(float32(int64(r.Uint64()>>39)-(1<<24)) * (1.0 / (1 << 24)))
	}
	// The sum of 4 uniforms on [-1,1) has variance 4/3; scale by sqrt(3/4).
	return float32(s * 0.8660254)
}

// Bits32 returns a uniformly random float32 bit pattern (every class,
// NaNs and infinities included).
func (r *RNG) Bits32() float32 { return math.Float32frombits(r.Uint32()) }
