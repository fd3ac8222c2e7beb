package nanconv

import (
	"encoding/json"
	"math"
	"os"
	"strconv"
	"testing"
)

func f(b uint32) float32 { return math.Float32frombits(b) }

// TestBits: each convention's bits for a NaN of canonical bits 0xFFC00000
// (a signed canonical, as fp8.decode has) and carried bits 0xFFF00000.
func TestBits(t *testing.T) {
	for _, tc := range []struct {
		conv   Convention
		want   uint32
		want16 uint16
	}{
		{Canonical, 0xFFC00000, 0x7FFF},
		{CUDA, 0x7FFFFFFF, 0x7FFF},
		{CUDASign, 0xFFFFFFFF, 0xFFFF},
		{X86, 0xFFC00000, 0xFE00},
		{Propagate, 0xFFF00000, 0xFF80 | 0x7E00},
	} {
		t.Run(tc.conv.Name, func(t *testing.T) {
			if got := tc.conv.Bits(0xFFC00000, 0xFFF00000); got != tc.want {
				t.Errorf("Bits = %#08x, want %#08x", got, tc.want)
			}
			if got := tc.conv.Bits16(0x7FFF, 0xFFF00000); got != tc.want16 {
				t.Errorf("Bits16 = %#04x, want %#04x", got, tc.want16)
			}
			if c, err := Lookup(tc.conv.Name); err != nil || c != tc.conv {
				t.Errorf("Lookup(%q) = %v, %v", tc.conv.Name, c, err)
			}
			if tc.conv.Summary == "" || tc.conv.Source == "" {
				t.Error("no summary or source")
			}
		})
	}
	if _, err := Lookup("nvidia"); err == nil {
		t.Error("Lookup accepted an unknown convention")
	}
}

// TestArithmetic: Mul and Div give the correctly rounded result on numbers
// and, under propagate, carry the NaN operand quieted or x86's default NaN
// for an invalid step.
func TestArithmetic(t *testing.T) {
	inf := float32(math.Inf(1))
	for _, tc := range []struct {
		name string
		got  float32
		want uint32
	}{
		{"numbers", Propagate.Mul(1.5, 3, 0x7FC00000), math.Float32bits(4.5)},
		{"signalling operand quieted", Propagate.Mul(2, f(0x7F800001), 0x7FC00000), 0x7FC00001},
		{"negative payload kept", Propagate.Mul(f(0xFFA00000), 2, 0x7FC00000), 0xFFE00000},
		{"two NaN factors: the second", Propagate.Mul(f(0x7FC12345), f(0x7FC00001), 0x7FC00000), 0x7FC00001},
		{"two NaN quotient: the dividend", Propagate.Div(f(0x7FC12345), f(0x7FC00001), 0x7FC00000), 0x7FC12345},
		{"0*inf invalid", Propagate.Mul(0, inf, 0x7FC00000), X86Default},
		{"0/0 invalid", Propagate.Div(0, 0, 0x7FC00000), X86Default},
		{"cuda 0*inf", CUDA.Mul(0, inf, 0x7FC00000), CUDANaN},
		{"canonical NaN operand", Canonical.Div(f(0xFFF00000), 3, 0x7FC00000), 0x7FC00000},
		{"x86 NaN operand", X86.Mul(f(0x7FF00000), 3, 0x7FC00000), X86Default},
		{"cuda-sign keeps the sign", CUDASign.Mul(f(0xFFF00000), 3, 0x7FC00000), 0xFFFFFFFF},
	} {
		if got := math.Float32bits(tc.got); got != tc.want {
			t.Errorf("%s: %#08x, want %#08x", tc.name, got, tc.want)
		}
	}
	if got := CarriedFP8(0xFF, 3); got != 0xFFF00000 {
		t.Errorf("CarriedFP8(E4M3 0xFF) = %#08x, want 0xfff00000", got)
	}
	if got := CarriedFP8(0x7D, 2); got != 0x7FE00000 {
		t.Errorf("CarriedFP8(E5M2 0x7D) = %#08x, want 0x7fe00000 (0x7fa00000 made quiet)", got)
	}
	if got := CarriedFP16(0xFE91); got != 0xFFD22000 {
		t.Errorf("CarriedFP16(0xFE91) = %#08x, want 0xffd22000", got)
	}
}

// probe is conformance/harness/torch/nan-probe.json, what torch 2.11 wrote
// on the H200 machine's CPU and GPU (conformance/harness/torch/nanprobe.py).
type probe struct {
	Binary  map[string]map[string]string `json:"binary"`
	Invalid map[string]string            `json:"invalid_f32"`
	Inv16   map[string]string            `json:"invalid_f16"`
	E4M3    map[string]string            `json:"decode.e4m3fn"`
	E5M2    map[string]string            `json:"decode.e5m2"`
	E8M0    map[string]string            `json:"decode.e8m0fnu"`
}

