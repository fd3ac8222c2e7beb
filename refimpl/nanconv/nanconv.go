// Package nanconv names the conventions for the bits of a NaN result: the
// one choice left open by IEEE 754 (a NaN's sign and payload) and the one
// on which otherwise identical decoders, dequantizers and GEMVs disagree.
//
// Each op that outputs floats computes its NaN results under one
// Convention (the op parameter nan). A convention maps a NaN result to
// bits from two inputs the op supplies: its canonical bits (the op's
// reproducible choice, the default) and its carried bits, what a CPU that
// propagates payloads writes: a NaN code decoded with its sign and
// mantissa bits (CarriedFP8, CarriedFP16, CarriedE8M0), the first NaN
// operand of an arithmetic step passed through made quiet (Mul, Div), and
// x86-64's default NaN 0xFFC00000 for an invalid operation on numbers
// (0·∞, ∞−∞, 0/0).
//
// Every step is integer work on the bit patterns, so Go and wasm agree
// although wasm leaves an arithmetic NaN's bits unspecified.
package nanconv

import (
	"fmt"
	"math"
	"strings"
)

// Convention is a named rule for the bits of a NaN result.
type Convention struct {
	Name string
	// Summary says in one line which bits a NaN result gets.
	Summary string
	// Source names where the rule comes from and what was run to measure it.
	Source string
}

// The NaN bit patterns the conventions write.
const (
	// CUDANaN is what every NVIDIA float32 instruction writes for a NaN
	// result, whatever its operands.
	CUDANaN uint32 = 0x7FFFFFFF
	// X86Default is x86-64's default NaN (SSE/AVX "QNaN floating-point
	// indefinite"): the result of an invalid operation on numbers.
	X86Default uint32 = 0xFFC00000
	// Quiet is the quiet bit of a float32 NaN.
	Quiet uint32 = 0x00400000
	// CarriedE8M0 is the NaN an E8M0 code 0xFF decodes to when built from
	// bits: the code in the exponent field and the lowest payload bit set
	// (E8M0 has no sign and no mantissa to carry); c10's
	// fp8e8m0fnu_to_fp32_value writes it on CPU and CUDA.
	CarriedE8M0 uint32 = 0x7F800001
)

// The conventions.
var (
	Canonical = Convention{Name: "canonical",
		Summary: "every NaN result is the op's canonical NaN (0x7FC00000, the positive quiet NaN; fp8.decode keeps the code's sign; fp16 outputs 0x7FFF)",
		Source:  "bitexact's reproducible choice: one pinned NaN per op keeps Go on every host and the wasm reference identical (wasm leaves an arithmetic NaN's sign and payload unspecified)"}
	CUDA = Convention{Name: "cuda",
		Summary: "every NaN result is 0x7FFFFFFF (fp16: 0x7FFF, bf16: 0x7FFF), whatever the NaN operands",
		Source:  "NVIDIA GPUs' float instructions (PTX ISA: NaN results are canonical); measured with torch 2.11 on the H200: x*2, x/3, -x, 0*inf, inf-inf and 0/0 on float32 NaNs of eight payloads all write 0x7FFFFFFF, fp16 0x7FFF (conformance/harness/torch/nan-probe.json)"}
	CUDASign = Convention{Name: "cuda-sign",
		Summary: "every NaN result is 0x7FFFFFFF with the sign of the NaN it came from (an invalid operation's: 1): sign | 0x7FFFFFFF",
		Source:  "a decoder that scales a NaN code with a CUDA float instruction and then ORs the code's sign back: torch 2.11's E5M2 decode on CUDA (c10 fp16_ieee_to_fp32_value), measured on the H200: 0x7D..0x7F -> 0x7FFFFFFF, 0xFD..0xFF -> 0xFFFFFFFF"}
	X86 = Convention{Name: "x86",
		Summary: "every NaN result is 0xFFC00000 (fp16: 0xFE00), x86-64's default NaN",
		Source:  "the Intel SDM's QNaN floating-point indefinite, the result of an invalid operation with no NaN operand; measured with torch 2.11 on the CPU: 0*inf, inf-inf, 0/0 and inf/inf write 0xFFC00000 (conformance/harness/torch/nan-probe.json); the convention of a CPU kernel whose NaNs are all made by arithmetic"}
	Propagate = Convention{Name: "propagate",
		Summary: "a NaN result is the NaN it came from: a decoded NaN code keeps its sign and its mantissa bits at the top of the float32 mantissa, made quiet (E4M3 0x7F -> 0x7FF00000, E5M2 0x7D -> 0x7FE00000, fp16 0xFE91 -> 0xFFD22000; E8M0 0xFF -> 0x7F800001); an arithmetic step passes its NaN operand through made quiet (of two NaN factors the second, of a quotient the dividend); an invalid operation on numbers writes 0xFFC00000",
		Source:  "IEEE 754-2019 6.2.3 (payload preservation, quieting on conversion) as x86-64 SSE/AVX implements it; measured with torch 2.11 on the CPU: float8_e4m3fn/float8_e5m2/float8_e8m0fnu .to(float32) and NaN operands of mul, div and neg (conformance/harness/torch/nan-probe.json)"}
)

