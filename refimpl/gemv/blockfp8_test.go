package gemv

import (
	"math"
	"math/rand"
	"testing"
)

// blockSeq is one group per 128-block, fused, one sequential lane.
var blockSeq = Schedule{GroupK: 128, Fused: true, Accum: FP32, Partial: FP32, Reduce: Sequential, Out: FP32}

func TestBlockFP8GEMVHand(t *testing.T) {
	// E4M3 codes: 0x38 = 1, 0x40 = 2, 0x30 = 0.5, 0xb8 = -1.
	in := BlockFP8{N: 3, K: 4, Block: 2,
		W: []uint8{
			0x38, 0x38, 0x38, 0x38, // 1 1 1 1
			0x40, 0x30, 0xb8, 0x38, // 2 0.5 -1 1
			0x38, 0x40, 0x38, 0x40, // 1 2 1 2 (block row 1)
		},
		WScale: []float32{1, 4, 8, 0.5},
		X:      []uint8{0x38, 0x40, 0x30, 0xb8}, // 1 2 0.5 -1
		XScale: []float32{2, 0.25},
	}
	s := Schedule{GroupK: 2, Accum: FP32, Partial: FP32, Reduce: Sequential, Out: FP32}
	// Row 2: (1+4) * (2*8) + (0.5-2) * (0.25*0.5) = 80 - 0.1875.
	want := []float32{5.5, 4.5, 79.8125}
	got, err := BlockFP8GEMV(in, s)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("y[%d] = %g, want %g", i, got[i], want[i])
		}
	}
	in.XScale = in.XScale[:1]
	if _, err := BlockFP8GEMV(in, s); err == nil {
		t.Error("one activation scale for two blocks: no error")
	}
	in.XScale = []float32{2, 0.25}
	if _, err := BlockFP8GEMV(in, Schedule{GroupK: 3, Accum: FP32, Partial: FP32, Out: FP32}); err == nil {
		t.Error("group 3 does not divide block 2: no error")
	}
}

// adversarial returns an n x k block-FP8 GEMV with finite random codes
// and per-block power-of-two scales 2^-20 .. 2^20.
func adversarial(n, k int, seed int64) BlockFP8 {
	rng := rand.New(rand.NewSource(seed))
	code := func() uint8 {
		for {
			if c := uint8(rng.Intn(256)); c&0x7f != 0x7f {
				return c
			}
		}
	}
	pow2 := func() float32 { return float32(math.Ldexp(1, rng.Intn(41)-20)) }
	nb, kb := (n+127)/128, (k+127)/128
	in := BlockFP8{N: n, K: k, Block: 128, W: make([]uint8, n*k), WScale: make([]float32, nb*kb),
		X: make([]uint8, k), XScale: make([]float32, kb)}
	for i := range in.W {
		in.W[i] = code()
	}
	for i := range in.X {
		in.X[i] = code()
	}
	for i := range in.WScale {
		in.WScale[i] = pow2()
	}
	for i := range in.XScale {
		in.XScale[i] = pow2()
	}
	return in
}

// TestBlockFP8GEMVBound: on a shape larger than one 128 tile in each
// direction (N = 200, K = 640: packed K 2, N not a multiple of 128), every
// output of every schedule is within the bound of the exact value, and a
// kernel that takes the weight scale row from the wrong block index (a
// swizzled tile's raw index: row 0's scales for every row) falls outside
// it on rows >= 128
// while agreeing on a single tile of rows.
func TestBlockFP8GEMVBound(t *testing.T) {
	in := adversarial(200, 640, 1)
	terms, err := in.Terms()
	if err != nil {
		t.Fatal(err)
	}
	m := BoundModel{Mul32: 2, Out: FP32}
	for _, s := range []Schedule{blockSeq, Seq, Warp32, Tree64} {
		y, err := BlockFP8GEMV(in, s)
		if err != nil {
			t.Fatal(err)
		}
		for r := range y {
			v, err := Bound(terms.W[r], terms.X[r], m, float64(y[r]))
			if err != nil {
				t.Fatal(err)
			}
			if !v.Within {
				t.Fatalf("%s: row %d = %g, %.3g ulp from exact, bound %.3g", s, r, y[r], v.ULPError, v.BoundULP)
			}
		}
	}
	// The mutant's kernel reads tile row 0's scales for every row: its
	// storage repeats row 0.
	rawIndex := func(in BlockFP8) BlockFP8 {
		nb, kb := (in.N+127)/128, (in.K+127)/128
		out := in
		out.WScale = nil
		for b := 0; b < nb; b++ {
			out.WScale = append(out.WScale, in.WScale[:kb]...)
		}
		return out
	}
	y, _ := BlockFP8GEMV(rawIndex(in), blockSeq)
	outside := 0
	for r := range y {
		v, _ := Bound(terms.W[r], terms.X[r], m, float64(y[r]))
		if !v.Within {
			if r < 128 {
				t.Errorf("mutant row %d (first tile) outside the bound", r)
			}
			outside++
		}
	}
	if outside == 0 {
		t.Error("the raw-block-index mutant is within the bound on every row")
	}
	t.Logf("raw-block-index mutant: %d of %d rows outside the bound", outside, len(y))
	one := adversarial(128, 640, 2)
	a, _ := BlockFP8GEMV(one, blockSeq)
	b, _ := BlockFP8GEMV(rawIndex(one), blockSeq)
	for r := range a {
		if a[r] != b[r] {
			t.Fatalf("N = 128: the mutant differs on row %d, but one tile of rows cannot show it", r)
		}
	}
}
