package mx

import "fmt"

// FP6Packing is one way of storing four 6-bit MXFP6 codes in three bytes.
// OCP MX v1.0 defines the element encodings, not their packing in memory;
// implementations disagree, so each packing is named after the code that
// writes it.
type FP6Packing struct {
	Name    string
	Summary string
	Source  string
	split   bool
}

// The FP6 packings.
var (
	// FP6LSB is the little-endian bit stream: code i occupies bits
	// 6i..6i+5 of the 24-bit group, byte 0 holding the lowest bits:
	// b0 = e1[1:0]<<6 | e0, b1 = e2[3:0]<<4 | e1>>2, b2 = e3<<2 | e2>>4.
	FP6LSB = FP6Packing{Name: "lsb",
		Summary: "4 codes as a little-endian 24-bit stream, code 0 in the low bits of byte 0",
		Source:  "ROCm/aiter pack_fp6_e2m3 (MXFP6 E2M3 helpers); ml-explore/mlx mlx/backend/cpu/quantized.cpp extract_bits<6> @ 0e18bb05ac13a17a986f51bf172681c188136a0f"}
	// FP6Split is torchao's pack_uint6 (v0.10 to v0.12, removed by
	// v0.18, which keeps FP6 unpacked): the high 4 bits of each code in
	// two bytes, the low 2 bits of all four in the third:
	// b0 = hi4(e0)<<4 | hi4(e1), b1 = hi4(e3)<<4 | hi4(e2),
	// b2 = lo2(e0)<<6 | lo2(e1)<<4 | lo2(e3)<<2 | lo2(e2).
	FP6Split = FP6Packing{Name: "torchao-4+2",
		Summary: "4 codes as two bytes of high nibbles and one byte of low 2-bit pairs (torchao pack_uint6)",
		Source:  "pytorch/ao torchao/prototype/mx_formats/kernels.py pack_uint6_pytorch (v0.12.0; custom_cast.py in v0.10.0)",
		split:   true}
)

// FP6Packings lists the packings.
func FP6Packings() []FP6Packing { return []FP6Packing{FP6LSB, FP6Split} }

// LookupFP6Packing returns the packing with the given name.
func LookupFP6Packing(name string) (FP6Packing, error) {
	for _, p := range FP6Packings() {
		if p.Name == name {
			return p, nil
		}
	}
	return FP6Packing{}, fmt.Errorf("mx: unknown FP6 packing %q (known: lsb, torchao-4+2)", name)
}

// Pack packs codes (low 6 bits each; len a multiple of 4) into 3/4 as many
// bytes.
func (p FP6Packing) Pack(codes []uint8) ([]uint8, error) {
	if len(codes)%4 != 0 {
		return nil, fmt.Errorf("mx: %d FP6 codes is not a multiple of 4", len(codes))
	}
	out := make([]uint8, len(codes)/4*3)
	for g := 0; g < len(codes)/4; g++ {
		e0, e1, e2, e3 := codes[4*g]&0x3f, codes[4*g+1]&0x3f, codes[4*g+2]&0x3f, codes[4*g+3]&0x3f
		b := out[3*g : 3*g+3]
		if p.split {
			b[0] = e0>>2<<4 | e1>>2
			b[1] = e3>>2<<4 | e2>>2
			b[2] = e0&3<<6 | e1&3<<4 | e3&3<<2 | e2&3
		} else {
			b[0] = e1<<6 | e0
			b[1] = e2<<4 | e1>>2
			b[2] = e3<<2 | e2>>4
		}
	}
	return out, nil
}

// Unpack is the inverse of Pack: n codes (a multiple of 4) from n*3/4
// bytes.
func (p FP6Packing) Unpack(packed []uint8, n int) ([]uint8, error) {
	if n < 0 || n%4 != 0 || len(packed) != n/4*3 {
		return nil, fmt.Errorf("mx: %d packed FP6 bytes do not hold %d codes (want a multiple of 4 codes in 3/4 as many bytes)", len(packed), n)
	}
	out := make([]uint8, n)
	for g := 0; g < n/4; g++ {
		b := packed[3*g : 3*g+3]
		e := out[4*g : 4*g+4]
		if p.split {
			e[0] = b[0]>>4<<2 | b[2]>>6
			e[1] = b[0]&0xf<<2 | b[2]>>4&3
			e[2] = b[1]&0xf<<2 | b[2]&3
			e[3] = b[1]>>4<<2 | b[2]>>2&3
		} else {
			e[0] = b[0] & 0x3f
			e[1] = b[0]>>6 | b[1]&0xf<<2
			e[2] = b[1]>>4 | b[2]&3<<4
			e[3] = b[2] >> 2
		}
	}
	return out, nil
}
