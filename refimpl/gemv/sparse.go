package gemv

import (
	"fmt"
	"math"

	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/fp8"
	"github.com/bitexact/bitexact/refimpl/half"
)

// ScaleDecode is how the sparse FP4 GEMV turns an E4M3 scale byte into a
// float32.
type ScaleDecode uint8

const (
	// E4M3FN decodes by the OCP E4M3 (FN) rules: 0x7F and 0xFF are NaN.
	E4M3FN ScaleDecode = iota
	// DGXLUT is the dgx-vllm host table (sparse_fp4_v7.cu
	// fp8_e4m3fn_to_float_host), which has no NaN: 0x7F decodes to 480 and
	// 0xFF to -480. It differs from E4M3FN only at those two codes.
	DGXLUT
)

// SparseFP4 is a batch of 2:4-sparse NVFP4 expert weight matrices in the
// dgx-vllm v7 transposed layout, and the activations of the active
// experts. N is the contiguous (output) dimension of every weight tensor.
type SparseFP4 struct {
	E, K, N int
	// Comp is [E, K/4, N]: byte (g, n) holds the two kept E2M1 codes of
	// K-group g (4 elements) of column n, v(i0) | v(i1)<<4.
	Comp []uint8
	// Meta is [E, K/8, N]: byte (p, n) = i0(2p) | i1(2p)<<2 | i0(2p+1)<<4 |
	// i1(2p+1)<<6, the positions (0..3) inside their group of 4 of the two
	// kept values of groups 2p and 2p+1.
	Meta []uint8
	// Scales is [E, K/ScaleK, N] E4M3 block scales, one per ScaleK K
	// elements.
	Scales []uint8
	// ScaleK is the K length of a scale block: 16 for NVFP4 (dgx-vllm's
	// production layout), 8 in its benchmark variant.
	ScaleK int
	// Global is [E], the per-expert float32 global scale.
	Global []float32
	// Act is fp16 bits, [A, K] (row a for active expert a, as the kernel's
	// A[E_active, K]) or [K] shared by every active expert.
	Act []uint16
	// Experts is [A], the expert index of each active row.
	Experts []int32
	// Decode picks the E4M3 decoding.
	Decode ScaleDecode
}

func (in *SparseFP4) check(s Schedule) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if err := in.checkShapes(); err != nil {
		return err
	}
	if s.GroupK%4 != 0 || in.ScaleK%s.GroupK != 0 {
		return fmt.Errorf("sparse fp4: schedule group %d must be a multiple of 4 dividing the scale block %d", s.GroupK, in.ScaleK)
	}
	return nil
}

// checkShapes checks in's dimensions, lengths and expert indices.
func (in *SparseFP4) checkShapes() error {
	if in.E < 0 || in.K < 0 || in.N < 0 {
		return fmt.Errorf("sparse fp4: negative dimension E=%d K=%d N=%d", in.E, in.K, in.N)
	}
	if in.K%8 != 0 {
		return fmt.Errorf("sparse fp4: K=%d is not a multiple of 8", in.K)
	}
	if in.ScaleK < 8 || in.ScaleK%8 != 0 || (in.K > 0 && in.K%in.ScaleK != 0) {
		return fmt.Errorf("sparse fp4: scale block %d must be a multiple of 8 dividing K=%d", in.ScaleK, in.K)
	}
	if in.Decode > DGXLUT {
		return fmt.Errorf("sparse fp4: unknown scale decoding %d", in.Decode)
	}
	e, k, n := in.E, in.K, in.N
	for _, c := range []struct {
		name string
		got  int
		want int
	}{
		{"comp", len(in.Comp), e * k / 4 * n},
		{"meta", len(in.Meta), e * k / 8 * n},
		{"scales", len(in.Scales), e * (k / max(in.ScaleK, 1)) * n},
		{"global", len(in.Global), e},
	} {
		if c.got != c.want {
			return fmt.Errorf("sparse fp4: %s has %d elements, want %d", c.name, c.got, c.want)
		}
	}
	a := len(in.Experts)
	if len(in.Act) != k && len(in.Act) != a*k {
		return fmt.Errorf("sparse fp4: act has %d elements, want K=%d or A*K=%d", len(in.Act), k, a*k)
	}
	for i, x := range in.Experts {
		if x < 0 || int(x) >= e {
			return fmt.Errorf("sparse fp4: experts[%d]=%d out of range [0, %d)", i, x, e)
		}
	}
	return nil
}

func (d ScaleDecode) decode(c uint8) float32 {
	if d == DGXLUT && c&0x7f == 0x7f {
		return math.Float32frombits(uint32(c&0x80)<<24 | math.Float32bits(480))
	}
	return fp8.E4M3.Decode(c)
}

// SparseFP4GEMV computes y[a, n] = Σ_k W_e[k, n] * act[a, k] for each active
// expert a (e = Experts[a]) under schedule s, where W_e's kept values are
// E2M1(code) * scale and scale = float32(E4M3(byte) * Global[e]) (one
// float32 rounding, as the kernel's c_fp8_lut[s] * g_scale). A group of
// s.GroupK elements sums its kept products E2M1 * act (exact in float32:
// activations are fp16) in meta order, then contributes sum * scale.
// The result is [A, N] row-major, each value rounded to s.Out.
func SparseFP4GEMV(in SparseFP4, s Schedule) ([]float32, error) {
	if err := in.check(s); err != nil {
		return nil, err
	}
	k, n := in.K, in.N
	a := len(in.Experts)
	y := make([]float32, a*n)
	if k == 0 {
		for i := range y {
			y[i] = roundTo(s.Out, 0)
		}
		return y, nil
	}
	var lut [16]float32
	for c := range lut {
		lut[c] = fp4.Decode(uint8(c))
	}
	var f8 [256]float32
	for c := range f8 {
		f8[c] = in.Decode.decode(uint8(c))
	}
	nGroups := k / s.GroupK
	xs := make([]float32, nGroups)
	ys := make([]float32, nGroups)
	pa := make([]float32, s.GroupK/2)
	pb := make([]float32, s.GroupK/2)
	act := make([]float32, k)
	var lanes []float32
	sb := k / in.ScaleK
	for ai, ex := range in.Experts {
		e := int(ex)
		row := in.Act
		if len(in.Act) != k {
			row = in.Act[ai*k : (ai+1)*k]
		}
		for i, h := range row {
			act[i] = half.DecodeFP16(h)
		}
		g := in.Global[e]
		comp := in.Comp[e*(k/4)*n : (e+1)*(k/4)*n]
		meta := in.Meta[e*(k/8)*n : (e+1)*(k/8)*n]
		sc := in.Scales[e*sb*n : (e+1)*sb*n]
		for col := 0; col < n; col++ {
			for gi := 0; gi < nGroups; gi++ {
				k0 := gi * s.GroupK
				t := 0
				for q := k0 / 4; q < (k0+s.GroupK)/4; q++ { // 4-element groups
					c := comp[q*n+col]
					m := meta[(q/2)*n+col] >> (4 * uint(q%2))
					pa[t], pb[t] = lut[c&0xF], act[4*q+int(m&3)]
					pa[t+1], pb[t+1] = lut[c>>4], act[4*q+int(m>>2&3)]
					t += 2
				}
				xs[gi] = s.chain(pa, pb)
				ys[gi] = float32(f8[sc[(k0/in.ScaleK)*n+col]] * g)
			}
			y[ai*n+col], lanes = s.run(xs, ys, lanes)
		}
	}
	return y, nil
}
