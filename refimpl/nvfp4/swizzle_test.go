package nvfp4

import (
	"strings"
	"testing"
)

// TestSwizzleOffset checks offsets computed by hand from the formula
// ((m/128)*nKt + k/4)*512 + (m%32)*16 + ((m/32)%4)*4 + k%4 (formats.md;
// vLLM, torchao to_blocked and CUTLASS agree).
func TestSwizzleOffset(t *testing.T) {
	cases := []struct{ m, k, sfCols, want int }{
		{0, 0, 4, 0},
		{0, 1, 4, 1},
		{0, 3, 4, 3},
		{1, 0, 4, 16},
		{31, 0, 4, 496},
		{32, 0, 4, 4},
		{33, 2, 4, 16 + 4 + 2},
		{64, 0, 4, 8},
		{96, 3, 4, 12 + 3},
		{127, 3, 4, 511},
		{128, 0, 4, 512},
		{0, 4, 8, 512},
		{128, 5, 8, 3*512 + 1},
		{130, 6, 6, 3*512 + 2*16 + 2},
		{0, 0, 1, 0},
		{200, 0, 1, 512 + (200%32)*16 + ((200/32)%4)*4},
	}
	for _, c := range cases {
		if got := SwizzleOffset(c.m, c.k, c.sfCols); got != c.want {
			t.Errorf("SwizzleOffset(%d, %d, %d) = %d, want %d", c.m, c.k, c.sfCols, got, c.want)
		}
	}
}

func TestSwizzleRoundTrip(t *testing.T) {
	for _, sh := range [][2]int{{1, 1}, {130, 6}, {128, 4}, {256, 8}, {3, 5}, {0, 0}} {
		rows, cols := sh[0], sh[1]
		sc := make([]uint8, rows*cols)
		for i := range sc {
			sc[i] = uint8(i*7 + 1)
		}
		sw, err := Swizzle(sc, rows, cols)
		if err != nil {
			t.Fatal(err)
		}
		if len(sw) != SwizzledLen(rows, cols) {
			t.Fatalf("%v: len %d, want %d", sh, len(sw), SwizzledLen(rows, cols))
		}
		// Every position is either a scale or zero padding, and the
		// positions of distinct scales are distinct (a permutation into the
		// padded buffer).
		seen := map[int]bool{}
		for m := 0; m < rows; m++ {
			for k := 0; k < cols; k++ {
				o := SwizzleOffset(m, k, cols)
				if seen[o] {
					t.Fatalf("%v: offset %d used twice", sh, o)
				}
				seen[o] = true
			}
		}
		for o, b := range sw {
			if !seen[o] && b != 0 {
				t.Errorf("%v: padding byte %d = %#x, want 0", sh, o, b)
			}
		}
		back, err := Unswizzle(sw, rows, cols)
		if err != nil {
			t.Fatal(err)
		}
		for i := range sc {
			if back[i] != sc[i] {
				t.Fatalf("%v: round trip differs at %d", sh, i)
			}
		}
	}
}

func TestSwizzleErrors(t *testing.T) {
	if _, err := Swizzle(make([]uint8, 5), 2, 3); err == nil || !strings.Contains(err.Error(), "do not fill") {
		t.Errorf("Swizzle bad length: %v", err)
	}
	if _, err := Unswizzle(make([]uint8, 511), 1, 1); err == nil || !strings.Contains(err.Error(), "want 512") {
		t.Errorf("Unswizzle bad length: %v", err)
	}
	if _, err := Swizzle(nil, -1, 4); err == nil {
		t.Error("negative rows accepted")
	}
}
