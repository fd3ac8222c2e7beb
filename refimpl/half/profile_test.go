package half

import (
	"math"
	"testing"
)

func TestProfiles(t *testing.T) {
	for _, tc := range []struct {
		name       string
		p          Profile
		in         uint32
		bf16, fp16 uint16
	}{
		// Finite values round the same in both profiles.
		{"rne 1.5", RNE, 0x3fc00000, 0x3fc0, 0x3e00},
		{"canonical 1.5", CanonicalNaN, 0x3fc00000, 0x3fc0, 0x3e00},
		{"canonical -Inf", CanonicalNaN, 0xff800000, 0xff80, 0xfc00},
		// RNE keeps sign and top payload bits, quieted.
		{"rne +qNaN", RNE, 0x7fc00000, 0x7fc0, 0x7e00},
		{"rne -qNaN payload", RNE, 0xffc26b1e, 0xffc2, 0xfe13},
		// canonical-nan: CUDA's conversions write 0x7fff for any NaN
		// (torch 2.11 bf16 on the H100 wrote 0x7fff for these inputs;
		// conformance/harness/torch).
		{"canonical +qNaN", CanonicalNaN, 0x7fc00000, 0x7fff, 0x7fff},
		{"canonical -qNaN", CanonicalNaN, 0xffc00000, 0x7fff, 0x7fff},
		{"canonical sNaN", CanonicalNaN, 0x7f800001, 0x7fff, 0x7fff},
	} {
		x := math.Float32frombits(tc.in)
		if got := tc.p.EncodeBF16(x); got != tc.bf16 {
			t.Errorf("%s: bf16 %#04x, want %#04x", tc.name, got, tc.bf16)
		}
		if got := tc.p.EncodeFP16(x); got != tc.fp16 {
			t.Errorf("%s: fp16 %#04x, want %#04x", tc.name, got, tc.fp16)
		}
	}
	if _, err := LookupProfile("nope"); err == nil {
		t.Error("LookupProfile(nope): no error")
	}
}
