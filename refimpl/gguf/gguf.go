// Package gguf is the reference of ggml's GGUF block formats: the byte
// layout of each block type, ggml's reference quantizers
// (quantize_row_*_ref), its dequantizers (dequantize_row_*) and its
// generic CPU dot products (ggml_vec_dot_*_generic), ported from C
// operation by operation so that every float32 rounding happens where
// ggml's happens.
//
// Sources, all at ggml-org/ggml d99724f2b141fed9e1a9f402213506c081433465:
// src/ggml-common.h (block layouts, kvalues_iq4nl, kvalues_mxfp4),
// src/ggml-quants.c (quantizers, dequantizers, nearest_int,
// make_qx_quants, make_q3_quants, make_qkx2_quants, get_scale_min_k4),
// src/ggml-impl.h (ggml_compute_fp32_to_fp16, ggml_compute_fp16_to_fp32,
// ggml_fp32_to_ue4m3, ggml_ue4m3_to_fp32) and src/ggml-cpu/quants.c
// (ggml_vec_dot_{q4_0_q8_0,q8_0_q8_0,q4_K_q8_K,q6_K_q8_K}_generic).
//
// A package of its own beside refimpl/ggml (block_mxfp4, block_q8_1): those
// two are ggml's MX/activation formats with profiles that include a CUDA
// kernel; the GGUF weight types here share one thing refimpl/ggml has no
// use for, the contraction profile (FMA or not), which every quantizer,
// dequantizer and dot product below takes, and forty functions of their
// own. Neither package imports the other.
//
// NaNs: where an invalid operation creates a NaN (0*Inf in a dequantizer
// or a dot product) the result is the profile's default NaN, set
// explicitly; a NaN input or scale propagates quieted with its sign, set
// explicitly in the dequantizers and dot products and left to Go's
// arithmetic inside the quantizers, where only its sign can reach the
// output (through the fp16 scale) and every host Go runs the tests on
// propagates it as x86-64 and arm64 do (amd64, GOAMD64=v3, arm64 under
// qemu and wasip1 under wazero, all checked against the records).
//
// Blocks are handled as their GGUF bytes (little-endian, the C struct
// layout without padding): Quantize writes them, Dequantize and the dot
// products read them, so the layout is the contract and no intermediate
// struct can disagree with it.
package gguf

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/bitexact/bitexact/refimpl/half"
)

// QK_K is the super-block size of the K-quants, the ternary types and
// IQ4_XS.
const QK_K = 256

// Type is one GGUF block type.
type Type int

// The block types, in ggml's enum order where ggml has one.
const (
	Q4_0 Type = iota
	Q4_1
	Q5_0
	Q5_1
	Q8_0
	Q2_K
	Q3_K
	Q4_K
	Q5_K
	Q6_K
	Q8_K
	IQ4_NL
	IQ4_XS
	TQ1_0
	TQ2_0
	NVFP4
	Q1_0
	Q2_0
	numTypes
)

// typeInfo is a type's name (ggml's type_traits name), elements per block
// and bytes per block.
type typeInfo struct {
	name         string
	elems, bytes int
	// quant: ggml has quantize_row_<name>_ref for it.
	quant bool
}

var types = [numTypes]typeInfo{
	Q4_0:   {"q4_0", 32, 2 + 16, true},
	Q4_1:   {"q4_1", 32, 2 + 2 + 16, true},
	Q5_0:   {"q5_0", 32, 2 + 4 + 16, true},
	Q5_1:   {"q5_1", 32, 2 + 2 + 4 + 16, true},
	Q8_0:   {"q8_0", 32, 2 + 32, true},
	Q2_K:   {"q2_K", QK_K, 16 + 64 + 2 + 2, true},
	Q3_K:   {"q3_K", QK_K, 32 + 64 + 12 + 2, true},
	Q4_K:   {"q4_K", QK_K, 2 + 2 + 12 + 128, true},
	Q5_K:   {"q5_K", QK_K, 2 + 2 + 12 + 32 + 128, true},
	Q6_K:   {"q6_K", QK_K, 128 + 64 + 16 + 2, true},
	Q8_K:   {"q8_K", QK_K, 4 + QK_K + 2*QK_K/16, true},
	IQ4_NL: {"iq4_nl", 32, 2 + 16, false},
	IQ4_XS: {"iq4_xs", QK_K, 2 + 2 + 4 + 128, false},
	TQ1_0:  {"tq1_0", QK_K, 48 + 4 + 2, true},
	TQ2_0:  {"tq2_0", QK_K, 64 + 2, true},
	NVFP4:  {"nvfp4", 64, 4 + 32, true},
	Q1_0:   {"q1_0", 128, 2 + 16, true},
	Q2_0:   {"q2_0", 64, 2 + 16, true},
}