// All lists the conventions, the default first.
func All() []Convention { return []Convention{Canonical, CUDA, CUDASign, X86, Propagate} }

// Names lists the convention names, the default first.
func Names() []string {
	var n []string
	for _, c := range All() {
		n = append(n, c.Name)
	}
	return n
}

// Lookup finds a convention by name.
func Lookup(name string) (Convention, error) {
	for _, c := range All() {
		if c.Name == name {
			return c, nil
		}
	}
	return Convention{}, fmt.Errorf("unknown NaN convention %q (conventions: %s)", name, strings.Join(Names(), ", "))
}

// IsNaN reports whether the float32 bits b are a NaN.
func IsNaN(b uint32) bool { return b&0x7FFFFFFF > 0x7F800000 }

// Bits is the float32 bits of a NaN result under c, from the op's
// canonical bits and the carried bits (already quiet where the rule
// quiets: see the Carried functions, Mul and Div).
func (c Convention) Bits(canon, carried uint32) uint32 {
	switch c.Name {
	case CUDA.Name:
		return CUDANaN
	case CUDASign.Name:
		return carried&0x80000000 | CUDANaN
	case X86.Name:
		return X86Default
	case Propagate.Name:
		return carried
	}
	return canon
}

// Bits16 is the fp16 (or bf16, whose NaNs the same rules give) bits of a
// NaN result under c: canon16 the op's canonical fp16 NaN, carried the
// float32 carried bits narrowed as a payload-propagating conversion does
// (sign, top ten mantissa bits, quiet).
func (c Convention) Bits16(canon16 uint16, carried uint32) uint16 {
	switch c.Name {
	case CUDA.Name:
		return 0x7FFF
	case CUDASign.Name:
		return uint16(carried>>16)&0x8000 | 0x7FFF
	case X86.Name:
		return 0xFE00
	case Propagate.Name:
		return uint16(carried>>16)&0x8000 | 0x7E00 | uint16(carried>>13)&0x3FF
	}
	return canon16
}

// NaN is math.Float32frombits(c.Bits(canon, carried)).
func (c Convention) NaN(canon, carried uint32) float32 {
	return math.Float32frombits(c.Bits(canon, carried))
}

// CarriedFP8 is the carried bits of an FP8 NaN code c with manBits
// mantissa bits: its sign, the all-ones exponent, its mantissa at the top
// of the float32 mantissa, made quiet.
func CarriedFP8(c uint8, manBits int) uint32 {
	m := uint32(c) & (1<<manBits - 1)
	return uint32(c&0x80)<<24 | 0x7F800000 | m<<(23-manBits) | Quiet
}

// CarriedFP16 is the carried bits of an fp16 NaN h widened to float32:
// its sign and ten mantissa bits, made quiet.
func CarriedFP16(h uint16) uint32 {
	return uint32(h&0x8000)<<16 | 0x7F800000 | uint32(h&0x3FF)<<13 | Quiet
}

// carry is the carried bits of an arithmetic step with NaN operands: the
// NaN operand first, made quiet (first if both are NaN).
func carry(first, second uint32) uint32 {
	if IsNaN(first) {
		return first | Quiet
	}
	return second | Quiet
}

// Mul is the float32 product a*b with a NaN result under c (canon the op's
// canonical NaN): a NaN operand is carried, b when both are NaN (torch
// 2.11's CPU multiply, measured: its compiled multiply takes the operands
// in the other order); an invalid product of numbers (0·∞) carries
// X86Default. A number result is the correctly rounded product.
func (c Convention) Mul(a, b float32, canon uint32) float32 {
	ab, bb := math.Float32bits(a), math.Float32bits(b)
	if IsNaN(ab) || IsNaN(bb) {
		return c.NaN(canon, carry(bb, ab))
	}
	r := a * b
	if r != r {
		return c.NaN(canon, X86Default)
	}
	return r
}

// Div is the float32 quotient a/b with a NaN result under c, as Mul but
// for two NaN operands, where the dividend is carried (x86's DIVSS keeps
// its destination operand; not measured, and no op divides two NaNs on
// the golden inputs); 0/0 and ∞/∞ are invalid.
func (c Convention) Div(a, b float32, canon uint32) float32 {
	ab, bb := math.Float32bits(a), math.Float32bits(b)
	if IsNaN(ab) || IsNaN(bb) {
		return c.NaN(canon, carry(ab, bb))
	}
	r := a / b
	if r != r {
		return c.NaN(canon, X86Default)
	}
	return r
}

// NaNTest returns the NaN test of one little-endian element of a float
// dtype (safetensors names F32, F16, BF16), or nil for a dtype without
// NaNs: what a comparison that accepts any NaN for a NaN needs.
func NaNTest(dtype string) func([]byte) bool {
	switch dtype {
	case "F32":
		return func(b []byte) bool {
			return IsNaN(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24)
		}
	case "F16":
		return func(b []byte) bool { return (uint16(b[0])|uint16(b[1])<<8)&0x7FFF > 0x7C00 }
	case "BF16":
		return func(b []byte) bool { return (uint16(b[0])|uint16(b[1])<<8)&0x7FFF > 0x7F80 }
	}
	return nil
}
