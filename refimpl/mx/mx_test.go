package mx

import (
	"bytes"
	"math"
	"testing"

	"github.com/bitexact/bitexact/refimpl/e8m0"
	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/mxfp4"
)

func randomMatrix(rows, cols int, seed uint64) []float32 {
	x := make([]float32, rows*cols)
	s := seed
	for i := range x {
		s = splitmix(s)
		// Magnitudes over 2^-20..2^20 and some raw bit patterns.
		if s%17 == 0 {
			x[i] = math.Float32frombits(uint32(s >> 32))
			continue
		}
		u := float64(s>>11)/(1<<53)*2 - 1
		x[i] = float32(math.Ldexp(u, int(s>>5%41)-20))
	}
	return x
}

// edgeMatrix holds blocks of zeros, -0, subnormals, ties of E2M1 at
// several scales, NaN, ±Inf and float32 extremes.
func edgeMatrix() []float32 {
	vals := []float32{0, float32(math.Copysign(0, -1)), 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5, 6, 7, -0.25, -5,
		math.Float32frombits(1), math.Float32frombits(0x807fffff), math.MaxFloat32, -math.MaxFloat32,
		float32(math.Inf(1)), float32(math.NaN()), 1e-40, 448, 57344, 1.5, 3}
	x := make([]float32, 0, 8*64)
	for blk := 0; blk < 16; blk++ {
		for i := 0; i < BlockSize; i++ {
			v := vals[(blk*5+i)%len(vals)]
			if blk < 6 && (math.IsNaN(float64(v)) || math.IsInf(float64(v), 0)) {
				v = 1 // the first blocks stay finite
			}
			x = append(x, v*float32(math.Ldexp(1, blk-8)))
		}
	}
	return x
}

// TestMXFP4Member: the family's E2M1 member gives refimpl/mxfp4's packed
// codes, scales and dequantized values, under each scale mode and E2M1
// profile, on random and edge inputs.
func TestMXFP4Member(t *testing.T) {
	inputs := map[string][]float32{"random": randomMatrix(8, 256, 1), "edges": edgeMatrix()}
	for name, x := range inputs {
		rows, cols := len(x)/256, 256
		if name == "edges" {
			rows, cols = 8, 64
		}
		for _, mode := range e8m0.ScaleModes() {
			for _, prof := range fp4.Profiles() {
				want, err := mxfp4.Quantize(x, rows, cols, mxfp4.Options{Mode: mode, FP4: prof})
				if err != nil {
					t.Fatal(err)
				}
				got, err := Quantize(x, rows, cols, Dim0, Options{Element: E2M1, Profile: prof.Name, Mode: mode})
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(fp4.Pack(got.Codes), want.Packed) || !bytes.Equal(got.Scales, want.Scales) {
					t.Fatalf("%s %s %s: bytes differ from mxfp4", name, mode.Name, prof.Name)
				}
				yw, _ := mxfp4.Dequantize(want)
				yg, err := Dequantize(got)
				if err != nil {
					t.Fatal(err)
				}
				for i := range yw {
					if math.Float32bits(yw[i]) != math.Float32bits(yg[i]) {
						t.Fatalf("%s %s %s: y[%d] = %#08x, mxfp4 %#08x", name, mode.Name, prof.Name, i, math.Float32bits(yg[i]), math.Float32bits(yw[i]))
					}
				}
			}
		}
	}
}

