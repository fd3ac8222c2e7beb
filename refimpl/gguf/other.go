package gguf

import "math"

// KValuesIQ4NL is kvalues_iq4nl (src/ggml-common.h): the 16 non-linear
// levels of IQ4_NL and IQ4_XS, element = d * level.
var KValuesIQ4NL = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// KValuesMXFP4 is kvalues_mxfp4 (kvalues_fp4): twice the E2M1 value of
// each code, the levels of NVFP4 (and MXFP4) blocks.
var KValuesMXFP4 = [16]int8{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}

// iq4_nl (32 elements): fp16 d | qs[16]; element j = d *
// kvalues_iq4nl[nibble], low nibbles the first 16.
func dequantIQ4_NL(p Profile, x []byte, y []float32) {
	d := fromFP16(le16(x))
	for j := 0; j < 16; j++ {
		y[j] = p.mulq(float32(KValuesIQ4NL[x[2+j]&0xF]), d)
		y[j+16] = p.mulq(float32(KValuesIQ4NL[x[2+j]>>4]), d)
	}
}

// iq4_xs (256): fp16 d | uint16 scales_h | scales_l[4] | qs[128]; the
// 6-bit scale of sub-block ib is nibble ib%2 of scales_l[ib/2] with bits
// 2ib..2ib+1 of scales_h on top; element = d*(ls-32) * level.
func dequantIQ4_XS(p Profile, x []byte, y []float32) {
	d := fromFP16(le16(x))
	sh := le16(x[2:])
	sl := x[4:8]
	qs := x[8:]
	for ib := 0; ib < 8; ib++ {
		ls := int32(sl[ib/2]>>(4*(ib%2))&0xF) | int32((sh>>(2*ib))&3)<<4
		dl := p.mulq(float32(ls-32), d)
		for j := 0; j < 16; j++ {
			y[32*ib+j] = p.mulq(float32(KValuesIQ4NL[qs[16*ib+j]&0xF]), dl)
			y[32*ib+j+16] = p.mulq(float32(KValuesIQ4NL[qs[16*ib+j]>>4]), dl)
		}
	}
}

// ue4m3ToFP32 is ggml_ue4m3_to_fp32: an unsigned E4M3 code times 0.5
// (kvalues_mxfp4 are doubled); 0 and 0x7F (the E4M3 NaN) decode to 0.
// The sign bit is ignored.
func ue4m3ToFP32(x uint8) float32 {
	if x == 0 || x == 0x7F {
		return 0
	}
	exp := int(x>>3) & 0xF
	man := int(x & 7)
	var raw float32
	if exp == 0 {
		raw = float32(math.Ldexp(float64(man), -9))
	} else {
		raw = float32(math.Ldexp(1+float64(man)/8, exp-7))
	}
	return raw * 0.5
}

// fp32ToUE4M3 is ggml_fp32_to_ue4m3: NaN and x <= 0 give 0; x is clamped
// to 448; normal results round by adding the fp32 bit below the third
// mantissa bit (ties away from zero), exponent overflow gives 0x7E;
// subnormal results are (int)(x*512 + 0.5f), a contraction site, clamped
// to 7, and 0 below 1.
func (p Profile) fp32ToUE4M3(x float32) uint8 {
	if !(x > 0) {
		return 0
	}
	if x > 448 {
		x = 448
	}
	bits := math.Float32bits(x)
	exp := int((bits>>23)&0xFF) - 127
	man := int((bits >> 20) & 7)
	uexp := exp + 7
	if uexp <= 0 {
		m := p.cvtI32(p.mad(x, 512, 0.5))
		if m > 7 {
			m = 7
		}
		if m < 1 {
			return 0
		}
		return uint8(m)
	}
	if uexp >= 15 {
		return 0x7E
	}
	uman := man + int((bits>>19)&1)
	if uman > 7 {
		uman = 0
		uexp++
		if uexp >= 15 {
			return 0x7E
		}
	}
	return uint8(uexp<<3 | uman)
}

// bestIndexMXFP4 is best_index_mxfp4: the first code whose level*e is
// nearest x (|kvalues[i]*e - x|, strict < so ties keep the lower code).
func bestIndexMXFP4(x, e float32) uint8 {
	best := 0
	bestErr := abs32(float32(float32(KValuesMXFP4[0])*e) - x)
	for i := 1; i < 16; i++ {
		err := abs32(float32(float32(KValuesMXFP4[i])*e) - x)
		if err < bestErr {
			best = i
			bestErr = err
		}
	}
	return uint8(best)
}