// Types lists every type the package implements.
func Types() []Type {
	ts := make([]Type, numTypes)
	for i := range ts {
		ts[i] = Type(i)
	}
	return ts
}

// String is ggml's name of the type ("q4_K").
func (t Type) String() string {
	if !t.valid() {
		return fmt.Sprintf("gguf.Type(%d)", int(t))
	}
	return types[t].name
}

func (t Type) valid() bool { return t >= 0 && t < numTypes }

// BlockElems is the number of elements one block holds (0 for an unknown
// type).
func (t Type) BlockElems() int {
	if !t.valid() {
		return 0
	}
	return types[t].elems
}

// BlockBytes is the size of one block in bytes (0 for an unknown type).
func (t Type) BlockBytes() int {
	if !t.valid() {
		return 0
	}
	return types[t].bytes
}

// CanQuantize reports whether ggml has a reference quantizer for t
// (IQ4_NL and IQ4_XS are dequantize-only here).
func (t Type) CanQuantize() bool { return t.valid() && types[t].quant }

// LookupType maps ggml's type name ("q4_K") to the Type.
func LookupType(name string) (Type, error) {
	for i, ti := range types {
		if ti.name == name {
			return Type(i), nil
		}
	}
	return 0, fmt.Errorf("gguf: unknown block type %q", name)
}

// Profile is how a C build of ggml evaluates the reference: whether the
// compiler contracted a*b+c into one fused multiply-add, and the target's
// float -> integer conversions and default NaN. ggml's C relies on
// contraction-dependent expressions (x*id + 8.5f in quantize_row_q4_0_ref,
// x0*d + m in dequantize_row_q4_1, the sums of make_qkx2_quants): gcc
// contracts them when the target has FMA and -ffp-contract=fast (gcc's
// default for GNU C), which is arm64 always and x86-64 with -march=haswell
// or later; the baseline x86-64 build has no FMA instruction and contracts
// nothing. llama.cpp#8939 reports Q4_0/Q5_0 files that differ between the
// two.
type Profile struct {
	Name, Source string
	// Summary says in one line what the profile does.
	Summary string
	// FMA: the build contracts every a*b+c, a*b-c and c-a*b that gcc's
	// widening_mul pass fuses (listed at each use of mad).
	FMA bool
	// ARM64: float -> integer conversions saturate (fcvtzs/fcvtzu/fcvtas,
	// NaN -> 0) and an invalid operation's NaN is positive; otherwise
	// x86-64's (cvttss2si: NaN and out-of-range give the integer
	// indefinite 0x80000000; the default NaN is negative).
	ARM64 bool
	// scalarSumX2: the build computes q4_K/q5_K's sum of squares in a
	// scalar loop (fused under FMA) rather than a vectorized in-order
	// reduction (never fused): gcc's vectorizer chose differently for
	// the two targets (gcc -fopt-info-vec: ggml-quants.c line 1473 is
	// vectorized for haswell, not for arm64).
	scalarSumX2 bool
}

