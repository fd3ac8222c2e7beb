package catalog

import (
	"fmt"
	"math"

	"github.com/bitexact/bitexact/refimpl/e8m0"
	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/fp8"
	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/mxfp4"
	"github.com/bitexact/bitexact/refimpl/nvfp4"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/sparse24"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// Separation inputs: inputs built systematically so
// that implementations that differ only at an edge are told apart, rather
// than one input per bug found. conformance/separation's test holds the
// golden set to that: every pair of the reference's own variants of an op
// that some input separates must be separated by the golden inputs.
//
//   - special values (NaN of both signs, ±Inf, ±0, float32 subnormals of
//     both signs, the largest finite value) at every position of a block,
//     in every block quantizer, since an amax fold or a NaN check written
//     for one position passes inputs whose specials sit elsewhere;
//   - several NVFP4 tensors with distinct amax values, each drawn where two
//     spellings of the per-tensor scale (2688/amax and 1/(amax/2688)) round
//     to different float32 values, with blocks at the E4M3 and E2M1
//     rounding boundaries of that scale, so that formula variants show;
//   - in every dequantizer, every scale code (E4M3, E8M0 0x00 and 0xFF
//     included) with every element code at every position of a block,
//     and special fp16 d for block_q8_1;
//   - a single row, rows and block columns that are no multiple of the
//     128x4 swizzle tile, and many rows;
//   - GEMVs with E8M0 weight scales 0x00 (whose products underflow, where
//     fused and unfused multiply-adds round differently), 0x01 and 0xFF
//     (NaN) and 0xFE, K not a multiple of the lane and tile widths, a
//     single output row, and MoE tasks with more than two active experts
//     (repeated ones too). No GEMV input creates a NaN out of finite or
//     infinite operands (Inf - Inf, 0 * Inf): the bits of such a NaN are
//     the host's, not the reference's.

// sepSpecials32 are the float32 special values placed at every block
// position by the block sets; max is the block set's largest finite value.
func sepSpecials32(max float32) []float32 {
	return []float32{
		math.Float32frombits(0x7fc00000), math.Float32frombits(0xffc00001), // NaN, -NaN with a payload
		float32(math.Inf(1)), float32(math.Inf(-1)),
		float32(math.Copysign(0, -1)), 0,
		math.Float32frombits(0x00000001), math.Float32frombits(0x807fffff), // smallest and largest subnormal
		max, -max,
	}
}

// sepBlockSpecials is [len(specials)*B, B]: block j*B+p holds special j at
// position p and seeded normal values times 2^(p%9-4) elsewhere.
func sepBlockSpecials(seed uint64, b int, specials []float32) []float32 {
	r := NewRNG(seed)
	var v []float32
	for _, sp := range specials {
		for p := 0; p < b; p++ {
			sc := float32(math.Ldexp(1, p%9-4))
			for i := 0; i < b; i++ {
				if i == p {
					v = append(v, sp)
				} else {
					v = append(v, float32(r.Normal()*sc))
				}
			}
		}
	}
	return v
}

// sepNVFP4Amax returns a tensor amax in [1, 2)*2^e from r for which
// 2688/amax and 1/(amax/2688) are different float32 values.
func sepNVFP4Amax(r *RNG, e int) float32 {
	for {
		a := float32(math.Ldexp(float64(1+r.Unit()), e))
		if float32(nvfp4.GlobalNumerator/a) != float32(1/float32(a/nvfp4.GlobalNumerator)) {
			return a
		}
	}
}

// sepNVFP4Boundaries is a [rows, 64] NVFP4 tensor with amax amaxT (its
// first element): blocks whose amax is within ±3 ulps of an E4M3 rounding
// midpoint of t = (b/6)*g, then blocks whose elements are within ±3 ulps
// of an E2M1 midpoint times d = s/g (as blocks.nvfp4-near-ties, for
// another g).
func sepNVFP4Boundaries(r *RNG, amaxT float32, scaleBlocks, elemBlocks int) []float32 {
	g := nvfp4.GlobalFromAmax(amaxT, nvfp4.Canonical)
	v := []float32{amaxT}
	for len(v)%nvfp4.BlockSize != 0 {
		v = append(v, float32(r.Unit()*amaxT))
	}
	for i := 0; i < scaleBlocks; i++ {
		c := uint8(8 + r.Intn(0x7e-8))
		lo, hi := fp8.E4M3.Decode(c), fp8.E4M3.Decode(c+1)
		b := float32(float32((lo+hi)/2/g) * 6)
		b = math.Float32frombits(math.Float32bits(b) + uint32(r.Intn(7)) - 3)
		if !(b < amaxT) || b == 0 {
			i--
			continue
		}
		blk := []float32{b}
		for len(blk) < nvfp4.BlockSize {
			blk = append(blk, float32(r.Unit()*2-1)*b)
		}
		v = append(v, blk...)
	}
	for i := 0; i < elemBlocks; i++ {
		b := float32(r.Unit() * amaxT)
		if b == 0 {
			i--
			continue
		}
		s := fp8.E4M3.Decode(nvfp4.Canonical.BlockScaleCode(b, g))
		d := float32(s / g)
		blk := []float32{b}
		for tries := 0; len(blk) < nvfp4.BlockSize; tries++ {
			x := float32(e2m1Midpoints[r.Intn(len(e2m1Midpoints))] * d)
			if x > b || tries > 64 {
				x = float32(r.Unit() * b)
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
	return v
}

// sepNVFP4AmaxExps are the binades of the tensor amax of the sets
// sep.nvfp4.amax-<i>: small, near one, large, and past E4M3's range.
var sepNVFP4AmaxExps = []int{-9, -1, 4, 9, 15, 40}

// separationCatalog returns the separation input sets and their cases.
func separationCatalog() ([]Inputs, []Case) {
	var ins []Inputs
	var cs []Case
	nvfp4Cases := func(in, what string) {
		for _, r := range nvfp4.Recipes() {
			cs = append(cs, Case{Name: "nvfp4." + in + "." + r.Name, Family: "nvfp4", Op: "nvfp4.quantize",
				Params: ops.Params{"recipe": r.Name}, Inputs: in, Description: "NVFP4 quantize, recipe " + r.Name + ", " + what})
		}
		cs = append(cs, Case{Name: "nvfp4." + in + ".canonical-swizzled", Family: "nvfp4", Op: "nvfp4.quantize",
			Params: ops.Params{"swizzle": "1"}, Inputs: in, Description: "NVFP4 quantize, canonical recipe, swizzled scales, " + what})
	}
	mxfp4Cases := func(in, what string) {
		for _, m := range e8m0.ScaleModes() {
			for _, p := range fp4.Profiles() {
				cs = append(cs, Case{Name: fmt.Sprintf("mxfp4.%s.%s.%s", in, m.Name, p.Name), Family: "mxfp4", Op: "mxfp4.quantize",
					Params: ops.Params{"mode": m.Name, "profile": p.Name}, Inputs: in,
					Description: "MXFP4 quantize, scale mode " + m.Name + ", E2M1 profile " + p.Name + ", " + what})
			}
		}
	}

	// NVFP4: specials at every position of a 16-block, in a tensor whose
	// amax (1000 + a seeded fraction, finite) is itself one of the
	// specials, so that it sits at every position too.
	const nvAmax = 1000.6875
	ins = append(ins, Inputs{Name: "sep.nvfp4.specials", Seed: 0x7365706e,
		Description: fmt.Sprintf("x F32 [R,64]: for each of NaN, -NaN, ±Inf, ±0, ±float32 subnormals and ±%g (the tensor amax) "+
			"and each position p of a block of 16, one block holding it at p and seeded normal values times 2^(p%%9-4) elsewhere", nvAmax),
		Make: func(seed uint64) (ops.Tensors, error) {
			v := sepBlockSpecials(seed, nvfp4.BlockSize, sepSpecials32(nvAmax))
			return ops.Tensors{"x": tensor.FromF32([]int{len(v) / nvfp4Cols, nvfp4Cols}, v)}, nil
		}})
	nvfp4Cases("sep.nvfp4.specials", "special values at every block position")

	// NVFP4: several tensor amax values.
	for i, e := range sepNVFP4AmaxExps {
		name := fmt.Sprintf("sep.nvfp4.amax-%d", i)
		e := e
		ins = append(ins, Inputs{Name: name, Seed: 0x73657061 + uint64(i),
			Description: fmt.Sprintf("x F32 [R,64], its own tensor: amax in [1,2)*2^%d drawn where 2688/amax and 1/(amax/2688) round "+
				"to different float32 values; 12 blocks at E4M3 midpoints of (b/6)*g, 19 blocks within 3 ulps of E2M1 midpoints times s/g", e),
			Make: func(seed uint64) (ops.Tensors, error) {
				r := NewRNG(seed)
				v := sepNVFP4Boundaries(r, sepNVFP4Amax(r, e), 12, 19)
				return ops.Tensors{"x": tensor.FromF32([]int{len(v) / nvfp4Cols, nvfp4Cols}, v)}, nil
			}})
		nvfp4Cases(name, fmt.Sprintf("tensor amax in [1,2)*2^%d", e))
	}

	// NVFP4 shapes: one row of two blocks; 300 rows of 5 blocks (neither a
	// multiple of the 128x4 swizzle tile).
	for _, sh := range []struct {
		name     string
		rows, k  int
		describe string
	}{
		{"sep.nvfp4.one-row", 1, 32, "a single row of two blocks"},
		{"sep.nvfp4.tall", 300, 80, "300 rows of 5 blocks (the swizzle pads both)"},
	} {
		sh := sh
		ins = append(ins, Inputs{Name: sh.name, Seed: 0x73657073 + uint64(sh.rows),
			Description: fmt.Sprintf("x F32 [%d,%d]: %s, seeded normal values times 2^(row%%13-6)", sh.rows, sh.k, sh.describe),
			Make: func(seed uint64) (ops.Tensors, error) {
				r := NewRNG(seed)
				v := make([]float32, sh.rows*sh.k)
				for i := range v {
					v[i] = float32(r.Normal() * float32(math.Ldexp(1, i/sh.k%13-6)))
				}
				return ops.Tensors{"x": tensor.FromF32([]int{sh.rows, sh.k}, v)}, nil
			}})
		nvfp4Cases(sh.name, sh.describe)
	}

	// MX and llama.cpp blocks of 32: specials at every position.
	specials := sepSpecials32(math.MaxFloat32)
	blocks32 := "for each of NaN, -NaN, ±Inf, ±0, ±float32 subnormals and ±MaxFloat32 and each position p of a block of 32, " +
		"one block holding it at p and seeded normal values times 2^(p%9-4) elsewhere"
	ins = append(ins, Inputs{Name: "sep.blocks32.specials", Seed: 0x73657033, Description: "x F32 [R,32]: " + blocks32,
		Make: func(seed uint64) (ops.Tensors, error) {
			v := sepBlockSpecials(seed, 32, specials)
			return ops.Tensors{"x": tensor.FromF32([]int{len(v) / 32, 32}, v)}, nil
		}})
	mxfp4Cases("sep.blocks32.specials", "special values at every block position")
	ins = append(ins, Inputs{Name: "sep.blocks32.specials-flat", Seed: 0x73657033, Description: "x F32 [R*32] (1-D): " + blocks32,
		Make: func(seed uint64) (ops.Tensors, error) {
			v := sepBlockSpecials(seed, 32, specials)
			return ops.Tensors{"x": tensor.FromF32([]int{len(v)}, v)}, nil
		}})
	for _, l2 := range []string{"log2f", "exact"} {
		for _, cast := range []string{"x86-64", "arm64"} {
			cs = append(cs, Case{Name: fmt.Sprintf("ggml-mxfp4.sep.blocks32.specials-flat.%s.%s", l2, cast), Family: "llama-mxfp4",
				Op: "ggml.mxfp4.quantize", Params: ops.Params{"log2": l2, "cast": cast}, Inputs: "sep.blocks32.specials-flat",
				Description: "llama.cpp quantize_row_mxfp4_ref on special values at every block position, log2 " + l2 + ", cast as on " + cast})
		}
	}
	for _, s := range []string{"cpu", "arm64", "cuda"} {
		cs = append(cs, Case{Name: "q8_1.sep.blocks32.specials-flat." + s, Family: "q8_1", Op: "ggml.q8_1.quantize",
			Params: ops.Params{"s": s}, Inputs: "sep.blocks32.specials-flat",
			Description: "llama.cpp block_q8_1 on special values at every block position, s as computed by the " + s + " path"})
	}
	ins = append(ins, Inputs{Name: "sep.blocks32.one-row", Seed: 0x7365706f,
		Description: "x F32 [1,32]: a single row of one block, seeded normal values",
		Make: func(seed uint64) (ops.Tensors, error) {
			r := NewRNG(seed)
			v := make([]float32, 32)
			for i := range v {
				v[i] = r.Normal()
			}
			return ops.Tensors{"x": tensor.FromF32([]int{1, 32}, v)}, nil
		}})
	mxfp4Cases("sep.blocks32.one-row", "a single row of one block")
	// MX blocks of subnormal elements under the smallest scales: a block
	// amax of m*2^-126 (m = 1, 1.5, 3, 6: normal, so its scale is the same
	// whether or not subnormal inputs are flushed) at each position, the
	// other 31 elements float32 subnormals of random bits and sign. Under
	// scales 2^-127..2^-124 the subnormals of magnitude 2^-128 and more
	// quantize to nonzero codes, which a kernel that flushes subnormal
	// inputs (FTZ/DAZ) writes as zeros; the specials sets hold subnormals
	// only beside normal values that make them quantize to zero, and
	// blocks.edge's subnormal blocks only ones that quantize to zero
	// where the scale computation clamps the amax to the smallest normal
	// (torchao's).
	ins = append(ins, Inputs{Name: "sep.blocks32.subnormal-elements", Seed: 0x73657064,
		Description: "x F32 [128,32]: for m in 1, 1.5, 3, 6 and each position p of a block of 32, one block holding m*2^-126 (its amax, normal) at p " +
			"and float32 subnormals of random bits and sign elsewhere, so that subnormal inputs quantize to nonzero codes unless flushed",
		Make: func(seed uint64) (ops.Tensors, error) {
			r := NewRNG(seed)
			var v []float32
			for _, m := range []float64{1, 1.5, 3, 6} {
				for p := 0; p < 32; p++ {
					for i := 0; i < 32; i++ {
						if i == p {
							v = append(v, float32(math.Ldexp(m, -126)))
							continue
						}
						b := uint32(1 + r.Intn(0x7fffff))
						if r.Intn(2) == 1 {
							b |= 0x80000000
						}
						v = append(v, math.Float32frombits(b))
					}
				}
			}
			return ops.Tensors{"x": tensor.FromF32([]int{len(v) / 32, 32}, v)}, nil
		}})
	mxfp4Cases("sep.blocks32.subnormal-elements", "subnormal elements in blocks of the smallest scales")

	// GEMV MXFP4 x Q8_1 with edge E8M0 weight scales.
	ins = append(ins, Inputs{Name: "sep.gemv.mxfp4_q8_1.scales", Seed: 0x73657067,
		Description: "N=42, K=448 (14 blocks: no multiple of mmvq's 4 blocks per warp step): w block_mxfp4 [42,14,17] with random nibbles and, by row type n%6: " +
			"0: every E8M0 scale in 0x00..0x02 (products underflow); 1: scale 0xFF (NaN) in block n%14, else 121..129; " +
			"2: scale 0xFE (2^126, the largest finite) in block 12, else 121..129; 3: scales uniform in 0x00..0xEF; 4: 121..129; " +
			"5: intermediate overflow: every block zero but block 13, scale 0xFE, whose elements 0 and 1 are 6 and 4 (the rest 0), so that the products " +
			"1.5*2^127 and -1.25*2^128 sum to -2^127 but the second overflows float32 on its own (an unfused multiply-add gives -Inf, a fused one -2^127). " +
			"act block_q8_1 [14,36]: d = fp16 with an odd 10-bit mantissa in 2^-10..2^-7, qs uniform in -127..127, except block 12 (d in 2^-15..2^-14, so that " +
			"no product of the 0xFE rows overflows) and block 13 (d = 2^-4, qs[0] = 4, qs[1] = -10). No input makes a NaN out of non-NaN operands",
		Make: func(seed uint64) (ops.Tensors, error) {
			const n, nb = 42, 14
			r := NewRNG(seed)
			a := make([]uint8, nb*36)
			for b := 0; b < nb; b++ {
				d := fp16Full(r, -10+r.Intn(4)) &^ 0x8000
				switch b {
				case 12:
					d = fp16Full(r, -15) &^ 0x8000
				case 13:
					d = half.EncodeFP16(0.0625)
				}
				sum := 0
				for j := 0; j < 32; j++ {
					q := r.Intn(255) - 127
					if b == 13 && j < 2 {
						q = []int{4, -10}[j]
					}
					sum += q
					a[b*36+4+j] = uint8(int8(q))
				}
				s := half.EncodeFP16(float32(half.DecodeFP16(d) * float32(sum)))
				a[b*36], a[b*36+1], a[b*36+2], a[b*36+3] = uint8(d), uint8(d>>8), uint8(s), uint8(s>>8)
			}
			w := make([]uint8, n*nb*17)
			for row := 0; row < n; row++ {
				for b := 0; b < nb; b++ {
					blk := w[(row*nb+b)*17 : (row*nb+b+1)*17]
					for j := 1; j < 17; j++ {
						blk[j] = uint8(r.Uint64())
					}
					e := uint8(121 + r.Intn(9))
					switch row % 6 {
					case 0:
						e = uint8(r.Intn(3))
					case 1:
						if b == row%nb {
							e = 0xff
						}
					case 2:
						if b == 12 {
							e = 0xfe
						}
					case 3:
						e = uint8(r.Intn(0xf0))
					case 5:
						for j := 1; j < 17; j++ {
							blk[j] = 0
						}
						if b == 13 {
							e = 0xfe
							blk[1], blk[2] = 0x07, 0x06 // elements 0 and 1: E2M1 6 and 4
						}
					}
					blk[0] = e
				}
			}
			return ops.Tensors{"w": tensor.FromU8([]int{n, nb, 17}, w), "act": tensor.FromU8([]int{nb, 36}, a)}, nil
		}})
	ins = append(ins, Inputs{Name: "sep.gemv.mxfp4_q8_1.one-row", Seed: 0x73657031,
		Description: "N=1, K=64: a single output row; w block_mxfp4 [1,2,17] with scales 0x00 and 0x7F and random nibbles, act block_q8_1 [2,36] as sep.gemv.mxfp4_q8_1.scales",
		Make: func(seed uint64) (ops.Tensors, error) {
			r := NewRNG(seed)
			a := make([]uint8, 2*36)
			for b := 0; b < 2; b++ {
				d := fp16Full(r, -8) &^ 0x8000
				sum := 0
				for j := 0; j < 32; j++ {
					q := r.Intn(255) - 127
					sum += q
					a[b*36+4+j] = uint8(int8(q))
				}
				s := half.EncodeFP16(float32(half.DecodeFP16(d) * float32(sum)))
				a[b*36], a[b*36+1], a[b*36+2], a[b*36+3] = uint8(d), uint8(d>>8), uint8(s), uint8(s>>8)
			}
			w := make([]uint8, 2*17)
			for i := range w {
				w[i] = uint8(r.Uint64())
			}
			w[0], w[17] = 0x00, 0x7f
			return ops.Tensors{"w": tensor.FromU8([]int{1, 2, 17}, w), "act": tensor.FromU8([]int{2, 36}, a)}, nil
		}})
	for _, in := range []string{"sep.gemv.mxfp4_q8_1.scales", "sep.gemv.mxfp4_q8_1.one-row"} {
		for _, s := range []string{"mmvq", "mmvq-nofma", "seq", "seq-fma", "warp32", "tree64"} {
			cs = append(cs, Case{Name: "gemv.mxfp4_q8_1." + in + "." + s, Family: "gemv", Op: "gemv.mxfp4_q8_1",
				Params: ops.Params{"schedule": s}, Inputs: in, Description: "llama.cpp MXFP4 x Q8_1 GEMV on edge weight scales, schedule " + s})
		}
	}

	// Sparse NVFP4 MoE GEMV: more than two active experts, repeated ones,
	// K in whole 64-wide tiles (the kernels' unit), special E4M3 scale codes at
	// every position of a row of scales.
	ins = append(ins, Inputs{Name: "sep.gemv.sparse_fp4.experts",
		Seed: 0x73657065,
		Description: "E=5, A=6 active rows with experts [4, 1, 1, 3, 0, 2] (five distinct, one repeated), K=256 (four tiles of 64: the CUDA sparse kernel, like the public sparse FP4 MoE kernels, takes K in whole tiles), N=32: " +
			"comp random nibble pairs, meta random valid index pairs, scales E4M3 uniform in 0x28..0x47 except that scale row b of expert e " +
			"holds, at column (b+e)%32, one of 0x00, 0x80 (-0), 0x01 (smallest subnormal), 0x7E (448), 0x7F and 0xFF (NaN for e4m3fn, ±480 for dgx_lut) in turn; " +
			"global F32 [E] = 2^-10 * (1 + e/8) except expert 3: -(the largest float32 subnormal), which a kernel that flushes subnormal inputs turns into -0; act F16 [A,K] approximately normal times 2^-4",
		Make: func(seed uint64) (ops.Tensors, error) {
			const E, A, K, N = 5, 6, 256, 32
			r := NewRNG(seed)
			comp := make([]uint8, E*K/4*N)
			for i := range comp {
				comp[i] = uint8(r.Uint64())
			}
			meta := make([]uint8, E*K/8*N)
			for i := range meta {
				meta[i] = sparse24.MetaNibbles[r.Intn(6)] | sparse24.MetaNibbles[r.Intn(6)]<<4
			}
			special := []uint8{0x00, 0x80, 0x01, 0x7e, 0x7f, 0xff}
			sc := make([]uint8, E*K/16*N)
			k := 0
			for e := 0; e < E; e++ {
				for b := 0; b < K/16; b++ {
					for c := 0; c < N; c++ {
						v := uint8(0x28 + r.Intn(0x20))
						if c == (b+e)%N {
							v = special[k%len(special)]
							k++
						}
						sc[(e*K/16+b)*N+c] = v
					}
				}
			}
			glob := make([]float32, E)
			for e := range glob {
				glob[e] = float32(math.Ldexp(1+float64(e)/8, -10))
			}
			// A float32 subnormal global scale: a kernel that flushes
			// subnormal inputs gets the sign of some zero outputs wrong.
			glob[3] = math.Float32frombits(0x807fffff)
			act := make([]uint16, A*K)
			for i := range act {
				act[i] = half.EncodeFP16(float32(r.Normal() * 0.0625))
			}
			scales := tensor.FromU8([]int{E, K / 16, N}, sc)
			scales.Logical = "e4m3"
			return ops.Tensors{
				"comp": tensor.FromU8([]int{E, K / 4, N}, comp), "meta": tensor.FromU8([]int{E, K / 8, N}, meta),
				"scales": scales, "global": tensor.FromF32([]int{E}, glob),
				"act":     tensor.FromBits16(tensor.F16, []int{A, K}, act),
				"experts": tensor.FromI32([]int{A}, []int32{4, 1, 1, 3, 0, 2}),
			}, nil
		}})
	for _, s := range []string{"sparse-v7", "sparse-v7-nofma", "sparse-v7-seq"} {
		cs = append(cs, Case{Name: "gemv.sparse_fp4.sep.experts." + s, Family: "gemv", Op: "gemv.sparse_fp4",
			Params: ops.Params{"schedule": s}, Inputs: "sep.gemv.sparse_fp4.experts",
			Description: "2:4-sparse NVFP4 MoE GEMV, six active rows over five experts, special scale codes, schedule " + s + ", scales decoded as e4m3fn"})
	}
	cs = append(cs, Case{Name: "gemv.sparse_fp4.sep.experts.sparse-v7.dgx_lut", Family: "gemv", Op: "gemv.sparse_fp4",
		Params: ops.Params{"schedule": "sparse-v7", "scale_decode": "dgx_lut"}, Inputs: "sep.gemv.sparse_fp4.experts",
		Description: "2:4-sparse NVFP4 MoE GEMV, six active rows over five experts, special scale codes, schedule sparse-v7, scales decoded by the dgx-vllm table"})
	// Dequantizers: every scale code of the format, each in its own block,
	// whose element codes are all 16 E2M1 codes rotated by the scale code,
	// so that each element code meets each position and each scale.
	rotated := func(block, c int) uint8 { // byte b of block `block`: two codes
		lo, hi := (2*c+block)%16, (2*c+1+block)%16
		return uint8(lo) | uint8(hi)<<4
	}
	everyScale := func(global float32) func(uint64) (ops.Tensors, error) {
		return func(uint64) (ops.Tensors, error) {
			p := make([]uint8, 256*8)
			sc := make([]uint8, 256)
			for r := 0; r < 256; r++ {
				sc[r] = uint8(r)
				for b := 0; b < 8; b++ {
					p[r*8+b] = rotated(r, b)
				}
			}
			pt := tensor.FromU8([]int{256, 8}, p)
			pt.Logical = "e2m1x2"
			st := tensor.FromU8([]int{256, 1}, sc)
			st.Logical = "e4m3"
			return ops.Tensors{"packed": pt, "scales": st, "global": tensor.FromF32([]int{1}, []float32{global})}, nil
		}
	}
	for _, g := range []struct {
		name, what string
		v          float32
	}{
		{"sep.nvfp4.every-scale", "1/2688", 1.0 / 2688},
		// A subnormal per-tensor value: flushed to zero (FTZ/DAZ), it
		// turns s/g into Inf or NaN and s*p into 0.
		{"sep.nvfp4.every-scale-subnormal-global", "2^-149 (the smallest float32 subnormal)", math.Float32frombits(1)},
		// The largest finite per-tensor value: s/g and most outputs are
		// subnormal, which a kernel flushing its outputs (FTZ) writes as 0.
		// The subnormal of largest magnitude, negative: products with a
		// scale are normal, so flushing the input (FTZ/DAZ) and flushing
		// the outputs part, where 2^-149 makes both write zeros.
		{"sep.nvfp4.every-scale-large-subnormal-global", "-0x1.fffffcp-127 (the negative subnormal of largest magnitude)", math.Float32frombits(0x807fffff)},
		{"sep.nvfp4.every-scale-max-global", "the largest finite float32", math.MaxFloat32},
		// A NaN per-tensor value: every output is NaN, and the libraries
		// write different NaN bits for it (the machine's NaN of the
		// product, or the one the library's NaN check returns), which no
		// NaN scale code shows once a rule clears -0 outputs.
		{"sep.nvfp4.every-scale-nan-global", "NaN (0x7fc00000)", math.Float32frombits(0x7fc00000)},
	} {
		ins = append(ins, Inputs{Name: g.name,
			Description: "packed E2M1x2 U8 [256,8], scales E4M3 U8 [256,1], global F32 [1] = " + g.what + ": row r has scale code r (NaN 0x7F and 0xFF, ±0, subnormals, 448 included) " +
				"and the 16 E2M1 codes rotated by r, so each element code sits at each position of a block of 16",
			Make: everyScale(g.v)})
		for _, rc := range nvfp4.Recipes() {
			if !rc.Dequantizes() {
				continue
			}
			cs = append(cs, Case{Name: "nvfp4.dequantize." + g.name + "." + rc.Name, Family: "nvfp4", Op: "nvfp4.dequantize", Params: ops.Params{"recipe": rc.Name},
				Inputs: g.name, Description: "NVFP4 dequantize of every E4M3 scale code with every E2M1 code at every position, global " + g.what + ", recipe " + rc.Name})
		}
	}
	ins = append(ins, Inputs{Name: "sep.mxfp4.every-scale",
		Description: "packed E2M1x2 U8 [256,16], scales E8M0 U8 [256,1]: row r has scale code r (0x00 and 0xFF included) and the 16 E2M1 codes, twice, rotated by r, " +
			"so each element code sits at each position of a block of 32",
		Make: func(uint64) (ops.Tensors, error) {
			p := make([]uint8, 256*16)
			sc := make([]uint8, 256)
			for r := 0; r < 256; r++ {
				sc[r] = uint8(r)
				for b := 0; b < 16; b++ {
					p[r*16+b] = rotated(r+b/8, b)
				}
			}
			pt := tensor.FromU8([]int{256, 16}, p)
			pt.Logical = "e2m1x2"
			st := tensor.FromU8([]int{256, 1}, sc)
			st.Logical = "e8m0"
			return ops.Tensors{"packed": pt, "scales": st}, nil
		}})
	cs = append(cs, Case{Name: "mxfp4.dequantize.sep.every-scale", Family: "mxfp4", Op: "mxfp4.dequantize", Inputs: "sep.mxfp4.every-scale",
		Description: "MXFP4 dequantize of every E8M0 scale code with every E2M1 code at every position"})
	for _, d := range mxfp4.Dequantizers() {
		if d.Recorded() {
			cs = append(cs, Case{Name: "mxfp4.dequantize.sep.every-scale." + d.Name, Family: "mxfp4", Op: "mxfp4.dequantize", Params: ops.Params{"profile": d.Name},
				Inputs: "sep.mxfp4.every-scale", Description: "MXFP4 dequantize of every E8M0 scale code with every E2M1 code at every position, profile " + d.Name})
		}
	}
	ins = append(ins, Inputs{Name: "sep.ggml.every-scale",
		Description: "blocks U8 [256,17] (block_mxfp4): block r has E8M0 e = r (0x00 and 0xFF included) and qs holding the 16 E2M1 codes in each half, rotated by r",
		Make: func(uint64) (ops.Tensors, error) {
			d := make([]uint8, 256*17)
			for r := 0; r < 256; r++ {
				d[r*17] = uint8(r)
				for j := 0; j < 16; j++ {
					d[r*17+1+j] = uint8((j+r)%16) | uint8((j+r+5)%16)<<4
				}
			}
			t := tensor.FromU8([]int{256, 17}, d)
			t.Logical = "block_mxfp4"
			return ops.Tensors{"blocks": t}, nil
		}})
	cs = append(cs, Case{Name: "ggml-mxfp4.dequantize.sep.every-scale", Family: "llama-mxfp4", Op: "ggml.mxfp4.dequantize", Inputs: "sep.ggml.every-scale",
		Description: "llama.cpp dequantize_row_mxfp4 of every E8M0 code with every E2M1 code at every position"})
	ins = append(ins, Inputs{Name: "sep.q8_1.special-d",
		Description: "blocks U8 [160,36] (block_q8_1): for each of 20 fp16 d codes (±0, ±smallest and largest subnormal, ±1, ±65504, ±Inf, NaN of both signs and two payloads, " +
			"±2^-14, ±0.5), 8 blocks whose qs run through all 256 int8 values; s = 0",
		Make: func(uint64) (ops.Tensors, error) {
			ds := []uint16{0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x83ff, 0x3c00, 0xbc00, 0x7bff, 0xfbff,
				0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01, 0xfdff, 0x0400, 0x8400, 0x3800, 0xb800}
			d := make([]uint8, len(ds)*8*36)
			for i, h := range ds {
				for b := 0; b < 8; b++ {
					blk := d[(i*8+b)*36 : (i*8+b+1)*36]
					blk[0], blk[1] = uint8(h), uint8(h>>8)
					for j := 0; j < 32; j++ {
						blk[4+j] = uint8(b*32 + j)
					}
				}
			}
			t := tensor.FromU8([]int{len(ds) * 8, 36}, d)
			t.Logical = "block_q8_1"
			return ops.Tensors{"blocks": t}, nil
		}})
	cs = append(cs, Case{Name: "q8_1.dequantize.sep.special-d", Family: "q8_1", Op: "ggml.q8_1.dequantize", Inputs: "sep.q8_1.special-d",
		Description: "block_q8_1 dequantize of every int8 q under special fp16 d"})
	return ins, cs
}
