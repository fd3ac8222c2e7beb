package gemv

import (
	"math"
	"math/big"
	"math/rand"
	"testing"
)

func f32(b uint32) float32 { return math.Float32frombits(b) }

// exactFMA32 is the oracle: x*y+z exactly, then rounded once to float32.
func exactFMA32(x, y, z float32) float32 {
	e := new(big.Float).SetPrec(300).SetFloat64(float64(x))
	e.Mul(e, new(big.Float).SetFloat64(float64(y)))
	e.Add(e, new(big.Float).SetFloat64(float64(z)))
	return float32(roundBig(e, FP32))
}

func TestFMA32(t *testing.T) {
	for _, c := range []struct {
		name    string
		x, y, z float32
		want    float32
	}{
		// x*y = 2^-24 + 2^-48-ish: the exact sum lies just above the float32
		// midpoint 1+2^-24; rounding to float64 first lands on the midpoint
		// and ties to even would give 1.0. Found by search, checked against
		// big.Float in TestFMA32Random's oracle.
		{"double rounding", f32(0x3fdd2928), f32(0x331429e9), 1, f32(0x3f800001)},
		{"exact", 3, 5, 7, 22},
		{"cancel to +0", 2, 3, -6, 0},
		{"inf", float32(math.Inf(1)), 2, 1, float32(math.Inf(1))},
		// (1+2^-23)^2 - (1+2^-22) = 2^-46, lost by a separate product.
		{"fused keeps low bits", f32(0x3f800001), f32(0x3f800001), -f32(0x3f800002), float32(math.Ldexp(1, -46))},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := fma32(c.x, c.y, c.z)
			if math.Float32bits(got) != math.Float32bits(c.want) {
				t.Errorf("fma32 = %#08x, want %#08x", math.Float32bits(got), math.Float32bits(c.want))
			}
			if o := exactFMA32(c.x, c.y, c.z); !math.IsInf(float64(c.want), 0) && o != c.want {
				t.Errorf("oracle %#08x disagrees with expected %#08x", math.Float32bits(o), math.Float32bits(c.want))
			}
		})
	}
	naive := float32(math.FMA(float64(f32(0x3fdd2928)), float64(f32(0x331429e9)), 1))
	if naive != 1 {
		t.Errorf("float32(math.FMA) = %v: the double-rounding case no longer demonstrates the hazard", naive)
	}
}

func TestFMA32Random(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	n := 200000
	if testing.Short() {
		n = 20000
	}
	for i := 0; i < n; i++ {
		x := f32(r.Uint32() &^ 0x40000000) // exponents <= 0: no overflow
		y := f32(r.Uint32() &^ 0x40000000)
		z := f32(r.Uint32() &^ 0x40000000)
		if x != x || y != y || z != z {
			continue
		}
		if i%2 == 0 { // near-cancellation: z close to -x*y
			z = -float32(x*y) * (1 + float32(r.Intn(3)-1)*0x1p-23)
		}
		if got, want := fma32(x, y, z), exactFMA32(x, y, z); math.Float32bits(got) != math.Float32bits(want) && !(got == 0 && want == 0) {
			t.Fatalf("fma32(%#08x, %#08x, %#08x) = %#08x, want %#08x", math.Float32bits(x), math.Float32bits(y), math.Float32bits(z), math.Float32bits(got), math.Float32bits(want))
		}
	}
}

// products runs a schedule with GroupK 1 over the products p (x = p, y = 1).
func products(t *testing.T, spec string, p []float32) float32 {
	t.Helper()
	s, err := Lookup(spec)
	if err != nil {
		t.Fatal(err)
	}
	ones := make([]float32, len(p))
	for i := range ones {
		ones[i] = 1
	}
	v, _ := s.run(p, ones, nil)
	return v
}

