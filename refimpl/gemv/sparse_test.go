package gemv

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/fp8"
	"github.com/bitexact/bitexact/refimpl/half"
)

func f16s(v ...float32) []uint16 {
	h := make([]uint16, len(v))
	for i, x := range v {
		h[i] = half.EncodeFP16(x)
	}
	return h
}

func mustLookup(t testing.TB, spec string) Schedule {
	t.Helper()
	s, err := Lookup(spec)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func sameBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// twoExperts is a hand-built batch, K=8, N=2: the expected outputs are
// worked out in the comments from the E2M1 table {0, .5, 1, 1.5, 2, 3, 4, 6}
// (sign bit 3) and E4M3 0x38 = 1, 0x40 = 2.
func twoExperts() SparseFP4 {
	return SparseFP4{
		E: 2, K: 8, N: 2, ScaleK: 8,
		// [E, K/4, N]: expert 0 column 0: group 0 keeps (0,1) = 1.0 (0x2),
		// 2.0 (0x4); group 1 keeps (2,3) = -0.5 (0x9), 6 (0x7). Expert 1
		// column 0: group 0 keeps (1,3) = 0.5 (0x1), -4 (0xE); group 1 keeps
		// (0,1) = 3 (0x5), 1.5 (0x3). Column 1 is all zero codes.
		Comp: []uint8{0x42, 0x00, 0x79, 0x00, 0xE1, 0x00, 0x35, 0x00},
		// [E, K/8, N]: 0xE4 = 0 | 1<<2 | 2<<4 | 3<<6; 0x4D = 1 | 3<<2 | 0<<4 | 1<<6.
		Meta: []uint8{0xE4, 0x00, 0x4D, 0x00},
		// [E, K/8, N]: expert 0 scale 2 * global 0.5 = 1; expert 1: 1 * 2 = 2.
		Scales:  []uint8{0x40, 0x40, 0x38, 0x38},
		Global:  []float32{0.5, 2},
		Experts: []int32{1, 0},
	}
}

func TestSparseFP4Hand(t *testing.T) {
	one := twoExperts()
	one.Act = f16s(1, 2, 3, 4, 5, 6, 7, 8)
	per := twoExperts()
	per.Act = f16s(1, 2, 3, 4, 5, 6, 7, 8, 8, 7, 6, 5, 4, 3, 2, 1)
	for _, c := range []struct {
		name string
		in   SparseFP4
		want []float32
	}{
		// Expert 1 (row 0): (0.5*2 - 4*4 + 3*5 + 1.5*6) * 2 = 9 * 2 = 18.
		// Expert 0 (row 1): 1*1 + 2*2 - 0.5*7 + 6*8 = 49.5.
		{"shared activations", one, []float32{18, 0, 49.5, 0}},
		// Row 1 activations reversed: 1*8 + 2*7 - 0.5*2 + 6*1 = 27.
		{"per-expert activations", per, []float32{18, 0, 27, 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, s := range []Schedule{SparseV7, SparseV7NoFMA, Seq, Tree64} {
				s.GroupK = 8
				if s.ChunkK != 0 {
					s.ChunkK = 64
				}
				got, err := SparseFP4GEMV(c.in, s)
				if err != nil {
					t.Fatal(err)
				}
				if !sameBits(got, c.want) {
					t.Errorf("%s: got %v, want %v", s, got, c.want)
				}
			}
		})
	}
}

// fusedCase has K=16, one column: group 0 (K 0-7) sums -1 * a0, group 1
// (K 8-15) sums 1 * a8, a0 = a8 = 1+2^-10, scale = E4M3 1.0 * global
// (1+2^-23). Group 0 gives acc = float32(-(1+2^-10)(1+2^-23)) =
// -(1+2^-10+2^-23) (the exact product has a 2^-33 term). Group 1: fused,
// fma(1+2^-10, 1+2^-23, acc) = 2^-33 exactly; unfused, the rounded product
// equals -acc and the sum is 0.
func fusedCase() SparseFP4 {
	return SparseFP4{
		E: 1, K: 16, N: 1, ScaleK: 16,
		Comp:    []uint8{0x0A, 0x00, 0x02, 0x00},
		Meta:    []uint8{0x44, 0x44},
		Scales:  []uint8{0x38},
		Global:  []float32{math.Float32frombits(0x3f800001)},
		Act:     []uint16{0x3C01, 0, 0, 0, 0, 0, 0, 0, 0x3C01, 0, 0, 0, 0, 0, 0, 0},
		Experts: []int32{0},
	}
}

func TestSparseFP4Fusion(t *testing.T) {
	const spec = "chunk=0,lanes=0,group=8,fma=%d,acc=fp32,partial=fp32,reduce=seq,out=fp32"
	for _, c := range []struct {
		name string
		s    Schedule
		want float32
	}{
		{"fused", mustLookup(t, strings.Replace(spec, "%d", "1", 1)), float32(math.Ldexp(1, -33))},
		{"unfused", mustLookup(t, strings.Replace(spec, "%d", "0", 1)), 0},
		// dgx-vllm v7's schedule stores the tile in fp16: 2^-33 underflows to 0.
		{"sparse-v7", SparseV7, 0},
		{"sparse-v7-seq", SparseV7Seq, 0},
		// Group 4 puts the two products in separate groups of one scale
		// multiply each: the same two roundings, the same answer.
		{"fused group 4", mustLookup(t, "chunk=0,lanes=0,group=4,fma=1,acc=fp32,partial=fp32,reduce=seq,out=fp32"), float32(math.Ldexp(1, -33))},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := SparseFP4GEMV(fusedCase(), c.s)
			if err != nil {
				t.Fatal(err)
			}
			if math.Float32bits(got[0]) != math.Float32bits(c.want) {
				t.Errorf("got %g (%#08x), want %g", got[0], math.Float32bits(got[0]), c.want)
			}
		})
	}
}

