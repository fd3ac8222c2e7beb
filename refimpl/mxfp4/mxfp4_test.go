package mxfp4

import (
	"math"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/refimpl/e8m0"
	"github.com/bitexact/bitexact/refimpl/fp4"
)

func f32(b uint32) float32 { return math.Float32frombits(b) }

func block(v ...float32) []float32 {
	b := make([]float32, BlockSize)
	copy(b, v)
	return b
}

// codes unpacks q's elements, one E2M1 code per byte.
func codes(q Quantized) []uint8 { return fp4.Unpack(q.Packed, 2*len(q.Packed)) }

func TestPow2(t *testing.T) {
	cases := []struct {
		k    int
		bits uint32
	}{{0, 0x3F800000}, {127, 0x7F000000}, {-126, 0x00800000}, {-127, 0x00400000}, {-149, 0x00000001}, {-2, 0x3E800000}}
	for _, c := range cases {
		if got := math.Float32bits(Pow2(c.k)); got != c.bits {
			t.Errorf("Pow2(%d) = %#08x, want %#08x (IEEE binary32)", c.k, got, c.bits)
		}
	}
}

// TestQuantizeBlocks pins one block at a time under Default (floor scale,
// nvidia E2M1). Scale codes follow OCP MX v1.0 §6.3: floor(log2 amax) - 2 +
// 127; element codes are E2M1 nearest-even of x*2^-E (formats.md).
func TestQuantizeBlocks(t *testing.T) {
	nan := f32(0x7FC00000)
	inf := float32(math.Inf(1))
	cases := []struct {
		name  string
		x     []float32
		scale uint8
		codes []uint8
		src   string
	}{
		{"amax 6, midpoints tie to even", block(6, 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5),
			127, []uint8{7, 0, 2, 2, 4, 4, 6, 6}, "floor(log2 6)=2 -> E=0; E2M1 midpoints -> even code"},
		{"all equal ones", []float32{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
			125, []uint8{6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6},
			"E = 0-2 = -2; 1*4 = 4 -> code 6"},
		{"saturation at 6*scale", block(7.5, -7, 6.5), 127, []uint8{7, 0xF, 7},
			"floor(log2 7.5)=2 -> E=0; 7.5, 7, 6.5 > 6 saturate to code 7"},
		{"scale 2, ties in the upper binade", block(8, 7, 5, 10), 128, []uint8{6, 6, 4, 6},
			"E=1: 8/2=4, 7/2=3.5 tie -> 4, 5/2=2.5 tie -> 2, 10/2=5 tie -> 4"},
		{"negative zero keeps its sign", block(1, float32(math.Copysign(0, -1))), 125, []uint8{6, 8},
			"-0 * 4 = -0 -> nvidia 0x8"},
		{"subnormal scale 2^-127", block(1.5*0x1p-125, 0x1p-130, -0x1p-128), 0, []uint8{7, 0, 0x9},
			"floor(log2 1.5*2^-125) = -125 -> E=-127 (code 0); 2^-130*2^127 = 0.125 -> 0; -2^-128*2^127 = -0.5 -> 0x9"},
		{"subnormal product rounds to -0", block(0x1p20, -f32(1)), 145, []uint8{6, 8},
			"E = 18; -2^-149 * 2^-18 underflows to -0 -> 0x8; 2^20/2^18 = 4 -> 6"},
		{"NaN element makes the block NaN", block(1, nan), NaNScale,
			[]uint8{7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7},
			"OCP: non-finite amax -> scale NaN 0xFF; elements encode +NaN -> nvidia 0x7"},
		{"Inf element makes the block NaN", block(inf, 1), NaNScale,
			[]uint8{7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7},
			"amax = Inf -> 0xFF"},
	}
	for _, c := range cases {
		q, err := Quantize(c.x, 1, BlockSize, Default)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if q.Scales[0] != c.scale {
			t.Errorf("%s: scale %d, want %d (%s)", c.name, q.Scales[0], c.scale, c.src)
		}
		got := codes(q)
		want := make([]uint8, BlockSize)
		copy(want, c.codes)
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: element %d (x=%v) code %#x, want %#x (%s)", c.name, i, c.x[i], got[i], want[i], c.src)
			}
		}
	}
}

func TestZeroBlock(t *testing.T) {
	x := block(0, float32(math.Copysign(0, -1)))
	q, err := Quantize(x, 1, BlockSize, Default)
	if err != nil {
		t.Fatal(err)
	}
	if want := e8m0.SharedScale(0, e8m0.Floor, EmaxElem, MaxElem); q.Scales[0] != want {
		t.Errorf("zero block scale %d, want e8m0.SharedScale(0) = %d", q.Scales[0], want)
	}
	if q.Packed[0] != 0x80 {
		t.Errorf("zero block first byte %#02x, want 0x80 (+0 low, -0 high)", q.Packed[0])
	}
}

func TestProfileAndMode(t *testing.T) {
	// Ties toward zero: 0.75 -> 0.5 (code 1) instead of 1.0 (code 2).
	q, err := Quantize(block(6, 0.75), 1, BlockSize, Options{Mode: e8m0.Floor, FP4: fp4.TiesTowardZero})
	if err != nil {
		t.Fatal(err)
	}
	if c := codes(q)[1]; c != 1 {
		t.Errorf("ties-toward-zero 0.75 -> code %d, want 1 (formats.md: modelopt MXFP4)", c)
	}
}

func TestDequantize(t *testing.T) {
	x := block(6, 0.5, -1, 1.5, 2, 3, 4, -6)
	q, err := Quantize(x, 1, BlockSize, Default)
	if err != nil {
		t.Fatal(err)
	}
	y, err := Dequantize(q)
	if err != nil {
		t.Fatal(err)
	}
	for i := range x {
		if y[i] != x[i] {
			t.Errorf("element %d: %v -> %v", i, x[i], y[i])
		}
	}
	q.Scales[0] = NaNScale
	y, _ = Dequantize(q)
	if y[0] == y[0] {
		t.Errorf("NaN scale dequantized to %v, want NaN", y[0])
	}
	q.Scales[0] = 0 // 2^-127: 6*2^-127 = 1.5*2^-125 exactly
	y, _ = Dequantize(q)
	if y[0] != 1.5*0x1p-125 {
		t.Errorf("subnormal scale: %v, want 1.5*2^-125", y[0])
	}
}

func TestShapeErrors(t *testing.T) {
	if _, err := Quantize(make([]float32, 16), 1, 16, Default); err == nil || !strings.Contains(err.Error(), "multiple of the block size") {
		t.Errorf("cols 16: %v", err)
	}
	if _, err := Quantize(make([]float32, 32), 2, 32, Default); err == nil {
		t.Error("length mismatch accepted")
	}
	if _, err := Dequantize(Quantized{Rows: 1, Cols: 32, Packed: make([]uint8, 3), Scales: make([]uint8, 1)}); err == nil {
		t.Error("short packed accepted")
	}
}

func BenchmarkQuantize4096x4096(b *testing.B) {
	const n = 4096
	x := make([]float32, n*n)
	s := uint32(1)
	for i := range x {
		s = s*1664525 + 1013904223
		x[i] = float32(int32(s)) / (1 << 28)
	}
	b.SetBytes(int64(4 * len(x)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Quantize(x, n, n, Default); err != nil {
			b.Fatal(err)
		}
	}
}
