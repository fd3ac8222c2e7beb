package gguf

import (
	"encoding/hex"
	"math"
	"math/big"
	"strings"
	"testing"
)

func hexOf(t *testing.T, ty Type, x []float32, p Profile) string {
	t.Helper()
	b, err := Quantize(ty, x, p)
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func block(n int, head ...float32) []float32 {
	x := make([]float32, n)
	copy(x, head)
	return x
}

// TestQuantizeBytes: real blocks and the bytes ggml d99724f's C wrote
// for them (gguf.c, all three builds unless the case names a build).
func TestQuantizeBytes(t *testing.T) {
	f := math.Float32frombits
	ramp := make([]float32, 32)
	for j := range ramp {
		ramp[j] = float32(j%16 - 8)
	}
	for _, tc := range []struct {
		name string
		ty   Type
		x    []float32
		// want per profile; "" means the same as nofma
		nofma, fma, arm64 string
	}{
		// max -8: d = 1 (fp16 0x3C00), code j%16, both nibbles alike
		{"q4_0 ramp", Q4_0, ramp, "003c" + rampNibbles(), "", ""},
		// llama.cpp#8939: max -7 gives d = 0.875, id = 1.1428572f;
		// 0.43749955*id + 8.5 rounds to 9 when the product is rounded
		// first and truncates to 8 when it is fused
		{"q4_0 contraction", Q4_0, block(32, -7, f(0x3edffff1)),
			"003b80898888888888888888888888888888", "003b80888888888888888888888888888888", "003b80888888888888888888888888888888"},
		// roundf: 0.49999997 -> 0 and 0.5 -> 1, half away from zero
		// (2.5 -> 3, -2.5 -> -3), where floor(x+0.5) gives 1 for
		// 0.49999997 (GPTQModel#3058)
		{"q8_0 roundf", Q8_0, block(32, 127, 0.49999997, 0.5, -0.5, 2.5, -2.5, 1.5, 126.5),
			"003c7f0001ff03fd027f" + strings.Repeat("00", 24), "", ""},
		// a subnormal amax makes id = 1/d infinite: x*id is +-Inf or
		// 0*Inf = NaN, and the casts decide the codes: x86's cvttss2si
		// gives INT_MIN (code 0 after +1 and the clamp) for all of
		// them, arm64's fcvtzs gives 0 for NaN (code 1)
		{"q2_0 subnormal scale", Q2_0, block(64, 1e-40, -1e-40, 0, 1e-41),
			"0000" + strings.Repeat("00", 16), "", "0000" + "10" + strings.Repeat("55", 15)},
	} {
		for _, pc := range []struct {
			p    Profile
			want string
		}{{NoFMA, tc.nofma}, {FMA, tc.fma}, {ARM64, tc.arm64}} {
			want := pc.want
			if want == "" {
				want = tc.nofma
			}
			if got := hexOf(t, tc.ty, tc.x, pc.p); got != want {
				t.Errorf("%s under %s:\n got %s\nwant %s", tc.name, pc.p.Name, got, want)
			}
		}
	}
}

func rampNibbles() string {
	var s strings.Builder
	for j := 0; j < 16; j++ {
		s.WriteString(hex.EncodeToString([]byte{byte(j * 0x11)}))
	}
	return s.String()
}

// TestRoundTrip: values on a type's grid come back exactly from
// Quantize then Dequantize, under every profile.
func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		ty Type
		x  func(i int) float32
	}{
		{Q4_0, func(i int) float32 { return float32(i%16 - 8) }},
		{Q5_0, func(i int) float32 { return float32(i%32 - 16) }},
		{Q8_0, grid127(32)},
		{Q4_1, func(i int) float32 { return float32(i%16) + 3 }},
		{Q5_1, func(i int) float32 { return float32(i%32) - 7 }},
		{Q1_0, func(i int) float32 { return float32(1 - 2*(i%3%2)) }},
		// d = max |x|: codes 0..2 only, code 3 (2d) is never written
		{Q2_0, func(i int) float32 { return float32(i%3 - 1) }},
		{TQ1_0, func(i int) float32 { return float32(i*7%3 - 1) }},
		{TQ2_0, func(i int) float32 { return float32(i*5%3 - 1) }},
		{Q8_K, grid127(QK_K)},
	} {
		x := make([]float32, 2*QK_K)
		for i := range x {
			x[i] = tc.x(i)
		}
		for _, p := range Profiles() {
			b, err := Quantize(tc.ty, x, p)
			if err != nil {
				t.Fatal(err)
			}
			y, err := Dequantize(tc.ty, b, p)
			if err != nil {
				t.Fatal(err)
			}
			for i := range x {
				if math.Float32bits(y[i]) != math.Float32bits(x[i]) {
					t.Errorf("%s %s: element %d: %g -> %g", tc.ty, p.Name, i, x[i], y[i])
					break
				}
			}
		}
	}
}

