package catalog

import (
	"fmt"
	"strings"

	"github.com/bitexact/bitexact/refimpl/awq"
	"github.com/bitexact/bitexact/refimpl/mxfp4"
	"github.com/bitexact/bitexact/refimpl/nvfp4"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/sparse24"
	"github.com/bitexact/bitexact/refimpl/tensor"
	"github.com/bitexact/bitexact/refimpl/unary"
)

// decodeCatalog lists decoders, dequantizers and layout ops: every code where a format is
// small enough (all 16 E2M1 codes, all 256 bytes), else uniformly random
// bytes (which include NaN and extreme scales).
func decodeCatalog() ([]Inputs, []Case) {
	var t table
	seq := func(n int) []uint8 {
		b := make([]uint8, n)
		for i := range b {
			b[i] = uint8(i)
		}
		return b
	}
	formatDecodeCases(&t, seq)
	t.addInputs(Inputs{Name: "packed.e2m1x2.all", Description: "packed U8 [256]: every byte as a pair of E2M1 codes",
		Make: func(uint64) (ops.Tensors, error) {
			t := tensor.FromU8([]int{256}, seq(256))
			t.Logical = "e2m1x2"
			return ops.Tensors{"packed": t}, nil
		}})
	t.addCase(Case{Name: "e2m1.unpack.all", Family: "e2m1", Op: "e2m1.unpack", Inputs: "packed.e2m1x2.all", Description: "every byte to its two E2M1 codes, low nibble first"})

	random := func(r *RNG, n int) []uint8 {
		b := make([]uint8, n)
		for i := range b {
			b[i] = uint8(r.Uint64())
		}
		return b
	}
	t.addInputs(Inputs{Name: "nvfp4.random", Seed: 0x6e767271,
		Description: "packed E2M1x2 U8 [32,256] and scales E4M3 U8 [32,32] uniformly random bytes (NaN scale codes included), global F32 [1] = 1/2688",
		Make: func(seed uint64) (ops.Tensors, error) {
			r := NewRNG(seed)
			p := tensor.FromU8([]int{32, 256}, random(r, 32*256))
			p.Logical = "e2m1x2"
			s := tensor.FromU8([]int{32, 32}, random(r, 32*32))
			s.Logical = "e4m3"
			return ops.Tensors{"packed": p, "scales": s, "global": tensor.FromF32([]int{1}, []float32{1.0 / 2688})}, nil
		}})
	for _, rc := range nvfp4.Recipes() {
		if !rc.Dequantizes() {
			continue
		}
		t.addCase(Case{Name: "nvfp4.dequantize." + rc.Name, Family: "nvfp4", Op: "nvfp4.dequantize", Params: ops.Params{"recipe": rc.Name},
			Inputs: "nvfp4.random", Description: "NVFP4 dequantize of random codes and scales, recipe " + rc.Name})
	}
	t.addInputs(Inputs{Name: "mxfp4.random", Seed: 0x6d787271,
		Description: "packed E2M1x2 U8 [32,256] and scales E8M0 U8 [32,16] uniformly random bytes (0xFF NaN scales included)",
		Make: func(seed uint64) (ops.Tensors, error) {
			r := NewRNG(seed)
			p := tensor.FromU8([]int{32, 256}, random(r, 32*256))
			p.Logical = "e2m1x2"
			s := tensor.FromU8([]int{32, 16}, random(r, 32*16))
			s.Logical = "e8m0"
			return ops.Tensors{"packed": p, "scales": s}, nil
		}})
	t.addCase(Case{Name: "mxfp4.dequantize", Family: "mxfp4", Op: "mxfp4.dequantize", Inputs: "mxfp4.random",
		Description: "MXFP4 dequantize of random codes and scales"})
	for _, d := range mxfp4.Dequantizers() {
		if d.Recorded() {
			t.addCase(Case{Name: "mxfp4.dequantize." + d.Name, Family: "mxfp4", Op: "mxfp4.dequantize", Params: ops.Params{"profile": d.Name},
				Inputs: "mxfp4.random", Description: "MXFP4 dequantize of random codes and scales, profile " + d.Name})
		}
	}
	t.addInputs(Inputs{Name: "ggml.random-blocks", Seed: 0x67676d6c,
		Description: "blocks U8 [256,17] (block_mxfp4) of uniformly random bytes",
		Make: func(seed uint64) (ops.Tensors, error) {
			r := NewRNG(seed)
			m := tensor.FromU8([]int{256, 17}, random(r, 256*17))
			m.Logical = "block_mxfp4"
			return ops.Tensors{"blocks": m}, nil
		}})
	t.addInputs(Inputs{Name: "ggml.random-q8_1", Seed: 0x71385f31,
		Description: "blocks U8 [256,36] (block_q8_1) of uniformly random bytes",
		Make: func(seed uint64) (ops.Tensors, error) {
			r := NewRNG(seed)
			q := tensor.FromU8([]int{256, 36}, random(r, 256*36))
			q.Logical = "block_q8_1"
			return ops.Tensors{"blocks": q}, nil
		}})
	t.addCase(Case{Name: "ggml-mxfp4.dequantize", Family: "llama-mxfp4", Op: "ggml.mxfp4.dequantize", Inputs: "ggml.random-blocks",
		Description: "llama.cpp dequantize_row_mxfp4 of random blocks"})
	t.addCase(Case{Name: "q8_1.dequantize", Family: "q8_1", Op: "ggml.q8_1.dequantize", Inputs: "ggml.random-q8_1",
		Description: "block_q8_1 dequantize of random blocks"})
	t.addInputs(Inputs{Name: "awq.random-packed", Seed: 0x61777172,
		Description: "IC=256, OC=256, G=128: qweight I32 [256,32] and qzeros I32 [2,32] uniformly random words, scales F16 [2,256] uniformly random codes (NaN and Inf included)",
		Make: func(seed uint64) (ops.Tensors, error) {
			r := NewRNG(seed)
			qw := make([]uint32, 256*32)
			for i := range qw {
				qw[i] = r.Uint32()
			}
			qz := make([]uint32, 2*32)
			for i := range qz {
				qz[i] = r.Uint32()
			}
			sc := make([]uint16, 2*256)
			for i := range sc {
				sc[i] = uint16(r.Uint64())
			}
			return ops.Tensors{
				"qweight": tensor.FromBits32(tensor.I32, []int{256, 32}, qw),
				"qzeros":  tensor.FromBits32(tensor.I32, []int{2, 32}, qz),
				"scales":  tensor.FromBits16(tensor.F16, []int{2, 256}, sc),
			}, nil
		}})
	t.addCase(Case{Name: "awq.dequantize", Family: "awq", Op: "awq.dequantize", Inputs: "awq.random-packed",
		Description: "vLLM AWQ dequantize (CUDA kernel) of random words and scales"})
	t.addCase(Case{Name: "awq.dequantize.triton", Family: "awq", Op: "awq.dequantize", Params: ops.Params{"kernel": "triton"}, Inputs: "awq.random-packed",
		Description: "vLLM AWQ dequantize (triton kernel) of random words and scales"})
	t.addInputs(Inputs{Name: "awq.dequant-edges", Seed: 0x61776465,
		Description: "IC=256, OC=256, G=64: qzeros I32 [4,32] random nibbles, qweight I32 [256,32] nibbles equal to their zero point " +
			"half the time (u - z = 0), else random; scales F16 [4,256] drawn from signed zeros, subnormals, ±1, ±65504, ±Inf, " +
			"NaNs of both signs and payloads, and random codes",
		Make: func(seed uint64) (ops.Tensors, error) {
			const ic, oc, g = 256, 256, 64
			r := NewRNG(seed)
			z := make([]uint8, ic/g*oc)
			for i := range z {
				z[i] = uint8(r.Uint64() & 15)
			}
			q := make([]uint8, ic*oc)
			for k := 0; k < ic; k++ {
				for n := 0; n < oc; n++ {
					u := uint8(r.Uint64() & 15)
					if r.Uint64()&1 == 0 {
						u = z[k/g*oc+n]
					}
					q[k*oc+n] = u
				}
			}
			special := []uint16{0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x83FF, 0x3C00, 0xBC00, 0x7BFF, 0xFBFF,
				0x7C00, 0xFC00, 0x7C01, 0xFC01, 0x7E00, 0xFE00, 0x7FFF, 0xFFFF, 0x1000, 0x9000}
			sc := make([]uint16, ic/g*oc)
			for i := range sc {
				if r.Uint64()&3 == 0 {
					sc[i] = uint16(r.Uint64())
				} else {
					sc[i] = special[r.Intn(len(special))]
				}
			}
			qw, _, err := awq.AWQ.PackWeight(q, ic, oc)
			if err != nil {
				return nil, err
			}
			qz, _, err := awq.AWQ.PackZeros(z, ic, oc, g)
			if err != nil {
				return nil, err
			}
			return ops.Tensors{
				"qweight": tensor.FromI32([]int{ic, oc / 8}, qw),
				"qzeros":  tensor.FromI32([]int{ic / g, oc / 8}, qz),
				"scales":  tensor.FromBits16(tensor.F16, []int{ic / g, oc}, sc),
			}, nil
		}})
	for _, k := range awq.Kernels() {
		t.addCase(Case{Name: "awq.dequantize.edges." + k.Name, Family: "awq", Op: "awq.dequantize", Params: ops.Params{"kernel": k.Name}, Inputs: "awq.dequant-edges",
			Description: "vLLM AWQ dequantize (" + k.Name + " kernel) where u = z half the time, on signed-zero, subnormal, overflowing, infinite and NaN scales"})
	}
	t.addCase(Case{Name: "awq.unpack.awq", Family: "awq", Op: "awq.unpack", Params: ops.Params{"layout": "awq"}, Inputs: "awq.random-packed",
		Description: "AWQ (vLLM GEMM layout) words to nibbles"})
	t.addInputs(Inputs{Name: "sparse24.random-compressed", Seed: 0x73703234,
		Description: "comp U8 [64,128] random nibble pairs and meta U8 [64,64] random valid index pairs (N=64, K=512, row-major)",
		Make: func(seed uint64) (ops.Tensors, error) {
			r := NewRNG(seed)
			pairs := sparse24.MetaNibbles
			meta := make([]uint8, 64*64)
			for i := range meta {
				meta[i] = pairs[r.Intn(6)] | pairs[r.Intn(6)]<<4
			}
			return ops.Tensors{"comp": tensor.FromU8([]int{64, 128}, random(r, 64*128)), "meta": tensor.FromU8([]int{64, 64}, meta)}, nil
		}})
	t.addCase(Case{Name: "sparse24.decompress", Family: "sparse24", Op: "sparse24.decompress", Inputs: "sparse24.random-compressed",
		Description: "2:4 decompression of random kept pairs and valid metadata"})
	for _, dt := range []string{"int16", "int32"} {
		t.addCase(Case{Name: "sparse24.reorder_meta." + dt, Family: "sparse24", Op: "sparse24.reorder_meta", Params: ops.Params{"dtype": dt},
			Inputs: "sparse24.random-compressed", Description: "row-major 2:4 metadata to the CUTLASS/PyTorch reordered layout, " + dt})
	}
	t.addInputs(Inputs{Name: "nvfp4.random-scales", Seed: 0x73776973,
		Description: "scales E4M3 U8 [200,10] uniformly random (rows and columns not multiples of 128 and 4, so padding shows)",
		Make: func(seed uint64) (ops.Tensors, error) {
			s := tensor.FromU8([]int{200, 10}, random(NewRNG(seed), 2000))
			s.Logical = "e4m3"
			return ops.Tensors{"scales": s}, nil
		}})
	t.addCase(Case{Name: "nvfp4.swizzle", Family: "nvfp4", Op: "nvfp4.swizzle", Inputs: "nvfp4.random-scales",
		Description: "block scales to the 128x4 swizzled layout, zero padded"})
	t.addInputs(Inputs{Name: "nvfp4.random-swizzled", Seed: 0x756e7377,
		Description: "swizzled E4M3 U8 [3072]: uniformly random bytes, the swizzled length of [200,10] scales (256 rows x 12 columns)",
		Make: func(seed uint64) (ops.Tensors, error) {
			s := tensor.FromU8([]int{3072}, random(NewRNG(seed), 3072))
			s.Logical = "e4m3"
			return ops.Tensors{"swizzled": s}, nil
		}})
	t.addCase(Case{Name: "nvfp4.unswizzle", Family: "nvfp4", Op: "nvfp4.unswizzle", Params: ops.Params{"rows": "200", "sf_cols": "10"},
		Inputs: "nvfp4.random-swizzled", Description: "the 128x4 swizzled layout back to [200,10] scales (padding dropped)"})
	t.addInputs(Inputs{Name: "sparse24.random-reordered", Seed: 0x756e726f,
		Description: "meta_reordered I16 [64,32]: uniformly random 16-bit words (every 2-bit index value in every position)",
		Make: func(seed uint64) (ops.Tensors, error) {
			r := NewRNG(seed)
			v := make([]uint16, 64*32)
			for i := range v {
				v[i] = uint16(r.Uint64())
			}
			return ops.Tensors{"meta_reordered": tensor.FromBits16(tensor.I16, []int{64, 32}, v)}, nil
		}})
	t.addCase(Case{Name: "sparse24.unreorder_meta", Family: "sparse24", Op: "sparse24.unreorder_meta", Inputs: "sparse24.random-reordered",
		Description: "CUTLASS/PyTorch reordered 2:4 metadata (int16) back to row-major"})
	t.addInputs(Inputs{Name: "gemv.exact", Seed: 0x65786163,
		Description: "w F32 [16,256] and x F32 [256] approximately normal",
		Make: func(seed uint64) (ops.Tensors, error) {
			r := NewRNG(seed)
			w := make([]float32, 16*256)
			for i := range w {
				w[i] = r.Normal()
			}
			x := make([]float32, 256)
			for i := range x {
				x[i] = r.Normal()
			}
			return ops.Tensors{"w": tensor.FromF32([]int{16, 256}, w), "x": tensor.FromF32([]int{256}, x)}, nil
		}})
	for _, p := range []ops.Params{{}, {"out": "fp16"}, {"mul32": "1"}} {
		name := "gemv.exact.default"
		for k, v := range p {
			name = "gemv.exact." + k + "=" + v
		}
		t.addCase(Case{Name: name, Family: "gemv", Op: "gemv.exact", Params: p, Inputs: "gemv.exact",
			Description: "exact y = W x with its rounding bound, " + name[len("gemv.exact."):]})
	}
	return t.inputs, t.cases
}

