package sweep

import (
	"sync/atomic"
	"testing"
)

func TestSample(t *testing.T) {
	s := sample()
	for i, lo := range s {
		if lo%Unit != 0 || lo < 0 || lo+Unit > 1<<31 {
			t.Fatalf("range %d starts at %#x: not a Unit-aligned range inside [0, 2^31)", i, lo)
		}
		if i > 0 && lo < s[i-1]+Unit {
			t.Fatalf("ranges at %#x and %#x overlap or are out of order", s[i-1], lo)
		}
	}
	has := func(x int) bool {
		for _, lo := range s {
			if lo <= x && x < lo+Unit {
				return true
			}
		}
		return false
	}
	for _, c := range []struct {
		name string
		bits int
	}{
		{"0", 0}, {"smallest subnormal", 1}, {"0.75 (E2M1 tie)", 0x3f400000}, {"just below 0.75", 0x3f3fffff},
		{"1.25 (E2M1 tie)", 0x3fa00000}, {"1.75 (E2M1 tie)", 0x3fe00000}, {"just below 2", 0x3fffffff},
		{"2", 0x40000000}, {"largest finite", 0x7f7fffff}, {"+Inf", 0x7f800000}, {"last NaN", 0x7fffffff},
	} {
		if !has(c.bits) {
			t.Errorf("sample misses %s (%#08x)", c.name, c.bits)
		}
	}
	if n := len(s) * Unit; n < 1<<21 || n > 1<<22 {
		t.Errorf("sample of %d magnitudes, want about 2.4M", n)
	}
}

func TestRunCoversSample(t *testing.T) {
	if testing.Short() {
		t.Skip("Run skips under -short")
	}
	t.Setenv(Env, "0")
	var n atomic.Int64
	Run(t, "count", func(w, lo, hi int) {
		if w < 0 || w >= Workers() || hi-lo != Unit {
			t.Errorf("check(%d, %#x, %#x): bad worker or range", w, lo, hi)
		}
		n.Add(int64(hi - lo))
	})
	if got, want := n.Load(), int64(len(sample())*Unit); got != want {
		t.Errorf("Run checked %d magnitudes, want %d", got, want)
	}
}

// A full sweep hands out every magnitude exactly once.
func TestRunCoversAll(t *testing.T) {
	if testing.Short() {
		t.Skip("Run skips under -short")
	}
	t.Setenv(Env, "1")
	seen := make([]atomic.Int32, 1<<31/Block)
	Run(t, "cover", func(w, lo, hi int) {
		if lo%Block != 0 || hi-lo != Block {
			t.Errorf("check(%d, %#x, %#x): not one Block", w, lo, hi)
			return
		}
		seen[lo/Block].Add(1)
	})
	for k := range seen {
		if n := seen[k].Load(); n != 1 {
			t.Fatalf("block %#x checked %d times, want once", k*Block, n)
		}
	}
}