// grid127 is -127 at the start of each n-element block, then integers
// in [-127, 127]: the first largest |x| is negative, so q8_K's d =
// max/-127 is +1 (a positive first maximum makes d = -1, and a zero
// quant then dequantizes to -0).
func grid127(n int) func(i int) float32 {
	return func(i int) float32 {
		if i%n == 0 {
			return -127
		}
		return float32(i%255 - 127)
	}
}

// TestQ3_KScales: the 16 6-bit scales of q3_K, packed as the quantizer
// packs them (low nibbles in bytes 0-7, the high 2 bits in bytes 8-11),
// unpacked by dequantize_row_q3_K's kmask arithmetic; a 4-bit unpack
// (aprender#2115) would read only the nibbles.
func TestQ3_KScales(t *testing.T) {
	var packed [12]byte
	want := [16]int8{}
	for j := 0; j < 16; j++ {
		l := uint8(4*j + 1) // 1, 5, ..., 61: every one uses both parts
		want[j] = int8(l)
		if j < 8 {
			packed[j] = l & 0xF
		} else {
			packed[j-8] |= (l & 0xF) << 4
		}
		packed[j%4+8] |= (l >> 4) << (2 * (j / 4))
	}
	if got := q3KScales(packed[:]); got != want {
		t.Fatalf("q3KScales = %v, want %v", got, want)
	}
	// dequantize: d = 1, all low bits 1, hmask set for the first 8 of
	// each 16, so element = (scale - 32) * (1 or 1-4)
	b := make([]byte, Q3_K.BlockBytes())
	for i := 0; i < 32; i++ {
		b[i] = 0xFF * byte(i%16/8^1) // hmask byte l: set for l%16 < 8
	}
	for i := 32; i < 96; i++ {
		b[i] = 0x55 // every 2-bit quant 1
	}
	copy(b[96:108], packed[:])
	put16(b[108:], 0x3C00)
	y, err := Dequantize(Q3_K, b, NoFMA)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []int{0, 7, 8, 15, 16, 24, 128, 255} {
		sub := e / 16
		q := float32(1)
		if e%16 >= 8 {
			q = -3
		}
		if w := float32(int(want[sub])-32) * q; y[e] != w {
			t.Errorf("q3_K element %d = %g, want %g", e, y[e], w)
		}
	}
}

// TestQ4_KDequantize: get_scale_min_k4's packing of 6-bit scales and
// mins, on a block whose 8 scales and 8 mins all differ.
func TestQ4_KDequantize(t *testing.T) {
	b := make([]byte, Q4_K.BlockBytes())
	put16(b, 0x3C00)     // d = 1
	put16(b[2:], 0x3800) // dmin = 0.5
	sc := [8]uint8{1, 9, 17, 25, 33, 41, 49, 63}
	mn := [8]uint8{2, 10, 18, 26, 34, 42, 50, 62}
	for j := 0; j < 8; j++ {
		if j < 4 {
			b[4+j] = sc[j]
			b[4+j+4] = mn[j]
		} else {
			b[4+j+4] = sc[j]&0xF | (mn[j]&0xF)<<4
			b[4+j-4] |= (sc[j] >> 4) << 6
			b[4+j] |= (mn[j] >> 4) << 6
		}
	}
	for i := 16; i < len(b); i++ {
		b[i] = 0x3A // low nibble 10, high nibble 3
	}
	for j := 0; j < 8; j++ {
		if s, m := getScaleMinK4(j, b[4:16]); s != sc[j] || m != mn[j] {
			t.Errorf("getScaleMinK4(%d) = %d, %d, want %d, %d", j, s, m, sc[j], mn[j])
		}
	}
	y, err := Dequantize(Q4_K, b, FMA)
	if err != nil {
		t.Fatal(err)
	}
	for j := 0; j < 8; j++ {
		q := float32(10) // sub-blocks 0, 2, 4, 6 take the low nibbles
		if j%2 == 1 {
			q = 3
		}
		w := float32(sc[j])*q - 0.5*float32(mn[j])
		if y[32*j] != w || y[32*j+31] != w {
			t.Errorf("q4_K sub-block %d = %g, %g, want %g", j, y[32*j], y[32*j+31], w)
		}
	}
}

