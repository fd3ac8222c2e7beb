//go:build cuda

package cuda

import (
	"bytes"
	"context"
	"math"
	"testing"

	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// ggmlScaleSweep builds one 32-element block per binade of the block
// maximum, from 2^-140 (a float32 subnormal) to 2^20: element 0 is the
// maximum 1.5*2^k, the others spread below it with a fixed pattern, so that
// the fp16 d of block_q8_1 runs through the fp16 normal, subnormal and
// zero ranges, and the E8M0 exponent of block_mxfp4 through its
// out-of-range casts.
func ggmlScaleSweep() []float32 {
	var x []float32
	for k := -140; k <= 20; k++ {
		m := float32(math.Ldexp(1.5, k))
		for j := 0; j < 32; j++ {
			v := m * float32(j%11) / 10 // exact enough: any float32 is a fine input
			if j%3 == 1 {
				v = -v
			}
			if j == 0 {
				v = m
			}
			x = append(x, v)
		}
	}
	return x
}

// TestGGMLQuantizeScaleSweep holds both llama.cpp quantize kernels to the
// reference over the whole exponent range, block by block, and names each
// differing block with its maximum: the golden cases show whether a kernel
// conforms, this shows where a failing one breaks.
func TestGGMLQuantizeScaleSweep(t *testing.T) {
	d := device(t)
	ctx := context.Background()
	x := ggmlScaleSweep()
	in := ops.Tensors{"x": tensor.FromF32([]int{len(x)}, x)}
	for _, c := range []struct {
		op     string
		params ops.Params
		size   int
	}{
		{"ggml.q8_1.quantize", ops.Params{"s": "cuda"}, 36},
		{"ggml.mxfp4.quantize", ops.Params{"log2": "exact", "cast": "x86-64"}, 17},
	} {
		t.Run(c.op, func(t *testing.T) {
			want, err := ops.Run(c.op, c.params, in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := NewEngine(d).Run(ctx, c.op, c.params, in)
			if err != nil {
				t.Fatal(err)
			}
			w, g := want["blocks"].Data, got["blocks"].Data
			if len(w) != len(g) {
				t.Fatalf("got %d bytes, want %d", len(g), len(w))
			}
			bad := 0
			for b := 0; b*c.size < len(w); b++ {
				wb, gb := w[b*c.size:(b+1)*c.size], g[b*c.size:(b+1)*c.size]
				if bytes.Equal(wb, gb) {
					continue
				}
				if bad++; bad <= 12 {
					t.Errorf("block %d (max 1.5*2^%d): got % x, want % x", b, b-140, gb, wb)
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d blocks differ", bad, len(w)/c.size)
			}
		})
	}
}

// TestAWQGroupPaths runs awq_forge_pack on group sizes the golden set does
// not use: 256 and the whole input (group -1) take the streaming path (the
// group is read twice), 8 and 40 the register path with partly filled and
// uneven row slices.
func TestAWQGroupPaths(t *testing.T) {
	d := device(t)
	ctx := context.Background()
	const ic, oc = 512, 136 // 17 chunks: the last warp of the grid is partly live
	h := make([]uint16, ic*oc)
	s := uint32(12345)
	for i := range h {
		s = s*1664525 + 1013904223
		// fp16 of magnitude up to ~2, both signs, some exact zeros.
		h[i] = uint16(s>>16) & 0xBFFF
		if s>>28 == 0 {
			h[i] = 0
		}
	}
	in := ops.Tensors{"w": tensor.FromBits16(tensor.F16, []int{ic, oc}, h)}
	for _, g := range []string{"256", "-1", "8", "40"} {
		if g == "40" {
			in = ops.Tensors{"w": tensor.FromBits16(tensor.F16, []int{480, oc}, h[:480*oc])}
		}
		t.Run("group="+g, func(t *testing.T) {
			p := ops.Params{"quantizer": "forge", "group": g}
			want, err := ops.Run("awq.quantize", p, in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := NewEngine(d).Run(ctx, "awq.quantize", p, in)
			if err != nil {
				t.Fatal(err)
			}
			for name, w := range want {
				if !bytes.Equal(got[name].Data, w.Data) {
					t.Errorf("%s differs from the reference", name)
				}
			}
		})
	}
}
