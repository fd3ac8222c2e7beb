package gguf

import "math"

// quiet is a NaN with its quiet bit set, as x86 and arm64 propagate it.
func quiet(x float32) float32 { return math.Float32frombits(math.Float32bits(x) | 0x400000) }

// madq is mad(a, b, c) with the NaN of the result made explicit, so
// that it depends neither on Go's operand order nor on the host: a NaN
// operand propagates quieted (the first of a, b, c), an invalid
// operation (0*Inf, Inf-Inf) gives the target's default NaN. Under FMA
// the product is exact, so it is infinite only when a factor is; without
// FMA the float32 product may also overflow.
func (p Profile) madq(a, b, c float32) float32 {
	for _, v := range [3]float32{a, b, c} {
		if v != v {
			return quiet(v)
		}
	}
	inf := func(v float32) bool { return math.IsInf(float64(v), 0) }
	if (a == 0 && inf(b)) || (inf(a) && b == 0) {
		return p.defaultNaN()
	}
	prInf, prPos := inf(a) || inf(b), (a > 0) == (b > 0)
	if !p.FMA {
		pr := float32(a * b)
		prInf, prPos = inf(pr), pr > 0
	}
	if prInf && inf(c) && prPos != (c > 0) {
		return p.defaultNaN()
	}
	return p.mad(a, b, c)
}

// mulq is a*b with its NaN made explicit (as madq).
func (p Profile) mulq(a, b float32) float32 {
	switch {
	case a != a:
		return quiet(a)
	case b != b:
		return quiet(b)
	case (a == 0 && math.IsInf(float64(b), 0)) || (b == 0 && math.IsInf(float64(a), 0)):
		return p.defaultNaN()
	}
	return a * b
}

// addq is a+b with its NaN made explicit (as madq).
func (p Profile) addq(a, b float32) float32 {
	switch {
	case a != a:
		return quiet(a)
	case b != b:
		return quiet(b)
	case math.IsInf(float64(a), 0) && math.IsInf(float64(b), 0) && (a > 0) != (b > 0):
		return p.defaultNaN()
	}
	return a + b
}

// q4_0: fp16 d | qs[16], element j = (nibble - 8) * d, low nibbles the
// first 16 elements, high nibbles the last 16.
func quantQ4_0(p Profile, x []float32, y []byte) {
	var amax, max float32
	for _, v := range x {
		if amax < abs32(v) {
			amax = abs32(v)
			max = v
		}
	}
	d := max / -8
	var id float32
	if d != 0 {
		id = 1 / d
	}
	put16(y, fp16(d))
	for j := 0; j < 16; j++ {
		// (int8_t)(x*id + 8.5f): the product and the add are one
		// contraction site (llama.cpp#8939).
		xi0 := min8(15, int8(p.cvtI32(p.mad(x[j], id, 8.5))))
		xi1 := min8(15, int8(p.cvtI32(p.mad(x[16+j], id, 8.5))))
		y[2+j] = uint8(xi0) | uint8(xi1)<<4
	}
}

func min8(a, b int8) int8 {
	if a < b {
		return a
	}
	return b
}

func dequantQ4_0(p Profile, x []byte, y []float32) {
	d := fromFP16(le16(x))
	for j := 0; j < 16; j++ {
		y[j] = p.mulq(float32(int(x[2+j]&0xF)-8), d)
		y[j+16] = p.mulq(float32(int(x[2+j]>>4)-8), d)
	}
}

// q4_1: fp16 d | fp16 m | qs[16], element j = nibble*d + m.
func quantQ4_1(p Profile, x []float32, y []byte) {
	mn := float32(math.MaxFloat32)
	mx := float32(-math.MaxFloat32)
	for _, v := range x {
		if v < mn {
			mn = v
		}
		if v > mx {
			mx = v
		}
	}
	// min starts at FLT_MAX and max at -FLT_MAX, and the comparisons skip
	// a NaN, so max - min is never Inf - Inf: a block of +Inf gives
	// (Inf - FLT_MAX)/n = Inf, a block of NaN (-FLT_MAX - FLT_MAX)/n = -Inf
	d := (mx - mn) / 15
	var id float32
	if d != 0 {
		id = 1 / d
	}
	put16(y, fp16(d))
	put16(y[2:], fp16(mn))
	for j := 0; j < 16; j++ {
		xi0 := min8(15, int8(p.cvtI32(p.mad(x[j]-mn, id, 0.5))))
		xi1 := min8(15, int8(p.cvtI32(p.mad(x[16+j]-mn, id, 0.5))))
		y[4+j] = uint8(xi0) | uint8(xi1)<<4
	}
}

func dequantQ4_1(p Profile, x []byte, y []float32) {
	d := fromFP16(le16(x))
	m := fromFP16(le16(x[2:]))
	for j := 0; j < 16; j++ {
		y[j] = p.madq(float32(x[4+j]&0xF), d, m)
		y[j+16] = p.madq(float32(x[4+j]>>4), d, m)
	}
}

// q5_0: fp16 d | qh[4] | qs[16]; the fifth bit of element j is bit j of
// the little-endian uint32 qh; element = (q - 16) * d.
func quantQ5_0(p Profile, x []float32, y []byte) {
	var amax, max float32
	for _, v := range x {
		if amax < abs32(v) {
			amax = abs32(v)
			max = v
		}
	}
	d := max / -16
	var id float32
	if d != 0 {
		id = 1 / d
	}
	put16(y, fp16(d))
	var qh uint32
	for j := 0; j < 16; j++ {
		xi0 := uint8(min8(31, int8(p.cvtI32(p.mad(x[j], id, 16.5)))))
		xi1 := uint8(min8(31, int8(p.cvtI32(p.mad(x[16+j], id, 16.5)))))
		y[6+j] = xi0&0xF | (xi1&0xF)<<4
		qh |= uint32(xi0&0x10) >> 4 << j
		qh |= uint32(xi1&0x10) >> 4 << (j + 16)
	}
	y[2], y[3], y[4], y[5] = byte(qh), byte(qh>>8), byte(qh>>16), byte(qh>>24)
}

