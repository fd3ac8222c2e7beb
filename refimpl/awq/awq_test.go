package awq

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/refimpl/half"
)

// fp16 of a value that is exactly representable.
func h(x float32) uint16 {
	b := half.EncodeFP16(x)
	if half.DecodeFP16(b) != x {
		panic("not an fp16 value")
	}
	return b
}

// column builds W [G][8] whose column 0 is col and other columns zero.
func column(col []float32) []uint16 {
	w := make([]uint16, len(col)*8)
	for k, x := range col {
		w[k*8] = h(x)
	}
	return w
}

func TestForgeGroups(t *testing.T) {
	tests := []struct {
		name   string
		col    []float32
		scale  uint16
		u      []uint8
		source string
	}{
		{"absmax 7: s = 1, ties to even on the quotient",
			[]float32{7, -7, 3.5, 2.5, -2.5, 0.5, -0.5, 1.5},
			0x3C00, []uint8{15, 1, 12, 10, 6, 8, 8, 10},
			"FORGE spec §2.5 scale = absmax/7; §2.6 q = round(w/scale); rne: 3.5->4, 2.5->2, 0.5->0, 1.5->2"},
		{"absmax 1: s = fp16(1/7) = 0x3092",
			[]float32{1, -1, 0.5, 0.25, 0, 0, 0, 0},
			0x3092, []uint8{15, 1, 12, 10, 8, 8, 8, 8},
			"1/7 -> 0.142822265625 (0x3092); 1/s = 7.0017 -> 7; 0.5/s = 3.5009 -> 4; 0.25/s = 1.7504 -> 2"},
		{"zero-absmax group stores s = +0 and u = 8",
			[]float32{0, float32(math.Copysign(0, -1)), 0, 0, 0, 0, 0, 0},
			0x0000, []uint8{8, 8, 8, 8, 8, 8, 8, 8},
			"pinned: a zero stored scale quantizes every element to q = 0"},
		{"absmax 3*2^-24: absmax/7 rounds to fp16 zero",
			[]float32{3 * 0x1p-24, -0x1p-24, 0, 0, 0, 0, 0, 0},
			0x0000, []uint8{8, 8, 8, 8, 8, 8, 8, 8},
			"3/7 * 2^-24 < 2^-25 rounds to +0; pinned q = 0"},
		{"absmax 4*2^-24: smallest subnormal scale",
			[]float32{4 * 0x1p-24, -3 * 0x1p-24, 0x1p-24, 0, 0, 0, 0, 0},
			0x0001, []uint8{12, 5, 9, 8, 8, 8, 8, 8},
			"4/7 * 2^-24 rounds to 2^-24; q = w/2^-24"},
		{"subnormal scale clamps to [-8, 7]",
			[]float32{10 * 0x1p-24, -10 * 0x1p-24, 0, 0, 0, 0, 0, 0},
			0x0001, []uint8{15, 0, 8, 8, 8, 8, 8, 8},
			"10/7 * 2^-24 rounds to 2^-24; w/s = +-10 clamps to 7 and -8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			G := len(tc.col)
			q, err := Quantize(column(tc.col), G, 8, G, Forge)
			if err != nil {
				t.Fatal(err)
			}
			if q.Scales[0] != tc.scale {
				t.Errorf("scale %#04x, want %#04x (%s)", q.Scales[0], tc.scale, tc.source)
			}
			for k := range tc.col {
				if got := q.Q[k*8]; got != tc.u[k] {
					t.Errorf("u[%d] = %d, want %d (%s)", k, got, tc.u[k], tc.source)
				}
			}
			for n := 0; n < 8; n++ {
				if q.Zeros[n] != 8 {
					t.Errorf("zero[%d] = %d, want 8", n, q.Zeros[n])
				}
			}
		})
	}
}

