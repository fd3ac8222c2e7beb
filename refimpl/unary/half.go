package unary

import (
	"encoding/binary"

	"github.com/bitexact/bitexact/refimpl/half"
)

// The EncodeRange bodies of the 16-bit conversions. Eight codes per loop
// iteration, stored as two 8-byte words, each computed by an encoder that
// the compiler inlines: under GOARCH=wasm a call and a loop iteration each
// cost more than the conversion itself. Both give exactly the profile's
// Encode (TestEncodeRange16 on a sample; golden/exhaustive's
// TestExhaustiveNative on all 2^32 inputs against digests committed before
// these bodies existed).

func encodeBF16Range(p half.Profile, start uint32, out []byte) {
	i := 0
	for ; i+16 <= len(out); i += 16 {
		b := start + uint32(i/2)
		o := out[i : i+16 : i+16]
		if b&0x7fffffff <= bf16Fast(p) {
			// No NaN among the eight (and one sign): no branch per code,
			// which under GOARCH=wasm costs a dispatch.
			binary.LittleEndian.PutUint64(o[:8], uint64(bf16Number(b))|uint64(bf16Number(b+1))<<16|
				uint64(bf16Number(b+2))<<32|uint64(bf16Number(b+3))<<48)
			binary.LittleEndian.PutUint64(o[8:], uint64(bf16Number(b+4))|uint64(bf16Number(b+5))<<16|
				uint64(bf16Number(b+6))<<32|uint64(bf16Number(b+7))<<48)
			continue
		}
		for k := range 8 {
			v := bf16(p, b+uint32(k))
			o[2*k], o[2*k+1] = byte(v), byte(v>>8)
		}
	}
	for ; i+1 < len(out); i += 2 {
		v := bf16(p, start+uint32(i/2))
		out[i], out[i+1] = byte(v), byte(v>>8)
	}
}

func encodeFP16Range(p half.Profile, start uint32, out []byte) {
	i := 0
	for ; i+16 <= len(out); i += 16 {
		b := start + uint32(i/2)
		o := out[i : i+16 : i+16]
		switch a := b & 0x7fffffff; {
		case a-fp16MinNormal < fp16Fast(p)-fp16MinNormal-7:
			// All eight in the binary16 normal range (and of one sign).
			binary.LittleEndian.PutUint64(o[:8], uint64(fp16Normal(b))|uint64(fp16Normal(b+1))<<16|
				uint64(fp16Normal(b+2))<<32|uint64(fp16Normal(b+3))<<48)
			binary.LittleEndian.PutUint64(o[8:], uint64(fp16Normal(b+4))|uint64(fp16Normal(b+5))<<16|
				uint64(fp16Normal(b+6))<<32|uint64(fp16Normal(b+7))<<48)
			continue
		case a <= fp16Zero-8, a-fp16Overflow <= 0x7f800000-fp16Overflow-7:
			// All eight round to a signed zero, or all eight to a signed
			// infinity (none a NaN; the largest finite value under
			// satfinite): one code, and most of the float32 range is here.
			var v uint64 = uint64(b>>16) & 0x8000
			switch {
			case a >= fp16Overflow && p.Satfinite:
				v |= 0x7bff
			case a >= fp16Overflow:
				v |= 0x7c00
			}
			v *= 0x0001_0001_0001_0001
			binary.LittleEndian.PutUint64(o[:8], v)
			binary.LittleEndian.PutUint64(o[8:], v)
			continue
		}
		for k := range 8 {
			v := fp16(p, b+uint32(k))
			o[2*k], o[2*k+1] = byte(v), byte(v>>8)
		}
	}
	for ; i+1 < len(out); i += 2 {
		v := fp16(p, start+uint32(i/2))
		out[i], out[i+1] = byte(v), byte(v>>8)
	}
}

// bf16Fast is the largest magnitude (bits) whose run of eight, from it
// up, bf16Number encodes as profile p does: no NaN among them and, under
// satfinite, none that rounds to infinity (from 0x7f7f8000 on).
func bf16Fast(p half.Profile) uint32 {
	if p.Satfinite {
		return 0x7f7f8000 - 8
	}
	return 0x7f800000 - 7
}

// fp16Fast is the magnitude (bits) below which fp16Normal encodes as
// profile p does: 2^16, or 65520 under satfinite (from there the
// rounding carries into infinity, which satfinite replaces).
func fp16Fast(p half.Profile) uint32 {
	if p.Satfinite {
		return 0x477ff000
	}
	return fp16Overflow
}

// bf16Number is half.EncodeBF16 of a pattern that is not a NaN: adding
// 0x7fff plus the kept LSB carries exactly when the dropped half is above
// one half, or equal with an odd kept part.
func bf16Number(b uint32) uint16 { return uint16((b + 0x7fff + b>>16&1) >> 16) }

// bf16 is half.Profile.EncodeBF16 on a bit pattern.
func bf16(p half.Profile, b uint32) uint16 { return p.BF16Bits(b) }

// The float32 magnitudes (bits) where binary16 normals start (2^-14) and
// where rounding gives infinity however the dropped bits fall (2^16).
const (
	fp16MinNormal = 0x38800000
	fp16Overflow  = 0x47800000
	// fp16Zero (2^-25) is where rounding stops giving zero: below it, and
	// at it (a tie, to the even zero), the result is a signed zero.
	fp16Zero = 0x33000000
)

// fp16Normal is fp16 for a pattern whose magnitude is in [2^-14, 2^16):
// rebias the exponent (127 -> 15) and round the 13 dropped bits to
// nearest even; a carry out of the mantissa steps the exponent, up to
// infinity from 65520. It inlines; fp16 does not.
func fp16Normal(b uint32) uint16 {
	a := b & 0x7fffffff
	return uint16(b>>16&0x8000 | (a-0x38000000+0xfff+a>>13&1)>>13)
}

// fp16 is half.Profile.EncodeFP16 on a bit pattern: for a number, the
// rounding of github.com/x448/float16's Fromfloat32 (which
// half.EncodeFP16 calls, and which does not inline), case for case.
func fp16(p half.Profile, b uint32) uint16 {
	if b&0x7fffffff > 0x7f800000 {
		return p.FP16Bits(b) // NaN: the profile's rule
	}
	v := fp16Number(b)
	if p.Satfinite && v&0x7fff == 0x7c00 {
		v = v&0x8000 | 0x7bff
	}
	return v
}

// fp16Number is fp16 of a pattern that is not a NaN, profile aside.
func fp16Number(b uint32) uint16 {
	sign := uint16(b>>16) & 0x8000
	a := b & 0x7fffffff
	switch {
	case a >= fp16Overflow: // including infinity
		return sign | 0x7c00
	case a >= fp16MinNormal:
		return fp16Normal(b)
	case a >= fp16Zero: // binary16 subnormal range, [2^-25, 2^-14)
		e := a >> 23 // 102..112
		s := 126 - e // 14..24 bits dropped from the 24-bit significand
		m := a&0x7fffff | 0x800000
		h := m >> s
		r := uint32(1) << (s - 1)
		if m&r != 0 && m&(3*r-1) != 0 { // above half, or half with odd h
			h++
		}
		return sign | uint16(h) // a carry gives the least normal, right
	}
	return sign // below 2^-25 (ties to even at 2^-25): zero
}
