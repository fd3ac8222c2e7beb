package gemv

import (
	"math"
	"strings"
	"testing"
)

func TestAWQHand(t *testing.T) {
	// IC=8, OC=8, G=8. Every nibble 9 except column 3, 12: AWQ packs column
	// n at nibble (n%2)*4 + (n%8)/2 (order_map [0,2,4,6,1,3,5,7] in AutoAWQ
	// 88e4c76 awq/modules/linear/gemm.py), so column 3 is nibble 5, bits 20-23.
	// Zeros all 8, scales 0.5: w = (9-8)*0.5 = 0.5, column 3 (12-8)*0.5 = 2.
	row := int32(-0x66366667) // 0x99C99999
	if uint32(row) != 0x99C99999 {
		t.Fatalf("bad constant %#x", uint32(row))
	}
	qweight := []int32{row, row, row, row, row, row, row, row}
	qzeros := []int32{int32(-0x77777778)} // 0x88888888
	scales := []uint16{0x3800, 0x3800, 0x3800, 0x3800, 0x3800, 0x3800, 0x3800, 0x3800}
	x := f16s(1, 2, 3, 4, 5, 6, 7, 8)
	// Σ x = 36: 0.5*36 = 18, column 3 2*36 = 72.
	want := []float32{18, 18, 18, 72, 18, 18, 18, 18}
	for _, s := range []Schedule{SeqF16Out, Seq, SeqFMA, Warp32, Tree64} {
		got, err := AWQGEMV(qweight, qzeros, scales, x, 8, 8, 8, s)
		if err != nil {
			t.Fatal(err)
		}
		if !sameBits(got, want) {
			t.Errorf("%s: got %v, want %v", s, got, want)
		}
	}
	if _, err := AWQGEMV(qweight, qzeros, scales, x, 8, 4, 8, SeqF16Out); err == nil || !strings.Contains(err.Error(), "awq gemv") {
		t.Errorf("OC=4: error %v, want an awq gemv error", err)
	}
}

func TestF16GEMV(t *testing.T) {
	const two24 = 1 << 24
	g2 := mustLookup(t, "chunk=0,lanes=0,group=2,fma=0,acc=fp32,partial=fp32,reduce=seq,out=fp32")
	for _, c := range []struct {
		name string
		w, x []float32
		s    Schedule
		want float32
	}{
		// 1 + 3*2^-12 is 1.5 fp16 half-ulps above 1: fp32 keeps it, the fp16
		// output rounds up to 1+2^-10. A kernel writing fp16 must be compared
		// with the fp16-rounded reference.
		{"fp32 out", []float32{1, 1}, []float32{1, 3 * 0x1p-12}, Seq, 1 + 3*0x1p-12},
		{"fp16 out", []float32{1, 1}, []float32{1, 3 * 0x1p-12}, SeqF16Out, 1 + 0x1p-10},
		// Products 1, 2^24, 1, 1 (4096*4096). Sequential: every 1 after 2^24
		// is lost and the first is absorbed: 2^24. Groups of 2: (1+2^24) =
		// 2^24, (1+1) = 2, then 2^24+2.
		{"seq", []float32{1, 4096, 1, 1}, []float32{1, 4096, 1, 1}, Seq, two24},
		{"groups of 2", []float32{1, 4096, 1, 1}, []float32{1, 4096, 1, 1}, g2, two24 + 2},
		// fp16*fp16 is exact in float32, so fusion cannot change anything.
		{"seq fma", []float32{1, 4096, 1, 1}, []float32{1, 4096, 1, 1}, SeqFMA, two24},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := F16GEMV(f16s(c.w...), f16s(c.x...), len(c.x), 1, c.s)
			if err != nil {
				t.Fatal(err)
			}
			if math.Float32bits(got[0]) != math.Float32bits(c.want) {
				t.Errorf("got %v, want %v", got[0], c.want)
			}
		})
	}
	for _, c := range []struct {
		name   string
		w, x   []uint16
		ic, oc int
		s      Schedule
		want   string
	}{
		{"weights", make([]uint16, 5), make([]uint16, 2), 2, 3, Seq, "weights have 5 elements"},
		{"acts", make([]uint16, 6), make([]uint16, 3), 2, 3, Seq, "activations have 3"},
		{"group", make([]uint16, 6), make([]uint16, 2), 2, 3, mustLookup(t, "chunk=0,lanes=0,group=4,fma=0,acc=fp32,partial=fp32,reduce=seq,out=fp32"), "not a multiple of the schedule group"},
		{"negative", nil, nil, -1, 3, Seq, "negative"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := F16GEMV(c.w, c.x, c.ic, c.oc, c.s)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %v, want containing %q", err, c.want)
			}
		})
	}
}
