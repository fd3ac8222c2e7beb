package ops

import (
	"strings"
	"testing"

	"github.com/bitexact/bitexact/refimpl/tensor"
)

func blkRamp(n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i%37) - 18.5
	}
	return x
}

func TestNVFP4Ops(t *testing.T) {
	x := tensor.FromF32([]int{3, 32}, blkRamp(96))
	lin, err := Run("nvfp4.quantize", Params{}, Tensors{"x": x})
	if err != nil {
		t.Fatal(err)
	}
	if s := lin["scales"]; s.Logical != "e4m3" || len(s.Shape) != 2 || s.Shape[0] != 3 || s.Shape[1] != 2 {
		t.Fatalf("scales %v %q", s.Shape, s.Logical)
	}
	if p := lin["packed"]; p.Logical != "e2m1x2" || p.Shape[1] != 16 {
		t.Fatalf("packed %v %q", p.Shape, p.Logical)
	}
	// 2688/18.5 rounded to float32.
	if g := lin["global"].F32()[0]; g != float32(2688)/float32(18.5) {
		t.Errorf("global %v", g)
	}
	sw, err := Run("nvfp4.quantize", Params{"swizzle": "1"}, Tensors{"x": x})
	if err != nil {
		t.Fatal(err)
	}
	if n := sw["scales"].Shape; len(n) != 1 || n[0] != 512 {
		t.Fatalf("swizzled scales shape %v, want [512]", n)
	}
	un, err := Run("nvfp4.unswizzle", Params{"rows": "3", "sf_cols": "2"}, Tensors{"swizzled": sw["scales"]})
	if err != nil || !un["scales"].Equal(lin["scales"]) {
		t.Fatalf("unswizzle: %v", err)
	}
	re, err := Run("nvfp4.swizzle", nil, Tensors{"scales": lin["scales"]})
	if err != nil || !re["swizzled"].Equal(sw["scales"]) {
		t.Fatalf("swizzle: %v", err)
	}
	y1, err := Run("nvfp4.dequantize", nil, lin)
	if err != nil {
		t.Fatal(err)
	}
	y2, err := Run("nvfp4.dequantize", Params{"swizzle": "1"}, sw)
	if err != nil || !y1["y"].Equal(y2["y"]) {
		t.Fatalf("dequantize swizzled: %v", err)
	}
	g, err := Run("nvfp4.quantize", Params{"global": "0x1p0", "recipe": "vllm-model-exact-rcp"}, Tensors{"x": x})
	if err != nil || g["global"].F32()[0] != 1 {
		t.Fatalf("explicit global: %v", err)
	}
}

func TestBlockOpErrors(t *testing.T) {
	f := tensor.FromF32([]int{2, 24}, make([]float32, 48))
	cases := []struct {
		name, op string
		p        Params
		in       Tensors
		want     string
	}{
		{"nvfp4 K", "nvfp4.quantize", nil, Tensors{"x": f}, "multiple of 16"},
		{"nvfp4 dtype", "nvfp4.quantize", nil, Tensors{"x": tensor.FromU8([]int{1, 16}, make([]uint8, 16))}, `tensor "x": dtype U8`},
		{"nvfp4 recipe", "nvfp4.quantize", Params{"recipe": "x"}, Tensors{"x": f}, "unknown recipe"},
		{"nvfp4 swizzle", "nvfp4.quantize", Params{"swizzle": "2"}, Tensors{"x": f}, "swizzle"},
		{"nvfp4 global", "nvfp4.quantize", Params{"global": "abc"}, Tensors{"x": tensor.FromF32([]int{1, 16}, make([]float32, 16))}, "not a float"},
		{"unswizzle rows", "nvfp4.unswizzle", Params{"sf_cols": "1"}, Tensors{"swizzled": tensor.FromU8([]int{512}, make([]uint8, 512))}, "rows is required"},
		{"mxfp4 K", "mxfp4.quantize", nil, Tensors{"x": f}, "multiple of 32"},
		{"mxfp4 mode", "mxfp4.quantize", Params{"mode": "up"}, Tensors{"x": f}, "up"},
		{"mxfp4 scales shape", "mxfp4.dequantize", nil, Tensors{"packed": tensor.FromU8([]int{1, 16}, make([]uint8, 16)), "scales": tensor.FromU8([]int{2}, make([]uint8, 2))}, `tensor "scales"`},
		{"mxfp4 dequantize profile", "mxfp4.dequantize", Params{"profile": "modelopt"}, Tensors{"packed": tensor.FromU8([]int{1, 16}, make([]uint8, 16)), "scales": tensor.FromU8([]int{1, 1}, make([]uint8, 1))}, `unknown profile "modelopt"`},
		{"mxfp4 recorded profile takes no nan", "mxfp4.dequantize", Params{"profile": "modelopt-5a4242fa-cuda", "nan": "cuda"}, Tensors{"packed": tensor.FromU8([]int{1, 16}, make([]uint8, 16)), "scales": tensor.FromU8([]int{1, 1}, make([]uint8, 1))}, "nan=cuda does not apply"},
		{"ggml length", "ggml.mxfp4.quantize", nil, Tensors{"x": tensor.FromF32([]int{33}, make([]float32, 33))}, "multiple of 32"},
		{"ggml log2", "ggml.mxfp4.quantize", Params{"log2": "fast"}, Tensors{"x": tensor.FromF32([]int{32}, make([]float32, 32))}, "log2 mode"},
		{"q8_1 profile", "ggml.q8_1.quantize", Params{"s": "gpu"}, Tensors{"x": tensor.FromF32([]int{32}, make([]float32, 32))}, "q8_1 profile"},
		{"q8_1 blocks shape", "ggml.q8_1.dequantize", nil, Tensors{"blocks": tensor.FromU8([]int{1, 17}, make([]uint8, 17))}, `tensor "blocks"`},
		{"logical mismatch", "ggml.mxfp4.dequantize", nil, Tensors{"blocks": func() tensor.Tensor {
			b := tensor.FromU8([]int{1, 17}, make([]uint8, 17))
			b.Logical = "block_q8_1"
			return b
		}()}, "logical format"},
	}
	for _, c := range cases {
		_, err := Run(c.op, c.p, c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to contain %q", c.name, err, c.want)
		}
	}
}

func TestGGMLOps(t *testing.T) {
	x := tensor.FromF32([]int{64}, blkRamp(64))
	for _, op := range []string{"ggml.mxfp4", "ggml.q8_1"} {
		q, err := Run(op+".quantize", nil, Tensors{"x": x})
		if err != nil {
			t.Fatal(err)
		}
		y, err := Run(op+".dequantize", nil, q)
		if err != nil {
			t.Fatal(err)
		}
		if s := y["y"].Shape; len(s) != 1 || s[0] != 64 {
			t.Errorf("%s: y shape %v", op, s)
		}
	}
	q, _ := Run("ggml.q8_1.quantize", Params{"s": "cuda"}, Tensors{"x": x})
	if s := q["blocks"].Shape; s[0] != 2 || s[1] != 36 || q["blocks"].Logical != "block_q8_1" {
		t.Errorf("q8_1 blocks %v %q", s, q["blocks"].Logical)
	}
	m, _ := Run("mxfp4.quantize", Params{"mode": "ceil", "profile": "ml_dtypes"}, Tensors{"x": tensor.FromF32([]int{2, 32}, x.F32())})
	if m["scales"].Logical != "e8m0" || m["scales"].Shape[1] != 1 {
		t.Errorf("mxfp4 scales %v %q", m["scales"].Shape, m["scales"].Logical)
	}
}