func TestAutoAWQGroups(t *testing.T) {
	tests := []struct {
		name   string
		col    []float32
		scale  uint16
		zero   uint8
		u      []uint8
		source string
	}{
		{"range 15 from 0: s = 1, z = 0",
			[]float32{0, 15, 2.5, 3.5, 7, 1, 0, 0},
			0x3C00, 0, []uint8{0, 15, 2, 4, 7, 1, 0, 0},
			"quantizer.py: scales = (max-min)/15 = 1; zeros = -round(0) = 0; round half to even"},
		{"range 15 from -1: z = 1",
			[]float32{-1, 14, 0, 2.5, -1, -1, -1, -1},
			0x3C00, 1, []uint8{0, 15, 1, 3, 0, 0, 0, 0},
			"zeros = -round(-1/1) = 1; q = round(w) + 1"},
		{"min -0.5 rounds to -0: z = 0",
			[]float32{-0.5, 14.5, 0.5, 1.5, 0, 0, 0, 0},
			0x3C00, 0, []uint8{0, 14, 0, 2, 0, 0, 0, 0},
			"-round(-0.5) = -(-0) clamps to 0; round(14.5) = 14, round(-0.5) = -0"},
		{"constant group: range clamps to fp16(1e-5)",
			[]float32{1, 1, 1, 1, 1, 1, 1, 1},
			0x000B, 0, []uint8{15, 15, 15, 15, 15, 15, 15, 15},
			"clamp(min=1e-5) bound fp16 0x00A8 = 168*2^-24; /15 = 11.2 -> 11*2^-24; 1/s overflows fp16 to inf; clamps to 15"},
		{"range 1: s = fp16(1/15) = 0x2C44",
			[]float32{0, 1, 0.5, 0.25, 0, 0, 0, 0},
			0x2C44, 0, []uint8{0, 15, 8, 4, 0, 0, 0, 0},
			"1/15 -> 0.0666503906 (0x2C44); 0.5/s = 7.5018 -> fp16 7.5 -> rne 8; 0.25/s = 3.751 -> 4"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			G := len(tc.col)
			q, err := Quantize(column(tc.col), G, 8, G, AutoAWQ)
			if err != nil {
				t.Fatal(err)
			}
			if q.Scales[0] != tc.scale || q.Zeros[0] != tc.zero {
				t.Errorf("scale %#04x zero %d, want %#04x %d (%s)", q.Scales[0], q.Zeros[0], tc.scale, tc.zero, tc.source)
			}
			for k := range tc.col {
				if got := q.Q[k*8]; got != tc.u[k] {
					t.Errorf("u[%d] = %d, want %d (%s)", k, got, tc.u[k], tc.source)
				}
			}
		})
	}
}

// PyTorch on CUDA divides an fp16 tensor by the Python scalar 15 as a
// multiplication by float32(1/15); the reference divides. They must agree
// on every fp16 range the quantizer can see.
func TestAutoAWQScaleReciprocalEqualsDivision(t *testing.T) {
	inv := float32(1) / float32(15)
	for b := uint16(fp16Clamp1e5); b < 0x7C00; b++ {
		x := half.DecodeFP16(b)
		if d, r := half.EncodeFP16(x/15), half.EncodeFP16(x*inv); d != r {
			t.Fatalf("range %#04x: x/15 -> %#04x, x*(1/15) -> %#04x", b, d, r)
		}
	}
}

// AutoAWQ's WQLinear_GEMM.from_linear does not pack the q of
// pseudo_quantize_tensor: it recomputes round((w_dq + z*s) / s) in fp16 from
// the dequantized weight w_dq = (q - z) * s. The reference packs q; this
// checks the recomputation returns q on random groups, so both agree.
func TestAutoAWQRepackRecoversQ(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	const IC, OC, G = 128, 64, 32
	for trial := 0; trial < 50; trial++ {
		w := make([]uint16, IC*OC)
		exp := rng.Intn(30) - 20
		for i := range w {
			w[i] = half.EncodeFP16(float32(rng.NormFloat64() * math.Ldexp(1, exp)))
		}
		q, err := Quantize(w, IC, OC, G, AutoAWQ)
		if err != nil {
			t.Fatal(err)
		}
		for k := 0; k < IC; k++ {
			for n := 0; n < OC; n++ {
				i, gi := k*OC+n, k/G*OC+n
				s := half.DecodeFP16(q.Scales[gi])
				z := float32(q.Zeros[gi])
				wdq := f16op((float32(q.Q[i]) - z) * s)
				sz := f16op(z * s)
				r := math.RoundToEven(float64(f16op(f16op(wdq+sz) / s)))
				if r != float64(q.Q[i]) {
					t.Fatalf("trial %d [%d,%d]: repack gives %v, q = %d", trial, k, n, r, q.Q[i])
				}
			}
		}
	}
}

