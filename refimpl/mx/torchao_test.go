package mx

import (
	"math"
	"testing"

	"github.com/bitexact/bitexact/refimpl/e8m0"
)

// TestTorchAOEdges holds the TorchAO profiles to values worked by hand
// from torchao v0.18.0's to_mx and _f32_to_floatx_unpacked at the edges
// where they leave the family's Quantize: the scale code 0 (divided by
// 2^-126; RCEIL multiplies by 1), a NaN block (finite elements divided by
// +Inf), an infinite amax (a finite code), the FP6 code of a NaN (its
// bits through the normal branch) and the device's NaN bits (CPU: the
// operand's, 0xFFC00000 for Inf/Inf; CUDA: 0x7FFFFFFF), and CUDA's
// amax * float32(1/max) in RCEIL. The records hold no code-0 block and
// no amax where CUDA's reciprocal changes the RCEIL code, so those cases
// are read from the source (torchao's, and torch's division of a CUDA
// tensor by a Python scalar, measured through e8m0.ModelOpt5a4242faCUDA).
func TestTorchAOEdges(t *testing.T) {
	nan := math.Float32frombits(0x7FC00000)
	inf := float32(math.Inf(1))
	cases := []struct {
		name  string
		p     TorchAO
		el    Element
		block []float32 // the block's first elements, the rest 0
		scale uint8
		codes []uint8 // the codes of the first elements
		ocp   []uint8 // the family's Quantize under the same scale mode, where it differs
	}{
		// floor(log2 2^-130) - 8 clamps to -127: code 0, divided by 2^-126
		// to 2^-4 (E4M3 0x18); OCP multiplies by 2^127 to 2^-3 (0x20).
		{"floor code 0", TorchAO{Mode: e8m0.TorchAO017Floor}, E4M3, []float32{0x1p-130}, 0, []uint8{0x18}, []uint8{0x20}},
		// 2^-120/448 < 2^-128: RCEIL code 0 multiplies by 1, so 2^-120
		// stays below the E4M3 subnormals (0); OCP's 2^127 makes it 128.
		{"rceil code 0", TorchAO{Mode: e8m0.TorchAO017RCeil}, E4M3, []float32{0x1p-120}, 0, []uint8{0x00}, []uint8{0x70}},
		// A NaN block divides by +Inf: NaN stays NaN (0x7F), 1.5 -> +0,
		// -2 -> -0 (0x80); OCP writes NaN everywhere.
		{"floor NaN block", TorchAO{Mode: e8m0.TorchAO017Floor}, E4M3, []float32{nan, 1.5, -2}, 0xFF, []uint8{0x7F, 0x00, 0x80}, []uint8{0x7F, 0x7F, 0x7F}},
		// An infinite amax reads the exponent field 255 as 128: code
		// 128-8+127 = 247; Inf/2^120 clamps to 448 (0x7E), 1 -> 2^-120 -> 0.
		{"floor Inf amax", TorchAO{Mode: e8m0.TorchAO017Floor}, E4M3, []float32{inf, 1}, 247, []uint8{0x7E, 0x00}, nil},
		// FP6 E2M3 of a NaN: 0x7FC00000 + (-126<<23) + 2^19-1 + 0, >> 20,
		// low byte 0x0C; Inf/Inf on the CPU is 0xFFC00000: 0x0C | sign 0x20.
		{"e2m3 NaN block cpu", TorchAO{Mode: e8m0.TorchAO017Floor}, E2M3, []float32{nan, inf, -1}, 0xFF, []uint8{0x0C, 0x2C, 0x20}, nil},
		// CUDA's NaN 0x7FFFFFFF: 0x7FFFFFFF + (-126<<23) + 2^19-1 + 1, >> 20,
		// low byte 0x10, for the input NaN and Inf/Inf alike.
		{"e2m3 NaN block cuda", TorchAO{Mode: e8m0.TorchAO017Floor, CUDA: true}, E2M3, []float32{nan, inf, -1}, 0xFF, []uint8{0x10, 0x10, 0x20}, nil},
		// amax 0.8750001 (0x3F600002) / 28 is 0.031250004 on the CPU, whose
		// float32 log2 rounds to -5: code 122, 0.8750001*2^5 clamps to 28
		// (E3M2 0x1F); CUDA's amax * float32(1/28) is 0.031250007, log2
		// -4.9999995: code 123, 14.0000016 -> 14 (0x1B).
		{"rceil cpu divides", TorchAO{Mode: e8m0.TorchAO017RCeil}, E3M2, []float32{math.Float32frombits(0x3F600002)}, 122, []uint8{0x1F}, nil},
		{"rceil cuda multiplies", TorchAO{Mode: e8m0.TorchAO017RCeil, CUDA: true}, E3M2, []float32{math.Float32frombits(0x3F600002)}, 123, []uint8{0x1B}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := make([]float32, BlockSize)
			copy(x, c.block)
			q, err := c.p.Quantize(x, 1, BlockSize, Dim0, c.el)
			if err != nil {
				t.Fatal(err)
			}
			if q.Scales[0] != c.scale {
				t.Errorf("%s: scale %#x, want %#x", c.p.Name(), q.Scales[0], c.scale)
			}
			for i, w := range c.codes {
				if q.Codes[i] != w {
					t.Errorf("%s: code %d of %v is %#x, want %#x", c.p.Name(), i, c.block[i], q.Codes[i], w)
				}
			}
			if c.ocp == nil {
				return
			}
			o, err := Quantize(x, 1, BlockSize, Dim0, Options{Element: c.el, Mode: c.p.Mode})
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range c.ocp {
				if o.Codes[i] != w {
					t.Errorf("Quantize: code %d of %v is %#x, want %#x", i, c.block[i], o.Codes[i], w)
				}
			}
		})
	}
}

// TestTorchAOFP6Finite: for every finite float32 of a sweep, torchao's
// _f32_to_floatx_unpacked is the family's satfinite FP6 encoder (nearest
// even, saturating, -0 kept): the profiles differ from OCP only in NaN.
func TestTorchAOFP6Finite(t *testing.T) {
	for _, el := range []Element{E2M3, E3M2} {
		ebits, mbits, _ := el.aoBits()
		enc, err := el.Encoder("")
		if err != nil {
			t.Fatal(err)
		}
		for b := uint64(0); b < 1<<32; b += 0x1001 {
			x := math.Float32frombits(uint32(b))
			if x != x {
				continue
			}
			if got, want := floatxUnpacked(x, ebits, mbits), enc(x); got != want {
				t.Fatalf("%s %v (%#08x): torchao %#x, satfinite %#x", el.Name, x, uint32(b), got, want)
			}
		}
	}
}

func TestLookupTorchAO(t *testing.T) {
	for _, p := range TorchAOProfiles() {
		got, err := LookupTorchAO(p.Name())
		if err != nil || got != p {
			t.Errorf("LookupTorchAO(%q) = %v, %v", p.Name(), got.Name(), err)
		}
	}
	if _, err := LookupTorchAO("torchao-0.18-nearest-cpu"); err == nil {
		t.Error("an unknown profile was accepted")
	}
	if _, err := (TorchAO{Mode: e8m0.Floor}).Quantize(make([]float32, 32), 1, 32, Dim0, E4M3); err == nil {
		t.Error("the OCP floor mode was accepted as a torchao mode")
	}
	if _, err := (TorchAO{Mode: e8m0.TorchAO017Floor}).Quantize(make([]float32, 32), 1, 32, Dim0, INT8); err == nil {
		t.Error("INT8, which to_mx has not, was accepted")
	}
}
