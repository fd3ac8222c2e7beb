package catalog

import (
	"fmt"
	"math"

	"github.com/bitexact/bitexact/refimpl/e8m0"
	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/mxfp4"
	"github.com/bitexact/bitexact/refimpl/nvfp4"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
	"github.com/bitexact/bitexact/refimpl/unary"
)

// halfInputCatalog is the conversions of fp16 and bf16 inputs (kernels
// that quantize fp16/bf16 activations are the common case) and the dense
// fp16 GEMV of the bound mode.
//
// Every 16-bit code is an input, so each conversion is covered
// exhaustively: all.fp16 and all.bf16 hold the 65536 codes of each type
// in code order. Every unary conversion of the reference runs on both,
// under every profile, except a format's own type (fp16.encode of an fp16
// input is the identity but for NaN quieting, which no kernel ships as a
// conversion). The expected codes are those of the exactly widened
// float32 value (refimpl/ops widenInput); each case names its input type
// in the parameter input, so that a kernel claiming the op for float32 x
// does not claim it.
func halfInputCatalog() ([]Inputs, []Case) {
	var ins []Inputs
	var cases []Case
	for _, src := range []struct {
		name  string
		dtype tensor.DType
	}{{"fp16", tensor.F16}, {"bf16", tensor.BF16}} {
		d := src.dtype
		ins = append(ins, Inputs{
			Name:        "all." + src.name,
			Description: fmt.Sprintf("every %s code, 0x0000 to 0xFFFF in order (x %s [65536]): zeros, subnormals, normals, infinities and every NaN payload of both signs", src.name, d),
			Make: func(uint64) (ops.Tensors, error) {
				v := make([]uint16, 1<<16)
				for i := range v {
					v[i] = uint16(i)
				}
				return ops.Tensors{"x": tensor.FromBits16(d, []int{len(v)}, v)}, nil
			},
		})
		for _, c := range unary.All() {
			if c.Format == src.name {
				continue
			}
			op, params, family := unaryOp(c)
			params["input"] = src.name
			cases = append(cases, Case{
				Name:   fmt.Sprintf("%s.from-%s.%s", c.Format, src.name, c.Profile),
				Family: family, Op: op, Params: params, Inputs: "all." + src.name,
				Description: fmt.Sprintf("every %s code converted to %s under profile %s: the conversion of its exact float32 value (source: unary.Lookup(%q).Source)",
					src.name, c.Format, c.Profile, c.Name),
			})
		}
	}
	ins2, cases2 := halfBlockCatalog()
	ins, cases = append(ins, ins2...), append(cases, cases2...)
	const n, k = 64, 1024
	ins = append(ins, Inputs{
		Name: "gemv.exact.fp16", Seed: 0x65786166,
		Description: fmt.Sprintf("w F16 [%d,%d] and x F16 [%d]: rows 0-59 approximately normal (w scaled by 1/16); row 60 cancels (pairs +-2^10 * x with small terms between); "+
			"row 61 is fp16's largest magnitudes; row 62 subnormal weights; row 63 zeros", n, k, k),
		Make: func(seed uint64) (ops.Tensors, error) {
			r := NewRNG(seed)
			w := make([]uint16, n*k)
			x := make([]uint16, k)
			for i := range x {
				x[i] = half.EncodeFP16(r.Normal())
			}
			for row := 0; row < n; row++ {
				for i := 0; i < k; i++ {
					var v uint16
					switch row {
					case 60:
						// +2^10 and -2^10 at elements 4j and 4j+1, whose
						// activations are equal (below): each pair cancels
						// exactly, leaving the small terms of 4j+2, 4j+3.
						switch i % 4 {
						case 0:
							v = 0x6400
						case 1:
							v = 0xE400
						default:
							v = half.EncodeFP16(r.Normal() / 1024)
						}
					case 61:
						v = 0x7BFF | uint16(r.Intn(2))<<15 // +-65504
					case 62:
						v = uint16(1+r.Intn(0x3FF)) | uint16(r.Intn(2))<<15 // subnormal
					case 63:
					default:
						v = half.EncodeFP16(r.Normal() / 16)
					}
					w[row*k+i] = v
				}
			}
			for i := 0; i+1 < k; i += 4 {
				x[i+1] = x[i]
			}
			return ops.Tensors{"w": tensor.FromBits16(tensor.F16, []int{n, k}, w), "x": tensor.FromBits16(tensor.F16, []int{k}, x)}, nil
		},
	})
	for _, out := range []string{"fp32", "fp16"} {
		cases = append(cases, Case{Name: "gemv.exact.fp16.out=" + out, Family: "gemv", Op: "gemv.exact", Params: ops.Params{"out": out},
			Inputs: "gemv.exact.fp16", Description: "exact y = W x of fp16 w and x, rounded to " + out})
	}
	return ins, cases
}

