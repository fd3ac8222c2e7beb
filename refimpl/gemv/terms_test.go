package gemv

import (
	"math"
	"math/rand"
	"testing"
)

// TestSparseFP4Terms: the hand-built batch's dense weights and
// activations, value by value (twoExperts' comments give them), and each
// output of the GEMV is the exact dot product of its terms (every term
// and sum of this batch is exact in float32).
func TestSparseFP4Terms(t *testing.T) {
	in := twoExperts()
	in.Act = f16s(1, 2, 3, 4, 5, 6, 7, 8)
	terms, err := in.Terms()
	if err != nil {
		t.Fatal(err)
	}
	if len(terms.W) != 4 || len(terms.X) != 4 {
		t.Fatalf("%d weight rows and %d activation rows, want A*N = 4", len(terms.W), len(terms.X))
	}
	want := [][]float64{
		// Active row 0 is expert 1 (scale 2): group 0 keeps 0.5 at 1 and -4
		// at 3, group 1 keeps 3 at 0 and 1.5 at 1.
		{0, 1, 0, -8, 6, 3, 0, 0},
		{0, 0, 0, 0, 0, 0, 0, 0}, // column 1: all zero codes
		// Active row 1 is expert 0 (scale 1): 1, 2 at (0,1); -0.5, 6 at (2,3).
		{1, 2, 0, 0, 0, 0, -0.5, 6},
		{0, 0, 0, 0, 0, 0, 0, 0},
	}
	for i, w := range want {
		for k, v := range w {
			if terms.W[i][k] != v || terms.X[i][k] != float64(k+1) {
				t.Fatalf("output %d term %d: w %g x %g, want w %g x %d", i, k, terms.W[i][k], terms.X[i][k], v, k+1)
			}
		}
	}
	y, err := SparseFP4GEMV(in, seqGroup8())
	if err != nil {
		t.Fatal(err)
	}
	for i := range y {
		d, _ := ExactDot(terms.W[i], terms.X[i])
		if e, _ := d.Float64(); e != float64(y[i]) {
			t.Errorf("output %d: GEMV %g, exact dot of the terms %g", i, y[i], e)
		}
	}
}

// seqGroup8 is the sequential float32 schedule over groups of 8 (the sparse
// GEMV needs a group that is a multiple of 4).
func seqGroup8() Schedule {
	s := Seq
	s.GroupK = 8
	return s
}

func TestMXFP4Q81Terms(t *testing.T) {
	var q [32]int8
	q[0], q[16], q[31] = 3, 1, -2
	// Row 0: e = 127 (2^-1): element 0 code 0x2 (kvalue 2) -> 1, element
	// 16 code 0xF (kvalue -12) -> -6, element 31 code 0x7 (12) -> 6.
	// Row 1: e = 0xFF, the NaN scale.
	w := append(mxBlock(127, [16]uint8{0: 0xF2, 15: 0x70}), mxBlock(0xFF, [16]uint8{0x11})...)
	a := q81(0x3800, q) // d8 = 0.5
	terms, err := MXFP4Q81Terms(w, a, 2, 32)
	if err != nil {
		t.Fatal(err)
	}
	if got := [3]float64{terms.W[0][0], terms.W[0][16], terms.W[0][31]}; got != [3]float64{1, -6, 6} {
		t.Errorf("row 0 weights 0, 16, 31: %v, want [1 -6 6]", got)
	}
	if got := [3]float64{terms.X[0][0], terms.X[0][16], terms.X[0][31]}; got != [3]float64{1.5, 0.5, -1} {
		t.Errorf("activations 0, 16, 31: %v, want [1.5 0.5 -1]", got)
	}
	if !math.IsNaN(terms.W[1][0]) || &terms.X[0][0] != &terms.X[1][0] {
		t.Errorf("row 1: weight %g (want NaN), activations shared: %v", terms.W[1][0], &terms.X[0][0] == &terms.X[1][0])
	}
	if _, err := MXFP4Q81Terms(w[:20], a, 2, 32); err == nil {
		t.Error("short weights accepted")
	}
}

// TestTermsHoldTheGEMV: on random inputs every output of the sparse GEMV
// under its v7 schedule (fp16 partials and output) lies within Bound of
// its terms.
func TestTermsHoldTheGEMV(t *testing.T) {
	r := rand.New(rand.NewSource(19))
	in := randomSparse(r, 3, 64, 5, 2, 16)
	terms, err := in.Terms()
	if err != nil {
		t.Fatal(err)
	}
	y, err := SparseFP4GEMV(in, SparseV7)
	if err != nil {
		t.Fatal(err)
	}
	for i := range y {
		v, err := Bound(terms.W[i], terms.X[i], BoundModel{Mul32: 2, Round16: 2, Out: FP16}, float64(y[i]))
		if err != nil || !v.Within {
			t.Errorf("sparse output %d: %g outside the bound of its terms (%+v, %v)", i, y[i], v, err)
		}
	}
}
