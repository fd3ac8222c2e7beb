package gemv

import (
	"fmt"

	"github.com/bitexact/bitexact/refimpl/fp8"
)

// BlockFP8 is a block-scaled FP8 GEMV's operands, DeepSeek-V3 style: E4M3
// weights with one float32 scale per Block x Block tile and an E4M3
// activation quantized in 1 x Block groups with one float32 scale each.
// Power-of-two (UE8M0) scales are float32 powers of two here; unpack a
// packed layout first (fp8block.UnpackUE8M0).
type BlockFP8 struct {
	// N is the number of outputs (weight rows), K the reduction length.
	N, K int
	// Block is the scale tile edge and activation group length (128).
	Block int
	// W is [N, K] E4M3 codes, row-major.
	W []uint8
	// WScale is [ceil(N/Block), ceil(K/Block)] float32, row-major.
	WScale []float32
	// X is [K] E4M3 codes.
	X []uint8
	// XScale is [ceil(K/Block)] float32.
	XScale []float32
}

func (in *BlockFP8) checkShapes() error {
	if in.N < 0 || in.K < 0 {
		return fmt.Errorf("block fp8 gemv: negative dimension N=%d K=%d", in.N, in.K)
	}
	if in.Block < 1 {
		return fmt.Errorf("block fp8 gemv: block %d must be at least 1", in.Block)
	}
	nb, kb := (in.N+in.Block-1)/in.Block, (in.K+in.Block-1)/in.Block
	switch {
	case len(in.W) != in.N*in.K:
		return fmt.Errorf("block fp8 gemv: weights have %d codes, want N*K = %d", len(in.W), in.N*in.K)
	case len(in.WScale) != nb*kb:
		return fmt.Errorf("block fp8 gemv: weight scales have %d elements, want ceil(N/%d)*ceil(K/%d) = %d", len(in.WScale), in.Block, in.Block, nb*kb)
	case len(in.X) != in.K:
		return fmt.Errorf("block fp8 gemv: activations have %d codes, want K = %d", len(in.X), in.K)
	case len(in.XScale) != kb:
		return fmt.Errorf("block fp8 gemv: activation scales have %d elements, want ceil(K/%d) = %d", len(in.XScale), in.Block, kb)
	}
	return nil
}

// BlockFP8GEMV computes y[n] = Σ over K blocks b of (Σ_{k in b} W[n,k] *
// X[k]) * (XScale[b] * WScale[n/Block, b]) under schedule s: the scale
// application DeepGEMM's FP8 GEMMs use (the block's partial sum promoted
// to float32 and multiplied by scale_a * scale_b).
//
// K is cut into groups of s.GroupK elements (a divisor of Block; a last
// short group when Block does not divide K is not allowed: K must be a
// multiple of s.GroupK). A group's sum is the chain of its E4M3 x E4M3
// products (each exact in float32) fused or not by s.Fused; its
// multiplier is float32(XScale[b] * WScale[n/Block, b]), rounded once,
// for the block b holding the group. The groups then run through the
// schedule's lanes and reduction, and the result is rounded to s.Out. A
// kernel that multiplies the sum by the two scales one after the other
// ((sum * sa) * sb) rounds differently and declares another schedule of
// its own.
func BlockFP8GEMV(in BlockFP8, s Schedule) ([]float32, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := in.checkShapes(); err != nil {
		return nil, err
	}
	if in.Block%s.GroupK != 0 || in.K%s.GroupK != 0 {
		return nil, fmt.Errorf("block fp8 gemv: schedule group %d must divide the block %d and K=%d", s.GroupK, in.Block, in.K)
	}
	var lut [256]float32
	for c := range lut {
		lut[c] = fp8.E4M3.Decode(uint8(c))
	}
	x := make([]float32, in.K)
	for k, c := range in.X {
		x[k] = lut[c]
	}
	kb := (in.K + in.Block - 1) / in.Block
	ng := in.K / s.GroupK
	xs, ys := make([]float32, ng), make([]float32, ng)
	w := make([]float32, in.K)
	y := make([]float32, in.N)
	var lanes []float32
	for n := 0; n < in.N; n++ {
		for k, c := range in.W[n*in.K : (n+1)*in.K] {
			w[k] = lut[c]
		}
		srow := in.WScale[(n/in.Block)*kb : (n/in.Block+1)*kb]
		for g := 0; g < ng; g++ {
			k0 := g * s.GroupK
			b := k0 / in.Block
			xs[g] = s.chain(w[k0:k0+s.GroupK], x[k0:k0+s.GroupK])
			ys[g] = float32(in.XScale[b] * srow[b])
		}
		y[n], lanes = s.run(xs, ys, lanes)
	}
	return y, nil
}

// Terms returns the operands of BlockFP8GEMV for any schedule: row n's K
// weights E4M3(W[n,k]) * WScale[n/Block, k/Block] and the K activations
// E4M3(X[k]) * XScale[k/Block], exact in float64 (NaN where a code or a
// scale is NaN). Bound with BoundModel{Mul32: 2} covers every order:
// the two roundings on a term's path besides the additions are the scale
// product and the group sum times it.
func (in BlockFP8) Terms() (Terms, error) {
	if err := in.checkShapes(); err != nil {
		return Terms{}, err
	}
	kb := (in.K + in.Block - 1) / in.Block
	x := make([]float64, in.K)
	for k, c := range in.X {
		x[k] = float64(fp8.E4M3.Decode(c)) * float64(in.XScale[k/in.Block])
	}
	var t Terms
	for n := 0; n < in.N; n++ {
		w := make([]float64, in.K)
		for k, c := range in.W[n*in.K : (n+1)*in.K] {
			w[k] = float64(fp8.E4M3.Decode(c)) * float64(in.WScale[(n/in.Block)*kb+k/in.Block])
		}
		t.W, t.X = append(t.W, w), append(t.X, x)
	}
	return t, nil
}