// halfBlockCatalog is the NVFP4 and MXFP4 quantizers on fp16 and bf16
// activations (vLLM's scaled_fp4_quant, for one, takes fp16 or bf16 x):
// under every recipe and scale mode x E2M1 profile, on a finite matrix and
// on blocks with non-finite values (a tensor amax sees them all, so they
// are a tensor of their own).
func halfBlockCatalog() ([]Inputs, []Case) {
	var ins []Inputs
	var cases []Case
	for _, src := range []struct {
		name   string
		dtype  tensor.DType
		seed   uint64 // of the finite matrix; the non-finite blocks take seed+2
		lo, hi int    // binades of the random rows
		max    uint16 // largest finite code
		enc    func(float32) uint16
	}{
		{"fp16", tensor.F16, 0x68616c66, -20, 12, 0x7BFF, half.EncodeFP16},
		{"bf16", tensor.BF16, 0x68616c67, -130, 120, 0x7F7F, half.EncodeBF16},
	} {
		src := src
		ins = append(ins, Inputs{
			Name: "blocks." + src.name, Seed: src.seed,
			Description: fmt.Sprintf("x %s [64,64], finite: rows 0-47 approximately normal scaled by 2^%d to 2^%d (subnormal to near the largest); "+
				"rows 48-55 blocks of amax 6*2^j holding every E2M1 midpoint (0.25 to 5) times 2^j, both signs; rows 56-59 the largest finite "+
				"magnitude among small values; rows 60-63 zeros, -0 and the smallest subnormals", src.name, src.lo, src.hi),
			Make: func(seed uint64) (ops.Tensors, error) {
				r := NewRNG(seed)
				const m, k = 64, 64
				v := make([]uint16, m*k)
				mid := []float32{6, 5, 3.5, 2.5, 1.75, 1.25, 0.75, 0.25}
				for row := 0; row < m; row++ {
					for i := 0; i < k; i++ {
						var c uint16
						switch {
						case row < 48:
							e := src.lo + row*(src.hi-src.lo)/47
							c = src.enc(float32(math.Ldexp(float64(r.Normal()), e)))
						case row < 56:
							j := (row - 52) * 3
							x := float32(math.Ldexp(float64(mid[i%8]), j))
							if i/8%2 == 1 {
								x = -x
							}
							c = src.enc(x)
						case row < 60:
							c = src.enc(r.Normal() / 64)
							if i%16 == row%16 {
								c = src.max | uint16(row%2)<<15
							}
						default:
							c = uint16(r.Intn(3)) | uint16(r.Intn(2))<<15 // +-0 and the two smallest subnormals
						}
						v[row*k+i] = c
					}
				}
				return ops.Tensors{"x": tensor.FromBits16(src.dtype, []int{m, k}, v)}, nil
			},
		})
		ins = append(ins, Inputs{
			Name: "blocks." + src.name + "-nonfinite", Seed: src.seed + 2,
			Description: fmt.Sprintf("x %s [16,64]: approximately normal values with one of +NaN, -NaN, +Inf, -Inf per row at a position "+
				"moving through the block, a second one 17 elements on; rows 12-15 signed zeros beside them", src.name),
			Make: func(seed uint64) (ops.Tensors, error) {
				r := NewRNG(seed)
				const m, k = 16, 64
				inf := src.max + 1 // the code after the largest finite one
				special := []uint16{inf | 0x0040, inf | 0x8040, inf, inf | 0x8000}
				v := make([]uint16, m*k)
				for row := 0; row < m; row++ {
					for i := 0; i < k; i++ {
						v[row*k+i] = src.enc(r.Normal())
						if row >= 12 {
							v[row*k+i] = uint16(i%2) << 15 // signed zeros
						}
					}
					v[row*k+(row*5)%k] = special[row%4]
					v[row*k+(row*5+17)%k] = special[(row+1)%4]
				}
				return ops.Tensors{"x": tensor.FromBits16(src.dtype, []int{m, k}, v)}, nil
			},
		})
		ins = append(ins, Inputs{
			Name: "blocks." + src.name + "-specials", Seed: src.seed + 4,
			Description: fmt.Sprintf("x %s [448,32] (the separation sets' layout for 16-bit codes): block j*32+p holds special j at position p "+
				"(+NaN, -NaN, +Inf, -Inf, -0, +0, the smallest and the largest subnormal of both signs, the smallest normal and the largest finite value of both signs, "+
				"14 in all) and seeded normal values times 2^(p%%9-4) elsewhere", src.name),
			Make: func(seed uint64) (ops.Tensors, error) {
				inf := src.max + 1
				minNormal := lowestExponentCode(inf)
				var specials []float32
				for _, c := range []uint16{inf | 0x0040, inf | 0x8040, inf, inf | 0x8000, 0x8000, 0, 1, 0x8001,
					minNormal - 1, (minNormal - 1) | 0x8000, minNormal, minNormal | 0x8000, src.max, src.max | 0x8000} {
					specials = append(specials, widen16(src.dtype, c))
				}
				v32 := sepBlockSpecials(seed, 32, specials)
				v := make([]uint16, len(v32))
				for i, x := range v32 {
					v[i] = src.enc(x)
				}
				return ops.Tensors{"x": tensor.FromBits16(src.dtype, []int{len(v) / 32, 32}, v)}, nil
			},
		})
		ins = append(ins, Inputs{
			Name: "blocks." + src.name + "-random", Seed: src.seed + 6,
			Description: fmt.Sprintf("x %s [256,64], finite: approximately normal values times 2^(row%%16-8), 1024 blocks of 16 whose block and "+
				"tensor scales differ: where 16-bit inputs make roundings of x/(p*s) and its spellings part rarely than float32 ones, many blocks find them", src.name),
			Make: func(seed uint64) (ops.Tensors, error) {
				r := NewRNG(seed)
				const m, k = 256, 64
				v := make([]uint16, m*k)
				for i := range v {
					v[i] = src.enc(float32(math.Ldexp(float64(r.Normal()), i/k%16-8)))
				}
				return ops.Tensors{"x": tensor.FromBits16(src.dtype, []int{m, k}, v)}, nil
			},
		})
		for _, in := range []string{"blocks." + src.name, "blocks." + src.name + "-nonfinite", "blocks." + src.name + "-specials", "blocks." + src.name + "-random"} {
			for _, rc := range nvfp4.Recipes() {
				if src.dtype == tensor.F16 && !rc.Accepts(nvfp4.InputFP16) {
					continue // torchao refuses fp16 input
				}
				cases = append(cases, Case{Name: fmt.Sprintf("nvfp4.%s.%s", in, rc.Name), Family: "nvfp4", Op: "nvfp4.quantize",
					Params: ops.Params{"recipe": rc.Name, "input": src.name}, Inputs: in,
					Description: "NVFP4 quantize of " + src.name + " x, recipe " + rc.Name + " (reference recipes: widened exactly to float32 first; a library recipe computes as its library does)"})
			}
			cases = append(cases, Case{Name: fmt.Sprintf("nvfp4.%s.canonical-swizzled", in), Family: "nvfp4", Op: "nvfp4.quantize",
				Params: ops.Params{"swizzle": "1", "input": src.name}, Inputs: in,
				Description: "NVFP4 quantize of " + src.name + " x, canonical recipe, block scales in the 128x4 swizzled layout"})
			for _, md := range e8m0.ScaleModes() {
				for _, p := range fp4.Profiles() {
					cases = append(cases, Case{Name: fmt.Sprintf("mxfp4.%s.%s.%s", in, md.Name, p.Name), Family: "mxfp4", Op: "mxfp4.quantize",
						Params: ops.Params{"mode": md.Name, "profile": p.Name, "input": src.name}, Inputs: in,
						Description: "MXFP4 quantize of " + src.name + " x (widened exactly to float32), scale mode " + md.Name + ", E2M1 profile " + p.Name})
				}
				if in != "blocks."+src.name+"-nonfinite" {
					continue
				}
				for _, r := range mxfp4.Recipes() {
					if !r.HasMode(md) {
						continue
					}
					cases = append(cases, Case{Name: fmt.Sprintf("mxfp4.%s.%s.%s", in, md.Name, r.Name), Family: "mxfp4", Op: "mxfp4.quantize",
						Params: ops.Params{"mode": md.Name, "profile": r.Name, "input": src.name}, Inputs: in,
						Description: "MXFP4 quantize of " + src.name + " x (widened exactly to float32), scale mode " + md.Name + ", recipe " + r.Name})
				}
			}
		}
	}
	si, sc := bf16SmallAt8(ins)
	return append(ins, si...), append(cases, sc...)
}

