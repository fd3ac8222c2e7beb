package catalog

import (
	"fmt"
	"math"
	"testing"

	"github.com/bitexact/bitexact/refimpl/unary"
)

func TestValidate(t *testing.T) {
	if err := Validate(); err != nil {
		t.Fatal(err)
	}
	if s := Skipped(); len(s) > 0 {
		t.Logf("%d catalog cases have no registered op yet (first %s: %s)", len(s), s[0].Name, s[0].Op)
	}
	ins, cs := Registered()
	all, allCases := All()
	if len(cs)+len(Skipped()) != len(allCases) || len(ins) > len(all) || len(cs) == 0 {
		t.Fatalf("Registered: %d input sets and %d cases of %d and %d, %d skipped", len(ins), len(cs), len(all), len(allCases), len(Skipped()))
	}
}

// validate names the first broken reference of a family table.
func TestValidateErrors(t *testing.T) {
	in := func(n string) Inputs { return Inputs{Name: n} }
	cs := func(n, inputs string) Case { return Case{Name: n, Inputs: inputs} }
	for _, tc := range []struct {
		name  string
		ins   []Inputs
		cases []Case
		want  string
	}{
		{"ok", []Inputs{in("a"), in("b")}, []Case{cs("x", "a"), cs("y", "a")}, ""},
		{"duplicate input set", []Inputs{in("a"), in("a")}, nil, `duplicate input set "a"`},
		{"duplicate case", []Inputs{in("a")}, []Case{cs("x", "a"), cs("x", "a")}, `duplicate case "x"`},
		{"unknown input set", []Inputs{in("a")}, []Case{cs("x", "b")}, `case "x": unknown input set "b"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := validate(tc.ins, tc.cases)
			if got := fmt.Sprint(err); (tc.want == "" && err != nil) || (tc.want != "" && got != tc.want) {
				t.Fatalf("validate = %v, want %q", err, tc.want)
			}
		})
	}
}

// The E2M1 edge inputs hold every midpoint between E2M1 values
// (docs/rationale/fp4.md: 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5) and the
// classes every profile must be tested on.
func TestEdgesE2M1(t *testing.T) {
	c, err := unary.Lookup("e2m1/nvidia")
	if err != nil {
		t.Fatal(err)
	}
	class := map[uint32]string{}
	for _, e := range Edges(c) {
		if _, dup := class[e.Bits]; dup {
			t.Fatalf("input %#08x listed twice", e.Bits)
		}
		class[e.Bits] = e.Class
	}
	for _, tc := range []struct {
		x     float32
		class string
	}{
		{0.25, ClassMidpoint}, {0.75, ClassMidpoint}, {1.25, ClassMidpoint}, {1.75, ClassMidpoint},
		{2.5, ClassMidpoint}, {3.5, ClassMidpoint}, {5, ClassMidpoint}, {-5, ClassMidpoint},
		{6, ClassValue}, {-0.5, ClassValue}, {float32(math.Copysign(0, -1)), ClassValue},
		{math.Nextafter32(5, 6), ClassMidpointUlp}, {math.Nextafter32(5, 0), ClassMidpointUlp},
		{7, ClassOverflow}, {math.Nextafter32(7, 8), ClassOverflow}, {8, ClassOverflow}, {12, ClassOverflow},
		{math.MaxFloat32, ClassOverflow},
		{math.Float32frombits(1), ClassValueUlp}, // Nextafter(0, +Inf) comes first as value±1ulp
		{math.Float32frombits(0x807fffff), ClassSubnormal},
		{float32(math.Inf(-1)), ClassInf},
		{math.Float32frombits(0xffc00000), ClassNaN}, {math.Float32frombits(0x7f800001), ClassNaN},
	} {
		if got := class[math.Float32bits(tc.x)]; got != tc.class {
			t.Errorf("input %v (%#08x): class %q, want %q", tc.x, math.Float32bits(tc.x), got, tc.class)
		}
	}
}

func TestMagnitudes(t *testing.T) {
	for _, tc := range []struct {
		conv       string
		n          int
		first, max float32
	}{
		{"e2m1/nvidia", 8, 0, 6},
		{"e4m3/satfinite", 127, 0, 448},   // 0x00..0x7e
		{"e5m2/satfinite", 124, 0, 57344}, // 0x00..0x7b
		{"e8m0/rz", 255, 0x1p-127, 0x1p127},
		{"fp16/rne", 31744, 0, 65504},
	} {
		c, err := unary.Lookup(tc.conv)
		if err != nil {
			t.Fatal(err)
		}
		m := magnitudes(c)
		if len(m) != tc.n || m[0] != tc.first || m[len(m)-1] != tc.max {
			t.Errorf("%s: %d magnitudes %v..%v, want %d %v..%v", tc.conv, len(m), m[0], m[len(m)-1], tc.n, tc.first, tc.max)
		}
	}
}