// TestElementsExact: for every element type and profile, every code
// whose value is finite encodes back to itself (or to the other zero for
// -0 under profiles that drop its sign), and the largest code decodes to
// Max.
func TestElementsExact(t *testing.T) {
	for _, e := range Elements() {
		dec := e.Decode(uint8(1<<(e.Bits-1) - 1))
		if e.Name == "e4m3" {
			dec = e.Decode(0x7e)
		}
		if e.Name == "e5m2" {
			dec = e.Decode(0x7b)
		}
		if dec != e.Max {
			t.Errorf("%s: largest code decodes to %g, want %g", e.Name, dec, e.Max)
		}
		for _, p := range e.Profiles {
			enc, err := e.Encoder(p)
			if err != nil {
				t.Fatal(err)
			}
			for c := 0; c < 1<<e.Bits; c++ {
				v := e.Decode(uint8(c))
				if v != v || math.IsInf(float64(v), 0) || v == 0 || e.Name == "int8" && c == 0x80 {
					continue // -2 (0x80) saturates to -127/64: the encoders are symmetric
				}
				if got := enc(v); got != uint8(c) {
					t.Errorf("%s/%s: code %#x (%g) encodes to %#x", e.Name, p, c, v, got)
				}
			}
		}
	}
}

// TestINT8Profiles: the two MXINT8 roundings differ at a tie and agree
// elsewhere; saturation stops at ±127.
func TestINT8Profiles(t *testing.T) {
	even, _ := INT8.Encoder("even")
	away, _ := INT8.Encoder("away")
	cases := []struct {
		x            float32
		wantE, wantA uint8
	}{
		{2.5 / 64, 2, 3},
		{-2.5 / 64, 0xfe, 0xfd},
		{3.5 / 64, 4, 4},
		{5, 127, 127},
		{-5, 0x81, 0x81},
		{float32(math.NaN()), 0, 0},
	}
	for _, c := range cases {
		if g := even(c.x); g != c.wantE {
			t.Errorf("even(%g) = %#x, want %#x", c.x, g, c.wantE)
		}
		if g := away(c.x); g != c.wantA {
			t.Errorf("away(%g) = %#x, want %#x", c.x, g, c.wantA)
		}
	}
}

// TestScaleEmax: a block whose amax is exactly the element's max at
// scale 1 gets scale code 127 under floor for every element, and its max
// element encodes to the largest code.
func TestScaleEmax(t *testing.T) {
	for _, e := range Elements() {
		x := make([]float32, BlockSize)
		x[3] = e.Max
		q, err := Quantize(x, 1, BlockSize, Dim0, Options{Element: e, Mode: e8m0.Floor})
		if err != nil {
			t.Fatal(err)
		}
		if q.Scales[0] != 127 {
			t.Errorf("%s: scale %d, want 127", e.Name, q.Scales[0])
		}
		if got := e.Decode(q.Codes[3]); got != e.Max {
			t.Errorf("%s: max element decodes to %g", e.Name, got)
		}
	}
}

// TestEvenMantissaWidth: Even rounds amax at the element's own mantissa
// width, E4M3's 3 bits (torchao's MBITS_F8_E4M3), not the 2 of 448's
// significand.
func TestEvenMantissaWidth(t *testing.T) {
	// 1.9 = 1.1110011b: at 3 bits 1.111b stays below 2; at 2 bits it rounds to 2.
	if got := E4M3.ScaleCode(1.9, e8m0.Even); got != 127-8 {
		t.Errorf("E4M3 even(1.9) = %d, want %d", got, 127-8)
	}
	if got := E5M2.ScaleCode(1.9, e8m0.Even); got != 127-15+1 {
		t.Errorf("E5M2 even(1.9) = %d, want %d", got, 127-15+1)
	}
}

