package catalog

import (
	"bytes"
	"math"
	"testing"

	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// TestGEMVCasesDiscriminate guards the purpose of the crafted GEMV sets: a
// golden case is worth something only if the wrong kernel fails it, so for
// each schedule pair a kernel author could confuse (fused vs unfused, one
// reduction order vs another) the expected outputs must differ on many
// elements, and all must be finite. min is about three quarters of the
// outputs; the counts at the time of writing are in the comments.
func TestGEMVCasesDiscriminate(t *testing.T) {
	ins, _ := Registered()
	byName := map[string]Inputs{}
	for _, in := range ins {
		byName[in.Name] = in
	}
	for _, tc := range []struct {
		name, op, inputs string
		params           ops.Params
		a, b             string
		min              int
	}{
		{"mxfp4 fused", "gemv.mxfp4_q8_1", "gemv.mxfp4_q8_1.crafted", nil, "mmvq", "mmvq-nofma", 48},                    // 64 of 64,
		{"mxfp4 order", "gemv.mxfp4_q8_1", "gemv.mxfp4_q8_1.crafted", nil, "mmvq", "seq", 48},                           // 64 of 64,
		{"sparse fused", "gemv.sparse_fp4", "gemv.sparse_fp4.crafted", nil, "sparse-v7", "sparse-v7-nofma", 192},        // 231 of 256,
		{"sparse order", "gemv.sparse_fp4", "gemv.sparse_fp4.crafted", nil, "sparse-v7", "sparse-v7-seq", 192},          // 249 of 256,
		{"awq order seq/warp32", "gemv.awq", "gemv.awq.crafted", ops.Params{"group": "128"}, "seq", "warp32", 40},       // 63 of 64,
		{"awq order seq/tree64", "gemv.awq", "gemv.awq.crafted", ops.Params{"group": "128"}, "seq", "tree64", 40},       // 64 of 64,
		{"awq order warp32/tree64", "gemv.awq", "gemv.awq.crafted", ops.Params{"group": "128"}, "warp32", "tree64", 40}, // 53 of 64,
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, ok := byName[tc.inputs]
			if !ok {
				t.Fatalf("input set %q not in the catalog", tc.inputs)
			}
			x, err := in.Make(in.Seed)
			if err != nil {
				t.Fatal(err)
			}
			run := func(s string) []float32 {
				p := ops.Params{"schedule": s}
				for k, v := range tc.params {
					p[k] = v
				}
				out, err := ops.Run(tc.op, p, x)
				if err != nil {
					t.Fatalf("%s: %v", s, err)
				}
				return gemvValues(t, out["y"])
			}
			ya, yb := run(tc.a), run(tc.b)
			diff := 0
			for i := range ya {
				if math.IsNaN(float64(ya[i])) || math.IsInf(float64(ya[i]), 0) || math.IsNaN(float64(yb[i])) || math.IsInf(float64(yb[i]), 0) {
					t.Fatalf("output %d not finite: %s %v, %s %v", i, tc.a, ya[i], tc.b, yb[i])
				}
				if math.Float32bits(ya[i]) != math.Float32bits(yb[i]) {
					diff++
				}
			}
			t.Logf("%s vs %s: %d of %d outputs differ", tc.a, tc.b, diff, len(ya))
			if diff < tc.min {
				t.Errorf("%s vs %s: %d of %d outputs differ, want at least %d", tc.a, tc.b, diff, len(ya), tc.min)
			}
		})
	}
}

// The crafted AWQ set cannot tell fused from unfused accumulation, and
// neither can any AWQ input: fp16 x fp16 products are exact in float32, so
// fma(w, x, acc) = float32(w*x) + acc. This documents why gemv.awq has no
// fused/unfused pair; if it ever fails, the op's products are no longer
// exact and the crafted set needs a fused case.
func TestGEMVAWQFusionIrrelevant(t *testing.T) {
	ins, _ := Registered()
	for _, in := range ins {
		if in.Name != "gemv.awq.crafted" {
			continue
		}
		x, err := in.Make(in.Seed)
		if err != nil {
			t.Fatal(err)
		}
		a, err := ops.Run("gemv.awq", ops.Params{"schedule": "seq", "group": "128"}, x)
		if err != nil {
			t.Fatal(err)
		}
		b, err := ops.Run("gemv.awq", ops.Params{"schedule": "seq-fma", "group": "128"}, x)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a["y"].Data, b["y"].Data) {
			t.Fatal("seq and seq-fma differ on gemv.awq.crafted: AWQ products are not exact in float32")
		}
		return
	}
	t.Fatal("gemv.awq.crafted not in the catalog")
}

func gemvValues(t *testing.T, y tensor.Tensor) []float32 {
	t.Helper()
	switch y.DType {
	case tensor.F32:
		return y.F32()
	case tensor.F16:
		h := y.Bits16()
		v := make([]float32, len(h))
		for i, b := range h {
			v[i] = half.DecodeFP16(b)
		}
		return v
	}
	t.Fatalf("output dtype %s", y.DType)
	return nil
}
