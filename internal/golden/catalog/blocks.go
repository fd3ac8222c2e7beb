package catalog

import (
	"fmt"
	"math"

	"github.com/bitexact/bitexact/refimpl/awq"
	"github.com/bitexact/bitexact/refimpl/e8m0"
	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/mxfp4"
	"github.com/bitexact/bitexact/refimpl/nvfp4"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/sparse24"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// Shapes of the seeded cases: realistic where the bytes allow (K=2048,
// N=512, 10 experts); the committed set is embedded in every binary, so
// the largest (4096x11776 for the MXFP4 GEMV) are reduced as noted per
// input set.
const (
	matM, matK = 128, 2048 // quantizer input: 128 rows of a K=2048 layer
	vecLen     = 32768     // ggml 1-D quantizer input: 1024 blocks of 32

	mmvqN, mmvqK = 512, 4096 // MXFP4 x Q8_1 GEMV (reduced from 11776x4096: 25 MB of weights)

	spE, spA, spK, spN = 10, 4, 2048, 256 // sparse NVFP4 MoE GEMV (N reduced from 512)

	awqIC, awqOC, awqG = 2048, 512, 128 // AWQ GEMV
	awqQIC, awqQOC     = 1024, 256      // AWQ quantize/pack (reduced: fp16 weights are 2 bytes each)
)

// blocksCatalog lists the block quantizers (NVFP4, MXFP4, llama.cpp
// MXFP4 and Q8_1, AWQ), 2:4 selection and compression, and the seeded
// GEMVs. Seeded input sets have fixed seeds; changing one changes
// golden.SuiteVersion.
func blocksCatalog() ([]Inputs, []Case) {
	var t table
	blockInputs(&t)
	nvfp4Cases(&t)
	mxfp4Cases(&t)
	llamaCases(&t)
	awqCases(&t)
	sparse24Cases(&t)
	gemvCases(&t)
	return t.inputs, t.cases
}

// blockInputs adds the input sets several block families share: the seeded
// matrix and vector, the crafted edge blocks (finite, with non-finite
// rows, flattened) and the edge amax values.
func blockInputs(t *table) {
	t.addInputs(Inputs{
		Name: "matrix.f32",
		Description: fmt.Sprintf("x F32 [%d,%d]: row r is approximately normal times 2^(r%%21-10) (21 magnitudes from 2^-10 to 2^10), "+
			"so that blocks of every scale appear; finite only (the NVFP4 per-tensor scale is computed from the whole tensor)", matM, matK),
		Seed: 0x6d617472,
		Make: func(seed uint64) (ops.Tensors, error) {
			r := NewRNG(seed)
			v := make([]float32, matM*matK)
			for i := range v {
				row := i / matK
				v[i] = float32(r.Normal() * float32(math.Ldexp(1, row%21-10)))
			}
			return ops.Tensors{"x": tensor.FromF32([]int{matM, matK}, v)}, nil
		},
	})
	t.addInputs(Inputs{
		Name:        "vector.f32",
		Description: fmt.Sprintf("x F32 [%d] (1-D, for llama.cpp row quantizers): block b of 32 is approximately normal times 2^(b%%25-12)", vecLen),
		Seed:        0x76656374,
		Make: func(seed uint64) (ops.Tensors, error) {
			r := NewRNG(seed)
			v := make([]float32, vecLen)
			for i := range v {
				v[i] = float32(r.Normal() * float32(math.Ldexp(1, (i/32)%25-12)))
			}
			return ops.Tensors{"x": tensor.FromF32([]int{vecLen}, v)}, nil
		},
	})
	t.addInputs(Inputs{
		Name:        "blocks.edge",
		Description: "x F32 [R,32]: one crafted block per row (see blockEdgeRows): zeros, -0, subnormals, E2M1 ties at several scales, amax at and around powers of two and at 6*2^k, huge and tiny amax; finite only",
		Make:        func(uint64) (ops.Tensors, error) { return blockEdges(false, true), nil },
	})
	t.addInputs(Inputs{
		Name:        "blocks.edge-nonfinite",
		Description: "x F32 [R,32]: the rows of blocks.edge plus rows holding NaN (both signs), +Inf and -Inf, for per-block quantizers only",
		Make:        func(uint64) (ops.Tensors, error) { return blockEdges(true, true), nil },
	})
	t.addInputs(Inputs{
		Name:        "blocks.edge-flat",
		Description: "x F32 [R*32]: the rows of blocks.edge-nonfinite flattened, for llama.cpp's 1-D row quantizers",
		Make:        func(uint64) (ops.Tensors, error) { return blockEdges(true, false), nil },
	})
	t.addInputs(Inputs{
		Name:        "amax.edge",
		Description: "amax F32 [n]: for k in -140..130, 2^k times {1, 1.5, 3, 4, 6, 7, 8} and their float32 ±1ulp; ±0, float32 subnormals, MaxFloat32, ±Inf, NaN",
		Make: func(uint64) (ops.Tensors, error) {
			var v []float32
			for k := -140; k <= 130; k++ {
				for _, m := range []float64{1, 1.5, 3, 4, 6, 7, 8} {
					x := float32(math.Ldexp(m, k))
					if math.IsInf(float64(x), 0) || x == 0 {
						continue
					}
					v = append(v, math.Nextafter32(x, 0), x, math.Nextafter32(x, float32(math.Inf(1))))
				}
			}
			v = append(v, 0, float32(math.Copysign(0, -1)), math.Float32frombits(1), math.Float32frombits(0x007fffff),
				math.MaxFloat32, float32(math.Inf(1)), float32(math.Inf(-1)), math.Float32frombits(0x7fc00000))
			return ops.Tensors{"amax": tensor.FromF32([]int{len(v)}, v)}, nil
		},
	})
}

// nvfp4Cases adds NVFP4: every recipe on the seeded matrix and on the
// edge blocks; the swizzled scale layout once per input set.
func nvfp4Cases(t *table) {
	for _, r := range nvfp4.Recipes() {
		for _, in := range []string{"matrix.f32", "blocks.edge"} {
			t.addCase(Case{Name: fmt.Sprintf("nvfp4.%s.%s", in, r.Name), Family: "nvfp4", Op: "nvfp4.quantize",
				Params: ops.Params{"recipe": r.Name}, Inputs: in,
				Description: "NVFP4 quantize, recipe " + r.Name})
		}
	}
	for _, in := range []string{"matrix.f32", "blocks.edge"} {
		t.addCase(Case{Name: fmt.Sprintf("nvfp4.%s.canonical-swizzled", in), Family: "nvfp4", Op: "nvfp4.quantize",
			Params: ops.Params{"swizzle": "1"}, Inputs: in,
			Description: "NVFP4 quantize, canonical recipe, block scales in the 128x4 swizzled layout"})
	}
}

// mxfp4Cases adds MXFP4 and its E8M0 shared scale: every E8M0 scale mode
// on the matrix; modes x E2M1 profiles on the edge blocks; the recorded
// library recipes and scales.
func mxfp4Cases(t *table) {
	for _, m := range e8m0.ScaleModes() {
		t.addCase(Case{Name: "mxfp4.matrix.f32." + m.Name, Family: "mxfp4", Op: "mxfp4.quantize",
			Params: ops.Params{"mode": m.Name}, Inputs: "matrix.f32",
			Description: "MXFP4 quantize, scale mode " + m.Name + ", E2M1 profile nvidia"})
		for _, p := range fp4.Profiles() {
			t.addCase(Case{Name: fmt.Sprintf("mxfp4.blocks.edge-nonfinite.%s.%s", m.Name, p.Name), Family: "mxfp4", Op: "mxfp4.quantize",
				Params: ops.Params{"mode": m.Name, "profile": p.Name}, Inputs: "blocks.edge-nonfinite",
				Description: "MXFP4 quantize, scale mode " + m.Name + ", E2M1 profile " + p.Name})
		}
	}
	// The recorded library recipes, each in its modes, on the non-finite
	// edge blocks (the other tasks' outputs are computed by the reference).
	for _, m := range e8m0.ScaleModes() {
		for _, r := range mxfp4.Recipes() {
			if !r.HasMode(m) {
				continue
			}
			t.addCase(Case{Name: fmt.Sprintf("mxfp4.blocks.edge-nonfinite.%s.%s", m.Name, r.Name), Family: "mxfp4", Op: "mxfp4.quantize",
				Params: ops.Params{"mode": m.Name, "profile": r.Name}, Inputs: "blocks.edge-nonfinite",
				Description: "MXFP4 quantize, scale mode " + m.Name + ", recipe " + r.Name + " (" + r.Summary + ")"})
		}
	}
	for _, m := range e8m0.ScaleModes() {
		t.addCase(Case{Name: "e8m0.shared_scale." + m.Name, Family: "e8m0", Op: "e8m0.shared_scale",
			Params: ops.Params{"mode": m.Name}, Inputs: "amax.edge",
			Description: "MX shared scale from a block amax, mode " + m.Name + ", E2M1 elements"})
	}
	// The recorded libraries' scales (conformance/harness/*/records).
	for _, m := range e8m0.LibraryScaleModes() {
		t.addCase(Case{Name: "e8m0.shared_scale." + m.Name, Family: "e8m0", Op: "e8m0.shared_scale",
			Params: ops.Params{"mode": m.Name}, Inputs: "amax.edge",
			Description: "MX shared scale from a block amax as " + m.Name + " computes it (" + m.Summary + "), E2M1 elements"})
	}
}

// llamaCases adds llama.cpp block_mxfp4 and block_q8_1 on the seeded
// vector and the flattened edge blocks, and block_q8_1 on exact ties.
func llamaCases(t *table) {
	for _, in := range []string{"vector.f32", "blocks.edge-flat"} {
		for _, l2 := range []string{"log2f", "exact"} {
			for _, cast := range []string{"x86-64", "arm64"} {
				t.addCase(Case{Name: fmt.Sprintf("ggml-mxfp4.%s.%s.%s", in, l2, cast), Family: "llama-mxfp4", Op: "ggml.mxfp4.quantize",
					Params: ops.Params{"log2": l2, "cast": cast}, Inputs: in,
					Description: "llama.cpp quantize_row_mxfp4_ref, log2 " + l2 + ", out-of-range exponent cast as on " + cast})
			}
		}
		for _, s := range []string{"cpu", "arm64", "cuda"} {
			t.addCase(Case{Name: fmt.Sprintf("q8_1.%s.%s", in, s), Family: "q8_1", Op: "ggml.q8_1.quantize",
				Params: ops.Params{"s": s}, Inputs: in,
				Description: "llama.cpp block_q8_1, s as computed by the " + s + " path"})
		}
	}

	// Exact ties of x/d, which rounding-rule bugs need: llama.cpp rounds
	// them half away from zero, rint would go to even (the CUDA mutant
	// cuda-q8_1-ties-even survived the random inputs).
	t.addInputs(Inputs{
		Name: "q8_1.ties",
		Description: "x F32 [1024]: 32 blocks, block b with maximum 127*2^e (e = b%16 - 8, so d = 2^e exactly) and the other " +
			"elements (k + 1/2)*2^e for k = -127..126 in turn, every x/d an exact half-integer",
		Seed: 0x71387469,
		Make: func(seed uint64) (ops.Tensors, error) {
			x := make([]float32, 32*32)
			k := -127
			for b := 0; b < 32; b++ {
				p := float32(math.Ldexp(1, b%16-8))
				x[b*32] = 127 * p
				for j := 1; j < 32; j++ {
					x[b*32+j] = (float32(k) + 0.5) * p
					if k++; k > 126 {
						k = -127
					}
				}
			}
			return ops.Tensors{"x": tensor.FromF32([]int{len(x)}, x)}, nil
		},
	})
	for _, s := range []string{"cpu", "arm64", "cuda"} {
		t.addCase(Case{Name: "q8_1.ties." + s, Family: "q8_1", Op: "ggml.q8_1.quantize",
			Params: ops.Params{"s": s}, Inputs: "q8_1.ties",
			Description: "llama.cpp block_q8_1 on exact x/d ties, s as computed by the " + s + " path"})
	}
}

// awqCases adds AWQ: quantize on seeded weights, exact ties and
// near-overflow groups, and int4 packing in every layout.
func awqCases(t *table) {
	t.addInputs(Inputs{
		Name:        "awq.weights",
		Description: fmt.Sprintf("w F16 [%d,%d]: approximately normal times 0.05, with group 3 of every column all zero and one outlier (x40) per 128x1 group", awqQIC, awqQOC),
		Seed:        0x61777177,
		Make: func(seed uint64) (ops.Tensors, error) {
			r := NewRNG(seed)
			h := make([]uint16, awqQIC*awqQOC)
			for i := range h {
				row := i / awqQOC
				x := float32(r.Normal() * 0.05)
				switch {
				case row/128 == 3:
					x = 0
				case row%128 == int(r.Uint64()%128):
					x = float32(x * 40)
				}
				h[i] = half.EncodeFP16(x)
			}
			return ops.Tensors{"w": tensor.FromBits16(tensor.F16, []int{awqQIC, awqQOC}, h)}, nil
		},
	})
	for _, q := range awq.Quantizers() {
		for _, g := range []int{128, 64} {
			t.addCase(Case{Name: fmt.Sprintf("awq.quantize.%s.g%d", q.Name, g), Family: "awq", Op: "awq.quantize",
				Params: ops.Params{"quantizer": q.Name, "group": fmt.Sprint(g)}, Inputs: "awq.weights",
				Description: fmt.Sprintf("AWQ quantize (vLLM GEMM layout), quantizer %s, group %d", q.Name, g)})
		}
	}
	// Exact ties of w/s (the CUDA mutant cuda-awq-reciprocal-ties, a
	// w*(1/s) quantizer without the tie check, survived the random weights).
	t.addInputs(Inputs{
		Name: "awq.ties",
		Description: "w F16 [256,64], group 128: in each group and column the maximum is 7s for an fp16 scale s whose " +
			"significand is not a power of two (so 1/s is inexact), and the other rows are (k + 1/2)s, k = -7..6 in turn: " +
			"every w/s an exact half-integer",
		Seed: 0x61777469,
		Make: func(seed uint64) (ops.Tensors, error) {
			const ic, oc = 256, 64
			mants := []float64{1.375, 1.625, 1.125, 1.875, 1.25, 1.75, 1.5, 1.0625}
			h := make([]uint16, ic*oc)
			for g := 0; g < ic/128; g++ {
				for c := 0; c < oc; c++ {
					sc := math.Ldexp(mants[(g*oc+c)%len(mants)], (c%9)-10)
					k := -7 + c%14
					for r := 0; r < 128; r++ {
						v := 7 * sc
						if r > 0 {
							v = (float64(k) + 0.5) * sc
							if k++; k > 6 {
								k = -7
							}
						}
						if (r+c)%5 == 0 {
							v = -v
						}
						h[(g*128+r)*oc+c] = half.EncodeFP16(float32(v))
					}
				}
			}
			return ops.Tensors{"w": tensor.FromBits16(tensor.F16, []int{ic, oc}, h)}, nil
		},
	})
	for _, q := range awq.Quantizers() {
		t.addCase(Case{Name: fmt.Sprintf("awq.quantize.%s.ties", q.Name), Family: "awq", Op: "awq.quantize",
			Params: ops.Params{"quantizer": q.Name, "group": "128"}, Inputs: "awq.ties",
			Description: fmt.Sprintf("AWQ quantize (vLLM GEMM layout), quantizer %s, group 128, on exact w/s ties", q.Name)})
	}
	// Groups whose fp16 range rounds to 65504 (scale 4368 = 0x6C44), where
	// AutoAWQ's repack overflows fp16 (15 * 4368 = 65520 -> Inf) and the
	// packed word depends on the platform's float-to-int cast.
	t.addInputs(Inputs{
		Name: "awq.near-overflow",
		Description: "w F16 [256,64], group 128: column type (c + 3g) % 8 of each group and column: " +
			"0: -65504..0, 1: 0..65504, 2: -64000..1504, 3: -1504..64000, 4: -32752..32752 (z = 8 and u = 15: 65520), " +
			"5: -63360..2144 (z = 15) (AutoAWQ's repack overflows in all of these) and 6: -63328..2176 (z = 14 by a tie, clean), " +
			"7: 0..65504 with every other element below 1000; both ends present once, the rest uniform in between",
		Seed: 0x61776f76,
		Make: func(seed uint64) (ops.Tensors, error) {
			const ic, oc = 256, 64
			type span struct{ lo, hi float32 }
			spans := []span{{-65504, 0}, {0, 65504}, {-64000, 1504}, {-1504, 64000}, {-32752, 32752}, {-63360, 2144}, {-63328, 2176}, {0, 65504}}
			r := NewRNG(seed)
			h := make([]uint16, ic*oc)
			for g := 0; g < ic/128; g++ {
				for c := 0; c < oc; c++ {
					typ := (c + 3*g) % 8
					sp := spans[typ]
					lo, hi := (c*7)%128, (c*13+5)%128
					if lo == hi {
						hi = (hi + 1) % 128
					}
					for k := 0; k < 128; k++ {
						v := sp.lo + float32(r.Unit()*(sp.hi-sp.lo)) // no FMA: the stream must not depend on the host
						if typ == 7 {
							v = r.Unit() * 1000
						}
						switch k {
						case lo:
							v = sp.lo
						case hi:
							v = sp.hi
						}
						h[(g*128+k)*oc+c] = half.EncodeFP16(v)
					}
				}
			}
			return ops.Tensors{"w": tensor.FromBits16(tensor.F16, []int{ic, oc}, h)}, nil
		},
	})
	for _, q := range awq.Quantizers() {
		t.addCase(Case{Name: fmt.Sprintf("awq.quantize.%s.near-overflow", q.Name), Family: "awq", Op: "awq.quantize",
			Params: ops.Params{"quantizer": q.Name, "group": "128"}, Inputs: "awq.near-overflow",
			Description: fmt.Sprintf("AWQ quantize (vLLM GEMM layout), quantizer %s, group 128, on groups whose fp16 range rounds to 65504", q.Name)})
	}
	t.addInputs(Inputs{
		Name:        "awq.nibbles",
		Description: fmt.Sprintf("q U8 [%d,%d] and zeros U8 [%d,%d]: uniformly random 4-bit values (q: every nibble in every lane position; zeros: 1..15, since gptq-v1 stores z-1 and cannot hold 0)", awqQIC, awqQOC, awqQIC/128, awqQOC),
		Seed:        0x6e69626c,
		Make: func(seed uint64) (ops.Tensors, error) {
			r := NewRNG(seed)
			q := make([]uint8, awqQIC*awqQOC)
			for i := range q {
				q[i] = uint8(r.Uint64() & 15)
			}
			z := make([]uint8, awqQIC/128*awqQOC)
			for i := range z {
				z[i] = uint8(1 + r.Intn(15))
			}
			return ops.Tensors{"q": tensor.FromU8([]int{awqQIC, awqQOC}, q), "zeros": tensor.FromU8([]int{awqQIC / 128, awqQOC}, z)}, nil
		},
	})
	t.addInputs(Inputs{
		Name:        "awq.nibbles-q",
		Description: "q U8 [256,256]: uniformly random 4-bit values, no zero points (for layouts with an implicit zero point)",
		Seed:        0x6e696271,
		Make: func(seed uint64) (ops.Tensors, error) {
			r := NewRNG(seed)
			q := make([]uint8, 256*256)
			for i := range q {
				q[i] = uint8(r.Uint64() & 15)
			}
			return ops.Tensors{"q": tensor.FromU8([]int{256, 256}, q)}, nil
		},
	})
	for _, l := range awq.Layouts() {
		in, what := "awq.nibbles", "weights and zero points"
		if l.Name == awq.CompressedTensors.Name {
			in, what = "awq.nibbles-q", "weights (implicit zero point 8)"
		}
		t.addCase(Case{Name: "awq.pack." + l.Name, Family: "awq", Op: "awq.pack",
			Params: ops.Params{"layout": l.Name}, Inputs: in,
			Description: "int4 packing of " + what + ", layout " + l.Name})
	}
}

// sparse24Cases adds 2:4 sparsity: E2M1 packing, selection and
// compression over every one of the 16^4 groups of four E2M1 codes.
func sparse24Cases(t *table) {
	t.addInputs(Inputs{
		Name:        "sparse24.all-groups",
		Description: "codes U8 [256,1024] (one E2M1 code per byte): group g of row r (4 codes) is pattern p = 256r+g, code j = (p >> 4j) & 15, so all 65536 groups of four codes appear once",
		Make: func(uint64) (ops.Tensors, error) {
			c := make([]uint8, 256*1024)
			for p := 0; p < 65536; p++ {
				for j := 0; j < 4; j++ {
					c[4*p+j] = uint8(p >> (4 * j) & 15)
				}
			}
			t := tensor.FromU8([]int{256, 1024}, c)
			t.Logical = "e2m1"
			return ops.Tensors{"codes": t}, nil
		},
	})
	t.addCase(Case{Name: "e2m1.pack.all-groups", Family: "e2m1", Op: "e2m1.pack", Inputs: "sparse24.all-groups",
		Description: "two E2M1 codes per byte, element 2i in the low nibble, over every sequence of four codes"})
	for _, tr := range sparse24.TieRules() {
		t.addCase(Case{Name: "sparse24.select." + tr.Name, Family: "sparse24", Op: "sparse24.select",
			Params: ops.Params{"tie": tr.Name}, Inputs: "sparse24.all-groups",
			Description: "2:4 selection of every group of four codes, tie rule " + tr.Name})
		for _, l := range []string{"rowmajor", "transposed"} {
			t.addCase(Case{Name: fmt.Sprintf("sparse24.compress.%s.%s", tr.Name, l), Family: "sparse24", Op: "sparse24.compress",
				Params: ops.Params{"tie": tr.Name, "layout": l}, Inputs: "sparse24.all-groups",
				Description: "2:4 compression of every group of four codes, tie rule " + tr.Name + ", layout " + l})
		}
	}
}

// gemvCases adds the seeded GEMVs: llama.cpp MXFP4 x Q8_1, the 2:4-sparse
// NVFP4 MoE GEMV and the AWQ W4A16 GEMV, each in its schedules.
func gemvCases(t *table) {
	t.addInputs(Inputs{
		Name: "gemv.mxfp4_q8_1",
		Description: fmt.Sprintf("w U8 [%d,%d,17] block_mxfp4 (e uniform in 121..129, random nibbles) and act U8 [%d,36] block_q8_1 "+
			"(d = fp16 of 2^-10..2^-6, qs uniform in -127..127, s = fp16(d * sum qs)); N=%d, K=%d (reduced from 11776x4096)", mmvqN, mmvqK/32, mmvqK/32, mmvqN, mmvqK),
		Seed: 0x6d6d7671,
		Make: func(seed uint64) (ops.Tensors, error) {
			r := NewRNG(seed)
			w := make([]uint8, mmvqN*mmvqK/32*17)
			for b := 0; b < len(w); b += 17 {
				w[b] = uint8(121 + r.Intn(9))
				for j := 1; j < 17; j++ {
					w[b+j] = uint8(r.Uint64())
				}
			}
			a := make([]uint8, mmvqK/32*36)
			for b := 0; b < len(a); b += 36 {
				d := half.EncodeFP16(float32(math.Ldexp(1+float64(r.Unit()), -10+r.Intn(4))))
				sum := 0
				for j := 0; j < 32; j++ {
					q := r.Intn(255) - 127
					sum += q
					a[b+4+j] = uint8(int8(q))
				}
				s := half.EncodeFP16(float32(half.DecodeFP16(d) * float32(sum)))
				a[b], a[b+1], a[b+2], a[b+3] = uint8(d), uint8(d>>8), uint8(s), uint8(s>>8)
			}
			return ops.Tensors{"w": tensor.FromU8([]int{mmvqN, mmvqK / 32, 17}, w), "act": tensor.FromU8([]int{mmvqK / 32, 36}, a)}, nil
		},
	})
	for _, s := range []string{"mmvq", "mmvq-nofma", "seq", "seq-fma", "warp32", "tree64"} {
		t.addCase(Case{Name: "gemv.mxfp4_q8_1." + s, Family: "gemv", Op: "gemv.mxfp4_q8_1",
			Params: ops.Params{"schedule": s}, Inputs: "gemv.mxfp4_q8_1",
			Description: "llama.cpp MXFP4 x Q8_1 GEMV, schedule " + s})
	}
	t.addInputs(Inputs{
		Name: "gemv.sparse_fp4",
		Description: fmt.Sprintf("E=%d experts, K=%d, N=%d (reduced from 512), A=%d active rows: comp U8 [E,K/4,N] random nibble pairs, "+
			"meta U8 [E,K/8,N] random valid index pairs, scales E4M3 [E,K/16,N] uniform in 0x28..0x57 except code 0x7F at expert 9, "+
			"column 5 (NaN for e4m3fn, 480 for dgx_lut), global F32 [E] = 2^-12 * (1 + e/16), act F16 [A,K] approximately normal, experts [A] = 3, 7, 0, 9", spE, spK, spN, spA),
		Seed: 0x73707273,
		Make: func(seed uint64) (ops.Tensors, error) {
			r := NewRNG(seed)
			comp := make([]uint8, spE*spK/4*spN)
			for i := range comp {
				comp[i] = uint8(r.Uint64())
			}
			pairs := sparse24.MetaNibbles
			meta := make([]uint8, spE*spK/8*spN)
			for i := range meta {
				meta[i] = pairs[r.Intn(6)] | pairs[r.Intn(6)]<<4
			}
			sc := make([]uint8, spE*spK/16*spN)
			for i := range sc {
				sc[i] = uint8(0x28 + r.Intn(0x30))
			}
			sc[9*spK/16*spN+5] = 0x7f
			glob := make([]float32, spE)
			for e := range glob {
				glob[e] = float32(math.Ldexp(1+float64(e)/16, -12))
			}
			act := make([]uint16, spA*spK)
			for i := range act {
				act[i] = half.EncodeFP16(r.Normal())
			}
			scales := tensor.FromU8([]int{spE, spK / 16, spN}, sc)
			scales.Logical = "e4m3"
			return ops.Tensors{
				"comp":    tensor.FromU8([]int{spE, spK / 4, spN}, comp),
				"meta":    tensor.FromU8([]int{spE, spK / 8, spN}, meta),
				"scales":  scales,
				"global":  tensor.FromF32([]int{spE}, glob),
				"act":     tensor.FromBits16(tensor.F16, []int{spA, spK}, act),
				"experts": tensor.FromI32([]int{spA}, []int32{3, 7, 0, 9}),
			}, nil
		},
	})
	for _, s := range []string{"sparse-v7", "sparse-v7-nofma"} {
		t.addCase(Case{Name: "gemv.sparse_fp4." + s, Family: "gemv", Op: "gemv.sparse_fp4",
			Params: ops.Params{"schedule": s}, Inputs: "gemv.sparse_fp4",
			Description: "2:4-sparse NVFP4 MoE GEMV (dgx-vllm v7 layout), schedule " + s + ", E4M3 scales decoded as e4m3fn"})
	}
	t.addCase(Case{Name: "gemv.sparse_fp4.sparse-v7.dgx_lut", Family: "gemv", Op: "gemv.sparse_fp4",
		Params: ops.Params{"schedule": "sparse-v7", "scale_decode": "dgx_lut"}, Inputs: "gemv.sparse_fp4",
		Description: "2:4-sparse NVFP4 MoE GEMV, schedule sparse-v7, E4M3 scales decoded by the dgx-vllm host table (0x7F = 480)"})
	t.addInputs(Inputs{
		Name: "gemv.awq",
		Description: fmt.Sprintf("IC=%d, OC=%d, G=%d: qweight I32 [IC,OC/8] and qzeros I32 [IC/G,OC/8] uniformly random words, "+
			"scales F16 [IC/G,OC] = fp16 of 2^-9..2^-5, x F16 [IC] approximately normal", awqIC, awqOC, awqG),
		Seed: 0x6177716d,
		Make: func(seed uint64) (ops.Tensors, error) {
			r := NewRNG(seed)
			qw := make([]uint32, awqIC*awqOC/8)
			for i := range qw {
				qw[i] = r.Uint32()
			}
			qz := make([]uint32, awqIC/awqG*awqOC/8)
			for i := range qz {
				qz[i] = r.Uint32()
			}
			sc := make([]uint16, awqIC/awqG*awqOC)
			for i := range sc {
				sc[i] = half.EncodeFP16(float32(math.Ldexp(1+float64(r.Unit()), -9+r.Intn(4))))
			}
			x := make([]uint16, awqIC)
			for i := range x {
				x[i] = half.EncodeFP16(r.Normal())
			}
			return ops.Tensors{
				"qweight": tensor.FromBits32(tensor.I32, []int{awqIC, awqOC / 8}, qw),
				"qzeros":  tensor.FromBits32(tensor.I32, []int{awqIC / awqG, awqOC / 8}, qz),
				"scales":  tensor.FromBits16(tensor.F16, []int{awqIC / awqG, awqOC}, sc),
				"x":       tensor.FromBits16(tensor.F16, []int{awqIC}, x),
			}, nil
		},
	})
	for _, s := range []string{"seq-f16out", "seq", "seq-fma", "warp32", "tree64"} {
		t.addCase(Case{Name: "gemv.awq." + s, Family: "gemv", Op: "gemv.awq",
			Params: ops.Params{"schedule": s, "group": fmt.Sprint(awqG)}, Inputs: "gemv.awq",
			Description: "AWQ W4A16 GEMV, schedule " + s})
	}
}

// blockEdgeRows builds the crafted 32-element blocks: each is a function
// of a scale 2^k so that the same shape of block appears at several
// exponents.
func blockEdges(nonfinite, twoD bool) ops.Tensors {
	var rows [][]float32
	block := func(f func(i int) float32) {
		b := make([]float32, 32)
		for i := range b {
			b[i] = f(i)
		}
		rows = append(rows, b)
	}
	negZero := float32(math.Copysign(0, -1))
	ties := []float32{0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5, 6}
	block(func(int) float32 { return 0 })
	block(func(int) float32 { return negZero })
	block(func(i int) float32 { return math.Float32frombits(uint32(i + 1)) })           // float32 subnormals
	block(func(i int) float32 { return -math.Float32frombits(0x00400000 + uint32(i)) }) // negative subnormals
	for _, k := range []int{-20, -6, 0, 3, 10, 100} {
		s := float32(math.Ldexp(1, k))
		block(func(i int) float32 { // E2M1 ties of the block's own scale, both signs
			v := float32(ties[i%8] * s)
			if i&8 != 0 {
				v = -v
			}
			return v
		})
		block(func(i int) float32 { return float32(float32(i-16) * s / 4) }) // amax = 4s exactly (a power of two)
		block(func(i int) float32 {                                          // amax just below a power of two
			if i == 0 {
				return math.Nextafter32(4*s, 0)
			}
			return float32(float32(i%7) * s / 8)
		})
		block(func(i int) float32 { // amax = 6s, the largest E2M1 magnitude times the scale
			if i == 31 {
				return -6 * s
			}
			return float32(float32(i) * s / 6)
		})
		block(func(i int) float32 { // one large value, the rest tiny: underflow inside a block
			if i == 7 {
				return 448 * 6 * s
			}
			return float32(float32(i+1) * s * 0x1p-12)
		})
	}
	block(func(i int) float32 { return math.MaxFloat32 / float32(i+1) })
	block(func(i int) float32 { return float32(float32(i-16) * 0x1p-130) })
	if nonfinite {
		block(func(i int) float32 {
			if i == 3 {
				return math.Float32frombits(0x7fc00000)
			}
			return float32(i)
		})
		block(func(i int) float32 {
			if i == 30 {
				return math.Float32frombits(0xffc00001)
			}
			return float32(-i)
		})
		block(func(i int) float32 {
			if i == 0 {
				return float32(math.Inf(1))
			}
			return float32(i) / 2
		})
		block(func(i int) float32 {
			if i == 16 {
				return float32(math.Inf(-1))
			}
			return float32(i) / 2
		})
	}
	flat := make([]float32, 0, 32*len(rows))
	for _, r := range rows {
		flat = append(flat, r...)
	}
	if twoD {
		return ops.Tensors{"x": tensor.FromF32([]int{len(rows), 32}, flat)}
	}
	return ops.Tensors{"x": tensor.FromF32([]int{len(flat)}, flat)}
}
