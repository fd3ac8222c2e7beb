package fp8block

import (
	"math"
	"testing"
)

func TestTMAAlignedSize(t *testing.T) {
	for _, tc := range []struct{ x, size, want int }{{130, 4, 132}, {128, 4, 128}, {1, 4, 4}, {0, 4, 0}, {5, 1, 16}, {17, 2, 24}} {
		if got, err := TMAAlignedSize(tc.x, tc.size); err != nil || got != tc.want {
			t.Errorf("TMAAlignedSize(%d, %d) = %d, %v; want %d", tc.x, tc.size, got, err, tc.want)
		}
	}
	if _, err := TMAAlignedSize(3, 3); err == nil {
		t.Error("element size 3: no error")
	}
}

// pow2Scales returns mn x sk powers of two 2^((m*7 + k*3) % 40 - 20).
func pow2Scales(mn, sk int) []float32 {
	s := make([]float32, mn*sk)
	for i := range s {
		m, k := i/sk, i%sk
		s[i] = float32(math.Ldexp(1, (m*7+k*3)%40-20))
	}
	return s
}

func TestMNMajorRoundTrip(t *testing.T) {
	for _, tc := range []struct{ mn, sk, align int }{{130, 7, 4}, {5, 1, 4}, {128, 2, 1}, {3, 3, 1}, {0, 4, 4}} {
		s := pow2Scales(tc.mn, tc.sk)
		st, err := ToMNMajor(s, tc.mn, tc.sk, tc.align)
		if err != nil {
			t.Fatal(err)
		}
		stride := alignUp(tc.mn, tc.align)
		if len(st) != stride*tc.sk {
			t.Fatalf("%+v: %d elements, want %d", tc, len(st), stride*tc.sk)
		}
		if tc.mn > 1 && tc.sk > 1 && st[1*stride+tc.mn-1] != s[(tc.mn-1)*tc.sk+1] {
			t.Errorf("%+v: (m=%d, k=1) not at k*stride+m", tc, tc.mn-1)
		}
		back, err := FromMNMajor(st, tc.mn, tc.sk, tc.align)
		if err != nil {
			t.Fatal(err)
		}
		for i := range s {
			if back[i] != s[i] {
				t.Fatalf("%+v: element %d round-trips to %g, want %g", tc, i, back[i], s[i])
			}
		}
	}
	if _, err := FromMNMajor(make([]float32, 10), 3, 3, 4); err == nil {
		t.Error("wrong storage length: no error")
	}
}

func TestPackUE8M0(t *testing.T) {
	// One row of five scales: packed K = 2 (K = 640 > 512).
	s := []float32{1, 2, 0.5, 8, 32}
	p, err := PackUE8M0(s, 1, 5)
	if err != nil {
		t.Fatal(err)
	}
	// MN = 1 pads to 4 rows: column 0 at index 0, column 1 at index 4.
	want := []uint32{127 | 128<<8 | 126<<16 | 130<<24, 0, 0, 0, 132, 0, 0, 0}
	if len(p) != len(want) {
		t.Fatalf("%d int32, want %d", len(p), len(want))
	}
	for i := range want {
		if p[i] != want[i] {
			t.Errorf("int32 %d = %#08x, want %#08x", i, p[i], want[i])
		}
	}
	for _, tc := range []struct {
		name string
		v    float32
	}{{"mantissa", 1.5}, {"sign", -2}, {"NaN", float32(math.NaN())}} {
		if _, err := PackUE8M0([]float32{1, tc.v}, 1, 2); err == nil {
			t.Errorf("%s scale packed without error", tc.name)
		}
	}
}

func TestPackUE8M0RoundTrip(t *testing.T) {
	// M not a multiple of 4 or 128; packed K 1, 2 and 3.
	for _, tc := range []struct{ mn, sk int }{{130, 7}, {200, 4}, {3, 9}, {129, 5}, {1, 1}} {
		s := pow2Scales(tc.mn, tc.sk)
		s[0] = 0 // +0 packs as byte 0
		p, err := PackUE8M0(s, tc.mn, tc.sk)
		if err != nil {
			t.Fatal(err)
		}
		back, err := UnpackUE8M0(p, tc.mn, tc.sk)
		if err != nil {
			t.Fatal(err)
		}
		for i := range s {
			if back[i] != s[i] {
				t.Fatalf("%+v: scale %d round-trips to %g, want %g", tc, i, back[i], s[i])
			}
		}
	}
}

// TestPackedKHidesLayoutBugs: a K-major reading of the packed scales
// (index m*packedK + p) agrees with the MN-major layout while packed K is
// 1 (K <= 512) and the rows are TMA-aligned, and disagrees as soon as
// packed K > 1: tests at K <= 512 cannot see the bug.
func TestPackedKHidesLayoutBugs(t *testing.T) {
	kMajor := func(p []uint32, mn, sk int) []float32 {
		out := make([]float32, mn*sk)
		pk := PackedK(sk)
		for m := 0; m < mn; m++ {
			for k := 0; k < sk; k++ {
				out[m*sk+k] = math.Float32frombits((p[m*pk+k/4] >> (8 * uint(k%4)) & 0xff) << 23)
			}
		}
		return out
	}
	for _, tc := range []struct {
		mn, sk int
		same   bool
	}{{128, 4, true}, {132, 3, true}, {128, 5, false}, {130, 7, false}} {
		s := pow2Scales(tc.mn, tc.sk)
		p, _ := PackUE8M0(s, tc.mn, tc.sk)
		got := kMajor(p, tc.mn, tc.sk)
		same := true
		for i := range s {
			if got[i] != s[i] {
				same = false
			}
		}
		if same != tc.same {
			t.Errorf("MN=%d SK=%d: K-major reading agrees = %v, want %v", tc.mn, tc.sk, same, tc.same)
		}
	}
}

func TestBroadcastRows(t *testing.T) {
	s := []float32{1, 2, 4, 8} // 2 block rows x 2
	b, err := BroadcastRows(s, 3, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{1, 2, 1, 2, 4, 8}
	for i := range want {
		if b[i] != want[i] {
			t.Errorf("element %d = %g, want %g", i, b[i], want[i])
		}
	}
	if _, err := BroadcastRows(s, 5, 2, 2); err == nil {
		t.Error("5 rows need 3 block rows: no error")
	}
}