// TestQ6_KDequantize: 4 low bits from ql, 2 high bits from qh, minus 32,
// times d and the int8 sub-block scale.
func TestQ6_KDequantize(t *testing.T) {
	b := make([]byte, Q6_K.BlockBytes())
	for i := 0; i < 128; i++ {
		b[i] = 0x5A // low nibble 10, high nibble 5
	}
	for i := 128; i < 192; i++ {
		b[i] = 0b11_10_01_00 // high bits 0, 1, 2, 3 for the four quarters
	}
	for j := 0; j < 16; j++ {
		b[192+j] = byte(int8(j - 8))
	}
	put16(b[208:], 0x4000) // d = 2
	y, err := Dequantize(Q6_K, b, ARM64)
	if err != nil {
		t.Fatal(err)
	}
	// element n*128 + 32*k + l: quarter k takes ql[l] (k even) or
	// ql[l+32] (k odd), low nibble for k < 2, and high bits k
	for _, e := range []int{0, 40, 70, 100, 130, 255} {
		k := e % 128 / 32
		lo := 10
		if k >= 2 {
			lo = 5
		}
		q := lo | k<<4
		want := 2 * float32(e/16-8) * float32(q-32)
		if y[e] != want {
			t.Errorf("q6_K element %d = %g, want %g", e, y[e], want)
		}
	}
}

// TestIQ4 dequantizes every level of kvalues_iq4nl at d = 1 and the
// IQ4_XS 6-bit scale 33 (ls - 32 = 1).
func TestIQ4(t *testing.T) {
	b := make([]byte, IQ4_NL.BlockBytes())
	put16(b, 0x3C00)
	for j := 0; j < 16; j++ {
		b[2+j] = byte(j | (15-j)<<4)
	}
	y, err := Dequantize(IQ4_NL, b, NoFMA)
	if err != nil {
		t.Fatal(err)
	}
	for j := 0; j < 16; j++ {
		if y[j] != float32(KValuesIQ4NL[j]) || y[16+j] != float32(KValuesIQ4NL[15-j]) {
			t.Errorf("iq4_nl level %d: %g, %g", j, y[j], y[16+j])
		}
	}
	xs := make([]byte, IQ4_XS.BlockBytes())
	put16(xs, 0x3C00)
	put16(xs[2:], 0x5555) // high bits 1 for every sub-block: ls = 16 + low
	for i := 4; i < 8; i++ {
		xs[i] = 0x11 // low nibble 1: ls = 17, ls - 32 = -15
	}
	for i := 8; i < len(xs); i++ {
		xs[i] = 0xF0
	}
	y, err = Dequantize(IQ4_XS, xs, NoFMA)
	if err != nil {
		t.Fatal(err)
	}
	if y[0] != -15*-127 || y[16] != -15*113 {
		t.Errorf("iq4_xs = %g, %g, want %d, %d", y[0], y[16], -15*-127, -15*113)
	}
}

// TestUE4M3: ggml's NVFP4 scale codes.
func TestUE4M3(t *testing.T) {
	for _, tc := range []struct {
		code uint8
		val  float32
	}{{0x38, 0.5}, {0x7E, 224}, {0x01, 1.0 / 1024}, {0x7F, 0}, {0x00, 0}, {0xB8, 0.5}} {
		if got := ue4m3ToFP32(tc.code); got != tc.val {
			t.Errorf("ue4m3ToFP32(%#02x) = %g, want %g", tc.code, got, tc.val)
		}
	}
	for _, tc := range []struct {
		x    float32
		code uint8
	}{
		{1, 0x38}, {1.0625, 0x39}, // the tie rounds away from zero
		{448, 0x7E}, {1000, 0x7E}, {float32(math.Inf(1)), 0x7E},
		{float32(math.NaN()), 0}, {-1, 0}, {0, 0},
		{3.0 / 512, 3}, {7.6 / 512, 7}, {0.4 / 512, 0},
	} {
		if got := NoFMA.fp32ToUE4M3(tc.x); got != tc.code {
			t.Errorf("fp32ToUE4M3(%g) = %#02x, want %#02x", tc.x, got, tc.code)
		}
	}
}

