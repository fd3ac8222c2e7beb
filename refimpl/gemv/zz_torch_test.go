package gemv

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/bitexact/bitexact/refimpl/half"
)

func readU16(p string) []uint16 {
	b, err := os.ReadFile(p)
	if err != nil {
		panic(err)
	}
	v := make([]uint16, len(b)/2)
	for i := range v {
		v[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return v
}
func readU32(p string) []uint32 {
	b, _ := os.ReadFile(p)
	v := make([]uint32, len(b)/4)
	for i := range v {
		v[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return v
}

func TestTorchOrder(t *testing.T) {
	dir := os.Getenv("TORCHDIR")
	for _, sh := range [][3]int{{10, 32, 512}, {10, 32, 1024}, {10, 8, 2048}, {2, 64, 512}} {
		e, kb, n := sh[0], sh[1], sh[2]
		x := readU16(fmt.Sprintf("%s/x_%d_%d_%d.bin", dir, e, kb, n))
		y := readU16(fmt.Sprintf("%s/y_%d_%d_%d.bin", dir, e, kb, n))
		z := readU32(fmt.Sprintf("%s/z_%d_%d_%d.bin", dir, e, kb, n))
		for _, red := range []string{"seq", "pairwise", "strided2", "strided4", "strided8", "butterfly2", "butterfly4", "butterfly8", "butterfly16", "butterfly32"} {
			for _, out := range []string{"fp16"} {
				s, err := Lookup("chunk=1,lanes=0,group=1,fma=0,acc=fp32,partial=fp32,reduce=" + red + ",out=" + out)
				if err != nil {
					continue
				}
				bad := 0
				ones := make([]uint16, kb)
				for i := range ones {
					ones[i] = 0x3C00
				}
				col := make([]uint16, kb)
				for ei := 0; ei < e; ei++ {
					for c := 0; c < n; c++ {
						for k := 0; k < kb; k++ {
							col[k] = x[(ei*kb+k)*n+c]
						}
						r, _ := F16GEMV(ones, col, kb, 1, s)
						if out == "fp16" {
							if round16(r[0]) != round16(float32frombits16(y[ei*n+c])) {
								bad++
							}
						} else if math.Float32bits(r[0]) != z[ei*n+c] {
							bad++
						}
					}
				}
				t.Logf("%v %s out=%s mismatches %d / %d", sh, red, out, bad, e*n)
			}
		}
	}
}

func float32frombits16(h uint16) float32 { return half.DecodeFP16(h) }