// The profiles, each a measured build of ggml d99724f (records in
// conformance/harness/ggml-gguf/corpus-records).
var (
	// NoFMA is the x86-64 baseline build, gcc -O3 -ffp-contract=off (the
	// baseline target has no FMA either way).
	NoFMA = Profile{
		Name:    "nofma",
		Summary: "gcc -O3 x86-64, no contraction: every product rounded before it is added",
		Source:  "ggml-org/ggml d99724f src/ggml-quants.c, src/ggml-cpu/quants.c built with gcc -O3 -ffp-contract=off for x86-64 (run)",
	}
	// FMA is the x86-64 build for Haswell and later, gcc -O3
	// -march=haswell -ffp-contract=fast.
	FMA = Profile{
		Name:    "fma",
		Summary: "gcc -O3 -march=haswell -ffp-contract=fast x86-64: a*b+c fused where gcc fuses it",
		Source:  "ggml-org/ggml d99724f src/ggml-quants.c, src/ggml-cpu/quants.c built with gcc -O3 -march=haswell -ffp-contract=fast for x86-64 (run)",
		FMA:     true,
	}
	// ARM64 is the arm64 build, aarch64-linux-gnu-gcc -O3 (contraction on
	// by default), run under qemu-aarch64.
	ARM64 = Profile{
		Name:        "arm64",
		Summary:     "gcc -O3 arm64: fused like fma, saturating float->int casts, positive default NaN",
		Source:      "ggml-org/ggml d99724f src/ggml-quants.c, src/ggml-cpu/quants.c built with aarch64-linux-gnu-gcc -O3 (run under qemu-aarch64)",
		FMA:         true,
		ARM64:       true,
		scalarSumX2: true,
	}
	// ARM64NoFMA is the arm64 build with contraction off,
	// aarch64-linux-gnu-gcc -O3 -ffp-contract=off: nofma's arithmetic with
	// arm64's casts and default NaN.
	ARM64NoFMA = Profile{
		Name:    "arm64-nofma",
		Summary: "gcc -O3 -ffp-contract=off arm64: no contraction, saturating float->int casts, positive default NaN",
		Source:  "ggml-org/ggml d99724f src/ggml-quants.c, src/ggml-cpu/quants.c built with aarch64-linux-gnu-gcc -O3 -ffp-contract=off (run under qemu-aarch64)",
		ARM64:   true,
	}
)

// Profiles lists nofma, fma, arm64 and arm64-nofma.
func Profiles() []Profile { return []Profile{NoFMA, FMA, ARM64, ARM64NoFMA} }

// LookupProfile maps "nofma", "fma", "arm64" and "arm64-nofma".
func LookupProfile(name string) (Profile, error) {
	for _, p := range Profiles() {
		if p.Name == name {
			return p, nil
		}
	}
	return Profile{}, fmt.Errorf("gguf: unknown profile %q (known: nofma, fma, arm64, arm64-nofma)", name)
}

// mad is a*b + c as the build evaluates it: one rounding under FMA, two
// otherwise. Every call site is an expression gcc's widening_mul pass
// fuses when contraction is on; products it leaves alone are written
// float32(a*b) so that Go does not fuse them either.
func (p Profile) mad(a, b, c float32) float32 {
	if p.FMA {
		return fma32(a, b, c)
	}
	return float32(a*b) + c
}

// fma32 is the float32 fused multiply-add, rounded once. The product of
// two float32 is exact in float64; the float64 sum is made round-to-odd
// (its error recovered exactly by TwoSum) so that the final rounding to
// float32 is not a double rounding.
func fma32(a, b, c float32) float32 {
	p := float64(a) * float64(b)
	z := float64(c)
	s := p + z
	if math.IsInf(s, 0) || s != s || math.IsInf(p, 0) || math.IsInf(z, 0) {
		return float32(s)
	}
	bb := s - p
	e := (p - (s - bb)) + (z - bb)
	if e != 0 && math.Float64bits(s)&1 == 0 {
		if (e > 0) == (s > 0) {
			s = math.Float64frombits(math.Float64bits(s) + 1)
		} else {
			s = math.Float64frombits(math.Float64bits(s) - 1)
		}
	}
	return float32(s)
}

// fp16 is ggml_compute_fp32_to_fp16 (GGML_FP32_TO_FP16): round to
// nearest even, overflow to infinity, a NaN keeps its sign and becomes
// sign|0x7E00 (half.SignNaN, recorded by conformance/harness/ggml).
func fp16(x float32) uint16 { return half.SignNaN.EncodeFP16(x) }

