package gemv

import (
	"encoding/binary"
	"fmt"

	"github.com/bitexact/bitexact/refimpl/e8m0"
	"github.com/bitexact/bitexact/refimpl/half"
)

// Sizes of the llama.cpp blocks (ggml-common.h).
const (
	// MXFP4BlockBytes is sizeof(block_mxfp4): uint8 e; uint8 qs[16].
	MXFP4BlockBytes = 17
	// Q81BlockBytes is sizeof(block_q8_1): fp16 d; fp16 s; int8 qs[32].
	Q81BlockBytes = 36
	// QK is the number of elements of either block.
	QK = 32
)

// KValuesMXFP4 is llama.cpp's kvalues_mxfp4: twice the E2M1 value of each
// code, as int8.
var KValuesMXFP4 = [16]int8{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}

// MXFP4Q81GEMV is llama.cpp's MXFP4 x Q8_1 matrix-vector product
// (ggml-cuda vecdotq.cuh vec_dot_mxfp4_q8_1 driven by mmvq.cu): y[n] =
// Σ over the K/32 blocks of row n. w holds N rows of K/32 block_mxfp4 (qs[j]
// low nibble = element j, high nibble = element j+16); act holds K/32
// block_q8_1 (d fp16 little-endian at byte 0, s at byte 2, unused here,
// qs at byte 4).
//
// A group of s.GroupK elements (a divisor of 32) is s.GroupK/2 consecutive
// qs bytes with both their nibbles: for GroupK 16, bytes 0-7 (elements 0-7
// and 16-23) then bytes 8-15, exactly the two halves mmvq's threads take
// (kqs = 0, 2). Its sum sumi = Σ kvalues[code]*q8 is exact (int32); the
// group contributes d * float32(sumi) with d = float32(float32(E8M0(e) *
// 0.5) * fp16(d8)) (E8M0(e)*0.5 = 2^(e-128) is exact; the product with d8
// rounds only on underflow; e = 0xFF is NaN as in CUDA >= 12.8's
// __nv_cvt_e8m0_to_bf16raw). The result is [N], rounded to s.Out.
func MXFP4Q81GEMV(w, act []byte, n, k int, s Schedule) ([]float32, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if n < 0 || k < 0 || k%QK != 0 {
		return nil, fmt.Errorf("mxfp4 gemv: K=%d must be a non-negative multiple of %d (N=%d)", k, QK, n)
	}
	if QK%s.GroupK != 0 {
		return nil, fmt.Errorf("mxfp4 gemv: schedule group %d does not divide the block size %d", s.GroupK, QK)
	}
	nb := k / QK
	if len(w) != n*nb*MXFP4BlockBytes {
		return nil, fmt.Errorf("mxfp4 gemv: weights have %d bytes, want N*K/32*17 = %d", len(w), n*nb*MXFP4BlockBytes)
	}
	if len(act) != nb*Q81BlockBytes {
		return nil, fmt.Errorf("mxfp4 gemv: activations have %d bytes, want K/32*36 = %d", len(act), nb*Q81BlockBytes)
	}
	d8 := make([]float32, nb)
	q8 := make([]int32, k)
	for b := 0; b < nb; b++ {
		blk := act[b*Q81BlockBytes:]
		d8[b] = half.DecodeFP16(binary.LittleEndian.Uint16(blk))
		for j := 0; j < QK; j++ {
			q8[b*QK+j] = int32(int8(blk[4+j]))
		}
	}
	gpb := QK / s.GroupK // groups per block
	bytesPerGroup := s.GroupK / 2
	xs := make([]float32, nb*gpb)
	ys := make([]float32, nb*gpb)
	y := make([]float32, n)
	var lanes []float32
	for row := 0; row < n; row++ {
		for b := 0; b < nb; b++ {
			blk := w[(row*nb+b)*MXFP4BlockBytes:]
			d := float32(float32(e8m0.Decode(blk[0])*0.5) * d8[b])
			q := q8[b*QK:]
			for g := 0; g < gpb; g++ {
				var sumi int32
				if s.GroupK == 1 {
					// One element: the low nibble of byte j is element j
					// for the first 16 groups, the high nibble of byte j-16
					// for the rest.
					j := g
					c := blk[1+j%16] & 0xF
					if j >= 16 {
						c = blk[1+j%16] >> 4
					}
					sumi = int32(KValuesMXFP4[c]) * q[j]
				} else {
					for j := g * bytesPerGroup; j < (g+1)*bytesPerGroup; j++ {
						c := blk[1+j]
						sumi += int32(KValuesMXFP4[c&0xF])*q[j] + int32(KValuesMXFP4[c>>4])*q[j+16]
					}
				}
				xs[b*gpb+g] = d
				ys[b*gpb+g] = float32(sumi)
			}
		}
		y[row], lanes = s.run(xs, ys, lanes)
	}
	return y, nil
}
