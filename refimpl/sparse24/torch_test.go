package sparse24

import (
	"encoding/binary"
	"os"
	"testing"
)

// testdata/torch_cutlass_meta.py ran PyTorch's
// sparse_semi_structured_from_dense_cutlass (torch 2.11.0, H100) on dense
// [64][128] fp16 and int8 matrices whose groups of four hold every pattern
// of at most two nonzeros; torch_dense_*.bin holds the matrices (int8) and
// torch_meta_*.bin the reordered metadata (int16 [64][8], int32 [64][4]).
// The CUTLASS tie rule, regrouped and reordered, must give the same words.
func TestCUTLASSMetaMatchesTorch(t *testing.T) {
	const m, k = 64, 128
	for _, c := range []struct {
		name string
		size int
	}{{"f16", 2}, {"i8", 4}} {
		t.Run(c.name, func(t *testing.T) {
			dense, err := os.ReadFile("testdata/torch_dense_" + c.name + ".bin")
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile("testdata/torch_meta_" + c.name + ".bin")
			if err != nil {
				t.Fatal(err)
			}
			codes := make([]uint8, m*k)
			for i, b := range dense {
				if b != 0 {
					codes[i] = 2 // E2M1 1.0: only the nonzero pattern matters here
				}
			}
			_, meta, err := Compress(codes, 1, m, k, CUTLASS, RowMajor)
			if err != nil {
				t.Fatal(err)
			}
			var got []byte
			if c.size == 2 {
				m16, _ := MetaTo16(meta, m, k)
				re, err := ReorderMeta16(m16, m, k/16)
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range re {
					got = binary.LittleEndian.AppendUint16(got, v)
				}
			} else {
				m32, _ := MetaTo32(meta, m, k)
				re, err := ReorderMeta32(m32, m, k/32)
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range re {
					got = binary.LittleEndian.AppendUint32(got, v)
				}
			}
			if string(got) != string(want) {
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("reordered metadata differs from torch at byte %d: %#02x, torch %#02x", i, got[i], want[i])
					}
				}
			}
		})
	}
}
