package catalog

import (
	"fmt"
	"math"

	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/sparse24"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// Crafted GEMV inputs. The seeded GEMV sets of blocksCatalog have
// well-conditioned sums, on which fused and unfused schedules (and most
// reduction orders) round to the same outputs, so those cases cannot tell
// the kernels apart.
// These sets are built so that they do: each output is a sum of large
// equal-and-opposite contributions plus small residues. An exact
// cancellation a*b - a*b leaves the rounding error of a*b under a fused
// multiply-add (fma(-a, b, round(a*b))) and 0 without, and that error is of
// the size of the residues; large running sums absorb the residues in one
// order and not in another. TestGEMVCasesDiscriminate asserts the effect.
const (
	crMxN, crMxK = 64, 4096 // 2 half-blocks per mmvq lane: the smallest K at which a lane accumulates
	crSpE, crSpA = 3, 3     // more than two active experts, as every MoE task has
	crSpK, crSpN = 512, 128 // 8 tiles of 64: within the strided4 model's range
	crAwIC       = 1024
	crAwOC       = 64
	crAwG        = 128
)

// fp16Full returns the fp16 of ±(1 + m/1024) * 2^exp with a random odd
// 10-bit mantissa m, so that products with it carry many significant bits.
func fp16Full(r *RNG, exp int) uint16 {
	m := 1024 + (r.Intn(512)*2 + 1)
	v := float32(math.Ldexp(float64(m), exp-10))
	if r.Uint64()&1 != 0 {
		v = -v
	}
	return half.EncodeFP16(v)
}

// gemvCraftedCatalog lists the crafted GEMV input sets (see the constants
// above) and their cases, one per declared schedule.
func gemvCraftedCatalog() ([]Inputs, []Case) {
	var t table
	t.addInputs(Inputs{
		Name: "gemv.mxfp4_q8_1.crafted",
		Description: fmt.Sprintf("discriminates fused from unfused d*sumi and mmvq's lane order from a sequential one: N=%d, K=%d. "+
			"act block b+64 repeats block b (d = fp16 in 2^-7..2^-6 with an odd 10-bit mantissa, qs odd with |qs| in 65..127); "+
			"per row, 3 in 4 block pairs (b, b+64) are large (e in 126..130) with block b+64 the negation of block b (nibbles xor 0x88), each element of the sign of its qs and magnitude 8 or 12 (1 or 3 for elements 0 and 8) so that |sumi| > 2^13 is odd and d*sumi is not a float32, "+
			"so mmvq's lane b%%64*2+half cancels them exactly except for the fma's rounding error of d*sumi; the other pairs are small "+
			"independent residues (e in 104..109) of the size of that error", crMxN, crMxK),
		Seed: 0x6d6d7663,
		Make: func(seed uint64) (ops.Tensors, error) {
			r := NewRNG(seed)
			nb := crMxK / 32
			a := make([]uint8, nb*36)
			for b := 0; b < nb/2; b++ {
				d := fp16Full(r, -7)
				d &^= 0x8000
				sum := 0
				for j := 0; j < 32; j++ {
					q := 2*(32+r.Intn(32)) + 1 // odd, 65..127
					if r.Uint64()&1 != 0 {
						q = -q
					}
					sum += q
					a[b*36+4+j] = uint8(int8(q))
				}
				s := half.EncodeFP16(float32(half.DecodeFP16(d) * float32(sum)))
				a[b*36], a[b*36+1], a[b*36+2], a[b*36+3] = uint8(d), uint8(d>>8), uint8(s), uint8(s>>8)
			}
			copy(a[nb/2*36:], a[:nb/2*36])
			w := make([]uint8, crMxN*nb*17)
			for n := 0; n < crMxN; n++ {
				row := w[n*nb*17 : (n+1)*nb*17]
				for p := 0; p < nb/2; p++ {
					lo, hi := row[p*17:(p+1)*17], row[(p+nb/2)*17:(p+nb/2+1)*17]
					if r.Intn(4) == 0 {
						for _, blk := range [][]uint8{lo, hi} {
							blk[0] = uint8(104 + r.Intn(6))
							for j := 1; j < 17; j++ {
								blk[j] = uint8(r.Uint64())
							}
						}
						continue
					}
					// |sumi| near its maximum and odd: every element's
					// value has q's sign and magnitude 8 or 12, except
					// elements 0 and 8 (one per half-block), 1 or 3.
					lo[0] = uint8(126 + r.Intn(5))
					hi[0] = lo[0]
					qs := a[p*36+4 : p*36+36]
					code := func(i int) uint8 {
						c := uint8(6 + r.Intn(2))
						if i == 0 || i == 8 {
							c = uint8(1 + 2*r.Intn(2))
						}
						if int8(qs[i]) < 0 {
							c |= 8
						}
						return c
					}
					for j := 0; j < 16; j++ {
						lo[1+j] = code(j) | code(j+16)<<4
						hi[1+j] = lo[1+j] ^ 0x88
					}
				}
			}
			return ops.Tensors{"w": tensor.FromU8([]int{crMxN, nb, 17}, w), "act": tensor.FromU8([]int{nb, 36}, a)}, nil
		},
	})
	for _, s := range []string{"mmvq", "mmvq-nofma", "seq"} {
		t.addCase(Case{Name: "gemv.mxfp4_q8_1.crafted." + s, Family: "gemv", Op: "gemv.mxfp4_q8_1",
			Params: ops.Params{"schedule": s}, Inputs: "gemv.mxfp4_q8_1.crafted",
			Description: "llama.cpp MXFP4 x Q8_1 GEMV on cancelling block pairs (fused/unfused and order discriminating), schedule " + s})
	}

	t.addInputs(Inputs{
		Name: "gemv.sparse_fp4.crafted",
		Description: fmt.Sprintf("discriminates fused from unfused sum*scale and strided4 from sequential tile reduction: E=%d, A=%d, K=%d (8 tiles of 64), N=%d, "+
			"experts [1, 0, 2], global = 2^-4 * (1 + 23 random bits), scales E4M3 in 0x30..0x3F. "+
			"Tile 4 repeats tile 0 (act and scales) with negated weights (comp xor 0x88) and act ~2^11, so the fp16 tile partials 0 and 4 cancel exactly "+
			"in strided4's accumulator 0 but absorb the other tiles' partials in a sequential reduction. In every other tile, groups 0-5 have act ~2^-9 "+
			"(the residue) and group 7 repeats group 6's act (~2^8) with negated weights, so the tile keeps the rounding error of group 6's sum*scale "+
			"under a fused multiply-add and not without; act magnitudes carry odd 10-bit mantissas", crSpE, crSpA, crSpK, crSpN),
		Seed: 0x73707263,
		Make: func(seed uint64) (ops.Tensors, error) {
			r := NewRNG(seed)
			const K, N, E, A = crSpK, crSpN, crSpE, crSpA
			act := make([]uint16, A*K)
			for a := 0; a < A; a++ {
				row := act[a*K : (a+1)*K]
				for k := 0; k < K; k++ {
					tile, g := k/64, k%64/8
					switch {
					case tile == 4:
						row[k] = row[k-256]
					case tile == 0:
						row[k] = fp16Full(r, 11)
					case g < 6:
						row[k] = fp16Full(r, -9)
					case g == 6:
						row[k] = fp16Full(r, 8)
					default:
						row[k] = row[k-8]
					}
				}
			}
			comp := make([]uint8, E*K/4*N)
			meta := make([]uint8, E*K/8*N)
			sc := make([]uint8, E*K/16*N)
			pairs := sparse24.MetaNibbles
			for e := 0; e < E; e++ {
				for k := 0; k < K; k += 8 { // one meta byte, two comp bytes per 8 K
					tile, g := k/64, k%64/8
					for n := 0; n < N; n++ {
						mi := (e*K/8+k/8)*N + n
						ci := (e*K/4+k/4)*N + n
						switch {
						case tile == 4:
							meta[mi] = meta[mi-32*N]
							comp[ci] = comp[ci-64*N] ^ 0x88
							comp[ci+N] = comp[ci+N-64*N] ^ 0x88
						case tile != 0 && g == 7:
							meta[mi] = meta[mi-N]
							comp[ci] = comp[ci-2*N] ^ 0x88
							comp[ci+N] = comp[ci+N-2*N] ^ 0x88
						default:
							meta[mi] = pairs[r.Intn(6)] | pairs[r.Intn(6)]<<4
							comp[ci] = uint8(r.Uint64())
							comp[ci+N] = uint8(r.Uint64())
						}
					}
				}
				for b := 0; b < K/16; b++ {
					for n := 0; n < N; n++ {
						i := (e*K/16+b)*N + n
						if b/4 == 4 {
							sc[i] = sc[i-16*N]
						} else {
							sc[i] = uint8(0x30 + r.Intn(16))
						}
					}
				}
			}
			glob := make([]float32, E)
			for e := range glob {
				glob[e] = float32(math.Ldexp(float64(1<<23|r.Uint32()>>9), -27))
			}
			scales := tensor.FromU8([]int{E, K / 16, N}, sc)
			scales.Logical = "e4m3"
			return ops.Tensors{
				"comp":    tensor.FromU8([]int{E, K / 4, N}, comp),
				"meta":    tensor.FromU8([]int{E, K / 8, N}, meta),
				"scales":  scales,
				"global":  tensor.FromF32([]int{E}, glob),
				"act":     tensor.FromBits16(tensor.F16, []int{A, K}, act),
				"experts": tensor.FromI32([]int{A}, []int32{1, 0, 2}),
			}, nil
		},
	})
	for _, s := range []string{"sparse-v7", "sparse-v7-nofma", "sparse-v7-seq"} {
		t.addCase(Case{Name: "gemv.sparse_fp4.crafted." + s, Family: "gemv", Op: "gemv.sparse_fp4",
			Params: ops.Params{"schedule": s}, Inputs: "gemv.sparse_fp4.crafted",
			Description: "2:4-sparse NVFP4 MoE GEMV on cancelling groups and tiles (fused/unfused and tile-order discriminating), schedule " + s + ", E4M3 scales decoded as e4m3fn"})
	}

	t.addInputs(Inputs{
		Name: "gemv.awq.crafted",
		Description: fmt.Sprintf("discriminates summation orders (and fp16 from fp32 output): IC=%d, OC=%d, G=%d; x F16 [IC] = ±(1 + odd 10-bit mantissa) * 2^e with e uniform in -10..13, "+
			"x[ic+512] = -x[ic] for ic%%4 != 3; qweight uniformly random words, qzeros 8 for every nibble, scales F16 with odd 10-bit mantissas in 2^-4..2^-1, "+
			"groups g and g+4 sharing scales, and q[ic+512] = 16-q[ic] (so W[ic+512] = -W[ic]) where q[ic] != 0: large equal-and-opposite products "+
			"whose running sums absorb the small ones in an order-dependent way. Fusion cannot be told apart here: fp16 x fp16 products are exact in float32", crAwIC, crAwOC, crAwG),
		Seed: 0x61777163,
		Make: func(seed uint64) (ops.Tensors, error) {
			r := NewRNG(seed)
			const IC, OC, G = crAwIC, crAwOC, crAwG
			x := make([]uint16, IC)
			for i := 0; i < IC/2; i++ {
				x[i] = fp16Full(r, r.Intn(24)-10)
			}
			for i := IC / 2; i < IC; i++ {
				if i%4 == 3 {
					x[i] = fp16Full(r, r.Intn(24)-10)
				} else {
					x[i] = x[i-IC/2] ^ 0x8000
				}
			}
			qw := make([]uint32, IC*OC/8)
			for i := 0; i < IC/2*OC/8; i++ {
				qw[i] = r.Uint32()
			}
			for i := IC / 2 * OC / 8; i < len(qw); i++ {
				src := qw[i-IC/2*OC/8]
				var v uint32
				for j := 0; j < 8; j++ {
					q := src >> (4 * j) & 15
					if q != 0 {
						q = 16 - q
					}
					v |= q << (4 * j)
				}
				qw[i] = v
			}
			qz := make([]uint32, IC/G*OC/8)
			for i := range qz {
				qz[i] = 0x88888888
			}
			sc := make([]uint16, IC/G*OC)
			for i := 0; i < len(sc)/2; i++ {
				sc[i] = fp16Full(r, -4+r.Intn(4)) &^ 0x8000
			}
			copy(sc[len(sc)/2:], sc[:len(sc)/2])
			return ops.Tensors{
				"qweight": tensor.FromBits32(tensor.I32, []int{IC, OC / 8}, qw),
				"qzeros":  tensor.FromBits32(tensor.I32, []int{IC / G, OC / 8}, qz),
				"scales":  tensor.FromBits16(tensor.F16, []int{IC / G, OC}, sc),
				"x":       tensor.FromBits16(tensor.F16, []int{IC}, x),
			}, nil
		},
	})
	for _, s := range []string{"seq-f16out", "seq", "warp32", "tree64"} {
		t.addCase(Case{Name: "gemv.awq.crafted." + s, Family: "gemv", Op: "gemv.awq",
			Params: ops.Params{"schedule": s, "group": fmt.Sprint(crAwG)}, Inputs: "gemv.awq.crafted",
			Description: "AWQ W4A16 GEMV on cancelling products (order discriminating), schedule " + s})
	}
	return t.inputs, t.cases
}
