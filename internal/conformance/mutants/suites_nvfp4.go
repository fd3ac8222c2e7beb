package mutants

import (
	"math"

	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/fp8"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// Faulty NVFP4 ops the suites' mutants run: the 128x4 scale layout with a
// fault, and the canonical quantizer written out with another amax fold or
// per-tensor scale.

// swizzleFault is one way of getting the 128x4 scale layout wrong.
type swizzleFault int

const (
	// swizzleExact is the layout as nvfp4.swizzle writes it.
	swizzleExact swizzleFault = iota
	// swizzleTilesFloor rounds the count of 4-column tiles down.
	swizzleTilesFloor
	// swizzleTileRowMajor stores each 128x4 tile row-major instead of
	// the 32x4x4 interleave.
	swizzleTileRowMajor
	// swizzleTileColMajor stores each 128x4 tile column-major.
	swizzleTileColMajor
	// swizzleLinear writes the scales row-major, each row padded to a
	// multiple of 4 (no swizzle at all).
	swizzleLinear
)

// swizzleOffset is the 128x4 scale layout's offset of scale (m, k) under
// a fault.
func swizzleOffset(m, k, sfCols int, fault swizzleFault) int {
	nKt := (sfCols + 3) / 4
	switch fault {
	case swizzleTilesFloor:
		nKt = sfCols / 4
	case swizzleTileColMajor:
		return ((m/128)*nKt+k/4)*512 + (k%4)*128 + m%128
	case swizzleLinear:
		return m*((sfCols+3)/4*4) + k
	}
	in := (m%32)*16 + ((m/32)%4)*4
	if fault == swizzleTileRowMajor {
		in = (m % 128) * 4
	}
	return ((m/128)*nKt+k/4)*512 + in + k%4
}

func swizzledLen(rows, cols int) int { return (rows + 127) / 128 * 128 * ((cols + 3) / 4 * 4) }

// swizzle is nvfp4.swizzle written out with a fault.
func swizzle(fault swizzleFault) func(ops.Params, ops.Tensors) (ops.Tensors, error) {
	return func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
		s := in["scales"]
		rows, cols := s.Shape[0], s.Shape[1]
		out := make([]uint8, swizzledLen(rows, cols))
		for m := 0; m < rows; m++ {
			for k := 0; k < cols; k++ {
				if o := swizzleOffset(m, k, cols, fault); o < len(out) {
					out[o] = s.Data[m*cols+k]
				}
			}
		}
		t := tensor.FromU8([]int{len(out)}, out)
		t.Logical = s.Logical
		return ops.Tensors{"swizzled": t}, nil
	}
}

// unswizzle is nvfp4.unswizzle written out with a fault.
func unswizzle(fault swizzleFault) func(ops.Params, ops.Tensors) (ops.Tensors, error) {
	return func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
		rows, err := p.Int("rows", 0)
		if err != nil {
			return nil, err
		}
		cols, err := p.Int("sf_cols", 0)
		if err != nil {
			return nil, err
		}
		s := in["swizzled"]
		out := make([]uint8, rows*cols)
		for m := 0; m < rows; m++ {
			for k := 0; k < cols; k++ {
				if o := swizzleOffset(m, k, cols, fault); o < len(s.Data) {
					out[m*cols+k] = s.Data[o]
				}
			}
		}
		t := tensor.FromU8([]int{rows, cols}, out)
		t.Logical = s.Logical
		return ops.Tensors{"scales": t}, nil
	}
}

// nvfp4ByHand is the canonical NVFP4 recipe written out (per-tensor g =
// 2688/amax over the finite elements, block scale fp8(amax_b/6 * g) saturating, elements
// x / float32(s/g)) with two hooks: the block amax fold and the per-tensor
// value.
func nvfp4ByHand(amax func([]float32) float32, global func(amax float32) float32) func(ops.Params, ops.Tensors) (ops.Tensors, error) {
	return func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
		x := in["x"]
		if err := x.Expect("x", tensor.F32, -1, -1); err != nil {
			return nil, err
		}
		m, k := x.Shape[0], x.Shape[1]
		xs := x.F32()
		var ta float32
		for _, v := range xs {
			// The tensor amax ignores NaN (never greater) and ±Inf.
			if a := float32(math.Abs(float64(v))); a > ta && !math.IsInf(float64(a), 0) {
				ta = a
			}
		}
		g := global(ta)
		packed := make([]uint8, m*k/2)
		scales := make([]uint8, m*k/16)
		for b := range scales {
			bx := xs[16*b : 16*b+16]
			sc := fp8.E4M3.Encode(float32(amax(bx)/6)*g, fp8.Satfinite)
			scales[b] = sc
			d := float32(fp8.E4M3.Decode(sc) / g)
			for i, v := range bx {
				var q float32
				if d == 0 {
					q = v * 0
				} else {
					q = v / d
				}
				packed[(16*b+i)/2] |= (fp4.NVIDIA.Encode(q) & 15) << (4 * (i % 2))
			}
		}
		pt := tensor.FromU8([]int{m, k / 2}, packed)
		pt.Logical = "e2m1x2"
		st := tensor.FromU8([]int{m, k / 16}, scales)
		st.Logical = "e4m3"
		return ops.Tensors{"packed": pt, "scales": st, "global": tensor.FromF32([]int{1}, []float32{g})}, nil
	}
}

// amaxIgnoreNaN is the canonical fold: the largest |x| of the non-NaN
// elements.
func amaxIgnoreNaN(bx []float32) float32 {
	var m float32
	for _, v := range bx {
		if a := float32(math.Abs(float64(v))); a > m {
			m = a
		}
	}
	return m
}

// amaxSeededFirst folds with m = |x0| and `a > m ? a : m`: a NaN in
// position 0 poisons the block, a NaN anywhere else is skipped.
func amaxSeededFirst(bx []float32) float32 {
	m := float32(math.Abs(float64(bx[0])))
	for _, v := range bx[1:] {
		if a := float32(math.Abs(float64(v))); a > m {
			m = a
		}
	}
	return m
}

func globalEncode(amax float32) float32 {
	g := float32(2688) / amax
	if g > math.MaxFloat32 {
		g = math.MaxFloat32
	}
	return g
}

// globalViaDecode is the reciprocal of the decode scale amax/2688, as a
// kernel given torchao's per_tensor_scale computes 1/pts.
func globalViaDecode(amax float32) float32 {
	g := 1 / (amax / 2688)
	if g > math.MaxFloat32 {
		g = math.MaxFloat32
	}
	return g
}
