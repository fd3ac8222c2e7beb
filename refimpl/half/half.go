// Package half converts between float32 and the 16-bit formats bfloat16
// and IEEE binary16 (FP16), both rounding to nearest, ties to even.
//
// BF16 is implemented here on the bits; FP16 goes through
// github.com/x448/float16, whose rounding this package's tests check
// independently (ties, overflow, subnormals, NaN).
package half

import (
	"math"

	"github.com/x448/float16"
)

// EncodeBF16 rounds x to the nearest bfloat16, ties to even; overflow gives
// infinity of the sign. A NaN stays NaN: its sign and top 7 payload bits are
// kept and the quiet bit is set, so a payload that lives only in the low 16
// bits cannot turn it into infinity.
func EncodeBF16(x float32) uint16 {
	b := math.Float32bits(x)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x0040
	}
	// Adding 0x7fff plus the kept LSB carries exactly when the discarded
	// half is above one half, or equal with an odd kept part.
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// DecodeBF16 returns the exact float32 value of a bfloat16.
func DecodeBF16(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// EncodeFP16 rounds x to the nearest IEEE binary16, ties to even; overflow
// gives infinity of the sign; float32 subnormals become signed zero; a NaN
// keeps its sign and top 10 payload bits and is made quiet.
func EncodeFP16(x float32) uint16 { return float16.Fromfloat32(x).Bits() }

// DecodeFP16 returns the exact float32 value of a binary16; a NaN keeps its
// sign and payload and is made quiet.
func DecodeFP16(h uint16) float32 { return float16.Frombits(h).Float32() }

func float32bits(x float32) uint32     { return math.Float32bits(x) }
func float32frombits(b uint32) float32 { return math.Float32frombits(b) }
