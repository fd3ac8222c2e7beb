package diagnose

import (
	"math"
	"testing"

	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/refimpl/e8m0"
	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/mxfp4"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// TestMXFP4ReciprocalEquivalent backs the claim that MXFP4 has no
// reciprocal class: for every E8M0 scale code, x * float32(1/2^E) and
// x / 2^E are the same float32 for x over every sign, exponent and a spread
// of mantissas (subnormal results included).
func TestMXFP4ReciprocalEquivalent(t *testing.T) {
	n := 0
	for code := 0; code < 0xFF; code++ {
		d := mxfp4.Pow2(code - 127)
		r := 1 / d
		if r != mxfp4.Pow2(127-code) {
			t.Fatalf("code %#02x: 1/2^%d = %v is not exact", code, code-127, r)
		}
		for e := uint32(0); e < 0xFF; e++ {
			for _, m := range []uint32{0, 1, 0x400000, 0x7fffff, 0x2aaaaa, 0x555555} {
				for _, s := range []uint32{0, 1 << 31} {
					x := math.Float32frombits(s | e<<23 | m)
					if a, b := x*r, x/d; math.Float32bits(a) != math.Float32bits(b) {
						t.Fatalf("code %#02x, x=%v: x*(1/d)=%v, x/d=%v", code, x, a, b)
					}
					n++
				}
			}
		}
	}
	t.Logf("x*(1/d) == x/d on %d (code, x) pairs", n)
}

// TestMXFP4ScaleRZ: the truncating E8M0 cast of amax/6 is
// floor(log2(amax/6)), which differs from the OCP floor mode
// (floor(log2(amax)) - 2) exactly where amax/2^floor(log2 amax) < 6, and
// the class names a kernel doing it on the golden inputs.
func TestMXFP4ScaleRZ(t *testing.T) {
	for _, tc := range []struct {
		amax  float32
		floor uint8 // e8m0.Floor's code
		rz    uint8
	}{
		{6, 127, 127},       // 6/2^2 = 1.5: both 2^0
		{7.5, 127, 127},     // amax/6 = 1.25
		{4, 127, 126},       // amax/6 = 0.667: 2^-1
		{12, 128, 128},      // amax/6 = 2
		{0.75, 124, 124},    // amax/6 = 0.125 = 2^-3; floor(log2 0.75) - 2 = -3
		{0.5, 124, 123},     // amax/6 = 0.0833: 2^-4
		{448 * 6, 136, 135}, // amax/6 = 448: floor(log2 448) = 8
	} {
		if got := e8m0.SharedScale(tc.amax, e8m0.Floor, mxfp4.EmaxElem, mxfp4.MaxElem); got != tc.floor {
			t.Errorf("amax %v: floor code %d, want %d", tc.amax, got, tc.floor)
		}
		x := make([]float32, 32)
		x[5] = -tc.amax
		out, ok, err := mxfp4RZ(nil, Task{Params: ops.Params{}, Inputs: ops.Tensors{"x": tensor.FromF32([]int{1, 32}, x)}})
		if err != nil || !ok {
			t.Fatalf("amax %v: ok=%v err=%v", tc.amax, ok, err)
		}
		if got := out["scales"].Data[0]; got != tc.rz {
			t.Errorf("amax %v: rz code %d, want %d", tc.amax, got, tc.rz)
		}
		// The element is scaled by the code's power of two and encoded as
		// the reference does: -amax/2^E under the nvidia profile.
		want := fp4.NVIDIA.Encode(-tc.amax * mxfp4.Pow2(127-int(tc.rz)))
		if got := out["packed"].Data[2] >> 4; got != want {
			t.Errorf("amax %v: element code %#x, want %#x", tc.amax, got, want)
		}
	}
	s, tasks := goldenTasks(t, "mxfp4", "mode=floor,profile=nvidia", func(s *suite.Suite, p ops.Params, in ops.Tensors) ops.Tensors {
		out, _, err := mxfp4RZ(s, Task{Params: p, Inputs: in})
		if err != nil {
			t.Fatal(err)
		}
		return out
	})
	mustClass(t, s, "mode=floor,profile=nvidia", tasks, "scale-cast:rz")
}

// TestFP16RZ pins the truncating fp16 cast on its edges.
func TestFP16RZ(t *testing.T) {
	for _, tc := range []struct {
		x    float32
		want uint16
	}{
		{1, 0x3C00},
		{1 + 1.0/1024 + 1.0/4096, 0x3C01}, // RNE rounds down too
		{1 + 1.0/1024*0.75, 0x3C00},       // RNE rounds up to 0x3C01
		{-(1 + 1.0/1024*0.75), 0xBC00},
		{65519, 0x7BFF}, // RNE gives 65504 too
		{65520, 0x7BFF}, // RNE gives Inf
		{1e9, 0x7BFF},
		{-1e9, 0xFBFF},
		{float32(math.Inf(1)), 0x7C00},
		{0x1p-25, 0x0000},   // RNE: tie to even 0
		{0x1.8p-24, 0x0001}, // RNE: 0x0002
		{0, 0},
	} {
		if got := fp16RZ(tc.x); got != tc.want {
			t.Errorf("fp16RZ(%v) = %#04x, want %#04x", tc.x, got, tc.want)
		}
		if v := half.DecodeFP16(fp16RZ(tc.x)); !math.IsInf(float64(tc.x), 0) && math.Abs(float64(v)) > math.Abs(float64(tc.x)) {
			t.Errorf("fp16RZ(%v) = %v is larger in magnitude", tc.x, v)
		}
	}
}

// TestAWQForgeSteps holds awqForgeSteps without a change to the forge
// quantizer on the golden set, and its two changes to their classes.
func TestAWQForgeSteps(t *testing.T) {
	steps := func(rz, rcp bool) func(*suite.Suite, ops.Params, ops.Tensors) ops.Tensors {
		return func(_ *suite.Suite, p ops.Params, in ops.Tensors) ops.Tensors {
			out, ok, err := awqForgeSteps(Task{Params: p, Inputs: in}, rz, rcp)
			if err != nil || !ok {
				t.Fatalf("awqForgeSteps: ok=%v err=%v", ok, err)
			}
			return out
		}
	}
	s, tasks := goldenTasks(t, "awq-quantize", "forge", steps(false, false))
	if d, err := Run(s, "forge", tasks); err != nil || d.Mismatches != 0 {
		t.Fatalf("forge written out: %d mismatches, err %v", d.Mismatches, err)
	}
	for _, tc := range []struct {
		name, class string
		rz, rcp     bool
	}{
		{"truncating scale cast", "scale-cast:rz", true, false},
		{"reciprocal element scale", "element-rule:mul-rcp-d", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, tasks := goldenTasks(t, "awq-quantize", "forge", steps(tc.rz, tc.rcp))
			mustClass(t, s, "forge", tasks, tc.class)
		})
	}
}