// fromFP16 is ggml_compute_fp16_to_fp32: exact; a NaN keeps its sign and
// payload and comes out quiet (ggml builds it by multiplying by 2^-112,
// which quiets a signalling NaN).
func fromFP16(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1F
	man := uint32(h & 0x3FF)
	switch {
	case exp == 0x1F:
		if man != 0 {
			man |= 0x200 // quiet bit
		}
		return math.Float32frombits(sign | 0x7F800000 | man<<13)
	case exp != 0:
		return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
	case man == 0:
		return math.Float32frombits(sign)
	}
	// subnormal: man * 2^-24, exact in float32
	return math.Float32frombits(sign | math.Float32bits(float32(man)*(1.0/16777216)))
}

// defaultNaN is the NaN an invalid operation (0*Inf, Inf-Inf) creates:
// x86's is negative, arm64's positive.
func (p Profile) defaultNaN() float32 {
	if p.ARM64 {
		return math.Float32frombits(0x7FC00000)
	}
	return math.Float32frombits(0xFFC00000)
}

// nearestInt is ggml's nearest_int: fval + 1.5*2^23 rounds to nearest
// even at integer precision, and the low mantissa bits are the integer.
// Valid for |fval| <= 4194303; outside that ggml's assert (compiled out
// in release builds, -DNDEBUG) would stop, and the bits give what they
// give: Inf yields -4194304, a NaN its payload bits minus 0x400000 (0
// for every NaN an operation creates or propagates from a zero-payload
// input).
func nearestInt(fval float32) int32 {
	if fval != fval {
		return int32(math.Float32bits(fval)|0x400000)&0x7FFFFF - 0x400000
	}
	val := fval + 12582912
	return int32(math.Float32bits(val))&0x007FFFFF - 0x00400000
}

// nearestMul is nearest_int(a*b). nearest_int is inlined, so its
// fval + 12582912.f meets the product: under FMA the sum is one fused
// multiply-add, which rounds the exact product to an integer (ties to
// even) instead of the product rounded to float32 first.
func (p Profile) nearestMul(a, b float32) int32 {
	if !p.FMA {
		return nearestInt(float32(a * b))
	}
	switch {
	case a != a:
		return nearestInt(a)
	case b != b:
		return nearestInt(b)
	}
	v := fma32(a, b, 12582912)
	if v != v { // 0*Inf: the default NaN, zero payload
		return 0
	}
	return int32(math.Float32bits(v))&0x007FFFFF - 0x00400000
}

// roundf is C roundf: half away from zero.
func roundf(v float32) float32 { return float32(math.Round(float64(v))) }

// cvtI32 is the conversion of a float32 to a 32-bit signed integer, as
// the target does it when C casts float to int, int8_t or (on x86)
// uint8_t: truncate toward zero; x86's cvttss2si gives 0x80000000 for NaN
// and out-of-range values, arm64's fcvtzs saturates and gives 0 for NaN.
func (p Profile) cvtI32(v float32) int32 {
	f := math.Trunc(float64(v))
	switch {
	case f != f:
		if p.ARM64 {
			return 0
		}
		return math.MinInt32
	case f > math.MaxInt32:
		if p.ARM64 {
			return math.MaxInt32
		}
		return math.MinInt32
	case f < math.MinInt32:
		return math.MinInt32
	}
	return int32(f)
}

// cvtU8 is C's (uint8_t)v for a float v: x86 converts through a signed
// 32-bit integer (cvttss2si) and keeps the low byte; arm64 uses fcvtzu to
// a 32-bit unsigned integer (saturating at 0 and 2^32-1, NaN -> 0) and
// keeps the low byte.
func (p Profile) cvtU8(v float32) uint8 {
	if !p.ARM64 {
		return uint8(p.cvtI32(v))
	}
	f := math.Trunc(float64(v))
	switch {
	case f != f || f <= 0:
		return 0
	case f >= math.MaxUint32:
		return 0xFF
	}
	return uint8(uint32(f))
}

// lroundLow32 is (int)lroundf(v) as ggml's ternary quantizers use it
// (lroundf(v) + 1 assigned to int: the low 32 bits of the long). x86-64's
// glibc lroundf gives LONG_MIN for NaN and out-of-range values; arm64's
// fcvtas saturates to LONG_MIN/LONG_MAX and gives 0 for NaN.
func (p Profile) lroundLow32(v float32) int32 {
	f := math.Round(float64(v))
	switch {
	case f != f:
		if p.ARM64 {
			return 0
		}
		return 0 // low 32 bits of LONG_MIN
	case f >= math.MaxInt64:
		if p.ARM64 {
			return -1 // low 32 bits of LONG_MAX
		}
		return 0
	case f < math.MinInt64:
		return 0
	}
	return int32(int64(f))
}

