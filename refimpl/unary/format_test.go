package unary

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		format string
		code   uint32
		want   string
	}{
		{"e4m3", 0x7e, "0x7e = 448 (s=0 e=1111 m=110)"},
		{"e4m3", 0x01, "0x01 = 0.001953125 (s=0 e=0000 m=001)"},
		{"e4m3", 0xff, "0xff = -NaN(0xffc00000) (s=1 e=1111 m=111)"},
		{"e2m1", 0x8, "0x8 = -0 (s=1 e=00 m=0)"},
		{"e2m1", 0x7, "0x7 = 6 (s=0 e=11 m=1)"},
		{"e5m2", 0xfc, "0xfc = -Inf (s=1 e=11111 m=00)"},
		{"e8m0", 0xfe, "0xfe = 1.7014118e+38 (e=11111110 (2^127))"},
		{"e8m0", 0x00, "0x00 = 5.877472e-39 (e=00000000 (2^-127))"},
		{"bf16", 0x3f80, "0x3f80 = 1 (s=0 e=01111111 m=0000000)"},
		{"fp16", 0x0001, "0x0001 = 5.9604645e-08 (s=0 e=00000 m=0000000001)"},
	} {
		t.Run(fmt.Sprintf("%s/%#x", tc.format, tc.code), func(t *testing.T) {
			f, err := LookupFormat(tc.format)
			if err != nil {
				t.Fatal(err)
			}
			if got := f.Describe(tc.code); got != tc.want {
				t.Errorf("Describe = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestFieldsGiveDecode: every finite code's value, computed from its
// fields with the format's widths and bias, is the format's Decode. So
// the widths are those of the decoders, not a second account of them.
func TestFieldsGiveDecode(t *testing.T) {
	for _, f := range Formats() {
		fl := f.Fields
		n := 0
		for code := uint32(0); code < 1<<fl.Bits(); code++ {
			v := float64(f.Decode(code))
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			n++
			s, e, m := fl.Split(code)
			var want float64
			switch {
			case fl.Man == 0 && fl.Sign == 0: // E8M0: a power of two, no subnormals
				want = math.Ldexp(1, int(e)-fl.Bias)
			case e == 0:
				want = math.Ldexp(float64(m), 1-fl.Bias-fl.Man)
			default:
				want = math.Ldexp(float64(m|1<<fl.Man), int(e)-fl.Bias-fl.Man)
			}
			if s == 1 {
				want = -want
			}
			if v != want || math.Signbit(v) != math.Signbit(want) {
				t.Fatalf("%s code %#x: fields give %g, Decode %g", f.Name, code, want, v)
			}
		}
		if n == 0 {
			t.Errorf("%s: no finite code", f.Name)
		}
	}
}

func TestConversionFields(t *testing.T) {
	for _, c := range All() {
		f, err := LookupFormat(c.Format)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if c.Fields != f.Fields || c.Bits != f.Fields.Bits() {
			t.Errorf("%s: fields %+v (%d bits), format %+v", c.Name, c.Fields, c.Bits, f.Fields)
		}
	}
	// The error lists the known formats, the built-in ones first.
	const prefix = `unknown format "e3m3" (known: e2m1, e4m3, e5m2, e8m0, bf16, fp16, `
	if _, err := LookupFormat("e3m3"); err == nil || !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), Formats()[len(Formats())-1].Name+")") {
		t.Errorf("LookupFormat(e3m3): %v", err)
	}
}

func TestBinary(t *testing.T) {
	f := mustFormat("e8m0").Fields
	if s, e, m := f.Binary(0x81); s != "-" || e != "10000001" || m != "-" {
		t.Errorf("e8m0 0x81: %q %q %q", s, e, m)
	}
	if s, e, m := Float32Fields.Binary(0xbfc00001); s != "1" || e != "01111111" || m != "10000000000000000000001" {
		t.Errorf("float32 0xbfc00001: %q %q %q", s, e, m)
	}
}

func ExampleConversion_Describe() {
	c, _ := Lookup("e4m3/satfinite")
	fmt.Println(c.Describe(c.Encode(500)))
	fmt.Println(c.Describe(c.Encode(-0.1)))
	// Output:
	// 0x7e = 448 (s=0 e=1111 m=110)
	// 0x9d = -0.1015625 (s=1 e=0011 m=101)
}
