package ggml

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/nanconv"
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

// Q8_1Profile names one of ggml's q8_1 quantizers: the C reference as a
// real build compiles it (x86-64, arm64) or the CUDA kernel. They differ
// in the amax fold, in how q is computed, in what s holds and, between
// the C builds, in float -> int8_t casts and the sign of a NaN that
// arithmetic creates.
type Q8_1Profile struct {
	Name, Source string
	// Summary says in one line what the profile does where public
	// implementations differ (diagnoses and docs show it beside the name).
	Summary string
	CUDA    bool
	// arm64: saturating casts and positive default NaN (the arm64
	// build); otherwise x86-64's.
	arm64 bool
}

// Q8_1CPU is quantize_row_q8_1_ref (ggml src/ggml-quants.c) as gcc -O3
// compiles it for x86-64:
//
//	amax = fold of MAX(amax, fabsf(v)) from 0, MAX(a,b) = a > b ? a : b
//	       (a NaN v makes amax NaN; the next element replaces it)
//	d    = float32(amax / 127);  id = d != 0 ? float32(1/d) : 0
//	q[j] = (int8_t)roundf(float32(x[j] * id))   (cvttss2si: NaN and
//	       out-of-int32-range give 0x80000000, stored as its low byte 0)
//	D    = fp16(d);  S = fp16(float32(sum of q[j]) * d)
//
// where fp16 is ggml_compute_fp32_to_fp16 (a NaN keeps its sign, drops
// its payload: half.SignNaN). A NaN propagates with its sign (amax's is
// positive: fabsf cleared it); one that arithmetic creates is x86's
// default NaN, negative: a block holding +-Inf has d = Inf, every q 0 and
// S = fp16(0 * Inf) = 0xFE00. Recorded on the golden inputs
// (conformance/harness/ggml/records/q8_1.x86-64).
var Q8_1CPU = Q8_1Profile{
	Name:    "cpu",
	Summary: "quantize_row_q8_1_ref, x86-64 build: out-of-range casts give 0, 0*Inf gives a negative NaN",
	Source:  "ggml-org/ggml src/ggml-quants.c quantize_row_q8_1_ref, x86-64 build (gcc -O3, run)",
}

// Q8_1ARM64 is the same C function compiled for arm64 (gcc -O3, run under
// qemu): float -> int8_t is fcvtzs to int32 (saturating, NaN -> 0) and
// the low byte, so +overflow gives -1 (0x7FFFFFFF) and -overflow 0; the
// default NaN is positive, so S = fp16(0 * Inf) = 0x7E00.
var Q8_1ARM64 = Q8_1Profile{
	Name:    "arm64",
	Summary: "quantize_row_q8_1_ref, arm64 build: saturating casts, 0*Inf gives a positive NaN",
	Source:  "ggml-org/ggml src/ggml-quants.c quantize_row_q8_1_ref, arm64 build (aarch64-linux-gnu-gcc -O3, run under qemu-aarch64)",
	arm64:   true,
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
	Name:    "cuda",
	Summary: "ggml-cuda quantize_q8_1: s = fp16(sum of x), not fp16(d * sum of q)",
	Source:  "ggml-org/llama.cpp: ggml/src/ggml-cuda/quantize.cu quantize_q8_1, compiled without -use_fast_math (checked on an H100)",
	CUDA:    true,
}

// Q8_1Profiles lists the q8_1 profiles: cpu (the x86-64 build), arm64,
// cuda.
func Q8_1Profiles() []Q8_1Profile { return []Q8_1Profile{Q8_1CPU, Q8_1ARM64, Q8_1CUDA} }

// LookupQ8_1Profile maps "cpu", "arm64" and "cuda".
func LookupQ8_1Profile(name string) (Q8_1Profile, error) {
	for _, p := range Q8_1Profiles() {
		if p.Name == name {
			return p, nil
		}
	}
	return Q8_1Profile{}, fmt.Errorf("ggml: unknown q8_1 profile %q (known: cpu, arm64, cuda)", name)
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
			bs[i] = q81CPU(xs, p.arm64)
		}
	}
	return bs, nil
}

// q81CPU is quantize_row_q8_1_ref for one block. NaN bits are set
// explicitly, never taken from Go arithmetic (which under GOARCH=wasm may
// give either sign): only a NaN's sign reaches the output, through
// half.SignNaN.
func q81CPU(xs []float32, arm64 bool) Q8_1Block {
	var b Q8_1Block
	var amax float32
	for _, v := range xs {
		a := abs32(v)
		if !(amax > a) {
			amax = a
		}
	}
	d := canonF(amax / 127) // a NaN amax is positive, and so is d
	var id float32
	if d != 0 {
		id = canonF(1 / d)
	}
	b.D = half.SignNaN.EncodeFP16(d)
	sum := 0
	for j, v := range xs {
		r := roundf(canonF(v * id))
		q := castI8X86(r)
		if arm64 {
			q = castI8ARM64(r)
		}
		b.Qs[j] = q
		sum += int(q)
	}
	var sd float32
	switch {
	case d != d:
		sd = canonNaN // propagated from d: positive
	case sum == 0 && math.IsInf(float64(d), 0):
		sd = defaultNaN(arm64) // 0 * Inf creates a NaN
	default:
		sd = float32(sum) * d
	}
	b.S = half.SignNaN.EncodeFP16(sd)
	return b
}

// defaultNaN is the NaN an invalid operation creates: x86's is negative
// (0xFFC00000), arm64's positive (0x7FC00000).
func defaultNaN(arm64 bool) float32 {
	if arm64 {
		return math.Float32frombits(0x7FC00000)
	}
	return math.Float32frombits(0xFFC00000)
}

// castI8ARM64 is the arm64 C conversion (int8_t)v of an integer-valued v:
// fcvtzs to int32, saturating (NaN -> 0), then the low byte.
func castI8ARM64(v float32) int8 {
	f := float64(v)
	switch {
	case f != f:
		return 0
	case f >= 1<<31:
		return -1 // low byte of 0x7FFFFFFF
	case f < -(1 << 31):
		return 0 // low byte of 0x80000000
	}
	return int8(int32(f))
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
	return DequantizeQ8_1NaN(bs, nanconv.Canonical)
}

// DequantizeQ8_1NaN is DequantizeQ8_1 with its NaN results under
// convention nan: a NaN D widens with its sign and payload
// (nanconv.CarriedFP16) and the multiply carries it; q = 0 times an
// infinite D is invalid (x86-64's default NaN). Under nanconv.Canonical it
// is DequantizeQ8_1.
func DequantizeQ8_1NaN(bs []Q8_1Block, nan nanconv.Convention) []float32 {
	y := make([]float32, len(bs)*QK)
	canon := math.Float32bits(canonNaN)
	for i := range bs {
		d := half.DecodeFP16(bs[i].D)
		if d != d {
			d = math.Float32frombits(nanconv.CarriedFP16(bs[i].D))
		}
		for j, q := range bs[i].Qs {
			y[i*QK+j] = nan.Mul(float32(q), d, canon)
		}
	}
	return y
}
