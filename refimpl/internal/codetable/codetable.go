// Package codetable tabulates a float32 -> 4- or 8-bit code conversion:
// one byte per bucket of 2^19 float32 patterns instead of a call of the
// encoder per input. The reference's conversion catalogue (refimpl/unary)
// and its block quantizers (refimpl/nvfp4) both read codes from such
// tables; it sits below both so that neither imports the other for it.
package codetable

import "sync"

// BucketShift splits the float32 bit patterns into buckets of 2^19 that
// share their top 13 bits (sign, exponent, top 4 mantissa bits). Every
// rounding boundary of the 4- and 8-bit conversions lies at the start of a
// bucket or one pattern after it: the boundaries are midpoints between
// neighbouring codes' values (at most 3 mantissa bits plus the halfway bit,
// so the low 19 bits are zero), the tie rule deciding whether the midpoint
// itself rounds up (boundary at the midpoint) or down (boundary one pattern
// above), or E8M0's power-of-two boundaries (2^e exact or 2^e plus one
// pattern, and 2^-127 = 0x00400000 for subnormals); infinities and NaNs
// have their own exponent. So such a code is a function of the bucket and
// of whether the pattern is the bucket's first.
const BucketShift = 19

// Table gives the code of every float32 pattern under one 4- or 8-bit
// conversion: for bucket k it holds the code of the bucket's first pattern
// at 2k+1 and of every other pattern at 2k. It is exact only for an
// encoder that is constant over each bucket but its first pattern (see
// BucketShift); refimpl/unary's tests and the committed digests
// (golden/exhaustive) check that for every conversion tabulated.
type Table [tableLen]uint8

const tableLen = 2 << (32 - BucketShift)

// Build tabulates enc, which maps a float32 bit pattern to its code.
func Build(enc func(b uint32) uint8) *Table {
	t := new(Table)
	for k := range tableLen / 2 {
		first := uint32(k) << BucketShift
		t[2*k] = enc(first + 1)
		t[2*k+1] = enc(first)
	}
	return t
}

// Lazy returns a function that builds enc's table on its first call and
// returns the same table on every call, so that programs that never encode
// through it do not pay for it.
func Lazy(enc func(b uint32) uint8) func() *Table {
	return sync.OnceValue(func() *Table { return Build(enc) })
}

// Code is the code of the float32 with bit pattern b.
func (t *Table) Code(b uint32) uint8 { return t[slot(b)] }

// EncodeRange writes the codes of the float32 patterns start, start+1, ...
// into out, one byte each; the sequence wraps around after 0xFFFFFFFF.
// The patterns of a bucket share their code except the bucket's first, so
// a range is a few runs of one byte each: the run is filled by doubling
// copies (a memmove, which GOARCH=wasm compiles to the memory.copy
// instruction), not by a loop over the elements. Go's wasm code pays
// several times the native cost per loop iteration; a copy costs the same
// in both.
func (t *Table) EncodeRange(start uint32, out []byte) {
	const bucket = 1 << BucketShift
	for i := 0; i < len(out); {
		b := start + uint32(i)
		run := out[i:min(len(out), i+bucket-int(b%bucket))]
		run[0] = t[slot(b)]
		if rest := run[1:]; len(rest) > 0 {
			rest[0] = t[slot(b+1)] // b+1 is in b's bucket and not its first
			for n := 1; n < len(rest); n *= 2 {
				copy(rest[n:], rest[:n])
			}
		}
		i += len(run)
	}
}

// slot is the table index of pattern b.
func slot(b uint32) uint32 {
	const low = 1<<BucketShift - 1
	// (b&low - 1) >> 31 is 1 exactly when b is a bucket's first pattern
	// (b&low < 2^19, so only 0 wraps).
	return (b>>BucketShift<<1 | (b&low-1)>>31) & (tableLen - 1)
}