func TestQuantizeErrors(t *testing.T) {
	tests := []struct {
		name      string
		w         []uint16
		IC, OC, G int
		qz        Quantizer
		want      string
	}{
		{"IC not a multiple of G", make([]uint16, 100*8), 100, 8, 32, Forge, "not a multiple of the group size"},
		{"G zero", make([]uint16, 64*8), 64, 8, 0, Forge, "group size"},
		{"weight length", make([]uint16, 10), 64, 8, 32, Forge, "weight has 10 elements"},
		{"forge NaN", append([]uint16{0x7E00}, make([]uint16, 32*8-1)...), 32, 8, 32, Forge, "not finite"},
		{"forge inf", append([]uint16{0x7C00}, make([]uint16, 32*8-1)...), 32, 8, 32, Forge, "not finite"},
		{"autoawq NaN", append([]uint16{0x7E00}, make([]uint16, 32*8-1)...), 32, 8, 32, AutoAWQ, "NaN"},
		{"autoawq range overflow", append([]uint16{0x7BFF, 0, 0, 0, 0, 0, 0, 0, 0xFBFF}, make([]uint16, 32*8-9)...), 32, 8, 32, AutoAWQ, "overflows fp16"},
		{"unknown scheme", make([]uint16, 32*8), 32, 8, 32, Quantizer{Name: "x"}, "no scheme"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Quantize(tc.w, tc.IC, tc.OC, tc.G, tc.qz)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestAWQNibbleMap(t *testing.T) {
	// One nonzero column per case: column c lands in nibble
	// (c%2)*4 + (c%8)/2 (AutoAWQ gemm.py order_map [0,2,4,6,1,3,5,7]).
	want := [8]uint32{0x0000000F, 0x000F0000, 0x000000F0, 0x00F00000, 0x00000F00, 0x0F000000, 0x0000F000, 0xF0000000}
	for c := 0; c < 8; c++ {
		q := make([]uint8, 16)
		q[8+c] = 0xF // row 1
		got, shape, err := AWQ.PackWeight(q, 2, 8)
		if err != nil {
			t.Fatal(err)
		}
		if shape[0] != 2 || shape[1] != 1 || got[0] != 0 || uint32(got[1]) != want[c] {
			t.Errorf("column %d: words %#08x shape %v, want [0 %#08x] [2 1]", c, got, shape, want[c])
		}
	}
	// FORGE spec §2.7: bits 0-3 q0, 4-7 q2, 8-11 q4, 12-15 q6, 16-19 q1, ...
	got, _, _ := AWQ.PackWeight([]uint8{0, 1, 2, 3, 4, 5, 6, 7}, 1, 8)
	if uint32(got[0]) != 0x75316420 {
		t.Errorf("columns 0..7 = 0..7 pack to %#08x, want 0x75316420", uint32(got[0]))
	}
}

func TestContrastLayouts(t *testing.T) {
	// q[k][n] = k for 8 input channels and 8 columns: layouts that pack
	// along IC put 0..7 in nibbles 0..7 (0x76543210) of every word.
	q := make([]uint8, 64)
	for k := 0; k < 8; k++ {
		for n := 0; n < 8; n++ {
			q[k*8+n] = uint8(k)
		}
	}
	tests := []struct {
		layout Layout
		shape  []int
		word0  uint32
		source string
	}{
		{AWQ, []int{8, 1}, 0x00000000, "row k packs 8 copies of k; row 0 is zero"},
		{AWQGEMV, []int{8, 1}, 0x76543210, "gemv.py order_map sequential, qweight [OC, IC/8]"},
		{GPTQv1, []int{1, 8}, 0x76543210, "GPTQ qweight [IC/8, OC] sequential along IC"},
		{GPTQv2, []int{1, 8}, 0x76543210, "as v1"},
		{CompressedTensors, []int{8, 1}, 0x76543210, "pack_to_int32 [OC, ceil(IC/8)]"},
	}
	for _, tc := range tests {
		t.Run(tc.layout.Name, func(t *testing.T) {
			got, shape, err := tc.layout.PackWeight(q, 8, 8)
			if err != nil {
				t.Fatal(err)
			}
			if shape[0] != tc.shape[0] || shape[1] != tc.shape[1] || uint32(got[0]) != tc.word0 {
				t.Errorf("shape %v word0 %#08x, want %v %#08x (%s)", shape, uint32(got[0]), tc.shape, tc.word0, tc.source)
			}
		})
	}
	// compressed-tensors pads a partial last word with zero nibbles.
	ct, shape, err := CompressedTensors.PackWeight([]uint8{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 12, 1)
	if err != nil || shape[1] != 2 || uint32(ct[0]) != 0x87654321 || uint32(ct[1]) != 0x0000CBA9 {
		t.Errorf("ragged pack = %#08x %v %v, want [0x87654321 0x0000cba9] [1 2]", ct, shape, err)
	}
}

func TestLayoutRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	const IC, OC, G = 256, 24, 32
	q := make([]uint8, IC*OC)
	z := make([]uint8, IC/G*OC)
	for i := range q {
		q[i] = uint8(rng.Intn(16))
	}
	for i := range z {
		z[i] = uint8(1 + rng.Intn(15))
	}
	for _, l := range Layouts() {
		t.Run(l.Name, func(t *testing.T) {
			pw, _, err := l.PackWeight(q, IC, OC)
			if err != nil {
				t.Fatal(err)
			}
			uq, err := l.UnpackWeight(pw, IC, OC)
			if err != nil || string(uq) != string(q) {
				t.Fatalf("weight round trip failed: %v", err)
			}
			zz := z
			if !l.Zeros.Stored {
				zz = make([]uint8, len(z))
				for i := range zz {
					zz[i] = 8
				}
			}
			pz, _, err := l.PackZeros(zz, IC, OC, G)
			if err != nil {
				t.Fatal(err)
			}
			uz, err := l.UnpackZeros(pz, IC, OC, G)
			if err != nil || string(uz) != string(zz) {
				t.Fatalf("zeros round trip failed: %v", err)
			}
		})
	}
}

func TestZeroStorage(t *testing.T) {
	z := []uint8{1, 2, 3, 4, 5, 6, 7, 8}
	v1, _, err := GPTQv1.PackZeros(z, 32, 8, 32)
	if err != nil || uint32(v1[0]) != 0x76543210 {
		t.Errorf("gptq-v1 zeros 1..8 = %#08x %v, want 0x76543210 (stored z-1)", v1, err)
	}
	v2, _, _ := GPTQv2.PackZeros(z, 32, 8, 32)
	if uint32(v2[0]) != 0x87654321 {
		t.Errorf("gptq-v2 zeros 1..8 = %#08x, want 0x87654321", v2)
	}
	aw, _, _ := AWQ.PackZeros(z, 32, 8, 32)
	if uint32(aw[0]) != 0x86427531 {
		t.Errorf("awq zeros 1..8 = %#08x, want 0x86427531 (order [0,2,4,6,1,3,5,7])", aw)
	}
	if _, _, err := GPTQv1.PackZeros([]uint8{0, 1, 1, 1, 1, 1, 1, 1}, 32, 8, 32); err == nil {
		t.Error("gptq-v1 stored z=0 without error")
	}
	if got, _ := GPTQv1.UnpackZeros([]int32{0xF}, 32, 8, 32); got[0] != 16 {
		t.Errorf("gptq-v1 stored 0xF reads back as %d, want 16", got[0])
	}
	if _, _, err := CompressedTensors.PackZeros(z, 32, 8, 32); err == nil {
		t.Error("compressed-tensors accepted zero points other than 8")
	}
}

func TestGEMVZerosWidth(t *testing.T) {
	tests := []struct {
		IC, G, want int
	}{
		{4096, 128, 4}, // 32 groups -> 4 words
		{4096, 64, 8},  // 64 groups -> 8 words, multiple of 2
		{256, 32, 4},   // 8 groups -> 1 word, rounded up to 4
		{4096, 4096, 1},
		{64, 64, 2}, // 1 group -> 1 word, multiple of 2
	}
	for _, tc := range tests {
		shape, err := AWQGEMV.ZerosShape(tc.IC, 8, tc.G)
		if err != nil || shape[0] != 8 || shape[1] != tc.want {
			t.Errorf("IC=%d G=%d: shape %v %v, want [8 %d] (gemv.py calculate_zeros_width)", tc.IC, tc.G, shape, err, tc.want)
		}
	}
	if _, err := AWQGEMV.ZerosShape(256, 8, 16); err == nil {
		t.Error("awq-gemv accepted G=16")
	}
}

func TestShapeErrors(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"CheckShape OC%8", CheckShape(32, 12, 32), "OC=12 is not a multiple of 8"},
		{"CheckShape IC%G", CheckShape(48, 8, 32), "IC=48 is not a multiple of the group size 32"},
		{"awq pack OC%8", second3(AWQ.PackWeight(make([]uint8, 32*12), 32, 12)), "multiple of 8"},
		{"gptq pack IC%8", second3(GPTQv1.PackWeight(make([]uint8, 12*8), 12, 8)), "multiple of 8"},
		{"nibble range", second3(AWQ.PackWeight(append([]uint8{16}, make([]uint8, 7)...), 1, 8)), "not a 4-bit value"},
		{"dequantize OC%8", second(Dequantize(nil, nil, nil, 32, 12, 32)), "OC=12"},
		{"dequantize scales length", second(Dequantize(make([]int32, 32), make([]int32, 1), make([]uint16, 7), 32, 8, 32)), "scales has 7"},
		{"unpack padding", second(CompressedTensors.UnpackWeight([]int32{0x7FFFFFFF, 0x10000000}, 12, 1)), "padding nibble"},
	}
	for _, tc := range tests {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one containing %q", tc.name, tc.err, tc.want)
		}
	}
}

