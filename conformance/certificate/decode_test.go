package certificate

import (
	"testing"

	"github.com/bitexact/bitexact/refimpl/tensor"
)

func TestDecodeElement(t *testing.T) {
	for _, tc := range []struct {
		name    string
		dtype   tensor.DType
		logical string
		b       []byte
		want    string
	}{
		{"e4m3 max", tensor.U8, "e4m3", []byte{0x7e}, "0x7e = 448 [s=0 e=1111 m=110]"},
		{"e4m3 NaN", tensor.U8, "e4m3", []byte{0xff}, "0xff = NaN [s=1 e=1111 m=111]"},
		{"e5m2 -Inf", tensor.U8, "e5m2", []byte{0xfc}, "0xfc = -Inf [s=1 e=11111 m=00]"},
		{"e2m1 -0", tensor.U8, "e2m1", []byte{0x08}, "0x08 = -0 [s=1 e=00 m=0]"},
		{"e2m1x2", tensor.U8, "e2m1x2", []byte{0x8f}, "0x8f = lo -6, hi -0 [lo: s=1 e=11 m=1; hi: s=1 e=00 m=0]"},
		{"e8m0", tensor.U8, "e8m0", []byte{0x7f}, "0x7f = 1 [e=01111111 (2^0)]"},
		{"fp16", tensor.F16, "", []byte{0x00, 0x3c}, "0x3c00 = 1 [s=0 e=01111 m=0000000000]"},
		{"bf16", tensor.BF16, "", []byte{0xc0, 0xbf}, "0xbfc0 = -1.5 [s=1 e=01111111 m=1000000]"},
		{"f32", tensor.F32, "", []byte{0x01, 0x00, 0xc0, 0x7f}, "0x7fc00001 = NaN [s=0 e=11111111 m=10000000000000000000001]"},
		{"i32 nibbles", tensor.I32, "", []byte{0x21, 0x43, 0x65, 0x87}, "0x87654321 = -2023406815 [nibbles 7..0: 8 7 6 5 4 3 2 1]"},
		{"plain byte", tensor.U8, "", []byte{0x05}, "0x05 = 5 [byte 00000101]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DecodeElement(tc.dtype, tc.logical, tc.b).String(); got != tc.want {
				t.Errorf("DecodeElement = %q, want %q", got, tc.want)
			}
		})
	}
}
