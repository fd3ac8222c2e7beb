package catalog

import "testing"

// The first outputs of SplitMix64 seeded with 0, as printed by Vigna's
// reference splitmix64.c (prng.di.unimi.it) and Java's SplittableRandom
// with seed 0; recomputed independently in Python while writing this test.
func TestRNGStream(t *testing.T) {
	r := NewRNG(0)
	for i, want := range []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f} {
		if got := r.Uint64(); got != want {
			t.Errorf("output %d = %#016x, want %#016x", i, got, want)
		}
	}
}

func TestRNGRanges(t *testing.T) {
	r := NewRNG(42)
	for i := 0; i < 10000; i++ {
		if u := r.Unit(); u < 0 || u >= 1 {
			t.Fatalf("Unit() = %v, outside [0, 1)", u)
		}
		if n := r.Intn(7); n < 0 || n >= 7 {
			t.Fatalf("Intn(7) = %d", n)
		}
		if x := r.Normal(); x != x || x < -3.5 || x > 3.5 {
			// |sum of 4 uniforms| < 4, times sqrt(3/4) < 3.47.
			t.Fatalf("Normal() = %v, outside the support (-3.47, 3.47)", x)
		}
	}
}
