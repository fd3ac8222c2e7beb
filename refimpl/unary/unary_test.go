package unary

import (
	"math"
	"testing"

	"github.com/bitexact/bitexact/refimpl/internal/codetable"
)

// encodeRangeByEncode is EncodeRange as the loop over Encode that it
// replaces: the specification that the fast bodies must meet.
func encodeRangeByEncode(c Conversion, start uint32, out []byte) {
	w := c.Width()
	for i := 0; i+w <= len(out); i += w {
		v := c.Encode(math.Float32frombits(start + uint32(i/w)))
		out[i] = byte(v)
		if w == 2 {
			out[i+1] = byte(v >> 8)
		}
	}
}

// TestEncodeRangeEdges compares EncodeRange with Encode around every
// bucket boundary of the code tables in the ranges where the conversions'
// rounding boundaries lie, and across the wrap-around.
func TestEncodeRangeEdges(t *testing.T) {
	starts := []uint32{0xFFFFFF00} // wraps to 0
	for e := uint32(0); e < 0x200; e++ {
		starts = append(starts, e<<23-16, e<<23+(1<<22)-16) // 2^x and 1.5*2^x, both signs
	}
	for k := uint32(0); k < 1<<(32-codetable.BucketShift); k += 3 {
		starts = append(starts, k<<codetable.BucketShift-2)
	}
	for _, c := range All() {
		got := make([]byte, 32*c.Width())
		want := make([]byte, len(got))
		for _, s := range starts {
			c.EncodeRange(s, got)
			encodeRangeByEncode(c, s, want)
			for i := range got {
				if got[i] != want[i] {
					j := uint32(i / c.Width())
					t.Fatalf("%s: EncodeRange at %#08x gives byte %d = %#x, Encode gives %#x", c.Name, s+j, i%c.Width(), got[i], want[i])
				}
			}
		}
	}
}

// The tables behind EncodeRange are checked on all 2^32 inputs of every
// conversion by golden/exhaustive's TestExhaustiveNative, against Merkle
// digests committed before the tables existed; repeating that sweep here
// would double the suite's longest test for no new coverage.

// TestEncodeRange16 compares the 16-bit EncodeRange bodies with Encode on
// every input whose low 11 bits are 0, 1, 0x3ff, 0x400, 0x401 or 0x7ff
// (the FP16 rounding boundaries lie at multiples of 0x1000 plus 0 or 1)
// and on unaligned starts, short ranges and odd lengths.
func TestEncodeRange16(t *testing.T) {
	for _, c := range All() {
		if c.Width() != 2 {
			continue
		}
		got := make([]byte, 2*8)
		want := make([]byte, len(got))
		for k := uint32(0); k < 1<<21; k++ {
			for _, lo := range []uint32{0, 1, 0x3ff, 0x400, 0x401, 0x7fe} {
				s := k<<11 | lo
				c.EncodeRange(s, got)
				encodeRangeByEncode(c, s, want)
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("%s: EncodeRange at %#08x gives byte %d = %#x, Encode gives %#x", c.Name, s+uint32(i/2), i%2, got[i], want[i])
					}
				}
			}
		}
		for _, n := range []int{0, 1, 2, 3, 7, 9, 15} {
			got, want := make([]byte, n), make([]byte, n)
			c.EncodeRange(0x477fefff, got)
			encodeRangeByEncode(c, 0x477fefff, want)
			if string(got) != string(want) {
				t.Errorf("%s: %d bytes: EncodeRange % x, Encode % x", c.Name, n, got, want)
			}
		}
	}
}
