package sparse24

import (
	"math/rand"
	"testing"
)

const benchE, benchN, benchK = 10, 512, 2048

func benchCodes() []uint8 {
	rng := rand.New(rand.NewSource(1))
	codes := make([]uint8, benchE*benchN*benchK)
	for i := range codes {
		codes[i] = uint8(rng.Intn(16))
	}
	return codes
}

// 2:4 compress of 10 experts of [512][2048] FP4 codes, transposed layout.
func BenchmarkCompress(b *testing.B) {
	codes := benchCodes()
	b.SetBytes(int64(len(codes)))
	for b.Loop() {
		if _, _, err := Compress(codes, benchE, benchN, benchK, LowerIndex, Transposed); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecompress(b *testing.B) {
	comp, meta, _ := Compress(benchCodes(), benchE, benchN, benchK, LowerIndex, Transposed)
	b.SetBytes(int64(benchE * benchN * benchK))
	for b.Loop() {
		if _, err := Decompress(comp, meta, benchE, benchN, benchK, Transposed); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReorderMeta16(b *testing.B) {
	_, meta, _ := Compress(benchCodes()[:benchN*benchK], 1, benchN, benchK, LowerIndex, RowMajor)
	m16, _ := MetaTo16(meta, benchN, benchK)
	b.SetBytes(int64(2 * len(m16)))
	for b.Loop() {
		if _, err := ReorderMeta16(m16, benchN, benchK/16); err != nil {
			b.Fatal(err)
		}
	}
}
