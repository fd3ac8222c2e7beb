package fp4

// Pack stores two codes per byte: codes[2i] in the low nibble and
// codes[2i+1] in the high nibble of byte i, the order of PTX
// cvt.rn.satfinite.e2m1x2.f32 as vLLM calls it, torch float4_e2m1fn_x2,
// compressed-tensors pack_fp4_to_uint8 and torchao pack_uint4. (llama.cpp
// block_mxfp4 splits a block in halves instead; that layout belongs to its
// own package.) Only the low 4 bits of each code are used. An odd-length
// input is padded with one 0x0 code (+0) in the last high nibble, so the
// result always has (len(codes)+1)/2 bytes.
func Pack(codes []uint8) []uint8 {
	out := make([]uint8, (len(codes)+1)/2)
	for i, c := range codes {
		out[i/2] |= (c & 0xF) << (4 * (i & 1))
	}
	return out
}

// Unpack is the inverse of Pack: it returns n codes, element 2i from the
// low nibble of packed[i]. n is clamped to [0, 2*len(packed)], so the
// length of the result says how many codes were available.
func Unpack(packed []uint8, n int) []uint8 {
	n = max(0, min(n, 2*len(packed)))
	out := make([]uint8, n)
	for i := range out {
		out[i] = packed[i/2] >> (4 * (i & 1)) & 0xF
	}
	return out
}