func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

func le16(b []byte) uint16     { return binary.LittleEndian.Uint16(b) }
func put16(b []byte, v uint16) { binary.LittleEndian.PutUint16(b, v) }

func checkFloats(t Type, n int) error {
	if n%t.BlockElems() != 0 {
		return fmt.Errorf("gguf: %d values are not a whole number of %d-element %s blocks", n, t.BlockElems(), t)
	}
	return nil
}

func checkBytes(t Type, n int) error {
	if n%t.BlockBytes() != 0 {
		return fmt.Errorf("gguf: %d bytes are not a whole number of %d-byte %s blocks", n, t.BlockBytes(), t)
	}
	return nil
}

// Quantize runs ggml's quantize_row_<t>_ref on x (a whole number of
// blocks) under profile p and returns the GGUF bytes.
func Quantize(t Type, x []float32, p Profile) ([]byte, error) {
	if !t.valid() {
		return nil, fmt.Errorf("gguf: unknown block type %d", int(t))
	}
	if !t.CanQuantize() {
		return nil, fmt.Errorf("gguf: %s has no reference quantizer here (dequantize only)", t)
	}
	if err := checkFloats(t, len(x)); err != nil {
		return nil, err
	}
	nb := len(x) / t.BlockElems()
	out := make([]byte, nb*t.BlockBytes())
	q := quantizers[t]
	for i := 0; i < nb; i++ {
		q(p, x[i*t.BlockElems():(i+1)*t.BlockElems()], out[i*t.BlockBytes():(i+1)*t.BlockBytes()])
	}
	return out, nil
}

// Dequantize runs ggml's dequantize_row_<t> on the blocks in b under
// profile p.
func Dequantize(t Type, b []byte, p Profile) ([]float32, error) {
	if !t.valid() {
		return nil, fmt.Errorf("gguf: unknown block type %d", int(t))
	}
	if err := checkBytes(t, len(b)); err != nil {
		return nil, err
	}
	nb := len(b) / t.BlockBytes()
	y := make([]float32, nb*t.BlockElems())
	d := dequantizers[t]
	for i := 0; i < nb; i++ {
		d(p, b[i*t.BlockBytes():(i+1)*t.BlockBytes()], y[i*t.BlockElems():(i+1)*t.BlockElems()])
	}
	return y, nil
}

var quantizers = [numTypes]func(p Profile, x []float32, y []byte){
	Q4_0: quantQ4_0, Q4_1: quantQ4_1, Q5_0: quantQ5_0, Q5_1: quantQ5_1, Q8_0: quantQ8_0,
	Q2_K: quantQ2_K, Q3_K: quantQ3_K, Q4_K: quantQ4_K, Q5_K: quantQ5_K, Q6_K: quantQ6_K, Q8_K: quantQ8_K,
	TQ1_0: quantTQ1_0, TQ2_0: quantTQ2_0, NVFP4: quantNVFP4, Q1_0: quantQ1_0, Q2_0: quantQ2_0,
}

var dequantizers = [numTypes]func(p Profile, x []byte, y []float32){
	Q4_0: dequantQ4_0, Q4_1: dequantQ4_1, Q5_0: dequantQ5_0, Q5_1: dequantQ5_1, Q8_0: dequantQ8_0,
	Q2_K: dequantQ2_K, Q3_K: dequantQ3_K, Q4_K: dequantQ4_K, Q5_K: dequantQ5_K, Q6_K: dequantQ6_K, Q8_K: dequantQ8_K,
	IQ4_NL: dequantIQ4_NL, IQ4_XS: dequantIQ4_XS,
	TQ1_0: dequantTQ1_0, TQ2_0: dequantTQ2_0, NVFP4: dequantNVFP4, Q1_0: dequantQ1_0, Q2_0: dequantQ2_0,
}