func second[T any](_ T, err error) error          { return err }
func second3[A, B any](_ A, _ B, err error) error { return err }

func TestDequantizeValues(t *testing.T) {
	tests := []struct {
		name   string
		u, z   uint8
		s      uint16
		want   uint16
		source string
	}{
		{"3 * 1.0", 11, 8, 0x3C00, 0x4200, "exact"},
		{"u = z with negative scale gives +0", 5, 5, 0xBC00, 0x0000, "vllm gemm_kernels.cu fma.rn.f16x2(d, s, +0): -0 + +0 = +0"},
		{"-0 scale gives +0", 11, 8, 0x8000, 0x0000, "(+3 * -0) + +0 = +0"},
		{"one rounding: 3 * 0x3555 ties to even", 11, 8, 0x3555, 0x3C00, "3 * 1365/4096 = 1 - 2^-12, halfway, even is 1.0"},
		{"overflow to inf", 15, 0, 0x7BFF, 0x7C00, "15 * 65504 rounds to +inf"},
		{"negative max", 7, 8, 0x7BFF, 0xFBFF, "-1 * 65504"},
		{"subnormal product", 0, 15, 0x0001, 0x800F, "-15 * 2^-24 exact"},
		{"NaN scale", 9, 8, 0x7E01, NaNBits, "pinned canonical NaN 0x7FFF"},
		{"inf scale times zero", 8, 8, 0x7C00, NaNBits, "0 * inf is NaN"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DequantizeUnpacked([]uint8{tc.u}, []uint8{tc.z}, []uint16{tc.s}, 1, 1, 1)
			if err != nil {
				t.Fatal(err)
			}
			if got[0] != tc.want {
				t.Errorf("(%d - %d) * %#04x = %#04x, want %#04x (%s)", tc.u, tc.z, tc.s, got[0], tc.want, tc.source)
			}
		})
	}
}

