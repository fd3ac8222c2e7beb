package awq

import (
	"strings"
	"testing"
)

// TestAutoAWQRepackOverflow pins the words AutoAWQ's from_linear stores for
// one [2][8] weight (G = 2) whose column col holds the two given values
// and whose other columns are zero (those repack to nibble 0). With a
// range rounding to 65504 the scale is 4368 (0x6C44) and 15*4368 = 65520
// rounds to Inf: the re-derived nibble of an element is then Inf or NaN,
// and the stored word is the platform's int32 cast of it, shifted into the
// column's nibble slot without a mask: autoawq (CUDA) saturates,
// autoawq-x86 gives 0x80000000. A quantizer naming no cast refuses.
func TestAutoAWQRepackOverflow(t *testing.T) {
	tests := []struct {
		name       string
		col        int
		lo, hi     uint16 // row 0 and row 1 of column col (fp16 bits)
		x86, cuda  [2]uint32
		overflowed bool
	}{
		// z = 15: row 0 (u = 0) repacks as -Inf + Inf = NaN, row 1 (u = 15)
		// as 0 + Inf = Inf. Column 0 is nibble slot 0.
		{"-65504..0 in slot 0", 0, 0xFBFF, 0x0000, [2]uint32{0x80000000, 0x80000000}, [2]uint32{0, 0x7FFFFFFF}, true},
		// Column 2 is slot 1: 0x80000000 << 4 is shifted out, 0x7FFFFFFF << 4
		// fills every bit from 4 up.
		{"-65504..0 in slot 1", 2, 0xFBFF, 0x0000, [2]uint32{0, 0}, [2]uint32{0, 0xFFFFFFF0}, true},
		// z = 0: the maximum has u = 15 and w_dq = 15*4368 = Inf.
		{"0..65504 in slot 0", 0, 0x0000, 0x7BFF, [2]uint32{0, 0x80000000}, [2]uint32{0, 0x7FFFFFFF}, true},
		// Column 7 is slot 7: only the top nibble is left of a shifted cast.
		{"0..65504 in slot 7", 7, 0x0000, 0x7BFF, [2]uint32{0, 0}, [2]uint32{0, 0xF0000000}, true},
		// Neither end near 65504, yet z = 8 (-32752/4368 = -7.498 rounds to
		// fp16 -7.5, then to even -8) and the maximum has u = 15, whose
		// repack 7*4368 + 8*4368 = 65520 rounds to Inf.
		{"-32752..32752", 0, 0xF7FF, 0x77FF, [2]uint32{0, 0x80000000}, [2]uint32{0, 0x7FFFFFFF}, true},
		// Range 65504 with min = -6.5 s exactly: z = 6 (a tie, to even) and
		// the maximum 37112/4368 = 8.4963 rounds to fp16 8.5, then to 8:
		// u = 14, repack 34944 + 26208 = 61152, clean.
		{"-28392..37112 clean", 0, 0xF6EE, 0x7888, [2]uint32{0, 14}, [2]uint32{0, 14}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := make([]uint16, 2*8)
			w[tc.col], w[8+tc.col] = tc.lo, tc.hi
			for _, p := range []struct {
				qz   Quantizer
				want [2]uint32
			}{{AutoAWQX86, tc.x86}, {AutoAWQ, tc.cuda}} {
				q, err := Quantize(w, 2, 8, 2, p.qz)
				if err != nil {
					t.Fatal(err)
				}
				if q.Scales[tc.col] != 0x6C44 {
					t.Fatalf("%s: scale %#04x, want 0x6c44 (4368)", p.qz.Name, q.Scales[tc.col])
				}
				words, _, err := q.PackAutoAWQ()
				if err != nil {
					t.Fatal(err)
				}
				for r := range words {
					if uint32(words[r]) != p.want[r] {
						t.Errorf("%s row %d: word %#08x, want %#08x", p.qz.Name, r, uint32(words[r]), p.want[r])
					}
				}
			}
			noCast := Quantizer{Name: "no-cast", Scheme: AsymmetricF16}
			_, err := Quantize(w, 2, 8, 2, noCast)
			if tc.overflowed != (err != nil) {
				t.Fatalf("no cast: error %v, want one: %v", err, tc.overflowed)
			}
			if err != nil && !strings.Contains(err.Error(), "autoawq-x86") {
				t.Errorf("no cast: error %q does not name the platform profiles", err)
			}
		})
	}
}

// TestDequantizeKernels pins the one element rule where vLLM's CUDA and
// triton AWQ dequantizations differ, the sign of a zero product, and where
// they agree (rounding, overflow, NaN).
func TestDequantizeKernels(t *testing.T) {
	tests := []struct {
		name         string
		d            int
		s            uint16
		cuda, triton uint16
	}{
		{"u = z, s negative", 0, 0xBC00, 0x0000, 0x8000},
		{"u = z, s positive", 0, 0x3C00, 0x0000, 0x0000},
		{"u < z, s = +0", -3, 0x0000, 0x0000, 0x8000},
		{"u > z, s = -0", 3, 0x8000, 0x0000, 0x8000},
		{"u < z, s = -0", -1, 0x8000, 0x0000, 0x0000},
		{"ordinary product", -7, 0x3555, 0xC0AA, 0xC0AA},            // -7 * 0.33325 = -2.33276 -> 0xc0aa
		{"overflow to Inf", 15, 0x7BFF, 0x7C00, 0x7C00},             // 15 * 65504
		{"Inf times zero", 0, 0x7C00, NaNBits, NaNBits},             // 0 * Inf
		{"NaN scale, payload dropped", 2, 0xFC01, NaNBits, NaNBits}, // canonical 0x7fff
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := mulF16(tc.d, tc.s); got != tc.cuda {
				t.Errorf("cuda: %d * %#04x = %#04x, want %#04x", tc.d, tc.s, got, tc.cuda)
			}
			if got := mulF16Triton(tc.d, tc.s); got != tc.triton {
				t.Errorf("triton: %d * %#04x = %#04x, want %#04x", tc.d, tc.s, got, tc.triton)
			}
		})
	}
	if _, err := KernelByName("hip"); err == nil || !strings.Contains(err.Error(), "cuda, triton") {
		t.Errorf("unknown kernel: %v", err)
	}
}
