package ggml

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/bitexact/bitexact/refimpl/half"
)

// Q8_1Block is block_q8_1: 36 bytes, fp16 d, fp16 s (little-endian), then
// 32 int8 quants. Element j is Qs[j]*d; s carries a block sum whose meaning
// depends on the producer (Q8_1Profile).
type Q8_1Block struct {
	D, S uint16 // IEEE binary16 bits
	Qs   [QK]int8
}

// ParseQ8_1 reads consecutive 36-byte blocks.
func ParseQ8_1(data []byte) ([]Q8_1Block, error) {
	if len(data)%Q8_1BlockBytes != 0 {
		return nil, fmt.Errorf("ggml: %d bytes are not a whole number of %d-byte block_q8_1", len(data), Q8_1BlockBytes)
	}
	bs := make([]Q8_1Block, len(data)/Q8_1BlockBytes)
	for i := range bs {
		p := data[i*Q8_1BlockBytes:]
		bs[i].D = binary.LittleEndian.Uint16(p)
		bs[i].S = binary.LittleEndian.Uint16(p[2:])
		for j := range bs[i].Qs {
			bs[i].Qs[j] = int8(p[4+j])
		}
	}
	return bs, nil
}

// AppendQ8_1 appends the 36-byte encoding of each block.
func AppendQ8_1(dst []byte, bs []Q8_1Block) []byte {
	for i := range bs {
		dst = binary.LittleEndian.AppendUint16(dst, bs[i].D)
		dst = binary.LittleEndian.AppendUint16(dst, bs[i].S)
		for _, q := range bs[i].Qs {
			dst = append(dst, byte(q))
		}
	}
	return dst
}

// Q8_1Profile names one of ggml's two q8_1 quantizers. They differ in the
// amax fold, in how q is computed and in what s holds.
type Q8_1Profile struct {
	Name, Source string
	CUDA         bool
}

// Q8_1CPU is quantize_row_q8_1_ref (ggml/src/ggml-quants.c), x86-64 build:
//
//	amax = fold of MAX(amax, fabsf(v)) from 0, MAX(a,b) = a > b ? a : b
//	       (a NaN v makes amax NaN; the next element replaces it)
//	d    = float32(amax / 127);  id = d != 0 ? float32(1/d) : 0
//	q[j] = (int8_t)roundf(float32(x[j] * id))   (x86-64 cvttss2si: NaN and
//	       out-of-int32-range give 0, otherwise the low byte)
//	D    = fp16(d);  S = fp16(float32(sum of q[j]) * d)
var Q8_1CPU = Q8_1Profile{
	Name:   "cpu",
	Source: "ggml-org/llama.cpp: ggml/src/ggml-quants.c quantize_row_q8_1_ref",
}

// Q8_1CUDA is the quantize_q8_1 kernel (ggml/src/ggml-cuda/quantize.cu):
//
//	amax = max of fabsf over the block by fmaxf (NaN ignored)
//	sum  = butterfly __shfl_xor_sync reduction, offsets 16, 8, 4, 2, 1:
//	       a_i = x_i + x_(i+16); b_i = a_i + a_(i+8); c_i = b_i + b_(i+4);
//	       e_i = c_i + c_(i+2); sum = e_0 + e_1 (float32 adds)
//	d    = float32(amax / 127)
//	q[j] = amax == 0 ? 0 : (int8_t)roundf(float32(x[j] / d))  (NaN -> 0,
//	       otherwise saturate to int32 and keep the low byte: 128 -> -128)
//	D, S = make_half2(d, sum): fp16 nearest even, NaN -> 0x7FFF
//
// This is the kernel compiled without fast math: a copy of its arithmetic
// (testdata/q8_1_probe.cu) built with nvcc -O3 -arch=sm_90 on an H100
// (CUDA 13.0) matched this profile on all 2^21 probe blocks. ggml-cuda itself
// is built with -use_fast_math; there x/d is an approximate division and
// subnormals flush to zero, and the same probe built that way differed in q
// on 1139439 of the 2^21 blocks (most of them built to sit near .5 ties);
// d and s still matched. That build is not modelled.
var Q8_1CUDA = Q8_1Profile{
	Name:   "cuda",
	Source: "ggml-org/llama.cpp: ggml/src/ggml-cuda/quantize.cu quantize_q8_1, compiled without -use_fast_math (checked on an H100)",
	CUDA:   true,
}

