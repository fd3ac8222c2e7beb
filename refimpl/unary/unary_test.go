package unary

import (
	"math"
	"runtime"
	"sync"
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

// TestEncodeRangeExhaustive compares EncodeRange with Encode on all 2^32
// inputs for every conversion.
func TestEncodeRangeExhaustive(t *testing.T) {
	if testing.Short() {
		t.Skip("2^32 inputs per conversion; skipped under -short")
	}
	for _, c := range All() {
		t.Run(c.Name, func(t *testing.T) {
			const chunk = 1 << 16
			workers := runtime.NumCPU()
			var wg sync.WaitGroup
			bad := make([]uint32, workers)
			found := make([]bool, workers)
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					got := make([]byte, chunk*c.Width())
					want := make([]byte, len(got))
					for s := uint64(w) * chunk; s < 1<<32; s += uint64(workers) * chunk {
						c.EncodeRange(uint32(s), got)
						encodeRangeByEncode(c, uint32(s), want)
						if string(got) != string(want) {
							for i := range got {
								if got[i] != want[i] {
									bad[w], found[w] = uint32(s)+uint32(i/c.Width()), true
									return
								}
							}
						}
					}
				}()
			}
			wg.Wait()
			for w := range workers {
				if found[w] {
					t.Errorf("EncodeRange differs from Encode at input %#08x", bad[w])
				}
			}
		})
	}
}
