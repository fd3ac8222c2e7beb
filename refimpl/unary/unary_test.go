package unary

import (
	"math"
	"testing"
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
	for k := uint32(0); k < 1<<(32-bucketShift); k += 3 {
		starts = append(starts, k<<bucketShift-2)
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
