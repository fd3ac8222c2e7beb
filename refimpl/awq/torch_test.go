package awq

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"os"
	"testing"
)

// The vLLM dequantization arithmetic (sub.f16x2 then fma.rn.f16x2 with a +0
// addend) was run on an NVIDIA H100 (sm_90, CUDA 13.0) for every
// d = u - z in [-16, 15] and every fp16 scale bit pattern, by
// testdata/vllm_fma_f16.cu; the 2^21 little-endian fp16 outputs, d-major,
// hash to h100Digest. The reference must reproduce every one, NaNs and
// signed zeros included.
const h100Digest = "3fe5fbb65017d8fbd6b1809ac16a0312703a0a53a399c8dcea5b0caf9496245a"

func TestDequantizeMatchesH100(t *testing.T) {
	buf := make([]byte, 0, 32*65536*2)
	for d := -16; d < 16; d++ {
		u, z := d, 0
		if d < 0 {
			u, z = 0, -d
		}
		for s := 0; s < 65536; s++ {
			buf = binary.LittleEndian.AppendUint16(buf, mulF16(u-z, uint16(s)))
		}
	}
	sum := sha256.Sum256(buf)
	if got := hex.EncodeToString(sum[:]); got != h100Digest {
		t.Fatalf("dequantization table digest %s, want %s (H100)", got, h100Digest)
	}
}

func readLE(t *testing.T, name string, size int) []uint32 {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	v := make([]uint32, len(b)/size)
	for i := range v {
		if size == 2 {
			v[i] = uint32(binary.LittleEndian.Uint16(b[2*i:]))
		} else {
			v[i] = binary.LittleEndian.Uint32(b[4*i:])
		}
	}
	return v
}

// testdata/autoawq_torch.py ran AutoAWQ's quantizer and GEMM repack, op for
// op, with torch 2.11.0 on CUDA (H100) and on the CPU; the testdata holds
// the first 16 output rows (weight [OC=16][IC=512], G = 128), whose first
// 8 rows start with edge groups (constant, subnormal, range near 60000,
// all positive, all negative, exact ties).
func TestAutoAWQMatchesTorch(t *testing.T) {
	const OC, IC, G = 16, 512, 128
	w := readLE(t, "autoawq_w.bin", 2) // [OC][IC]
	wt := make([]uint16, IC*OC)
	for n := 0; n < OC; n++ {
		for k := 0; k < IC; k++ {
			wt[k*OC+n] = uint16(w[n*IC+k])
		}
	}
	q, err := Quantize(wt, IC, OC, G, AutoAWQ)
	if err != nil {
		t.Fatal(err)
	}
	for _, dev := range []string{"cuda", "cpu"} {
		scales := readLE(t, "autoawq_scales_"+dev+".bin", 2) // [OC][IC/G]
		zeros := readLE(t, "autoawq_zeros_"+dev+".bin", 4)
		qs := readLE(t, "autoawq_q_"+dev+".bin", 4) // [OC][IC]
		iw := readLE(t, "autoawq_intweight_"+dev+".bin", 4)
		for n := 0; n < OC; n++ {
			for g := 0; g < IC/G; g++ {
				if uint16(scales[n*IC/G+g]) != q.Scales[g*OC+n] || zeros[n*IC/G+g] != uint32(q.Zeros[g*OC+n]) {
					t.Errorf("%s row %d group %d: torch scale %#04x zero %d, reference %#04x %d",
						dev, n, g, scales[n*IC/G+g], zeros[n*IC/G+g], q.Scales[g*OC+n], q.Zeros[g*OC+n])
				}
			}
			for k := 0; k < IC; k++ {
				if qs[n*IC+k] != uint32(q.Q[k*OC+n]) || iw[n*IC+k] != uint32(q.Q[k*OC+n]) {
					t.Fatalf("%s [%d,%d]: torch q %d intweight %d, reference %d", dev, n, k, qs[n*IC+k], iw[n*IC+k], q.Q[k*OC+n])
				}
			}
		}
	}
}
