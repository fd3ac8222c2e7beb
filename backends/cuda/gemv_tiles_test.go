//go:build cuda

package cuda

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/bitexact/bitexact/internal/golden/catalog"
	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/sparse24"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// TestSparseGEMVTiles runs sp24_gemv_v7 at every tiles-per-block value on
// the same inputs: v7Tiles picks one per shape, so the golden cases
// exercise only the values their shapes lead to. K = 576 is 9 tiles (a
// partly filled last block at 2 and 3 tiles, and the reduction's
// 8-tile and single-tile tails), N = 1028 leaves a partly live last
// column range, scale_k 16 and 24 take both scale paths, and the
// activations include the fp16 edge values.
func TestSparseGEMVTiles(t *testing.T) {
	d := device(t)
	ctx := context.Background()
	const e, a, k, n = 3, 2, 576, 1028
	rng := catalog.NewRNG(0x7E5)
	u8s := func(shape []int, f func() byte) tensor.Tensor {
		b := make([]byte, shape[0]*shape[1]*shape[2])
		for i := range b {
			b[i] = f()
		}
		return tensor.FromU8(shape, b)
	}
	pairs := sparse24.MetaNibbles
	// normal activations, row 0 with the fp16 edges spread among them: ±0, the
	// smallest subnormal, the largest finite, ±Inf and NaN (both bodies
	// flip the sign of looked-up products, NaN and -0 among them)
	edges := []uint16{0x0000, 0x8000, 0x0001, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00}
	act := make([]uint16, a*k)
	for i := range act {
		act[i] = half.EncodeFP16(rng.Normal())
		if i < k && i%37 == 5 { // row 0 only: row 1 keeps every output finite
			act[i] = edges[rng.Intn(len(edges))]
		}
	}
	in := ops.Tensors{
		"comp":    u8s([]int{e, k / 4, n}, func() byte { return byte(rng.Intn(256)) }),
		"meta":    u8s([]int{e, k / 8, n}, func() byte { return pairs[rng.Intn(6)] | pairs[rng.Intn(6)]<<4 }),
		"global":  tensor.FromF32([]int{e}, []float32{0.75, -1.5, 2}),
		"act":     tensor.FromBits16(tensor.F16, []int{a, k}, act),
		"experts": tensor.FromI32([]int{a}, []int32{2, 0}),
	}
	kernel, err := NewEngine(d).Lookup("sp24_gemv_v7")
	if err != nil {
		t.Fatal(err)
	}
	for _, sk := range []int{16, 24} {
		in["scales"] = u8s([]int{e, k / sk, n}, func() byte { return byte(0x20 + rng.Intn(0x30)) })
		for _, s := range []struct {
			fused bool
			width int
		}{{true, V7ReduceWidth}, {false, V7ReduceWidth}, {true, 1}} {
			p := ops.Params{"schedule": V7Schedule(s.fused, s.width).String()}
			want, err := ops.Run("gemv.sparse_fp4", p, in)
			if err != nil {
				t.Fatal(err)
			}
			for tiles := 1; tiles <= v7MaxTiles; tiles++ {
				t.Run(fmt.Sprintf("scale_k=%d/fused=%v/width=%d/tiles=%d", sk, s.fused, s.width, tiles), func(t *testing.T) {
					got, err := runSparseGEMVTiles(ctx, d, kernel, p, in, tiles)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got["y"].Data, want["y"].Data) {
						t.Errorf("y differs from the reference")
					}
				})
			}
		}
	}
}