func hex32(t *testing.T, s string) uint32 {
	t.Helper()
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		t.Fatal(err)
	}
	return uint32(v)
}

// TestProbe holds the conventions to the measurement they are named for:
// torch on the CPU follows propagate (its decoders and its arithmetic) and
// writes x86's default NaN for invalid operations; on the GPU every float
// operation writes CUDA's NaN, the E5M2 decode cuda-sign, and the E4M3 and
// E8M0 decodes, which are integer code, propagate.
func TestProbe(t *testing.T) {
	b, err := os.ReadFile("../../conformance/harness/torch/nan-probe.json")
	if err != nil {
		t.Fatal(err)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	dev := map[string]probe{}
	for _, d := range []string{"cpu", "cuda"} {
		var p probe
		if err := json.Unmarshal(all[d], &p); err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		dev[d] = p
	}
	decodes := func(d string, p probe, fmtName string, table map[string]string, manBits int, conv Convention) {
		if len(table) == 0 {
			t.Errorf("%s %s: no NaN codes recorded", d, fmtName)
		}
		for code, got := range table {
			c := hex32(t, code)
			carried := CarriedE8M0
			if manBits >= 0 {
				carried = CarriedFP8(uint8(c), manBits)
			}
			if want := conv.Bits(0, carried); hex32(t, got) != want {
				t.Errorf("%s %s decode of %s: torch %s, %s gives %#08x", d, fmtName, code, got, conv.Name, want)
			}
		}
	}
	cpu, gpu := dev["cpu"], dev["cuda"]
	decodes("cpu", cpu, "e4m3", cpu.E4M3, 3, Propagate)
	decodes("cpu", cpu, "e5m2", cpu.E5M2, 2, Propagate)
	decodes("cpu", cpu, "e8m0", cpu.E8M0, -1, Propagate)
	decodes("cuda", gpu, "e4m3", gpu.E4M3, 3, Propagate)
	decodes("cuda", gpu, "e5m2", gpu.E5M2, 2, CUDASign)
	decodes("cuda", gpu, "e8m0", gpu.E8M0, -1, Propagate)
	ops := map[string]func(c Convention, a float32) float32{
		"a*2t":          func(c Convention, a float32) float32 { return c.Mul(a, 2, 0) },
		"2t*a":          func(c Convention, a float32) float32 { return c.Mul(2, a, 0) },
		"a/3t":          func(c Convention, a float32) float32 { return c.Div(a, 3, 0) },
		"3t/a":          func(c Convention, a float32) float32 { return c.Div(3, a, 0) },
		"a*nan7fc00001": func(c Convention, a float32) float32 { return c.Mul(a, f(0x7FC00001), 0) },
		"nan7fc00001*a": func(c Convention, a float32) float32 { return c.Mul(f(0x7FC00001), a, 0) },
	}
	for name, op := range ops {
		for d, conv := range map[string]Convention{"cpu": Propagate, "cuda": CUDA} {
			res := dev[d].Binary[name]
			if len(res) == 0 {
				t.Fatalf("%s: no %s in the probe", d, name)
			}
			for in, got := range res {
				if want := math.Float32bits(op(conv, f(hex32(t, in)))); want != hex32(t, got) {
					t.Errorf("%s %s with a = %s: torch %s, %s gives %#08x", d, name, in, got, conv.Name, want)
				}
			}
		}
	}
	for _, name := range []string{"0*inf", "inf*0", "-0*inf", "inf-inf", "0/0", "inf/inf"} {
		if got := hex32(t, cpu.Invalid[name]); got != X86.Bits(0, 0) || got != Propagate.Bits(0, X86Default) {
			t.Errorf("cpu %s: torch %#08x, want x86's default NaN", name, got)
		}
		if got := hex32(t, gpu.Invalid[name]); got != CUDA.Bits(0, 0) {
			t.Errorf("cuda %s: torch %#08x, want CUDA's NaN", name, got)
		}
	}
	for name, got := range gpu.Inv16 {
		if uint16(hex32(t, got)) != CUDA.Bits16(0, 0) {
			t.Errorf("cuda fp16 %s: torch %s, want 0x7fff", name, got)
		}
	}
	for name, got := range cpu.Inv16 {
		if uint16(hex32(t, got)) != X86.Bits16(0, 0) {
			t.Errorf("cpu fp16 %s: torch %s, want 0xfe00", name, got)
		}
	}
}