func TestReductions(t *testing.T) {
	const two24 = 1 << 24
	big64 := make([]float32, 64)
	big64[0] = two24
	for i := 1; i < 64; i++ {
		big64[i] = 1
	}
	ints := make([]float32, 64)
	for i := range ints {
		ints[i] = float32(i)
	}
	warp := make([]float32, 32)
	warp[0], warp[1], warp[17] = two24, 1, 1
	strided := make([]float32, 8)
	strided[0], strided[1], strided[4], strided[5] = two24, 1, 1, 1
	const (
		seq      = "chunk=0,lanes=0,group=1,fma=0,acc=fp32,partial=fp32,reduce=seq,out=fp32"
		pairwise = "chunk=1,lanes=0,group=1,fma=0,acc=fp32,partial=fp32,reduce=pairwise,out=fp32"
		bfly     = "chunk=1,lanes=32,group=1,fma=0,acc=fp32,partial=fp32,reduce=butterfly32,out=fp32"
		strd     = "chunk=1,lanes=0,group=1,fma=0,acc=fp32,partial=fp32,reduce=strided4,out=fp32"
	)
	for _, c := range []struct {
		name, spec string
		p          []float32
		want       float32
	}{
		// 2^24 + 1 ties to even 2^24: sequentially every 1 is lost.
		{"seq loses ones", seq, big64, two24},
		// Pairwise: only the 1 paired with 2^24 is lost, 31 pairs of 2 survive.
		{"pairwise keeps pairs", pairwise, big64, two24 + 62},
		// On small integers every partial sum is exact: all orders agree.
		{"seq integers", seq, ints, 2016},
		{"pairwise integers", pairwise, ints, 2016},
		{"butterfly integers", bfly, ints[:32], 496},
		{"strided integers", strd, ints, 2016},
		// Butterfly: lane 1 holds p1+p17 = 2 before meeting 2^24.
		{"butterfly", bfly, warp, two24 + 2},
		{"seq same input", seq, warp, two24},
		// Strided 4: acc0 = 2^24+1 = 2^24, acc1 = 1+1 = 2; 2^24 + 2.
		{"strided", strd, strided, two24 + 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := products(t, c.spec, c.p); got != c.want {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestPrecisions(t *testing.T) {
	const h = 0x1p-11 // half an fp16 ulp at 1
	for _, c := range []struct {
		name, spec string
		p          []float32
		want       float32
	}{
		// Lane 0 holds 1+2^-11: kept in fp32, a tie rounded to 1 in fp16.
		{"fp32 partial", "chunk=2,lanes=0,group=1,fma=0,acc=fp32,partial=fp32,reduce=seq,out=fp32", []float32{1, h, 0, 0}, 1 + h},
		{"fp16 partial", "chunk=2,lanes=0,group=1,fma=0,acc=fp32,partial=fp16,reduce=seq,out=fp32", []float32{1, h, 0, 0}, 1},
		// fp16 accumulation loses each 2^-11; fp32 keeps both.
		{"fp32 acc", "chunk=0,lanes=0,group=1,fma=0,acc=fp32,partial=fp32,reduce=seq,out=fp32", []float32{1, h, h}, 1 + 2*h},
		{"fp16 acc", "chunk=0,lanes=0,group=1,fma=0,acc=fp16,partial=fp32,reduce=seq,out=fp32", []float32{1, h, h}, 1},
		// fp16 output of 1+2^-11+2^-12: above the tie, rounds up to 1+2^-10.
		{"fp16 out", "chunk=0,lanes=0,group=1,fma=0,acc=fp32,partial=fp32,reduce=seq,out=fp16", []float32{1, h, h / 2}, 1 + 2*h},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := products(t, c.spec, c.p); got != c.want {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}

// TestButterflyFold simulates mmvq's reduction literally (4 warps' partials
// through shared memory into warp 0, then __shfl_xor_sync on all 32 lanes)
// and compares it with the schedule engine on random partials.
func TestButterflyFold(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	s := MMVQNoFMA
	for trial := 0; trial < 200; trial++ {
		p := make([]float32, 128)
		for i := range p {
			p[i] = float32(r.NormFloat64() * math.Ldexp(1, r.Intn(40)-20))
		}
		var tmp [32]float32
		for x := 0; x < 32; x++ {
			tmp[x] = p[x]
			for l := 1; l < 4; l++ {
				tmp[x] += p[32*l+x]
			}
		}
		for off := 16; off > 0; off >>= 1 {
			var next [32]float32
			for x := 0; x < 32; x++ {
				next[x] = tmp[x] + tmp[x^off]
			}
			tmp = next
		}
		for x := 1; x < 32; x++ {
			if math.Float32bits(tmp[x]) != math.Float32bits(tmp[0]) {
				t.Fatalf("lane %d = %v differs from lane 0 = %v", x, tmp[x], tmp[0])
			}
		}
		// One group per chunk, chunk c -> lane c % 128: feed p as chunks.
		ones := make([]float32, 128)
		for i := range ones {
			ones[i] = 1
		}
		got, _ := s.run(p, ones, nil)
		if math.Float32bits(got) != math.Float32bits(tmp[0]) {
			t.Fatalf("trial %d: engine %v, simulation %v", trial, got, tmp[0])
		}
	}
}
