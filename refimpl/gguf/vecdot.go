package gguf

import "fmt"

// Dot is one of ggml's generic CPU dot products: a row of weight blocks
// times a row of activations already quantized to the activation type,
// as ggml's CPU backend computes it for GGML_OP_MUL_MAT when no SIMD
// kernel is compiled (ggml_vec_dot_<w>_<act>_generic in
// src/ggml-cpu/quants.c). The schedule (the declared order):
//
//	q4_0 x q8_0, q8_0 x q8_0: per block an exact int32 sum of products,
//	  then sumf += sumi*dx*dy (q4_0: (sumi*dx)*dy; q8_0: sumi*(dx*dy)),
//	  block by block, the last product fused into the add under FMA.
//	q4_K x q8_K, q6_K x q8_K: per super-block 8 int32 lane sums
//	  aux32[l] (lane l = element index mod 8 within each 16, weighted by
//	  the sub-block scale), then sums[l] += (d_x*d_y) * aux32[l]
//	  (fused), and for q4_K sumf -= (dmin_x*d_y) * sumi_min (fused);
//	  at the end sumf += sums[0] ... sums[7] in lane order.
type Dot struct {
	W, Act Type
}

// The four dot products.
var (
	DotQ4_0Q8_0 = Dot{Q4_0, Q8_0}
	DotQ8_0Q8_0 = Dot{Q8_0, Q8_0}
	DotQ4_KQ8_K = Dot{Q4_K, Q8_K}
	DotQ6_KQ8_K = Dot{Q6_K, Q8_K}
)

// Dots lists the four dot products.
func Dots() []Dot { return []Dot{DotQ4_0Q8_0, DotQ8_0Q8_0, DotQ4_KQ8_K, DotQ6_KQ8_K} }

func (d Dot) String() string { return d.W.String() + "_" + d.Act.String() }

// LookupDot maps "q4_0_q8_0", "q8_0_q8_0", "q4_K_q8_K", "q6_K_q8_K".
func LookupDot(name string) (Dot, error) {
	for _, d := range Dots() {
		if d.String() == name {
			return d, nil
		}
	}
	return Dot{}, fmt.Errorf("gguf: unknown dot product %q (known: q4_0_q8_0, q8_0_q8_0, q4_K_q8_K, q6_K_q8_K)", name)
}

// VecDot is ggml_vec_dot_<w>_<act>_generic on one row: w holds n/elems
// weight blocks, a the same number of activation blocks.
func (d Dot) VecDot(w, a []byte, p Profile) (float32, error) {
	if !d.W.valid() || !d.Act.valid() {
		return 0, fmt.Errorf("gguf: no dot product %s", d)
	}
	if err := checkBytes(d.W, len(w)); err != nil {
		return 0, err
	}
	if err := checkBytes(d.Act, len(a)); err != nil {
		return 0, err
	}
	nb := len(w) / d.W.BlockBytes()
	if na := len(a) / d.Act.BlockBytes(); na*d.Act.BlockElems() != nb*d.W.BlockElems() {
		return 0, fmt.Errorf("gguf: %s: %d weights but %d activations", d, nb*d.W.BlockElems(), na*d.Act.BlockElems())
	}
	switch d {
	case DotQ4_0Q8_0:
		return dotQ4_0(p, w, a, nb), nil
	case DotQ8_0Q8_0:
		return dotQ8_0(p, w, a, nb), nil
	case DotQ4_KQ8_K:
		return dotQ4_K(p, w, a, nb), nil
	case DotQ6_KQ8_K:
		return dotQ6_K(p, w, a, nb), nil
	}
	return 0, fmt.Errorf("gguf: no dot product %s", d)
}

// QuantizeAct quantizes activations x to d's activation type the way
// the CPU backend does before calling the dot product (quantize_row_q8_0
// / quantize_row_q8_K, whose generic versions are the _ref functions).
func (d Dot) QuantizeAct(x []float32, p Profile) ([]byte, error) { return Quantize(d.Act, x, p) }

