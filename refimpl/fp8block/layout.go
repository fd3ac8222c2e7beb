package fp8block

import (
	"fmt"
	"math"
)

// Scale layouts. A scale matrix is logically MN x SK (one row per token or
// weight row, one column per K group: SK = ceil(K/128)). Kernels read it in
// one of these storages:
//
//   - row-major: element (m, k) at m*SK + k, as quantized;
//   - MN-major (column-major) with the MN stride padded to a multiple of
//     align elements: (m, k) at k*align(MN, a) + m. vLLM's
//     column_major_scales uses a = 1 (stride MN); DeepGEMM's
//     get_mn_major_tma_aligned_tensor and sglang's scale_tma_aligned use
//     TMAAlignedSize: a = 16 bytes / element size (4 for float32);
//   - packed UE8M0: the exponent bytes of four consecutive K scales in one
//     int32 (byte j of the int32 = scale 4p+j, zero past SK), MN-major with
//     the MN stride TMA-aligned (DeepGEMM's
//     get_mn_major_tma_aligned_packed_ue8m0_tensor, vLLM's
//     per_token_group_quant_fp8_packed_for_deepgemm): (m, p) at
//     p*align(MN, 4) + m, for p < ceil(SK/4).
//
// Padding rows (m >= MN) are written as zeros here; DeepGEMM's kernels
// leave them unwritten, so a comparison reads only rows m < MN.

// TMAAlignedSize is DeepGEMM's get_tma_aligned_size(x, elemSize): x
// rounded up to a multiple of 16/elemSize (TMA needs 16-byte aligned
// strides). elemSize must divide 16.
func TMAAlignedSize(x, elemSize int) (int, error) {
	if elemSize < 1 || 16%elemSize != 0 {
		return 0, fmt.Errorf("fp8block: element size %d does not divide 16", elemSize)
	}
	if x < 0 {
		return 0, fmt.Errorf("fp8block: negative size %d", x)
	}
	a := 16 / elemSize
	return (x + a - 1) / a * a, nil
}

func alignUp(x, a int) int { return (x + a - 1) / a * a }

func checkScales(n, mn, sk int) error {
	if mn < 0 || sk < 0 {
		return fmt.Errorf("fp8block: negative scale shape %d x %d", mn, sk)
	}
	if n != mn*sk {
		return fmt.Errorf("fp8block: %d scales for a %d x %d scale matrix", n, mn, sk)
	}
	return nil
}

// ToMNMajor stores the row-major MN x SK scales MN-major with the MN
// stride align(MN, a): out has align(MN, a)*SK elements, padding zero.
func ToMNMajor(s []float32, mn, sk, a int) ([]float32, error) {
	if err := checkScales(len(s), mn, sk); err != nil {
		return nil, err
	}
	if a < 1 {
		return nil, fmt.Errorf("fp8block: alignment %d must be at least 1", a)
	}
	stride := alignUp(mn, a)
	out := make([]float32, stride*sk)
	for m := 0; m < mn; m++ {
		for k := 0; k < sk; k++ {
			out[k*stride+m] = s[m*sk+k]
		}
	}
	return out, nil
}

// FromMNMajor is the inverse of ToMNMajor: it reads rows m < MN of an
// MN-major storage with MN stride align(MN, a) back to row-major.
func FromMNMajor(t []float32, mn, sk, a int) ([]float32, error) {
	if mn < 0 || sk < 0 || a < 1 {
		return nil, fmt.Errorf("fp8block: bad MN-major shape %d x %d, alignment %d", mn, sk, a)
	}
	stride := alignUp(mn, a)
	if len(t) != stride*sk {
		return nil, fmt.Errorf("fp8block: MN-major storage has %d elements, want align(%d, %d)*%d = %d", len(t), mn, a, sk, stride*sk)
	}
	out := make([]float32, mn*sk)
	for m := 0; m < mn; m++ {
		for k := 0; k < sk; k++ {
			out[m*sk+k] = t[k*stride+m]
		}
	}
	return out, nil
}

// PackedK is the number of int32 columns of packed UE8M0 scales:
// ceil(SK/4).
func PackedK(sk int) int { return (sk + 3) / 4 }

// PackUE8M0 packs row-major MN x SK power-of-two float32 scales into
// DeepGEMM's int32 layout: PackedK(SK) columns of align(MN, 4) int32 each
// (MN-major), byte j of column p, row m being the float32 exponent field
// of scale (m, 4p+j), zero past SK and in padding rows. A scale with its
// sign or any mantissa bit set is refused, as DeepGEMM's
// transpose_and_pack_fp32_into_ue8m0 asserts ((bits & 0x807fffff) == 0):
// only +0 and positive powers of two (2^-126 .. 2^127, and +Inf bits) pack.
func PackUE8M0(s []float32, mn, sk int) ([]uint32, error) {
	if err := checkScales(len(s), mn, sk); err != nil {
		return nil, err
	}
	stride := alignUp(mn, 4)
	pk := PackedK(sk)
	out := make([]uint32, stride*pk)
	for m := 0; m < mn; m++ {
		for k := 0; k < sk; k++ {
			b := math.Float32bits(s[m*sk+k])
			if b&0x807fffff != 0 {
				return nil, fmt.Errorf("fp8block: scale (%d, %d) = %g [%#08x] is not a positive power of two (sign or mantissa set): UE8M0 packing keeps only the exponent", m, k, s[m*sk+k], b)
			}
			out[(k/4)*stride+m] |= (b >> 23) << (8 * uint(k%4))
		}
	}
	return out, nil
}

// UnpackUE8M0 is the inverse of PackUE8M0 (DeepGEMM's
// unpack_ue8m0_from_int composed with the MN-major read): scale (m, k) is
// the float32 with bits byte << 23, byte 0 giving +0 and 0xFF +Inf. It
// reads rows m < MN; bytes past SK are ignored.
func UnpackUE8M0(p []uint32, mn, sk int) ([]float32, error) {
	if mn < 0 || sk < 0 {
		return nil, fmt.Errorf("fp8block: negative scale shape %d x %d", mn, sk)
	}
	stride := alignUp(mn, 4)
	if len(p) != stride*PackedK(sk) {
		return nil, fmt.Errorf("fp8block: packed UE8M0 storage has %d int32, want align(%d, 4)*ceil(%d/4) = %d", len(p), mn, sk, stride*PackedK(sk))
	}
	out := make([]float32, mn*sk)
	for m := 0; m < mn; m++ {
		for k := 0; k < sk; k++ {
			b := p[(k/4)*stride+m] >> (8 * uint(k%4)) & 0xff
			out[m*sk+k] = math.Float32frombits(b << 23)
		}
	}
	return out, nil
}

// BroadcastRows expands block scales (ceil(MN/g) x SK, one row per g rows)
// to one row per row (MN x SK), as transform_sf_into_required_layout does
// (index_select of m / g) before packing 128x128 weight scales for SM100.
func BroadcastRows(s []float32, mn, sk, g int) ([]float32, error) {
	if g < 1 {
		return nil, fmt.Errorf("fp8block: row group %d must be at least 1", g)
	}
	if err := checkScales(len(s), ceilDiv(max(mn, 0), g), sk); err != nil {
		return nil, err
	}
	if mn < 0 {
		return nil, fmt.Errorf("fp8block: negative rows %d", mn)
	}
	out := make([]float32, mn*sk)
	for m := 0; m < mn; m++ {
		copy(out[m*sk:(m+1)*sk], s[(m/g)*sk:(m/g+1)*sk])
	}
	return out, nil
}
