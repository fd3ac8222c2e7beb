package gemv

import (
	"encoding/binary"
	"fmt"

	"github.com/bitexact/bitexact/refimpl/e8m0"
	"github.com/bitexact/bitexact/refimpl/ggml"
	"github.com/bitexact/bitexact/refimpl/half"
)

// Sizes of the llama.cpp blocks (ggml-common.h), as refimpl/ggml defines
// them.
const (
	// MXFP4BlockBytes is sizeof(block_mxfp4): uint8 e; uint8 qs[16].
	MXFP4BlockBytes = ggml.MXFP4BlockBytes
	// Q81BlockBytes is sizeof(block_q8_1): fp16 d; fp16 s; int8 qs[32].
	Q81BlockBytes = ggml.Q8_1BlockBytes
	// QK is the number of elements of either block.
	QK = ggml.QK
)

// KValuesMXFP4 is llama.cpp's kvalues_mxfp4 (ggml.KValuesMXFP4): twice the
// E2M1 value of each code, as int8.
var KValuesMXFP4 = ggml.KValuesMXFP4

// pair is the products of qs byte c's two codes, element j (low nibble)
// and j+16 (high), with the activations qj and qj16. The sums of a group
// are exact in int32 (at most 32 * 12 * 128), so their order is free.
func pair(c byte, qj, qj16 int32) int32 {
	return int32(KValuesMXFP4[c&0xF])*qj + int32(KValuesMXFP4[c>>4])*qj16
}

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
	// half[e] = E8M0(e) * 0.5, once per call rather than a decode per block.
	var half [256]float32
	for e := range half {
		half[e] = e8m0.Decode(uint8(e)) * 0.5
	}
	gpb := QK / s.GroupK // groups per block
	bytesPerGroup := s.GroupK / 2
	xs := make([]float32, nb*gpb)
	ys := make([]float32, nb*gpb)
	y := make([]float32, n)
	var lanes []float32
	for row := 0; row < n; row++ {
		for b := 0; b < nb; b++ {
			// Fixed-size views: one bounds check each instead of one per
			// element, which Go's wasm code pays as a branch.
			off := (row*nb + b) * MXFP4BlockBytes
			blk := (*[MXFP4BlockBytes]byte)(w[off : off+MXFP4BlockBytes])
			q := (*[QK]int32)(q8[b*QK : b*QK+QK])
			d := float32(half[blk[0]] * d8[b])
			xg, yg := xs[b*gpb:b*gpb+gpb], ys[b*gpb:b*gpb+gpb]
			switch s.GroupK {
			case 16:
				// mmvq's two half-blocks, unrolled: a loop's back-edge
				// costs Go's wasm code a br_table dispatch.
				xg[0], xg[1] = d, d
				yg[0] = float32(pair(blk[1], q[0], q[16]) + pair(blk[2], q[1], q[17]) + pair(blk[3], q[2], q[18]) + pair(blk[4], q[3], q[19]) +
					pair(blk[5], q[4], q[20]) + pair(blk[6], q[5], q[21]) + pair(blk[7], q[6], q[22]) + pair(blk[8], q[7], q[23]))
				yg[1] = float32(pair(blk[9], q[8], q[24]) + pair(blk[10], q[9], q[25]) + pair(blk[11], q[10], q[26]) + pair(blk[12], q[11], q[27]) +
					pair(blk[13], q[12], q[28]) + pair(blk[14], q[13], q[29]) + pair(blk[15], q[14], q[30]) + pair(blk[16], q[15], q[31]))
			case 1:
				// One element per group: the low nibble of byte j is
				// element j for the first 16 groups, the high nibble of
				// byte j-16 for the rest.
				for j := 0; j < QK; j++ {
					c := blk[1+j%16] & 0xF
					if j >= 16 {
						c = blk[1+j%16] >> 4
					}
					xg[j] = d
					yg[j] = float32(int32(KValuesMXFP4[c]) * q[j])
				}
			default:
				for g := range xg {
					var sumi int32
					for j := g * bytesPerGroup; j < (g+1)*bytesPerGroup; j++ {
						sumi += pair(blk[1+j], q[j], q[j+16])
					}
					xg[g] = d
					yg[g] = float32(sumi)
				}
			}
		}
		y[row], lanes = s.run(xs, ys, lanes)
	}
	return y, nil
}