func dotQ4_0(p Profile, w, a []byte, nb int) float32 {
	var sumf float32
	for ib := 0; ib < nb; ib++ {
		x := w[ib*18:]
		y := a[ib*34:]
		var s0, s1 int32
		for j := 0; j < 16; j++ {
			v0 := int32(x[2+j]&0xF) - 8
			v1 := int32(x[2+j]>>4) - 8
			s0 += v0 * int32(int8(y[2+j]))
			s1 += v1 * int32(int8(y[2+16+j]))
		}
		sumi := s0 + s1
		// sumf += sumi*dx*dy = ((float)sumi*dx)*dy + sumf
		t := p.mulq(float32(sumi), fromFP16(le16(x)))
		sumf = p.madq(t, fromFP16(le16(y)), sumf)
	}
	return sumf
}

func dotQ8_0(p Profile, w, a []byte, nb int) float32 {
	var sumf float32
	for ib := 0; ib < nb; ib++ {
		x := w[ib*34:]
		y := a[ib*34:]
		var sumi int32
		for j := 0; j < 32; j++ {
			sumi += int32(int8(x[2+j])) * int32(int8(y[2+j]))
		}
		dd := p.mulq(fromFP16(le16(x)), fromFP16(le16(y)))
		sumf = p.madq(float32(sumi), dd, sumf)
	}
	return sumf
}

// q4KScalesMins is the utmp unpacking of ggml_vec_dot_q4_K_q8_K: the 8
// 6-bit scales and 8 6-bit mins (the same values get_scale_min_k4 gives).
func q4KScalesMins(b []byte) (scales, mins [8]uint8) {
	for j := 0; j < 8; j++ {
		scales[j], mins[j] = getScaleMinK4(j, b)
	}
	return
}

func dotQ4_K(p Profile, w, a []byte, nb int) float32 {
	var sums [8]float32
	var sumf float32
	for i := 0; i < nb; i++ {
		x := w[i*144:]
		y := a[i*292:]
		var aux8 [QK_K]int8
		q4 := x[16:]
		for j := 0; j < 4; j++ {
			for l := 0; l < 32; l++ {
				aux8[64*j+l] = int8(q4[32*j+l] & 0xF)
				aux8[64*j+32+l] = int8(q4[32*j+l] >> 4)
			}
		}
		scales, mins := q4KScalesMins(x[4:16])
		var sumi int32
		for j := 0; j < 16; j++ {
			sumi += int32(int16(le16(y[4+QK_K+2*j:]))) * int32(mins[j/2])
		}
		var aux32 [8]int32
		q8 := y[4:]
		for j := 0; j < 8; j++ {
			scale := int32(scales[j])
			for k := 0; k < 4; k++ {
				for l := 0; l < 8; l++ {
					e := 32*j + 8*k + l
					aux16 := int16(int8(q8[e])) * int16(aux8[e])
					aux32[l] += scale * int32(aux16)
				}
			}
		}
		yd := getF32(y)
		d := p.mulq(fromFP16(le16(x)), yd)
		for l := 0; l < 8; l++ {
			sums[l] = p.madq(d, float32(aux32[l]), sums[l])
		}
		dmin := p.mulq(fromFP16(le16(x[2:])), yd)
		// sumf -= dmin * sumi: fused as sumf + (-dmin)*sumi
		sumf = p.madq(negF(dmin), float32(sumi), sumf)
	}
	for l := 0; l < 8; l++ {
		sumf = p.addq(sumf, sums[l])
	}
	return sumf
}

func dotQ6_K(p Profile, w, a []byte, nb int) float32 {
	var sums [8]float32
	var sumf float32
	for i := 0; i < nb; i++ {
		x := w[i*210:]
		y := a[i*292:]
		aux8 := q6KQuants(x)
		var aux32 [8]int32
		q8 := y[4:]
		for j := 0; j < 16; j++ {
			scale := int32(int8(x[192+j]))
			for k := 0; k < 2; k++ {
				for l := 0; l < 8; l++ {
					e := 16*j + 8*k + l
					aux16 := int16(int8(q8[e])) * int16(aux8[e])
					aux32[l] += scale * int32(aux16)
				}
			}
		}
		d := p.mulq(fromFP16(le16(x[208:])), getF32(y))
		for l := 0; l < 8; l++ {
			sums[l] = p.madq(d, float32(aux32[l]), sums[l])
		}
	}
	for l := 0; l < 8; l++ {
		sumf = p.addq(sumf, sums[l])
	}
	return sumf
}