// LookupQ8_1Profile maps "cpu" and "cuda".
func LookupQ8_1Profile(name string) (Q8_1Profile, error) {
	switch name {
	case Q8_1CPU.Name:
		return Q8_1CPU, nil
	case Q8_1CUDA.Name:
		return Q8_1CUDA, nil
	}
	return Q8_1Profile{}, fmt.Errorf("ggml: unknown q8_1 profile %q (known: cpu, cuda)", name)
}

// roundf is C roundf: half away from zero.
func roundf(v float32) float32 {
	return float32(math.Round(float64(v)))
}

// castI8CUDA is nvcc's float -> int8_t conversion of an integer-valued v:
// a saturating conversion to int32 (NaN -> 0), then the low byte. Run on an
// H100 (CUDA 13.0): roundf gives 128.0f, stored as -128.
func castI8CUDA(v float32) int8 {
	f := float64(v)
	switch {
	case f != f:
		return 0
	case f >= math.MaxInt32:
		return -1 // low byte of 0x7FFFFFFF
	case f <= math.MinInt32:
		return 0
	}
	return int8(int32(f))
}

// cudaHalf is __float2half_rn as run on an H100: round to nearest even,
// every NaN to 0x7FFF.
func cudaHalf(x float32) uint16 {
	if x != x {
		return 0x7FFF
	}
	return half.EncodeFP16(x)
}

// QuantizeQ8_1 quantizes len(x)/32 blocks under profile p.
func QuantizeQ8_1(x []float32, p Q8_1Profile) ([]Q8_1Block, error) {
	if err := checkLen(len(x)); err != nil {
		return nil, err
	}
	bs := make([]Q8_1Block, len(x)/QK)
	for i := range bs {
		xs := x[i*QK : (i+1)*QK]
		if p.CUDA {
			bs[i] = q81CUDA(xs)
		} else {
			bs[i] = q81CPU(xs)
		}
	}
	return bs, nil
}

func q81CPU(xs []float32) Q8_1Block {
	var b Q8_1Block
	var amax float32
	for _, v := range xs {
		a := float32(math.Abs(float64(v)))
		if !(amax > a) {
			amax = a
		}
	}
	d := amax / 127
	var id float32
	if d != 0 {
		id = 1 / d
	}
	b.D = half.EncodeFP16(canonF(d))
	sum := 0
	for j, v := range xs {
		q := castI8X86(roundf(canonF(v * id)))
		b.Qs[j] = q
		sum += int(q)
	}
	b.S = half.EncodeFP16(canonF(float32(sum) * d))
	return b
}

func q81CUDA(xs []float32) Q8_1Block {
	var b Q8_1Block
	var amax float32
	for _, v := range xs {
		if a := float32(math.Abs(float64(v))); a > amax {
			amax = a
		}
	}
	var s [QK]float32
	copy(s[:], xs)
	for off := QK / 2; off > 0; off >>= 1 {
		for l := 0; l < off; l++ {
			s[l] = canonF(s[l] + s[l+off])
		}
	}
	d := amax / 127
	for j, v := range xs {
		if amax != 0 {
			b.Qs[j] = castI8CUDA(roundf(canonF(v / d)))
		}
	}
	b.D = cudaHalf(d)
	b.S = cudaHalf(s[0])
	return b
}

func canonF(x float32) float32 {
	if x != x {
		return canonNaN
	}
	return x
}

// DequantizeQ8_1 expands blocks as y = float32(q) * fp16(D), the rule of
// dequantize_row_q8_0 (ggml has no q8_1 to-float; vec_dot kernels use
// d*q the same way). S is not used.
func DequantizeQ8_1(bs []Q8_1Block) []float32 {
	y := make([]float32, len(bs)*QK)
	for i := range bs {
		d := half.DecodeFP16(bs[i].D)
		for j, q := range bs[i].Qs {
			y[i*QK+j] = canonF(float32(q) * d)
		}
	}
	return y
}
