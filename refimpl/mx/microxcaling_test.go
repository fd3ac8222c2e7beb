package mx

import (
	"math"
	"testing"

	"github.com/bitexact/bitexact/refimpl/e8m0"
)

// TestMicroxcalingElement pins _quantize_elemwise_core's edges: ties,
// the sign of zero, the float32 |t|+0.5, saturation.
func TestMicroxcalingElement(t *testing.T) {
	nz := math.Float32frombits(0x80000000)
	quirk := float32(0.5-0x1p-25) * 0x1p-9 // just below half E4M3's smallest subnormal step
	cases := []struct {
		name          string
		el            Element
		a             float32
		even, nearest float32
		ocp           float32 // the family's default profile, for contrast
	}{
		{"e4m3 tie 1.0625", E4M3, 1.0625, 1, 1.125, 1},
		{"e4m3 tie 1.1875", E4M3, 1.1875, 1.25, 1.25, 1.25},
		{"e4m3 -0 gives +0", E4M3, nz, 0, 0, nz},
		{"e4m3 negative rounding to zero gives -0", E4M3, -1e-10, nz, nz, nz},
		{"e4m3 float32 |t|+0.5 rounds up", E4M3, quirk, 0x1p-9, 0x1p-9, 0},
		{"e4m3 subnormal tie", E4M3, 3 * 0x1p-10, 0x1p-8, 0x1p-8, 0x1p-8},
		{"e4m3 above max saturates", E4M3, 470, 448, 448, 448},
		{"e5m2 tie 1.125", E5M2, 1.125, 1, 1.25, 1},
		{"e2m3 tie at the top saturates", E2M3, 7.75, 7.5, 7.5, 7.5},
		{"e2m3 tie 0.0625", E2M3, 0.0625, 0, 0.125, 0},
		{"e3m2 tie 0.09375", E3M2, 0.09375, 0.125, 0.125, 0.125},
		{"int8 tie 2.5/64", INT8, 2.5 / 64, 2.0 / 64, 3.0 / 64, 2.0 / 64},
		{"int8 negative to zero keeps -0", INT8, -0.25 / 64, nz, nz, 0},
		{"int8 saturates", INT8, 2, 127.0 / 64, 127.0 / 64, 127.0 / 64},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, m := range []Microxcaling{{}, {Nearest: true}} {
				want := c.even
				if m.Nearest {
					want = c.nearest
				}
				if got := m.Element(c.el, c.a); math.Float32bits(got) != math.Float32bits(want) {
					t.Errorf("nearest=%v: Element(%g) = %g (%#08x), want %g (%#08x)", m.Nearest, c.a, got, math.Float32bits(got), want, math.Float32bits(want))
				}
			}
			enc, _ := c.el.Encoder("")
			if got := c.el.Decode(enc(c.a)); math.Float32bits(got) != math.Float32bits(c.ocp) {
				t.Errorf("default profile: %g gives %g, want %g", c.a, got, c.ocp)
			}
		})
	}
	if v := (Microxcaling{}).Element(E5M2, float32(math.NaN())); v == v {
		t.Errorf("NaN gives %g", v)
	}
}

// TestMicroxcalingFamily: for the FP8 and FP6 elements, the family's
// Quantize under scale mode microxcaling-7bc41952 and the microxcaling
// element profile, then Dequantize, is Microxcaling.QDQ bit for bit.
func TestMicroxcalingFamily(t *testing.T) {
	for name, sh := range harnessInputs() {
		x := harnessInput(name, sh[0], sh[1])
		for _, el := range []Element{E4M3, E5M2, E2M3, E3M2} {
			for _, prof := range []string{MicroxcalingEven, MicroxcalingNearest} {
				for _, d := range []Dim{Dim0, Dim1} {
					if d == Dim1 && sh[0]%BlockSize != 0 {
						continue
					}
					q, err := Quantize(x, sh[0], sh[1], d, Options{Element: el, Profile: prof, Mode: e8m0.Microxcaling7bc41952})
					if err != nil {
						t.Fatal(err)
					}
					y, _ := Dequantize(q)
					want, err := Microxcaling{Nearest: prof == MicroxcalingNearest}.QDQ(x, sh[0], sh[1], d, el, 0x7fc00000)
					if err != nil {
						t.Fatal(err)
					}
					for i := range y {
						if math.Float32bits(y[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%s %s %s dim%d [%d]: family %g, QDQ %g", name, el.Name, prof, d, i, y[i], want[i])
						}
					}
				}
			}
		}
	}
}

// TestMicroxcalingShortBlock: a block axis that is not a multiple of 32
// ends in a short block, as microxcaling's zero padding makes it.
func TestMicroxcalingShortBlock(t *testing.T) {
	x := edgeMatrix() // [16, 32]
	padded := make([]float32, 32*32)
	copy(padded, x)
	y, err := Microxcaling{}.QDQ(x, 16, 32, Dim1, E4M3, 0x7fc00000)
	if err != nil {
		t.Fatal(err)
	}
	yp, err := Microxcaling{}.QDQ(padded, 32, 32, Dim1, E4M3, 0x7fc00000)
	if err != nil {
		t.Fatal(err)
	}
	for i := range y {
		if math.Float32bits(y[i]) != math.Float32bits(yp[i]) {
			t.Fatalf("[%d]: short block %g, zero-padded %g", i, y[i], yp[i])
		}
	}
}

// TestMicroxcalingErrors: what the emulation refuses, with the reason.
func TestMicroxcalingErrors(t *testing.T) {
	cases := []struct {
		name       string
		x          []float32
		rows, cols int
		dim        Dim
		el         Element
	}{
		{"e2m1 not emulated", make([]float32, 32), 1, 32, Dim0, E2M1},
		{"shape", make([]float32, 31), 1, 32, Dim0, E4M3},
		{"negative shape", nil, -1, 0, Dim0, E4M3},
		{"dim", make([]float32, 32), 1, 32, Dim(2), E4M3},
	}
	for _, c := range cases {
		if _, err := (Microxcaling{}).QDQ(c.x, c.rows, c.cols, c.dim, c.el, 0); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

// TestTiesSeparateRoundings: the ties input (added for the next device
// run) tells round "even" from "nearest" for every element type and
// microxcaling's float32 sum from the OCP encoders, which the first run's
// inputs could not.
func TestTiesSeparateRoundings(t *testing.T) {
	x := tiesMatrix(64, 64, 13)
	for _, el := range tieElements {
		ye, _ := Microxcaling{}.QDQ(x, 64, 64, Dim0, el, 0x7fc00000)
		yn, _ := Microxcaling{Nearest: true}.QDQ(x, 64, 64, Dim0, el, 0x7fc00000)
		q, err := Quantize(x, 64, 64, Dim0, Options{Element: el, Mode: e8m0.Microxcaling7bc41952})
		if err != nil {
			t.Fatal(err)
		}
		yo, _ := Dequantize(q)
		diffN, diffO := 0, 0
		for i := range ye {
			if math.Float32bits(ye[i]) != math.Float32bits(yn[i]) {
				diffN++
			}
			if math.Float32bits(ye[i]) != math.Float32bits(yo[i]) {
				diffO++
			}
		}
		if diffN == 0 || diffO == 0 {
			t.Errorf("%s: even and nearest differ on %d values, even and the OCP profile on %d: want both > 0", el.Name, diffN, diffO)
		}
	}
}