// lowestExponentCode is the code of the smallest normal of a 16-bit format
// whose +Inf code is inf: the lowest bit of the exponent field.
func lowestExponentCode(inf uint16) uint16 { return inf & -inf }

// widen16 is the float32 value of a 16-bit code (exact: both formats widen
// exactly).
func widen16(d tensor.DType, c uint16) float32 {
	if d == tensor.BF16 {
		return math.Float32frombits(uint32(c) << 16)
	}
	return half.DecodeFP16(c)
}

// bf16SmallAt8 is an input forced by conformance/separation: torchao-0.16
// (x/(p*s)) and torchao-0.17 (x*((1/p)/s)) quantize the finite bf16 matrix
// alike, and part once a small value replaces element 8 of every 32 (the
// block maxima it replaces move the block scales). It derives from the
// blocks.bf16 set among ins.
func bf16SmallAt8(ins []Inputs) ([]Inputs, []Case) {
	var finite func(uint64) (ops.Tensors, error)
	var seed uint64
	for _, in := range ins {
		if in.Name == "blocks.bf16" {
			finite, seed = in.Make, in.Seed
		}
	}
	in := Inputs{
		Name: "blocks.bf16-small-at-8", Seed: seed,
		Description: "blocks.bf16 with element 8 of every 32 replaced by bf16 0x83ff (-1.5e-36): the input on which conformance/separation found torchao-0.16 and torchao-0.17 to part",
		Make: func(seed uint64) (ops.Tensors, error) {
			ts, err := finite(seed)
			if err != nil {
				return nil, err
			}
			x := ts["x"]
			v := x.Bits16()
			for i := 8; i < len(v); i += 32 {
				v[i] = 0x83ff
			}
			return ops.Tensors{"x": tensor.FromBits16(x.DType, x.Shape, v)}, nil
		},
	}
	var cases []Case
	for _, rc := range nvfp4.Recipes() {
		cases = append(cases, Case{Name: "nvfp4.blocks.bf16-small-at-8." + rc.Name, Family: "nvfp4", Op: "nvfp4.quantize",
			Params: ops.Params{"recipe": rc.Name, "input": "bf16"}, Inputs: in.Name,
			Description: "NVFP4 quantize of bf16 x, recipe " + rc.Name + ": the separation input of torchao 0.16 and 0.17"})
	}
	return []Inputs{in}, cases
}
