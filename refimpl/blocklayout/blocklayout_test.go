package blocklayout

import (
	"bytes"
	"testing"
)

func seq(n int) []uint8 {
	s := make([]uint8, n)
	for i := range s {
		s[i] = uint8(i*7 + 1)
	}
	return s
}

// TestRoundTrips: Read inverts Place for every layout on shapes larger
// than one tile each way and aligned to neither, and the tiled layouts
// are bijections onto their unpadded bytes (no two scales share a byte).
func TestRoundTrips(t *testing.T) {
	for _, l := range Layouts() {
		for _, sh := range [][2]int{{1, 1}, {129, 9}, {200, 13}, {257, 5}, {13, 3}} {
			rows, cols := sh[0], sh[1]
			s := seq(rows * cols)
			p, err := l.Place(s, rows, cols)
			if err != nil {
				t.Fatal(err)
			}
			if len(p) != l.Len(rows, cols) {
				t.Fatalf("%s %v: %d bytes, want %d", l.Name, sh, len(p), l.Len(rows, cols))
			}
			seen := map[int]bool{}
			for m := 0; m < rows; m++ {
				for k := 0; k < cols; k++ {
					o := l.Offset(m, k, cols)
					if seen[o] {
						t.Fatalf("%s %v: two scales at byte %d", l.Name, sh, o)
					}
					seen[o] = true
				}
			}
			back, err := l.Read(p, rows, cols)
			if err != nil || !bytes.Equal(back, s) {
				t.Fatalf("%s %v: round trip failed (%v)", l.Name, sh, err)
			}
		}
	}
}

// TestOffsets pins the layouts to their sources' formulas.
func TestOffsets(t *testing.T) {
	cases := []struct {
		l          Layout
		m, k, cols int
		want       int
	}{
		{Swizzle128x4, 0, 0, 9, 0},
		{Swizzle128x4, 1, 0, 9, 16},
		{Swizzle128x4, 32, 0, 9, 4},
		{Swizzle128x4, 0, 5, 9, 512 + 1},
		{Swizzle128x4, 130, 2, 9, 3*512 + 2*16 + 2},
		{Swizzle8x4, 9, 5, 9, 1*3*32 + 1*32 + 1*4 + 1},
		{Linear, 3, 4, 9, 31},
	}
	for _, c := range cases {
		if got := c.l.Offset(c.m, c.k, c.cols); got != c.want {
			t.Errorf("%s.Offset(%d, %d, %d) = %d, want %d", c.l.Name, c.m, c.k, c.cols, got, c.want)
		}
	}
	if r, c := Swizzle128x4.PaddedShape(130, 9); r != 256 || c != 12 {
		t.Errorf("128x4 padded shape of [130, 9] = [%d, %d]", r, c)
	}
	if r, c := Swizzle8x4.PaddedShape(130, 9); r != 136 || c != 12 {
		t.Errorf("8x4 padded shape of [130, 9] = [%d, %d]", r, c)
	}
}

// TestPaddingIsZero: padding bytes are written as zero codes.
func TestPaddingIsZero(t *testing.T) {
	p, _ := Swizzle128x4.Place(bytes.Repeat([]byte{0x7f}, 130*9), 130, 9)
	n := 0
	for _, b := range p {
		if b == 0x7f {
			n++
		} else if b != 0 {
			t.Fatalf("padding byte %#x", b)
		}
	}
	if n != 130*9 {
		t.Errorf("%d scales placed, want %d", n, 130*9)
	}
}

func TestErrors(t *testing.T) {
	if _, err := Swizzle128x4.Place(make([]uint8, 5), 2, 3); err == nil {
		t.Error("short scales accepted")
	}
	if _, err := Swizzle128x4.Read(make([]uint8, 5), 2, 3); err == nil {
		t.Error("short buffer accepted")
	}
	if _, err := Linear.Place(nil, -1, 2); err == nil {
		t.Error("negative shape accepted")
	}
	if _, err := Lookup("9x9"); err == nil {
		t.Error("unknown layout accepted")
	}
}