// TestTQ1_0Packing: five trits per qs byte as a base-3 fixed-point
// fraction, ceil(q*256/243).
func TestTQ1_0Packing(t *testing.T) {
	x := make([]float32, QK_K)
	// element 0, 32, 64, 96, 128 -> trits 2, 0, 1, 2, 1 (x = trit - 1)
	for n, tr := range []float32{2, 0, 1, 2, 1} {
		x[32*n] = tr - 1
	}
	b, err := Quantize(TQ1_0, x, NoFMA)
	if err != nil {
		t.Fatal(err)
	}
	q := 2*81 + 0*27 + 1*9 + 2*3 + 1 // 178
	if want := byte((q*256 + 242) / 243); b[0] != want {
		t.Errorf("tq1_0 qs[0] = %d, want %d", b[0], want)
	}
	if b[1] != byte((121*256+242)/243) { // all trits 1 (x = 0)
		t.Errorf("tq1_0 qs[1] = %d", b[1])
	}
	y, err := Dequantize(TQ1_0, b, NoFMA)
	if err != nil {
		t.Fatal(err)
	}
	for i := range x {
		if y[i] != x[i] {
			t.Fatalf("tq1_0 element %d: %g -> %g", i, x[i], y[i])
		}
	}
}

// TestQ8_KBsums: q8_K's d = 1/iscale = max/-127, quants and the sums of
// each 16.
func TestQ8_KBsums(t *testing.T) {
	x := make([]float32, QK_K)
	for i := range x {
		x[i] = float32(i%16) - 4
	}
	x[5] = -127
	b, err := Quantize(Q8_K, x, NoFMA)
	if err != nil {
		t.Fatal(err)
	}
	if d := getF32(b); d != 1 {
		t.Errorf("q8_K d = %g, want 1", d)
	}
	if q := int8(b[4+5]); q != -127 {
		t.Errorf("q8_K qs[5] = %d", q)
	}
	for j := 0; j < 16; j++ {
		want := int16(56) // sum of -4..11
		if j == 0 {
			want += -127 - 1
		}
		if got := int16(le16(b[4+QK_K+2*j:])); got != want {
			t.Errorf("q8_K bsums[%d] = %d, want %d", j, got, want)
		}
	}
}

// TestVecDot on blocks whose products are small integers, so the exact
// sum is the only right answer in every profile.
func TestVecDot(t *testing.T) {
	// q8_0 x q8_0: d = 1 and 0.5, quants 1..32 and 2
	w := make([]byte, 34)
	a := make([]byte, 34)
	put16(w, 0x3C00)
	put16(a, 0x3800)
	for j := 0; j < 32; j++ {
		w[2+j] = byte(j + 1)
		a[2+j] = 2
	}
	// q4_0 weights: d = 2, codes 9 (value 1*2) low and 6 (-2*2) high
	w4 := make([]byte, 18)
	put16(w4, 0x4000)
	for j := 0; j < 16; j++ {
		w4[2+j] = 0x69
	}
	// q4_K: d = 1, dmin = 1, scales 1, mins 1, low nibbles 1, high 2;
	// q8_K: d = 1, quants 1, bsums 16
	wk := make([]byte, Q4_K.BlockBytes())
	put16(wk, 0x3C00)
	put16(wk[2:], 0x3C00)
	for j := 0; j < 8; j++ {
		wk[4+j] = 1
	}
	for j := 8; j < 12; j++ {
		wk[4+j] = 0x11
	}
	for j := 16; j < len(wk); j++ {
		wk[j] = 0x21
	}
	ak := make([]byte, Q8_K.BlockBytes())
	putF32(ak, 1)
	for j := 0; j < QK_K; j++ {
		ak[4+j] = 1
	}
	for j := 0; j < 16; j++ {
		put16(ak[4+QK_K+2*j:], 16)
	}
	// q6_K: d = 1, scales 2, every quant 33 (value 1)
	w6 := make([]byte, Q6_K.BlockBytes())
	for i := 0; i < 128; i++ {
		w6[i] = 0x11
	}
	for i := 128; i < 192; i++ {
		w6[i] = 0xAA
	}
	for j := 0; j < 16; j++ {
		w6[192+j] = 2
	}
	put16(w6[208:], 0x3C00)
	for _, tc := range []struct {
		d    Dot
		w, a []byte
		want float32
	}{
		{DotQ8_0Q8_0, w, a, 528},                        // 2 * 0.5 * (1+...+32)
		{DotQ4_0Q8_0, w4, a, 2 * 0.5 * 2 * (16 - 2*16)}, // (1*16 - 2*16) * 2 * d
		{DotQ4_KQ8_K, wk, ak, 128 + 256 - 256},          // sum q - dmin*sum(min*bsum)
		{DotQ6_KQ8_K, w6, ak, 2 * 256},
	} {
		for _, p := range Profiles() {
			got, err := tc.d.VecDot(tc.w, tc.a, p)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("%s %s = %g, want %g", tc.d, p.Name, got, tc.want)
			}
		}
	}
}