// TestDim1IsTransposedDim0: dim1 quantization is dim0 quantization of the
// transpose, and dequantizes back to the input's orientation.
func TestDim1IsTransposedDim0(t *testing.T) {
	rows, cols := 64, 96
	x := randomMatrix(rows, cols, 7)
	o := Options{Element: E4M3, Mode: e8m0.Floor}
	d1, err := Quantize(x, rows, cols, Dim1, o)
	if err != nil {
		t.Fatal(err)
	}
	d0t, _ := Quantize(Transpose(x, rows, cols), cols, rows, Dim0, o)
	if !bytes.Equal(d1.Codes, d0t.Codes) || !bytes.Equal(d1.Scales, d0t.Scales) || d1.Rows != cols {
		t.Fatal("dim1 is not dim0 of the transpose")
	}
	y1, _ := Dequantize(d1)
	y0t, _ := Dequantize(d0t)
	if back := Transpose(y0t, cols, rows); !sameBits(y1, back) {
		t.Fatal("dim1 dequantizes to a different orientation")
	}
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

// TestRoundTripAllElements: under the OCP floor rule, dequantizing and
// quantizing again reproduces the values for every element type: the
// block maximum dequantizes into [2^E, max*2^(E-emax)], so the scale
// stays, and values on the grid stay there. (Rules that round amax can
// move the scale of the dequantized block and are not fixed points.)
func TestRoundTripAllElements(t *testing.T) {
	x := AdversarialBands(64, 128, Dim0, 3)
	for _, e := range Elements() {
		for _, m := range []e8m0.ScaleMode{e8m0.Floor} {
			o := Options{Element: e, Mode: m}
			q, err := Quantize(x, 64, 128, Dim0, o)
			if err != nil {
				t.Fatal(err)
			}
			y, _ := Dequantize(q)
			q2, _ := Quantize(y, 64, 128, Dim0, o)
			y2, _ := Dequantize(q2)
			if !sameBits(y, y2) {
				t.Errorf("%s/%s: quantize(dequantize) is not a fixed point", e.Name, m.Name)
			}
		}
	}
}

func TestErrors(t *testing.T) {
	o := Options{Element: E4M3, Mode: e8m0.Floor}
	if _, err := Quantize(make([]float32, 40), 1, 40, Dim0, o); err == nil {
		t.Error("cols 40 accepted for dim0")
	}
	if _, err := Quantize(make([]float32, 64), 2, 32, Dim1, o); err == nil {
		t.Error("rows 2 accepted for dim1")
	}
	if _, err := Quantize(make([]float32, 64), 1, 32, Dim0, o); err == nil {
		t.Error("wrong length accepted")
	}
	if _, err := Quantize(make([]float32, 32), 1, 32, Dim0, Options{Element: E4M3, Profile: "nope"}); err == nil {
		t.Error("unknown profile accepted")
	}
	if _, err := Dequantize(Quantized{Element: E4M3, Rows: 1, Cols: 32, Codes: make([]uint8, 32)}); err == nil {
		t.Error("missing scales accepted")
	}
	if _, err := LookupElement("e9m9"); err == nil {
		t.Error("unknown element accepted")
	}
}

func TestFP6Packings(t *testing.T) {
	codes := make([]uint8, 64)
	for i := range codes {
		codes[i] = uint8(i*37+5) & 0x3f
	}
	for _, p := range FP6Packings() {
		b, err := p.Pack(codes)
		if err != nil || len(b) != 48 {
			t.Fatalf("%s: %v, %d bytes", p.Name, err, len(b))
		}
		back, err := p.Unpack(b, 64)
		if err != nil || !bytes.Equal(back, codes) {
			t.Fatalf("%s: round trip failed", p.Name)
		}
	}
	// Known bytes: codes 0x01, 0x02, 0x03, 0x3f.
	c := []uint8{0x01, 0x02, 0x03, 0x3f}
	lsb, _ := FP6LSB.Pack(c)
	if want := []uint8{0x81, 0x30, 0xfc}; !bytes.Equal(lsb, want) {
		t.Errorf("lsb = % x, want % x", lsb, want)
	}
	split, _ := FP6Split.Pack(c)
	// hi4: 0,0,0,0xf; lo2: 1,2,3,3 -> b0 = 0x00, b1 = 0xf0, b2 = 1<<6|2<<4|3<<2|3 = 0x6f.
	if want := []uint8{0x00, 0xf0, 0x6f}; !bytes.Equal(split, want) {
		t.Errorf("torchao-4+2 = % x, want % x", split, want)
	}
	if _, err := FP6LSB.Pack(make([]uint8, 3)); err == nil {
		t.Error("3 codes accepted")
	}
	if _, err := FP6LSB.Unpack(make([]uint8, 4), 4); err == nil {
		t.Error("4 bytes for 4 codes accepted")
	}
}
