package codetable

import "testing"

// step is an encoder of the kind Table holds: constant over each bucket
// but its first pattern, which differs (a boundary one pattern above the
// bucket start, as for a tie rounded down).
func step(b uint32) uint8 {
	k := uint8(b >> BucketShift)
	if b&(1<<BucketShift-1) == 0 {
		return k ^ 0x80
	}
	return k
}

func TestCodeAndEncodeRange(t *testing.T) {
	tab := Build(step)
	for _, tc := range []struct {
		name  string
		start uint32
		n     int
	}{
		{"bucket start", 0x3f800000, 5},
		{"across a bucket", 0x3f87fffe, 4},
		{"several buckets", 0x0007fff0, 3 << BucketShift},
		{"wraps to 0", 0xfffffffd, 6},
		{"empty", 0x12345678, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := make([]byte, tc.n)
			tab.EncodeRange(tc.start, out)
			for i, got := range out {
				b := tc.start + uint32(i)
				if want := step(b); got != want || tab.Code(b) != want {
					t.Fatalf("pattern %#08x: EncodeRange %#x, Code %#x, encoder %#x", b, got, tab.Code(b), want)
				}
			}
		})
	}
}

func TestLazyBuildsOnce(t *testing.T) {
	calls := 0
	get := Lazy(func(b uint32) uint8 { calls++; return step(b) })
	if calls != 0 {
		t.Fatalf("Lazy called the encoder %d times before the first use", calls)
	}
	a, b := get(), get()
	if a != b || calls != tableLen {
		t.Errorf("two calls gave tables %p and %p after %d encoder calls, want one table after %d", a, b, calls, tableLen)
	}
	if a.Code(0x00080000) != 0x81 || a.Code(0x00080001) != 0x01 {
		t.Errorf("Code(0x00080000) = %#x, Code(0x00080001) = %#x, want 0x81, 0x01", a.Code(0x00080000), a.Code(0x00080001))
	}
}