func qh32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func dequantQ5_0(p Profile, x []byte, y []float32) {
	d := fromFP16(le16(x))
	qh := qh32(x[2:])
	for j := 0; j < 16; j++ {
		xh0 := uint8(qh>>j<<4) & 0x10
		xh1 := uint8(qh>>(j+12)) & 0x10
		y[j] = p.mulq(float32(int32(x[6+j]&0xF|xh0)-16), d)
		y[j+16] = p.mulq(float32(int32(x[6+j]>>4|xh1)-16), d)
	}
}

// q5_1: fp16 d | fp16 m | qh[4] | qs[16]; element = q*d + m.
func quantQ5_1(p Profile, x []float32, y []byte) {
	mn := float32(math.MaxFloat32)
	mx := float32(-math.MaxFloat32)
	for _, v := range x {
		if v < mn {
			mn = v
		}
		if v > mx {
			mx = v
		}
	}
	// min starts at FLT_MAX and max at -FLT_MAX, and the comparisons skip
	// a NaN, so max - min is never Inf - Inf: a block of +Inf gives
	// (Inf - FLT_MAX)/n = Inf, a block of NaN (-FLT_MAX - FLT_MAX)/n = -Inf
	d := (mx - mn) / 31
	var id float32
	if d != 0 {
		id = 1 / d
	}
	put16(y, fp16(d))
	put16(y[2:], fp16(mn))
	var qh uint32
	for j := 0; j < 16; j++ {
		xi0 := p.cvtU8(p.mad(x[j]-mn, id, 0.5))
		xi1 := p.cvtU8(p.mad(x[16+j]-mn, id, 0.5))
		y[8+j] = xi0&0xF | (xi1&0xF)<<4
		qh |= uint32(xi0&0x10) >> 4 << j
		qh |= uint32(xi1&0x10) >> 4 << (j + 16)
	}
	y[4], y[5], y[6], y[7] = byte(qh), byte(qh>>8), byte(qh>>16), byte(qh>>24)
}

func dequantQ5_1(p Profile, x []byte, y []float32) {
	d := fromFP16(le16(x))
	m := fromFP16(le16(x[2:]))
	qh := qh32(x[4:])
	for j := 0; j < 16; j++ {
		xh0 := uint8(qh>>j<<4) & 0x10
		xh1 := uint8(qh>>(j+12)) & 0x10
		y[j] = p.madq(float32(x[8+j]&0xF|xh0), d, m)
		y[j+16] = p.madq(float32(x[8+j]>>4|xh1), d, m)
	}
}

// q8_0: fp16 d | int8 qs[32]; element = q*d.
func quantQ8_0(p Profile, x []float32, y []byte) {
	var amax float32
	for _, v := range x {
		// MAX(amax, fabsf(v)) = amax > |v| ? amax : |v|: a NaN replaces
		// amax, the next element replaces the NaN.
		if a := abs32(v); !(amax > a) {
			amax = a
		}
	}
	d := amax / 127
	var id float32
	if d != 0 {
		id = 1 / d
	}
	put16(y, fp16(d))
	for j, v := range x {
		y[2+j] = byte(int8(p.cvtI32(roundf(v * id))))
	}
}

func dequantQ8_0(p Profile, x []byte, y []float32) {
	d := fromFP16(le16(x))
	for j := range y {
		y[j] = p.mulq(float32(int8(x[2+j])), d)
	}
}

// q1_0 (128 elements): fp16 d | qs[16]; bit j set means +d, clear -d;
// d is the mean of |x| (summed in element order).
func quantQ1_0(p Profile, x []float32, y []byte) {
	var sum float32
	for _, v := range x {
		sum += abs32(v)
	}
	d := sum / 128
	put16(y, fp16(d))
	for j := range y[2:] {
		y[2+j] = 0
	}
	for j, v := range x {
		if v >= 0 {
			y[2+j/8] |= 1 << (j % 8)
		}
	}
}

func dequantQ1_0(p Profile, x []byte, y []float32) {
	d := fromFP16(le16(x))
	nd := negF(d) // C negation flips the sign bit, of a NaN too
	for j := range y {
		if x[2+j/8]>>(j%8)&1 != 0 {
			y[j] = d
		} else {
			y[j] = nd
		}
	}
}

// q2_0 (64 elements): fp16 d | qs[16]; 2-bit code q at bits 2*(j%4) of
// byte j/4, element = (q - 1) * d; d is max |x|.
func quantQ2_0(p Profile, x []float32, y []byte) {
	var amax float32
	for _, v := range x {
		if a := abs32(v); a > amax {
			amax = a
		}
	}
	d := amax
	var id float32
	if d > 0 {
		id = 1 / d
	}
	put16(y, fp16(d))
	for j := range y[2:] {
		y[2+j] = 0
	}
	for j, w := range x {
		q := p.cvtI32(roundf(w*id)) + 1
		if q < 0 {
			q = 0
		}
		if q > 3 {
			q = 3
		}
		y[2+j/4] |= uint8(q) << (2 * (j % 4))
	}
}

func dequantQ2_0(p Profile, x []byte, y []float32) {
	d := fromFP16(le16(x))
	for j := range y {
		q := x[2+j/4] >> (2 * (j % 4)) & 3
		y[j] = p.mulq(float32(int(q)-1), d)
	}
}