// Dequantize reads the AWQ nibble order: u[k][n] = n placed through the
// packed words must come back at column n.
func TestDequantizeLayout(t *testing.T) {
	const IC, OC, G = 4, 16, 2
	q := make([]uint8, IC*OC)
	for k := 0; k < IC; k++ {
		for n := 0; n < OC; n++ {
			q[k*OC+n] = uint8((n + k) % 16)
		}
	}
	z := make([]uint8, IC/G*OC)
	s := make([]uint16, IC/G*OC)
	for i := range s {
		z[i] = uint8(i % 3)
		s[i] = 0x3C00
	}
	qw, _, _ := AWQ.PackWeight(q, IC, OC)
	qz, _, _ := AWQ.PackZeros(z, IC, OC, G)
	got, err := Dequantize(qw, qz, s, IC, OC, G)
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < IC; k++ {
		for n := 0; n < OC; n++ {
			want := h(float32(int(q[k*OC+n]) - int(z[k/G*OC+n])))
			if want == 0x8000 {
				want = 0
			}
			if got[k*OC+n] != want {
				t.Fatalf("[%d,%d] = %#04x, want %#04x", k, n, got[k*OC+n], want)
			}
		}
	}
}

// Forge's promise: dequantizing what was quantized gives q * s with the
// stored scale, and |w - q*s| <= s/2 unless q was clamped.
func TestForgeRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	const IC, OC, G = 256, 32, 64
	w := make([]uint16, IC*OC)
	for i := range w {
		w[i] = half.EncodeFP16(float32(rng.NormFloat64() * 0.05))
	}
	qz, err := Quantize(w, IC, OC, G, Forge)
	if err != nil {
		t.Fatal(err)
	}
	qw, _, _ := AWQ.PackWeight(qz.Q, IC, OC)
	zw, _, _ := AWQ.PackZeros(qz.Zeros, IC, OC, G)
	dq, err := Dequantize(qw, zw, qz.Scales, IC, OC, G)
	if err != nil {
		t.Fatal(err)
	}
	for i := range w {
		s := float64(half.DecodeFP16(qz.Scales[i/OC/G*OC+i%OC]))
		x, y := float64(half.DecodeFP16(w[i])), float64(half.DecodeFP16(dq[i]))
		if q := int(qz.Q[i]) - 8; q > -8 && q < 7 && math.Abs(x-float64(q)*s) > s/2*(1+1e-3) {
			t.Fatalf("element %d: w %v, q %d, s %v", i, x, q, s)
		}
		if math.Abs(x-y) > s/2*(1+1e-2)+math.Abs(y)*0x1p-11 {
			t.Fatalf("element %d: w %v dequantizes to %v with s %v", i, x, y, s)
		}
	}
}