func TestSparseFP4Scales(t *testing.T) {
	// K=32, two scale blocks of 16: 2 (0x40) and 4 (0x48). A 1.0 (code 0x2)
	// at position 0 of group 0 and of group 4 (K=16); activations 1: 2+4.
	in := SparseFP4{
		E: 1, K: 32, N: 1, ScaleK: 16,
		Comp:    []uint8{0x02, 0, 0, 0, 0x02, 0, 0, 0},
		Meta:    make([]uint8, 4),
		Scales:  []uint8{0x40, 0x48},
		Global:  []float32{1},
		Act:     f16s(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1),
		Experts: []int32{0},
	}
	got, err := SparseFP4GEMV(in, SparseV7)
	if err != nil || got[0] != 6 {
		t.Errorf("got %v, %v; want 6", got, err)
	}
	// Scale byte 0x7F: NaN in E4M3FN, 480 in dgx-vllm's host table.
	nan := SparseFP4{E: 1, K: 8, N: 1, ScaleK: 8, Comp: []uint8{0x02, 0}, Meta: []uint8{0},
		Scales: []uint8{0x7F}, Global: []float32{1}, Act: f16s(1, 0, 0, 0, 0, 0, 0, 0), Experts: []int32{0}}
	got, _ = SparseFP4GEMV(nan, SparseV7)
	if !math.IsNaN(float64(got[0])) {
		t.Errorf("E4M3FN 0x7F: got %v, want NaN", got[0])
	}
	nan.Decode = DGXLUT
	got, _ = SparseFP4GEMV(nan, SparseV7)
	if got[0] != 480 {
		t.Errorf("DGXLUT 0x7F: got %v, want 480", got[0])
	}
}

func TestSparseFP4Errors(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*SparseFP4)
		s    Schedule
		want string
	}{
		{"comp length", func(in *SparseFP4) { in.Comp = in.Comp[1:] }, SparseV7, "comp has 7 elements, want 8"},
		{"meta length", func(in *SparseFP4) { in.Meta = nil }, SparseV7, "meta has 0"},
		{"scales length", func(in *SparseFP4) { in.Scales = append(in.Scales, 0) }, SparseV7, "scales has 5"},
		{"global length", func(in *SparseFP4) { in.Global = nil }, SparseV7, "global has 0"},
		{"act length", func(in *SparseFP4) { in.Act = in.Act[:3] }, SparseV7, "act has 3"},
		{"expert range", func(in *SparseFP4) { in.Experts[0] = 2 }, SparseV7, "experts[0]=2 out of range"},
		{"negative expert", func(in *SparseFP4) { in.Experts[1] = -1 }, SparseV7, "experts[1]=-1"},
		{"K not 8", func(in *SparseFP4) { in.K = 12 }, SparseV7, "not a multiple of 8"},
		{"scale block", func(in *SparseFP4) { in.ScaleK = 12 }, SparseV7, "scale block 12"},
		{"group vs scale", func(in *SparseFP4) {}, mustLookup(t, "chunk=0,lanes=0,group=16,fma=0,acc=fp32,partial=fp32,reduce=seq,out=fp32"), "group 16"},
		{"group not 4", func(in *SparseFP4) {}, Seq, "group 1 must be a multiple of 4"},
		{"decode", func(in *SparseFP4) { in.Decode = 9 }, SparseV7, "unknown scale decoding"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := twoExperts()
			in.Act = f16s(1, 2, 3, 4, 5, 6, 7, 8)
			c.edit(&in)
			_, err := SparseFP4GEMV(in, c.s)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %v, want containing %q", err, c.want)
			}
		})
	}
}

// randomSparse builds a random batch with valid 2:4 metadata (two distinct
// positions, ascending) and finite scales.
func randomSparse(r *rand.Rand, e, k, n, a, scaleK int) SparseFP4 {
	in := SparseFP4{E: e, K: k, N: n, ScaleK: scaleK}
	in.Comp = make([]uint8, e*k/4*n)
	for i := range in.Comp {
		in.Comp[i] = uint8(r.Intn(256))
	}
	pairs := [][2]uint8{{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}}
	in.Meta = make([]uint8, e*k/8*n)
	for i := range in.Meta {
		p, q := pairs[r.Intn(6)], pairs[r.Intn(6)]
		in.Meta[i] = p[0] | p[1]<<2 | q[0]<<4 | q[1]<<6
	}
	in.Scales = make([]uint8, e*(k/scaleK)*n)
	for i := range in.Scales {
		in.Scales[i] = uint8(0x20 + r.Intn(0x40))
	}
	in.Global = make([]float32, e)
	for i := range in.Global {
		in.Global[i] = float32(r.Float64()*0.01 + 0.001)
	}
	in.Act = make([]uint16, a*k)
	for i := range in.Act {
		in.Act[i] = half.EncodeFP16(float32(r.NormFloat64() * 4))
	}
	in.Experts = make([]int32, a)
	for i := range in.Experts {
		in.Experts[i] = int32(r.Intn(e))
	}
	return in
}

