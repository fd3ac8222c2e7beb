package catalog

import (
	"math"

	"github.com/bitexact/bitexact/refimpl/fp8"
	"github.com/bitexact/bitexact/refimpl/nvfp4"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// NVFP4 edge input sets. The NVFP4 per-tensor scale comes from the whole
// tensor, so an edge block only reaches the E2M1 and E4M3 boundaries it
// was built for when the tensor's amax is pinned too: each set below is
// its own tensor whose first element fixes the tensor amax (and so g),
// and every other block is built against that g. Without these sets the
// mutant catalog found that canonical and vllm-model-exact-rcp NVFP4 agreed on the
// whole golden set (docs/rationale/certify.md, "Findings from the mutant
// catalog"): blocks.edge shares a tensor with a MaxFloat32 row and
// matrix.f32 spans 2^-10..2^10, so the small blocks quantize to 0.

// nvfp4Cols is the row length of the NVFP4 edge sets: 4 blocks per row.
const nvfp4Cols = 64

// e2m1Midpoints are the 7 midpoints between adjacent E2M1 magnitudes
// (0, 0.5, 1, 1.5, 2, 3, 4, 6). Nearest-even and ties-away differ at
// 0.25, 1.25, 2.5 and 5.
var e2m1Midpoints = [7]float32{0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5}

// nvfp4Ties builds the set blocks.nvfp4-ties: tensor amax 2688, so g = 1 exactly
// and a block of amax 6*s (s an E4M3 value) gets scale s, d = s exactly,
// and element mid*s lands on E2M1 midpoint mid exactly (mid*s and 6*s
// are exact in float32: s has at most 4 significant bits).
func nvfp4Ties() ops.Tensors {
	var v []float32
	// Block 0 pins amax = 2688 (scale 448), with the midpoints times 448.
	blk := []float32{2688}
	for _, m := range e2m1Midpoints {
		blk = append(blk, m*448, -m*448)
	}
	blk = append(blk, 0)
	v = append(v, blk...)
	for k := -9; k <= 8; k++ {
		for _, mant := range []float32{1, 1.125, 1.5, 1.875} {
			s := float32(math.Ldexp(float64(mant), k))
			if s > 448 {
				continue
			}
			blk := []float32{-6 * s}
			for _, m := range e2m1Midpoints {
				blk = append(blk, m*s, -m*s)
			}
			blk = append(blk, float32(math.Copysign(0, -1)))
			v = append(v, blk...)
		}
	}
	for len(v)%nvfp4Cols != 0 {
		v = append(v, 0)
	}
	return ops.Tensors{"x": tensor.FromF32([]int{len(v) / nvfp4Cols, nvfp4Cols}, v)}
}

// nvfp4NearTies builds the set blocks.nvfp4-near-ties from seed: a tensor amax
// drawn in [1, 2)*2^10 (so g = 2688/amax is no power of two and the
// reciprocal orders g*(b*(1/6)) vs (b/6)*g and x*(1/(s*(1/g))) vs x/(s/g)
// round differently), then two kinds of blocks:
//
//   - scale-boundary blocks: amax b within ±3 ulps of the value whose
//     canonical t = (b/6)*g is an E4M3 rounding midpoint, so that a one-ulp
//     difference in t changes the E4M3 scale code;
//   - element-boundary blocks: a random amax, then elements within ±3
//     ulps of mid*d for every E2M1 midpoint mid, d = s/g the canonical
//     dequantization scale, so that a one-ulp difference in x/d changes
//     the E2M1 code, and exact ties where mid*d is exact.
//
// All values are computed with correctly rounded float32 operations and
// the reference's exported scale functions: identical on every host.
func nvfp4NearTies(seed uint64) ops.Tensors {
	r := NewRNG(seed)
	amaxT := float32(math.Ldexp(float64(1+r.Unit()), 10))
	g := nvfp4.GlobalFromAmax(amaxT, nvfp4.Canonical)
	v := []float32{amaxT}
	for len(v)%nvfp4.BlockSize != 0 {
		v = append(v, 0)
	}
	// Scale-boundary blocks: E4M3 midpoints between adjacent normal codes
	// 0x08..0x7E (values 2^-6 .. 448), picked at random.
	for i := 0; i < 96; i++ {
		c := uint8(8 + r.Intn(0x7e-8))
		lo, hi := fp8.E4M3.Decode(c), fp8.E4M3.Decode(c+1)
		mid := (lo + hi) / 2 // exact: adjacent E4M3 values differ by one unit in the 4th bit
		b := float32(float32(mid/g) * 6)
		b = math.Float32frombits(math.Float32bits(b) + uint32(r.Intn(7)) - 3)
		if b >= amaxT {
			i-- // would change the tensor amax: draw again
			continue
		}
		blk := []float32{b}
		for len(blk) < nvfp4.BlockSize {
			blk = append(blk, float32(r.Unit()*2-1)*b)
		}
		v = append(v, blk...)
	}
	// Element-boundary blocks.
	for i := 0; i < 160; i++ {
		b := float32(math.Ldexp(float64(1+r.Unit()), r.Intn(14)-4))
		s := fp8.E4M3.Decode(nvfp4.Canonical.BlockScaleCode(b, g))
		d := float32(s / g)
		blk := []float32{b}
		for len(blk) < nvfp4.BlockSize {
			m := e2m1Midpoints[r.Intn(len(e2m1Midpoints))]
			x := float32(m * d)
			if x > b {
				continue
			}
			x = math.Float32frombits(math.Float32bits(x) + uint32(r.Intn(7)) - 3)
			if r.Intn(2) == 1 {
				x = -x
			}
			blk = append(blk, x)
		}
		v = append(v, blk...)
	}
	for len(v)%nvfp4Cols != 0 {
		v = append(v, 0)
	}
	return ops.Tensors{"x": tensor.FromF32([]int{len(v) / nvfp4Cols, nvfp4Cols}, v)}
}

// nvfp4Subnormal builds the set blocks.nvfp4-subnormal from seed: tensor amax
// 2^-116 (g = 2688*2^116, the largest finite g up to a factor 1.3), so
// that blocks of float32 subnormals get nonzero E4M3 scales and nonzero
// E2M1 codes instead of being scaled to 0. Blocks have amax 2^e, e in
// -130..-123 (subnormal and smallest normal), times a random mantissa,
// and elements of the same and the two binades below, both signs; every
// fourth block also holds the smallest subnormals 2^-149 and 2^-148.
func nvfp4Subnormal(seed uint64) ops.Tensors {
	r := NewRNG(seed)
	v := []float32{float32(math.Ldexp(1, -116))}
	for len(v)%nvfp4.BlockSize != 0 {
		v = append(v, float32(math.Ldexp(float64(r.Unit()), -120)))
	}
	for i := 0; i < 63; i++ {
		e := -130 + i%8
		blk := make([]float32, 0, nvfp4.BlockSize)
		for len(blk) < nvfp4.BlockSize {
			x := float32(math.Ldexp(float64(1+r.Unit()), e-r.Intn(3)))
			if r.Intn(2) == 1 {
				x = -x
			}
			blk = append(blk, x)
		}
		if i%4 == 3 {
			blk[1], blk[2] = math.Float32frombits(1), -math.Float32frombits(2)
		}
		v = append(v, blk...)
	}
	return ops.Tensors{"x": tensor.FromF32([]int{len(v) / nvfp4Cols, nvfp4Cols}, v)}
}

// nvfp4NonFinite is a tensor whose blocks hold infinities and NaNs beside
// finite values, in every combination the recipes treat differently: the
// tensor amax counts finite values only, a block amax counts ±Inf and (by
// recipe) skips or propagates NaN.
func nvfp4NonFinite(seed uint64) ops.Tensors {
	r := NewRNG(seed)
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	var v []float32
	for b := 0; b < 64; b++ {
		blk := make([]float32, nvfp4.BlockSize)
		for j := range blk {
			blk[j] = float32(r.Normal() * 3)
		}
		switch b % 8 {
		case 1:
			blk[b%16] = inf
		case 2:
			blk[(b+5)%16] = -inf
		case 3:
			blk[(b+3)%16] = nan
		case 4:
			for j := range blk {
				blk[j] = nan
			}
		case 5:
			blk[0], blk[15] = inf, nan
		case 6:
			for j := range blk {
				blk[j] = float32(math.Copysign(0, float64(j%2)-0.5))
			}
			blk[7] = -inf
		case 7:
			blk[2], blk[9] = math.Float32frombits(0xFFC00000), float32(math.Copysign(0, -1)) // -NaN by its bits
		}
		v = append(v, blk...)
	}
	return ops.Tensors{"x": tensor.FromF32([]int{len(v) / nvfp4Cols, nvfp4Cols}, v)}
}

// nvfp4EdgeCatalog lists the NVFP4 edge tensors (each with a pinned
// amax) under every recipe, and in the swizzled layout.
func nvfp4EdgeCatalog() ([]Inputs, []Case) {
	var t table
	t.addInputs(Inputs{
		Name: "blocks.nvfp4-ties",
		Description: "x F32 [R,64], its own tensor with amax 2688 (so g = 1): blocks of amax 6*s for E4M3 scales s = {1, 1.125, 1.5, 1.875}*2^k, " +
			"k = -9..8, holding +-mid*s for every E2M1 midpoint mid (exact ties of x/d) and -0",
		Make: func(uint64) (ops.Tensors, error) { return nvfp4Ties(), nil },
	})
	t.addInputs(Inputs{
		Name: "blocks.nvfp4-near-ties",
		Description: "x F32 [R,64], its own tensor with a seeded amax in [1024, 2048) (g no power of two): 96 blocks whose amax is within 3 ulps of " +
			"an E4M3 rounding midpoint of t = (b/6)*g, then 160 blocks whose elements are within 3 ulps of mid*(s/g) for E2M1 midpoints mid; " +
			"separates division from reciprocal multiplication in the block-scale and element paths",
		Seed: 0x6e767469,
		Make: func(seed uint64) (ops.Tensors, error) { return nvfp4NearTies(seed), nil },
	})
	t.addInputs(Inputs{
		Name: "blocks.nvfp4-subnormal",
		Description: "x F32 [R,64], its own tensor with amax 2^-116 (g = 2688*2^116): 63 blocks of float32 subnormals and smallest normals " +
			"(amax 2^-130..2^-123), which quantize to nonzero codes, so that flushing subnormal inputs (FTZ/DAZ) changes the output",
		Seed: 0x6e767375,
		Make: func(seed uint64) (ops.Tensors, error) { return nvfp4Subnormal(seed), nil },
	})
	t.addInputs(Inputs{
		Name: "blocks.nvfp4-nonfinite",
		Description: "x F32 [16,64]: seeded normal values times 3, with blocks holding +Inf, -Inf, a NaN, all NaN, Inf and NaN together, " +
			"-Inf among signed zeros, -NaN beside -0: the tensor amax must skip infinities, each block amax follow its recipe's NaN rule",
		Seed: 0x6e76696e,
		Make: func(seed uint64) (ops.Tensors, error) { return nvfp4NonFinite(seed), nil },
	})
	for _, in := range []string{"blocks.nvfp4-ties", "blocks.nvfp4-near-ties", "blocks.nvfp4-subnormal", "blocks.nvfp4-nonfinite"} {
		for _, r := range nvfp4.Recipes() {
			t.addCase(Case{Name: "nvfp4." + in + "." + r.Name, Family: "nvfp4", Op: "nvfp4.quantize",
				Params: ops.Params{"recipe": r.Name}, Inputs: in,
				Description: "NVFP4 quantize, recipe " + r.Name + ", on an edge tensor with a pinned amax"})
		}
		t.addCase(Case{Name: "nvfp4." + in + ".canonical-swizzled", Family: "nvfp4", Op: "nvfp4.quantize",
			Params: ops.Params{"swizzle": "1"}, Inputs: in,
			Description: "NVFP4 quantize, canonical recipe, block scales in the 128x4 swizzled layout, on an edge tensor with a pinned amax"})
	}
	return t.inputs, t.cases
}
