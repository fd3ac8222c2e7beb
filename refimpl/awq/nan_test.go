package awq

import (
	"testing"

	"github.com/bitexact/bitexact/refimpl/nanconv"
)

// TestWithNaN: a NaN scale's sign and payload under propagate, an infinite
// scale times u - z = 0 as x86's default NaN, every NaN 0x7FFF under
// canonical and cuda; numbers unchanged.
func TestWithNaN(t *testing.T) {
	for _, tc := range []struct {
		name    string
		conv    nanconv.Convention
		u, z    uint8
		s, want uint16
	}{
		{"canonical NaN scale", nanconv.Canonical, 3, 0, 0xFE91, 0x7FFF},
		{"cuda NaN scale", nanconv.CUDA, 3, 0, 0xFE91, 0x7FFF},
		{"propagate NaN scale", nanconv.Propagate, 3, 0, 0xFE91, 0xFE91},
		{"propagate signalling scale quieted", nanconv.Propagate, 3, 0, 0x7C01, 0x7E01},
		{"propagate 0 * inf", nanconv.Propagate, 5, 5, 0x7C00, 0xFE00},
		{"x86 NaN scale", nanconv.X86, 3, 0, 0x7E00, 0xFE00},
		{"cuda-sign NaN scale", nanconv.CUDASign, 3, 0, 0xFE00, 0xFFFF},
		{"propagate number", nanconv.Propagate, 3, 1, 0x3C00, 0x4000}, // (3-1) * 1.0 = 2.0
	} {
		for _, k := range Kernels() {
			got, err := k.WithNaN(tc.conv).DequantizeUnpacked([]uint8{tc.u}, []uint8{tc.z}, []uint16{tc.s}, 1, 1, 1)
			if err != nil {
				t.Fatal(err)
			}
			if got[0] != tc.want {
				t.Errorf("%s, kernel %s: %#04x, want %#04x", tc.name, k.Name, got[0], tc.want)
			}
		}
	}
}
