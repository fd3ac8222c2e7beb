package gemv

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/half"
)

// Terms are a GEMV's operands as exact float64 values, one row per
// output: output i is, in exact arithmetic, the sum over k of
// W[i][k] * X[i][k] (rows of X may be shared). They are what Bound and
// BoundRows hold a kernel's outputs to when its summation order is not
// the declared one. A weight is NaN where the GEMV's weight is (an E4M3
// NaN scale, an E8M0 scale 0xFF).
type Terms struct {
	W, X [][]float64
}

// Terms returns the operands of SparseFP4GEMV(in, s) for any schedule s:
// for active row a and column n (output a*N+n), the dense K weights of
// expert Experts[a] (E2M1(code) * scale at the kept positions, 0 at the
// dropped ones; scale = the E4M3 byte decoded by in.Decode, times
// Global[e], unrounded) and the K fp16 activations of row a.
func (in SparseFP4) Terms() (Terms, error) {
	if err := in.checkShapes(); err != nil {
		return Terms{}, err
	}
	k, n := in.K, in.N
	var t Terms
	ns := k / in.ScaleK
	for a, ex := range in.Experts {
		x := make([]float64, k)
		off := 0
		if len(in.Act) != k {
			off = a * k
		}
		for i := range x {
			x[i] = float64(half.DecodeFP16(in.Act[off+i]))
		}
		e := int(ex)
		for col := 0; col < n; col++ {
			w := make([]float64, k)
			for q := 0; q < k/4; q++ {
				c := in.Comp[(e*(k/4)+q)*n+col]
				m := in.Meta[(e*(k/8)+q/2)*n+col] >> (4 * uint(q%2))
				sc := float64(in.Decode.decode(in.Scales[(e*ns+(4*q)/in.ScaleK)*n+col])) * float64(in.Global[e])
				w[4*q+int(m&3)] += float64(fp4.Decode(c&15)) * sc
				w[4*q+int(m>>2&3)] += float64(fp4.Decode(c>>4)) * sc
			}
			t.W, t.X = append(t.W, w), append(t.X, x)
		}
	}
	return t, nil
}

// MXFP4Q81Terms returns the operands of MXFP4Q81GEMV(w, act, n, k, s) for
// any schedule s: row r's K weights KValuesMXFP4[code] * 2^(e-128) (NaN in
// a block whose e is 0xFF, as the GEMV decodes it) and the K activations
// q * fp16(d) of the Q8_1 blocks, shared by every row.
func MXFP4Q81Terms(w, act []byte, n, k int) (Terms, error) {
	if n < 0 || k < 0 || k%QK != 0 {
		return Terms{}, fmt.Errorf("mxfp4 gemv: K=%d must be a non-negative multiple of %d (N=%d)", k, QK, n)
	}
	nb := k / QK
	if len(w) != n*nb*MXFP4BlockBytes {
		return Terms{}, fmt.Errorf("mxfp4 gemv: weights have %d bytes, want N*K/32*17 = %d", len(w), n*nb*MXFP4BlockBytes)
	}
	if len(act) != nb*Q81BlockBytes {
		return Terms{}, fmt.Errorf("mxfp4 gemv: activations have %d bytes, want K/32*36 = %d", len(act), nb*Q81BlockBytes)
	}
	x := make([]float64, k)
	for b := 0; b < nb; b++ {
		blk := act[b*Q81BlockBytes:]
		d8 := float64(half.DecodeFP16(binary.LittleEndian.Uint16(blk)))
		for j := 0; j < QK; j++ {
			x[QK*b+j] = float64(int8(blk[4+j])) * d8
		}
	}
	var t Terms
	for r := 0; r < n; r++ {
		wr := make([]float64, k)
		for b := 0; b < nb; b++ {
			blk := w[(r*nb+b)*MXFP4BlockBytes:]
			sc := math.NaN()
			if blk[0] != 0xFF {
				sc = math.Ldexp(1, int(blk[0])-128)
			}
			for j := 0; j < QK/2; j++ {
				wr[QK*b+j] = float64(KValuesMXFP4[blk[1+j]&15]) * sc
				wr[QK*b+j+QK/2] = float64(KValuesMXFP4[blk[1+j]>>4]) * sc
			}
		}
		t.W, t.X = append(t.W, wr), append(t.X, x)
	}
	return t, nil
}