// TestFMA32 holds fma32 to a correctly rounded a*b+c computed exactly
// with math/big, on inputs where rounding the float64 fma to float32
// would round twice.
func TestFMA32(t *testing.T) {
	s := uint64(1)
	next := func() float32 {
		s = s*6364136223846793005 + 1442695040888963407
		return math.Float32frombits(uint32(s>>33)&0x807FFFFF | uint32(100+s>>58)<<23)
	}
	check := func(a, b, c float32) {
		exact := new(big.Float).SetPrec(300).SetFloat64(float64(a))
		exact.Mul(exact, new(big.Float).SetPrec(300).SetFloat64(float64(b)))
		exact.Add(exact, new(big.Float).SetPrec(300).SetFloat64(float64(c)))
		want, _ := exact.Float32()
		if got := fma32(a, b, c); got != want {
			t.Fatalf("fma32(%g, %g, %g) = %g, want %g", a, b, c, got, want)
		}
	}
	// a*b = 1 + 2^-24 exactly (2^24+1 = 24929 * 673), a float32 tie;
	// c = +-2^-80 decides it, but the float64 sum rounds back onto the
	// tie, and rounding that to float32 again would give 1 both times
	check(24929*0x1p-24, 673, 0x1p-80)
	check(24929*0x1p-24, 673, -0x1p-80)
	if fma32(24929*0x1p-24, 673, 0x1p-80) != 1+0x1p-23 {
		t.Error("fma32 rounded twice")
	}
	for i := 0; i < 20000; i++ {
		check(next(), next(), next())
	}
}

// TestErrors: bad lengths and names are errors, not panics.
func TestErrors(t *testing.T) {
	if _, err := Quantize(Q4_0, make([]float32, 31), NoFMA); err == nil || !strings.Contains(err.Error(), "32-element q4_0") {
		t.Errorf("Quantize 31 values: %v", err)
	}
	if _, err := Quantize(IQ4_NL, make([]float32, 32), NoFMA); err == nil {
		t.Error("Quantize iq4_nl: no error")
	}
	if _, err := Dequantize(Q6_K, make([]byte, 209), NoFMA); err == nil {
		t.Error("Dequantize 209 bytes of q6_K: no error")
	}
	if _, err := LookupType("q7_0"); err == nil {
		t.Error("LookupType q7_0: no error")
	}
	if _, err := LookupProfile("avx"); err == nil {
		t.Error("LookupProfile avx: no error")
	}
	if _, err := DotQ4_0Q8_0.VecDot(make([]byte, 36), make([]byte, 34), NoFMA); err == nil {
		t.Error("VecDot 64 weights, 32 activations: no error")
	}
	if _, err := Quantize(Type(99), make([]float32, 32), NoFMA); err == nil {
		t.Error("Quantize Type(99): no error")
	}
	if _, err := Dequantize(Type(-1), make([]byte, 18), NoFMA); err == nil {
		t.Error("Dequantize Type(-1): no error")
	}
	if _, err := (Dot{Type(99), Q8_0}).VecDot(make([]byte, 18), make([]byte, 34), NoFMA); err == nil {
		t.Error("VecDot of Type(99): no error")
	}
	if Type(99).BlockBytes() != 0 || Type(99).String() != "gguf.Type(99)" {
		t.Error("Type(99) has a size or a name")
	}
	for _, ty := range Types() {
		if got, err := LookupType(ty.String()); err != nil || got != ty {
			t.Errorf("LookupType(%s) = %v, %v", ty, got, err)
		}
	}
}
