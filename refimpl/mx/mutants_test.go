package mx

import (
	"bytes"
	"math"
	"testing"

	"github.com/bitexact/bitexact/refimpl/blocklayout"
	"github.com/bitexact/bitexact/refimpl/e8m0"
)

// The mutants of the 2026 MX bugs, each shown apart from the reference
// on the adversarial per-block band inputs at shapes past one tile each
// way. Layout mutants are also shown invisible on inputs whose blocks
// share an exponent, the blind spot that hid them.

// differingBlocks counts blocks whose scale bytes differ.
func differingBlocks(a, b []uint8) int {
	n := 0
	for i := range a {
		if a[i] != b[i] {
			n++
		}
	}
	return n
}

func equalExponentInput(rows, cols int) []float32 {
	x := make([]float32, rows*cols)
	s := uint64(9)
	for i := range x {
		s = splitmix(s)
		x[i] = float32(1 + float64(s>>11)/(1<<53)) // every block's amax in [1, 2)
	}
	return x
}

// TestMutantScaleOffByOne: a scale one step high (ROCm/TransformerEngine
// #338's tolerated reference) changes every block's scale byte and the
// elements of every block.
func TestMutantScaleOffByOne(t *testing.T) {
	for _, sh := range LayoutShapes() {
		x := AdversarialBands(sh[0], sh[1], Dim0, 1)
		o := Options{Element: E4M3, Mode: e8m0.Floor}
		ref, _ := Quantize(x, sh[0], sh[1], Dim0, o)
		mut, _ := Quantize(x, sh[0], sh[1], Dim0, Options{Element: E4M3, Mode: e8m0.TwiceOCP}) // floor + 1
		if n := differingBlocks(ref.Scales, mut.Scales); n != len(ref.Scales) {
			t.Errorf("%v: off-by-one scale differs in %d of %d blocks", sh, n, len(ref.Scales))
		}
		if bytes.Equal(ref.Codes, mut.Codes) {
			t.Errorf("%v: off-by-one scale left every element code unchanged", sh)
		}
	}
}

// TestMutantLinearScale: E8M0 bytes multiplied in as linear scales
// (jundot/omlx#2159) dequantize to different values in every block whose
// scale is not 1.0.
func TestMutantLinearScale(t *testing.T) {
	rows, cols := 160, 288
	x := AdversarialBands(rows, cols, Dim0, 2)
	q, _ := Quantize(x, rows, cols, Dim0, Options{Element: E4M3, Mode: e8m0.Floor})
	y, _ := Dequantize(q)
	wrong := 0
	for j, c := range q.Codes {
		sc := q.Scales[j/BlockSize]
		m := q.Element.Decode(c) * float32(sc) // the mutant
		if c&0x7f != 0 && math.Float32bits(m) != math.Float32bits(y[j]) {
			wrong++
		}
	}
	if wrong < len(q.Codes)*9/10 {
		t.Errorf("linear-scale mutant differs in only %d of %d elements", wrong, len(q.Codes))
	}
}

// TestMutantNearest: a round-to-nearest scale (MLX mxfp8 before #4353,
// legacy FlyDSL) instead of floor changes the scale of a large share of
// the adversarial blocks, whose maxima have uniform mantissas: for E4M3
// MLX's round(log2(amax/448)) is one step below floor exactly when
// amax's mantissa is below 1.75/sqrt(2) = 1.237, about a quarter of them.
func TestMutantNearest(t *testing.T) {
	rows, cols := 160, 288
	x := AdversarialBands(rows, cols, Dim0, 3)
	for _, m := range []e8m0.ScaleMode{e8m0.MLXNearest, e8m0.RoundHalfUp} {
		ref, _ := Quantize(x, rows, cols, Dim0, Options{Element: E4M3, Mode: e8m0.Floor})
		mut, _ := Quantize(x, rows, cols, Dim0, Options{Element: E4M3, Mode: m})
		if n := differingBlocks(ref.Scales, mut.Scales); n < len(ref.Scales)/5 {
			t.Errorf("%s: scale differs from floor in only %d of %d blocks", m.Name, n, len(ref.Scales))
		}
	}
}

// TestMutantSkippedInterleave: scales written row-major where a kernel
// reads the 128x4 layout (flashinfer-ai/flashinfer#4087, #3882) put a
// wrong scale under most blocks of the adversarial input, and under none
// that matter when every block has the same exponent.
func TestMutantSkippedInterleave(t *testing.T) {
	for _, sh := range LayoutShapes() {
		rows, cols := sh[0], sh[1]
		sr, sc := rows, cols/BlockSize
		for _, in := range []struct {
			name   string
			x      []float32
			detect bool
		}{
			{"adversarial", AdversarialBands(rows, cols, Dim0, 4), true},
			{"equal exponents", equalExponentInput(rows, cols), false},
		} {
			q, _ := Quantize(in.x, rows, cols, Dim0, Options{Element: E4M3, Mode: e8m0.Floor})
			// The mutant: linear bytes padded to the 128x4 buffer's length, read as 128x4.
			buf := make([]uint8, blocklayout.Swizzle128x4.Len(sr, sc))
			copy(buf, q.Scales)
			read, err := blocklayout.Swizzle128x4.Read(buf, sr, sc)
			if err != nil {
				t.Fatal(err)
			}
			n := differingBlocks(q.Scales, read)
			switch {
			case in.detect && n < len(q.Scales)*9/10:
				t.Errorf("%v %s: skipped interleave misplaces only %d of %d scales", sh, in.name, n, len(q.Scales))
			case !in.detect:
				// Every block's scale is the same byte, so only the
				// padding zeros read into real rows can show.
				same := 0
				for i := range read {
					if read[i] == q.Scales[i] {
						same++
					}
				}
				if same == 0 {
					t.Errorf("%v %s: expected the blind spot (equal scales)", sh, in.name)
				}
			}
		}
	}
}

// TestMutantDimSwap: quantizing along dim0 where dim1 was asked
// (flashinfer-ai/flashinfer#3882 quantized B along the wrong axis)
// changes the scales and the dequantized values of a square adversarial
// matrix.
func TestMutantDimSwap(t *testing.T) {
	n := 256
	x := AdversarialBands(n, n, Dim1, 5)
	o := Options{Element: E5M2, Mode: e8m0.Floor}
	d1, _ := Quantize(x, n, n, Dim1, o)
	d0, _ := Quantize(x, n, n, Dim0, o)
	if c := differingBlocks(d1.Scales, d0.Scales); c < len(d1.Scales)*9/10 {
		t.Errorf("dim swap changes only %d of %d scales", c, len(d1.Scales))
	}
	y1, _ := Dequantize(d1)
	y0, _ := Dequantize(d0)
	if sameBits(y1, y0) {
		t.Error("dim swap dequantizes to the same values")
	}
}