// TestDecodeTransforms pins the decoder classes on single codes.
func TestDecodeTransforms(t *testing.T) {
	dec := func(op string, params ops.Params, codes []uint8, class string) []uint32 {
		t.Helper()
		s := &suite.Suite{Spec: suite.Spec{Op: op}}
		in := ops.Tensors{"codes": tensor.FromU8([]int{len(codes)}, codes)}
		ref, err := ops.Run(op, params, in)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range Alternatives(s, "default") {
			if a.Class != class {
				continue
			}
			out, ok, err := a.Compute(s, Task{Params: params, Inputs: in, Reference: ref})
			if err != nil || !ok {
				t.Fatalf("%s %s: ok=%v err=%v", op, class, ok, err)
			}
			return out["x"].Bits32()
		}
		t.Fatalf("%s has no class %s", op, class)
		return nil
	}
	f := func(v float32) uint32 { return math.Float32bits(v) }
	for _, tc := range []struct {
		name, op, class string
		params          ops.Params
		codes           []uint8
		want            []uint32
	}{
		{"e2m1 exponent-0 codes rebased", "e2m1.decode", "subnormals-as-normal", ops.Params{},
			[]uint8{0x0, 0x1, 0x8, 0x9, 0x2}, []uint32{f(0.5), f(0.75), f(-0.5), f(-0.75), f(1)}},
		{"e4m3 NaN as 480", "fp8.decode", "nan-as-finite", ops.Params{"format": "e4m3"},
			[]uint8{0x7F, 0xFF, 0x7E}, []uint32{f(480), f(-480), f(448)}},
		{"e4m3 zero as 2^-7", "fp8.decode", "subnormals-as-normal", ops.Params{"format": "e4m3"},
			[]uint8{0x00, 0x81, 0x08}, []uint32{f(0x1p-7), f(-0x1.2p-7), f(0x1p-6)}},
		{"e5m2 infinity as 65536", "fp8.decode", "nan-as-finite", ops.Params{"format": "e5m2"},
			[]uint8{0x7C, 0xFF}, []uint32{f(65536), f(-0x1.cp16)}},
		{"-0 cleared", "fp8.decode", "negative-zero-cleared", ops.Params{"format": "e4m3"},
			[]uint8{0x80, 0x00, 0x81}, []uint32{0, 0, f(-0x1p-9)}},
		{"NaN sign cleared", "fp8.decode", "nan-sign-cleared", ops.Params{"format": "e4m3"},
			[]uint8{0xFF, 0x7F, 0xFE}, []uint32{0x7fc00000, 0x7fc00000, f(-448)}},
		{"E8M0 code 0 flushed", "e8m0.decode", "ftz-outputs", ops.Params{},
			[]uint8{0x00, 0x01, 0xFF}, []uint32{0, f(0x1p-126), 0x7fc00000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := dec(tc.op, tc.params, tc.codes, tc.class)
			for i := range tc.want {
				if got[i] != tc.want[i] {
					t.Errorf("code %#02x: %#08x, want %#08x", tc.codes[i], got[i], tc.want[i])
				}
			}
		})
	}
}