// nvfp4 (64 elements): UE4M3 d[4] (one per 16 elements) | qs[32] (8
// bytes per 16-element sub-block: low nibbles its first 8 elements, high
// nibbles its last 8). Element = kvalues_mxfp4[code] * ue4m3_to_fp32(d),
// which is half the E4M3 value because the levels are doubled.
func quantNVFP4(p Profile, x []float32, y []byte) {
	for s := 0; s < 4; s++ {
		xb := x[16*s : 16*s+16]
		var amax float32
		for _, v := range xb {
			if amax < abs32(v) {
				amax = abs32(v)
			}
		}
		ue := p.fp32ToUE4M3(amax / 6)
		y[s] = ue
		d := ue4m3ToFP32(ue)
		for j := 0; j < 8; j++ {
			y[4+8*s+j] = bestIndexMXFP4(xb[j], d) | bestIndexMXFP4(xb[8+j], d)<<4
		}
	}
}

func dequantNVFP4(p Profile, x []byte, y []float32) {
	for s := 0; s < 4; s++ {
		d := ue4m3ToFP32(x[s])
		for j := 0; j < 8; j++ {
			q := x[4+8*s+j]
			y[16*s+j] = float32(KValuesMXFP4[q&0xF]) * d
			y[16*s+8+j] = float32(KValuesMXFP4[q>>4]) * d
		}
	}
}

// tq1_0 (256): qs[48] (five trits per byte, base 3 fixed point) | qh[4]
// (four trits per byte) | fp16 d. Element = (trit - 1) * d.
func quantTQ1_0(p Profile, x []float32, y []byte) {
	var amax float32
	for _, v := range x {
		if a := abs32(v); !(amax > a) {
			amax = a
		}
	}
	d := amax
	var id float32
	if d != 0 {
		id = 1 / d
	}
	put16(y[52:], fp16(d))
	trit := func(v float32) uint8 { return uint8(p.lroundLow32(v*id) + 1) }
	pack := func(q uint8) uint8 { return uint8((uint16(q)*256 + 242) / 243) }
	xs := x
	for m := 0; m < 32; m++ {
		var q uint8
		for n := 0; n < 5; n++ {
			q = q*3 + trit(xs[m+32*n])
		}
		y[m] = pack(q)
	}
	xs = xs[160:]
	for m := 0; m < 16; m++ {
		var q uint8
		for n := 0; n < 5; n++ {
			q = q*3 + trit(xs[m+16*n])
		}
		y[32+m] = pack(q)
	}
	xs = xs[80:]
	for j := 0; j < 4; j++ {
		var q uint8
		for m := 0; m < 4; m++ {
			q = q*3 + trit(xs[j+4*m])
		}
		y[48+j] = pack(q * 3)
	}
}

func dequantTQ1_0(p Profile, x []byte, y []float32) {
	d := fromFP16(le16(x[52:]))
	pow3 := [6]uint8{1, 3, 9, 27, 81, 243}
	k := 0
	emit := func(b uint8, n int) {
		q := b * pow3[n]
		xi := int16((uint16(q) * 3) >> 8)
		y[k] = p.mulq(float32(xi-1), d)
		k++
	}
	for n := 0; n < 5; n++ {
		for m := 0; m < 32; m++ {
			emit(x[m], n)
		}
	}
	for n := 0; n < 5; n++ {
		for m := 0; m < 16; m++ {
			emit(x[32+m], n)
		}
	}
	for n := 0; n < 4; n++ {
		for j := 0; j < 4; j++ {
			emit(x[48+j], n)
		}
	}
}

// tq2_0 (256): qs[64] (four 2-bit codes per byte, code n of byte m in
// bits 2n..2n+1, element 32*n + m of each 128) | fp16 d. Element =
// (code - 1) * d.
func quantTQ2_0(p Profile, x []float32, y []byte) {
	var amax float32
	for _, v := range x {
		if a := abs32(v); !(amax > a) {
			amax = a
		}
	}
	d := amax
	var id float32
	if d != 0 {
		id = 1 / d
	}
	put16(y[64:], fp16(d))
	for j := 0; j < 64; j += 32 {
		xs := x[4*j:]
		for m := 0; m < 32; m++ {
			var q uint8
			for n := 0; n < 4; n++ {
				xi := p.lroundLow32(xs[m+32*n]*id) + 1
				q += uint8(xi&3) << (2 * n)
			}
			y[j+m] = q
		}
	}
}

func dequantTQ2_0(p Profile, x []byte, y []float32) {
	d := fromFP16(le16(x[64:]))
	k := 0
	for j := 0; j < 64; j += 32 {
		for l := 0; l < 4; l++ {
			for m := 0; m < 32; m++ {
				q := int8((x[j+m] >> (2 * l)) & 3)
				y[k] = p.mulq(float32(q-1), d)
				k++
			}
		}
	}
}
