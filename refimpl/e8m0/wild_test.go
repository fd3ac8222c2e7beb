package e8m0

import (
	"math"
	"testing"
)

// TestWildScales pins each wild rule to values its source states or that
// follow from its code.
func TestWildScales(t *testing.T) {
	bits := math.Float32frombits
	cases := []struct {
		name      string
		mode      ScaleMode
		amax      float32
		emax      int
		max       float32
		want, ocp uint8
	}{
		// vllm-project/vllm#43557's table: old biased_exp(vecMax/6), fixed biased_exp(vecMax)-2.
		{"rfloor 2.7", RFloor, 2.7, 2, 6, 125, 126},
		{"rfloor 5.5", RFloor, 5.5, 2, 6, 126, 127},
		{"rfloor 1.2", RFloor, 1.2, 2, 6, 124, 125},
		{"vllm-0.75 2.7", VLLM075, 2.7, 2, 6, 126, 126},
		{"vllm-0.75 1.75 rounds up", VLLM075, 1.75, 2, 6, 126, 125},
		{"vllm-0.75 1.7499999", VLLM075, bits(0x3fdfffff), 2, 6, 125, 125},
		{"vllm-0.75 E4M3 1.75*2^8", VLLM075, 448, 8, 448, 128, 127},
		// FlyDSL#590: amax/7.5 rounded half up lands one below even for amax = 2^k.
		{"flydsl-nearest 1.0 E2M3", RoundHalfUp, 1, 2, 7.5, 124, 125},
		{"flydsl-nearest 1.5*7.5", RoundHalfUp, 11.25, 2, 7.5, 128, 128},
		{"aiter-halfup 1.5", AiterHalfUp, 1.5, 2, 7.5, 126, 125},
		{"aiter-halfup 1.4999999", AiterHalfUp, bits(0x3fbfffff), 2, 7.5, 125, 125},
		// MLX: round(log2(amax/448)); 448*1.4 -> log2 1.4 = 0.485 -> 0; 448*1.42 -> 1.
		{"mlx-nearest below sqrt2", MLXNearest, 448 * 1.4, 8, 448, 127, 128},
		{"mlx-nearest above sqrt2", MLXNearest, 448 * 1.42, 8, 448, 128, 128},
		{"mlx-nearest zero", MLXNearest, 0, 8, 448, 0, 0},
		{"trainium-2x 1.0", TwiceOCP, 1, 8, 448, 120, 119},
		{"trainium-2x 448", TwiceOCP, 448, 8, 448, 128, 127},
		// Just below 2: bf16 rounds it to 2, doubling the scale.
		{"ascend-bf16 just below 2", BF16Amax, bits(0x3fffffff), 2, 6, 126, 125},
		{"ascend-bf16 1.5", BF16Amax, 1.5, 2, 6, 125, 125},
		// microxcaling: float32 log2 of 2^20*(1-2^-24) rounds to 20.
		{"microxcaling just below 2^20", Log2Floor, bits(0x497fffff), 2, 6, 145, 144},
		{"microxcaling just below 1", Log2Floor, bits(0x3f7fffff), 2, 6, 124, 124},
		{"microxcaling 0", Log2Floor, 0, 2, 6, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := SharedScale(c.amax, c.mode, c.emax, c.max); got != c.want {
				t.Errorf("SharedScale(%g (%#08x), %s) = %d, want %d", c.amax, math.Float32bits(c.amax), c.mode.Name, got, c.want)
			}
			if got := SharedScale(c.amax, Floor, c.emax, c.max); got != c.ocp {
				t.Errorf("OCP floor of %g = %d, want %d", c.amax, got, c.ocp)
			}
		})
	}
}

// TestWildNaN: every rule gives 0xFF for a NaN or infinite amax.
func TestWildNaN(t *testing.T) {
	for _, m := range WildScaleModes() {
		for _, a := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
			if got := SharedScale(a, m, 2, 6); got != NaN {
				t.Errorf("%s(%g) = %#x, want 0xFF", m.Name, a, got)
			}
		}
	}
}

// TestRFloorReciprocal: for E2M1 and every float32 mantissa at a few
// exponents, the exponent of amax/6 equals that of amax*float32(1/6)
// (vLLM's pre-#43557 vecMax * rcp(6), with a correctly rounded
// reciprocal), so RFloor models that kernel.
func TestRFloorReciprocal(t *testing.T) {
	if testing.Short() {
		t.Skip("2^23 mantissas at 4 exponents")
	}
	rcp := float32(1) / 6
	for _, e := range []uint32{1, 100, 127, 200} {
		for m := uint32(0); m < 1<<23; m++ {
			a := math.Float32frombits(e<<23 | m)
			if math.Float32bits(a/6)>>23 != math.Float32bits(a*rcp)>>23 {
				t.Fatalf("amax %#08x: a/6 and a*rcp(6) have different exponents", e<<23|m)
			}
		}
	}
}

// TestVLLM075IsEvenForE2M1: the 0.75 threshold is torchao's EVEN for
// E2M1 (half an E2M1 ulp is 1<<21), and differs from it for E4M3.
func TestVLLM075IsEvenForE2M1(t *testing.T) {
	for _, e := range []uint32{1, 127, 250} {
		for m := uint32(0); m < 1<<23; m += 97 {
			a := math.Float32frombits(e<<23 | m)
			if got, want := SharedScale(a, VLLM075, 2, 6), SharedScale(a, Even, 2, 6); got != want {
				t.Fatalf("amax %#08x: vllm-0.75 %d, even %d", e<<23|m, got, want)
			}
		}
	}
	// 1.9 = 1.111..b: E4M3 even (3 mantissa bits, max 1.111b*2^8) keeps it; 0.75 rounds up.
	if a, b := SharedScale(1.9, VLLM075, 8, 480), SharedScale(1.9, Even, 8, 480); a == b {
		t.Errorf("vllm-0.75 and even agree on 1.9 for E4M3 (%d)", a)
	}
}

func TestLookupAnyScaleMode(t *testing.T) {
	for _, m := range append(ScaleModes(), WildScaleModes()...) {
		got, err := LookupAnyScaleMode(m.Name)
		if err != nil || got.Name != m.Name {
			t.Errorf("LookupAnyScaleMode(%q) = %v, %v", m.Name, got.Name, err)
		}
		if m.Source == "" || m.Summary == "" {
			t.Errorf("%s: missing source or summary", m.Name)
		}
	}
	if _, err := LookupAnyScaleMode("nope"); err == nil {
		t.Error("unknown mode accepted")
	}
}

// TestScaleRulesDistinct guards SharedScale's dispatch: every mode of the
// three lists has its own rule, so no mode computes another's scale (two
// const blocks once numbered the wild and library rules alike, and the
// wild modes ran the torchao ones).
func TestScaleRulesDistinct(t *testing.T) {
	seen := map[scaleRule]string{}
	all := append(append(ScaleModes(), LibraryScaleModes()...), WildScaleModes()...)
	for _, m := range all {
		if prev, ok := seen[m.rule]; ok {
			t.Errorf("%s and %s share rule %d", prev, m.Name, m.rule)
		}
		seen[m.rule] = m.Name
	}
	for _, m := range WildScaleModes() {
		if m.rule < firstWild {
			t.Errorf("%s: rule %d below firstWild %d", m.Name, m.rule, firstWild)
		}
	}
	for _, m := range LibraryScaleModes() {
		if m.rule < scaleAOFloor || m.rule >= firstWild {
			t.Errorf("%s: rule %d outside the library range [%d, %d)", m.Name, m.rule, scaleAOFloor, firstWild)
		}
	}
}