// formatDecodeCases adds, for every format of refimpl/unary whose decoder
// has golden cases (unary.DecodeOp.NoGolden says why BF16 and FP16 have
// none), one case per decode profile on every code: codes.u8.all (every
// byte) for an 8-bit format, codes.NAME.all (every code, one per byte,
// logical NAME) for a narrower one.
func formatDecodeCases(t *table, seq func(int) []uint8) {
	added := map[string]bool{}
	for _, f := range unary.Formats() {
		d := f.DecodeOp
		if d.NoGolden != "" {
			continue
		}
		bits := f.Fields.Bits()
		in := "codes.u8.all"
		if bits < 8 {
			in = "codes." + f.Name + ".all"
		}
		if !added[in] {
			added[in] = true
			n, logical := 1<<bits, f.Name
			desc := fmt.Sprintf("codes U8 [%d]: every %s code, one per byte", n, strings.ToUpper(f.Name))
			if bits == 8 {
				logical, desc = "", "codes U8 [256]: every byte"
			}
			t.addInputs(Inputs{Name: in, Description: desc,
				Make: func(uint64) (ops.Tensors, error) {
					c := tensor.FromU8([]int{n}, seq(n))
					c.Logical = logical
					return ops.Tensors{d.Input: c}, nil
				}})
		}
		profiles := d.Profiles
		if len(profiles) == 0 {
			profiles = []unary.DecodeProfile{{Doc: d.Doc}}
		}
		for i, p := range profiles {
			name, params := f.Name+".decode.all", ops.Params(f.DecodeParams())
			if i > 0 {
				name += "." + p.Name
				params[d.ProfileParam] = p.Name
			}
			if len(params) == 0 {
				params = nil
			}
			t.addCase(Case{Name: name, Family: f.Family, Op: d.Op, Params: params, Inputs: in, Description: p.Doc})
		}
	}
}
