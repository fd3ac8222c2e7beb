package fp8

import (
	"math"
	"testing"
)

// TestMLDtypesE5M2: ml_dtypes' float8_e5m2 is nosat except that every NaN
// becomes 0x7e with its sign (recorded over all 2^32 inputs:
// conformance/harness/mldtypes).
func TestMLDtypesE5M2(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   uint32
		want uint8
	}{
		{"+qNaN", 0x7fc00000, 0x7e},
		{"-qNaN", 0xffc00000, 0xfe},
		{"+sNaN", 0x7f800001, 0x7e},
		{"payload in the top bits", 0x7fe00000, 0x7e},
		{"+Inf", 0x7f800000, 0x7c},
		{"overflow", 0x47800000, 0x7c},
		{"1.5", 0x3fc00000, 0x3e},
	} {
		x := math.Float32frombits(tc.in)
		if got := E5M2.Encode(x, MLDtypes); got != tc.want {
			t.Errorf("%s: %#02x, want %#02x", tc.name, got, tc.want)
		}
		if tc.in&0x7fffffff <= 0x7f800000 {
			if got, nosat := E5M2.Encode(x, MLDtypes), E5M2.Encode(x, NoSat); got != nosat {
				t.Errorf("%s: %#02x, nosat gives %#02x: they differ only on NaN", tc.name, got, nosat)
			}
		}
	}
	if MLDtypes.Has("e4m3") || !MLDtypes.Has("e5m2") {
		t.Error("ml_dtypes is an e5m2 profile only (ml_dtypes' e4m3fn is nosat)")
	}
}