// v7Literal transcribes batched_sparse_v7_kernel's loops (TILE_K 64, the
// si/mi index arithmetic, nvcc's FMA contraction) and C.sum(1) as observed
// (four interleaved float32 accumulators over the fp16 tile partials),
// independently of the schedule engine.
func v7Literal(in SparseFP4) []float32 {
	k, n := in.K, in.N
	lut := func(c uint8) float32 { return fp4.Decode(c & 0xF) }
	nScaleGroups := k / in.ScaleK
	pairsPerScale := (k / 8) / nScaleGroups
	var y []float32
	for ai, ex := range in.Experts {
		e := int(ex)
		A := func(i int) float32 { return half.DecodeFP16(in.Act[ai*k+i]) }
		B := func(g, col int) uint8 { return in.Comp[(e*(k/4)+g)*n+col] }
		M := func(p, col int) uint8 { return in.Meta[(e*(k/8)+p)*n+col] }
		S := func(s, col int) uint8 { return in.Scales[(e*nScaleGroups+s)*n+col] }
		for col := 0; col < n; col++ {
			var part [4]float32
			for kStart := 0; kStart < k; kStart += 64 {
				kEnd := min(kStart+64, k)
				var acc float32
				gStart, gEnd := kStart/4, kEnd/4
				for gi := gStart; gi < gEnd; gi += 2 {
					kl := kStart + (gi-gStart)*4
					mi := kStart/8 + (gi-gStart)/2
					si := (kStart/8 + (gi-gStart)/2) / pairsPerScale
					c0, c1, m := B(gi, col), B(gi+1, col), M(mi, col)
					scale := float32(fp8.E4M3.Decode(S(si, col)) * in.Global[e])
					sum := float32(lut(c0) * A(kl+int(m&3)))
					sum = fma32(lut(c0>>4), A(kl+int(m>>2&3)), sum)
					sum = fma32(lut(c1), A(kl+4+int(m>>4&3)), sum)
					sum = fma32(lut(c1>>4), A(kl+4+int(m>>6&3)), sum)
					acc = fma32(sum, scale, acc)
				}
				part[kStart/64%4] += round16(acc)
			}
			y = append(y, round16(((part[0]+part[1])+part[2])+part[3]))
		}
	}
	return y
}

func TestSparseFP4Literal(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	for _, sk := range []int{16, 8} {
		for _, k := range []int{64, 256, 2048 - 64 + 8} { // last: a short final tile
			if k%sk != 0 {
				continue
			}
			in := randomSparse(r, 3, k, 8, 4, sk)
			got, err := SparseFP4GEMV(in, SparseV7)
			if err != nil {
				t.Fatal(err)
			}
			if want := v7Literal(in); !sameBits(got, want) {
				t.Errorf("scaleK %d K %d: got %v, want %v", sk, k, got, want)
			}
		}
	}
}

// TestSparseFP4Bound checks the reference against the exact dense product
// decoded independently of the layout code paths: each result must lie
// within the rigorous bound.
func TestSparseFP4Bound(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	in := randomSparse(r, 2, 256, 4, 2, 16)
	k, n := in.K, in.N
	got, err := SparseFP4GEMV(in, SparseV7)
	if err != nil {
		t.Fatal(err)
	}
	for ai, ex := range in.Experts {
		e := int(ex)
		for col := 0; col < n; col++ {
			w := make([]float64, k)
			x := make([]float64, k)
			for i := range x {
				x[i] = float64(half.DecodeFP16(in.Act[ai*k+i]))
			}
			for g := 0; g < k/4; g++ {
				c := in.Comp[(e*(k/4)+g)*n+col]
				m := in.Meta[(e*(k/8)+g/2)*n+col] >> (4 * (g % 2))
				sc := float64(float32(fp8.E4M3.Decode(in.Scales[(e*(k/16)+g*4/16)*n+col]) * in.Global[e]))
				w[4*g+int(m&3)] += float64(fp4.Decode(c&0xF)) * sc
				w[4*g+int(m>>2&3)] += float64(fp4.Decode(c>>4)) * sc
			}
			v, err := Bound(w, x, BoundModel{Mul32: 1, Round16: 1, Out: FP16}, float64(got[ai*n+col]))
			if err != nil {
				t.Fatal(err)
			}
			if !v.Within {
				t.Errorf("row %d col %d: %v off by %.1f ulp, bound %.1f", ai, col, got[ai*n+col], v.ULPError, v.BoundULP)
			}
		}
	}
}
