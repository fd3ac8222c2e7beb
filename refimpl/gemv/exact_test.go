package gemv

import (
	"math"
	"math/big"
	"math/rand"
	"strings"
	"testing"
)

func TestBoundCancellation(t *testing.T) {
	// Products 2^24, 1, -2^24: the exact sum is 1; a sequential float32
	// kernel loses the 1 (2^24 + 1 ties to 2^24) and returns 0.
	w := []float64{4096, 1, -4096}
	x := []float64{4096, 1, 4096}
	seq, err := F16GEMV(f16s(4096, 1, -4096), f16s(4096, 1, 4096), 3, 1, Seq)
	if err != nil || seq[0] != 0 {
		t.Fatalf("sequential kernel gave %v, %v; want 0", seq, err)
	}
	// Bound for K=3 exact products: gamma_2 * (2^25 + 1) = 2^-23/(1-2^-23) *
	// (2^25+1) = 4.0000005..., in ulps of 1 (2^-23): (2^25+1)/(1-2^-23).
	wantBoundULP := (math.Ldexp(1, 25) + 1) / (1 - math.Ldexp(1, -23))
	for _, c := range []struct {
		name     string
		got      float64
		ulpError float64
		within   bool
	}{
		{"sequential result", 0, 1 << 23, true},
		{"exact", 1, 0, true},
		{"error 4", 5, 4 << 23, true},
		{"error 5", 6, 5 << 23, false},
		{"NaN", math.NaN(), math.Inf(1), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, err := Bound(w, x, BoundModel{}, c.got)
			if err != nil {
				t.Fatal(err)
			}
			if v.ExactValue != 1 {
				t.Errorf("ExactValue = %v, want 1", v.ExactValue)
			}
			if f, acc := v.Exact.Float64(); f != 1 || acc != big.Exact {
				t.Errorf("Exact = %v (%v), want exactly 1", f, acc)
			}
			if v.ULPError != c.ulpError || v.Within != c.within {
				t.Errorf("ULPError %v Within %v, want %v %v", v.ULPError, v.Within, c.ulpError, c.within)
			}
			if math.Abs(v.BoundULP-wantBoundULP) > 1e-6*wantBoundULP {
				t.Errorf("BoundULP = %v, want %v", v.BoundULP, wantBoundULP)
			}
		})
	}
}

func TestExactDot(t *testing.T) {
	// 2^1020 + 2^-1070 - 2^1020 = 2^-1070, needing ~2100 bits of precision.
	y, err := ExactDot([]float64{0x1p1000, 1, -0x1p1000}, []float64{0x1p20, 0x1p-1070, 0x1p20})
	if err != nil {
		t.Fatal(err)
	}
	if f, acc := y.Float64(); f != 0x1p-1070 || acc != big.Exact {
		t.Errorf("got %v (%v), want 2^-1070 exactly", f, acc)
	}
	if r := roundBig(y, FP32); r != 0 {
		t.Errorf("fp32 rounding of 2^-1070 = %v, want 0", r)
	}
	for _, c := range []struct {
		name string
		w, x []float64
		want string
	}{
		{"length", []float64{1}, nil, "1 weights and 0 activations"},
		{"NaN", []float64{math.NaN()}, []float64{1}, "not finite"},
		{"Inf", []float64{1}, []float64{math.Inf(-1)}, "not finite"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ExactDot(c.w, c.x)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %v, want containing %q", err, c.want)
			}
		})
	}
	if _, err := gamma(1<<24, -24); err == nil {
		t.Error("gamma(2^24, 2^-24) did not fail")
	}
	if _, err := Bound([]float64{1}, []float64{1}, BoundModel{Mul32: -1}, 1); err == nil {
		t.Error("negative Mul32 accepted")
	}
}

func TestRoundBig(t *testing.T) {
	bf := func(v float64) *big.Float { return new(big.Float).SetPrec(200).SetFloat64(v) }
	for _, c := range []struct {
		name string
		x    *big.Float
		p    Precision
		want float64
	}{
		{"fp16 max", bf(65519), FP16, 65504},
		{"fp16 overflow tie", bf(65520), FP16, math.Inf(1)},
		{"fp16 half subnormal ties to 0", bf(0x1p-25), FP16, 0},
		{"fp16 above half subnormal", new(big.Float).SetPrec(200).Add(bf(0x1p-25), bf(0x1p-60)), FP16, 0x1p-24},
		{"fp16 1.5 subnormal ties to even", bf(3 * 0x1p-25), FP16, 0x1p-23},
		{"fp16 normal tie", bf(1 + 0x1p-11), FP16, 1},
		{"fp16 -0", new(big.Float).Neg(bf(0)), FP16, math.Copysign(0, -1)},
		{"fp32 subnormal", bf(0x1p-149 * 1.5), FP32, 0x1p-148},
		{"fp32 -tiny", bf(-0x1p-151), FP32, math.Copysign(0, -1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := roundBig(c.x, c.p)
			if math.Float64bits(got) != math.Float64bits(c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
	// float32: agree with big.Float.Float32 on random values across the
	// normal and subnormal range.
	r := rand.New(rand.NewSource(2))
	for i := 0; i < 100000; i++ {
		x := new(big.Float).SetPrec(80).SetMantExp(big.NewFloat(r.Float64()+0.5), r.Intn(300)-160)
		x.Add(x, new(big.Float).SetMantExp(big.NewFloat(r.Float64()), r.Intn(300)-200))
		if r.Intn(2) == 0 {
			x.Neg(x)
		}
		want, _ := x.Float32()
		if got := roundBig(x, FP32); math.Float64bits(got) != math.Float64bits(float64(want)) {
			t.Fatalf("roundBig(%v) = %v, big.Float.Float32 = %v", x, got, want)
		}
	}
}

func TestBoundFP16Out(t *testing.T) {
	// 1 + 3*2^-12 rounds to 1+2^-10 in fp16: the fp16 output is within the
	// bound; 1+2*2^-10 (one fp16 ulp further) is not.
	w, x := []float64{1, 1}, []float64{1, 3 * 0x1p-12}
	m := BoundModel{Out: FP16}
	v, err := Bound(w, x, m, 1+0x1p-10)
	if err != nil || !v.Within || v.ExactValue != 1+0x1p-10 {
		t.Errorf("got %+v, %v; want within, ExactValue 1+2^-10", v, err)
	}
	// 0.25 fp16 ulp off
	if v.ULPError != 0.25 {
		t.Errorf("ULPError = %v, want 0.25", v.ULPError)
	}
	v, _ = Bound(w, x, m, 1+0x1p-9)
	if v.Within {
		t.Errorf("1+2^-9 accepted: %+v", v)
	}
}
