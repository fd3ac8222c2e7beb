package ops

import (
	"fmt"

	"github.com/bitexact/bitexact/refimpl/ggml"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

func init() {
	register(Op{
		Name: "ggml.mxfp4.quantize",
		Doc:  "llama.cpp quantize_row_mxfp4_ref: x [n*32] to block_mxfp4 [n,17]",
		Params: map[string]string{
			"log2": "log2f (default: correctly rounded log2f, as glibc) or exact (exponent from the bits)",
			"cast": "x86-64 (default) or arm64: the C (uint8_t) conversion of an out-of-range exponent",
		},
		Defaults: Params{"log2": "log2f", "cast": "x86-64"},
		Inputs:   []string{"x"},
		Outputs:  []string{"blocks"},
		Run:      runGGMLMXFP4Quantize,
	})
	register(withNaN(Op{
		Name:    "ggml.mxfp4.dequantize",
		Doc:     "llama.cpp dequantize_row_mxfp4: block_mxfp4 [n,17] to float32 [n*32] (exact; no output is NaN, so every nan convention gives the same outputs)",
		Params:  map[string]string{},
		Inputs:  []string{"blocks"},
		Outputs: []string{"y"},
		Run:     runGGMLMXFP4Dequantize,
	}))
	register(Op{
		Name: "ggml.q8_1.quantize",
		Doc:  "llama.cpp block_q8_1 quantization: x [n*32] to blocks [n,36] (fp16 d, fp16 s, int8 qs[32])",
		Params: map[string]string{
			"s": "cpu (default: quantize_row_q8_1_ref, x86-64 build, s = fp16(d*sum q)), arm64 (the same on arm64: saturating casts, positive default NaN) or cuda (quantize_q8_1 kernel, s = fp16(sum x))",
		},
		Defaults: Params{"s": ggml.Q8_1CPU.Name},
		Choices:  map[string][]Choice{"s": q8_1Choices()},
		Inputs:   []string{"x"},
		Outputs:  []string{"blocks"},
		Run:      runGGMLQ8_1Quantize,
	})
	register(withNaN(Op{
		Name:    "ggml.q8_1.dequantize",
		Doc:     "block_q8_1 [n,36] to float32 [n*32]: q * fp16(d), NaN results per the nan convention",
		Params:  map[string]string{},
		Inputs:  []string{"blocks"},
		Outputs: []string{"y"},
		Run:     runGGMLQ8_1Dequantize,
	}))
}

func ggmlInput(x tensor.Tensor) ([]float32, error) {
	if err := x.Expect("x", tensor.F32, -1); err != nil {
		return nil, err
	}
	if x.Shape[0]%ggml.QK != 0 {
		return nil, fmt.Errorf("tensor \"x\": length %d is not a multiple of %d", x.Shape[0], ggml.QK)
	}
	return x.F32(), nil
}

func ggmlBlocks(b tensor.Tensor, size int, logical string) error {
	if err := b.Expect("blocks", tensor.U8, -1, size); err != nil {
		return err
	}
	return blkLogical("blocks", b, logical)
}

func runGGMLMXFP4Quantize(p Params, in Tensors) (Tensors, error) {
	l2, err := ggml.LookupLog2Mode(p["log2"])
	if err != nil {
		return nil, err
	}
	cast, err := ggml.LookupCastMode(p["cast"])
	if err != nil {
		return nil, err
	}
	x, err := ggmlInput(in["x"])
	if err != nil {
		return nil, err
	}
	bs, err := ggml.QuantizeMXFP4(x, ggml.MXFP4Options{Log2: l2, Cast: cast})
	if err != nil {
		return nil, err
	}
	t := tensor.FromU8([]int{len(bs), ggml.MXFP4BlockBytes}, ggml.AppendMXFP4(nil, bs))
	t.Logical = "block_mxfp4"
	return Tensors{"blocks": t}, nil
}

func runGGMLMXFP4Dequantize(p Params, in Tensors) (Tensors, error) {
	if _, err := nanConv(p); err != nil {
		return nil, err
	}
	b := in["blocks"]
	if err := ggmlBlocks(b, ggml.MXFP4BlockBytes, "block_mxfp4"); err != nil {
		return nil, err
	}
	bs, err := ggml.ParseMXFP4(b.Data)
	if err != nil {
		return nil, err
	}
	y := ggml.DequantizeMXFP4(bs)
	return Tensors{"y": tensor.FromF32([]int{len(y)}, y)}, nil
}

func runGGMLQ8_1Quantize(p Params, in Tensors) (Tensors, error) {
	prof, err := ggml.LookupQ8_1Profile(p["s"])
	if err != nil {
		return nil, err
	}
	x, err := ggmlInput(in["x"])
	if err != nil {
		return nil, err
	}
	bs, err := ggml.QuantizeQ8_1(x, prof)
	if err != nil {
		return nil, err
	}
	t := tensor.FromU8([]int{len(bs), ggml.Q8_1BlockBytes}, ggml.AppendQ8_1(nil, bs))
	t.Logical = "block_q8_1"
	return Tensors{"blocks": t}, nil
}

func runGGMLQ8_1Dequantize(p Params, in Tensors) (Tensors, error) {
	nan, err := nanConv(p)
	if err != nil {
		return nil, err
	}
	b := in["blocks"]
	if err := ggmlBlocks(b, ggml.Q8_1BlockBytes, "block_q8_1"); err != nil {
		return nil, err
	}
	bs, err := ggml.ParseQ8_1(b.Data)
	if err != nil {
		return nil, err
	}
	y := ggml.DequantizeQ8_1NaN(bs, nan)
	return Tensors{"y": tensor.FromF32([]int{len(y)}, y)}, nil
}