// TestSelectTiesHigher: a group with tied magnitudes keeps the later
// indices; a group without ties keeps what the reference keeps.
func TestSelectTiesHigher(t *testing.T) {
	codes := []uint8{2, 1, 0xA, 2, 7, 1, 0, 3}
	in := ops.Tensors{"codes": tensor.FromU8([]int{1, 8}, codes)}
	ref, err := ops.Run("sparse24.select", ops.Params{}, in)
	if err != nil {
		t.Fatal(err)
	}
	out, ok, err := selectTiesHigher(nil, Task{Params: ops.Params{}, Inputs: in, Reference: ref})
	if err != nil || !ok {
		t.Fatalf("ok=%v err=%v", ok, err)
	}
	// Group 0: |2| = |0xA| = |2| (1.0): lower-index keeps (0,2), the
	// mutant (2,3). Group 1: 7, 3 distinct: (0,3) both.
	if got, want := ref["meta"].Data, []uint8{0 | 2<<2, 0 | 3<<2}; string(got) != string(want) {
		t.Fatalf("reference meta %v, want %v", got, want)
	}
	if got, want := out["meta"].Data, []uint8{2 | 3<<2, 0 | 3<<2}; string(got) != string(want) {
		t.Errorf("meta %v, want %v", got, want)
	}
	if got, want := out["kept"].Data, []uint8{0, 0, 0xA, 2, 7, 0, 0, 3}; string(got) != string(want) {
		t.Errorf("kept %v, want %v", got, want)
	}
}

// TestLayoutVariantsBase: the reorder and swizzle written out for the
// layout classes, with no fault, equal the reference on the golden tasks,
// so each class differs from the reference by its one misreading.
func TestLayoutVariantsBase(t *testing.T) {
	for _, tc := range []struct {
		suite string
		run   func(s *suite.Suite, t Task) (ops.Tensors, bool, error)
	}{
		{"sparse24-reorder", func(s *suite.Suite, t Task) (ops.Tensors, bool, error) { return reorderAs(t, true, false) }},
		{"sparse24-reorder-i32", func(s *suite.Suite, t Task) (ops.Tensors, bool, error) { return reorderAs(t, true, false) }},
		{"nvfp4-swizzle", func(s *suite.Suite, t Task) (ops.Tensors, bool, error) { return swizzleAs(s, t, "") }},
		{"nvfp4-unswizzle", func(s *suite.Suite, t Task) (ops.Tensors, bool, error) { return swizzleAs(s, t, "") }},
	} {
		t.Run(tc.suite, func(t *testing.T) {
			s, tasks := goldenTasks(t, tc.suite, "default", func(s *suite.Suite, p ops.Params, in ops.Tensors) ops.Tensors {
				out, ok, err := tc.run(s, Task{Params: p, Inputs: in})
				if err != nil || !ok {
					t.Fatalf("ok=%v err=%v", ok, err)
				}
				return out
			})
			if d, err := Run(s, "default", tasks); err != nil || d.Mismatches != 0 {
				t.Errorf("%d mismatches, err %v", d.Mismatches, err)
			}
		})
	}
}
