package ops

import (
	"fmt"

	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// E2M1 ops. Unpacked codes are U8, one code per byte in the low 4 bits,
// Logical "e2m1"; packed codes are U8 with Logical "e2m1x2", element 2i in
// the low nibble (fp4.Pack).
func init() {
	register(Op{
		Name:     "e2m1.encode",
		Doc:      "float32 (or F16/BF16 x with parameter input, widened exactly to float32 first) -> E2M1 codes (one per byte) under a named rounding profile (fp4.Profile)",
		Params:   map[string]string{"profile": "nvidia (default) | sw-sm121 | ml_dtypes | cutlass | ties-away | ties-toward-zero | ggml", "input": inputParam},
		Defaults: Params{"profile": fp4.NVIDIA.Name, "input": "fp32"},
		Choices:  map[string][]Choice{"profile": fp4Choices()},
		Inputs:   []string{"x"},
		Outputs:  []string{"codes"},
		Run: func(p Params, in Tensors) (Tensors, error) {
			prof, err := fp4.Lookup(p["profile"])
			if err != nil {
				return nil, err
			}
			return encodeCodes(p, in["x"], "e2m1", "e2m1/"+prof.Name, prof.Encode)
		},
	})
	register(withNaN(Op{
		Name:    "e2m1.decode",
		Doc:     "E2M1 codes (one per byte, 0..15) -> exact float32 (0x8 -> -0); no output is NaN, so every nan convention gives the same outputs",
		Params:  map[string]string{},
		Inputs:  []string{"codes"},
		Outputs: []string{"x"},
		Run: func(p Params, in Tensors) (Tensors, error) {
			if _, err := nanConv(p); err != nil {
				return nil, err
			}
			c := in["codes"]
			if err := e2m1Codes(c, "codes"); err != nil {
				return nil, err
			}
			v := make([]float32, len(c.Data))
			for i, ci := range c.Data {
				v[i] = fp4.Decode(ci)
			}
			return Tensors{"x": tensor.FromF32(c.Shape, v)}, nil
		},
	}))
	register(Op{
		Name:    "e2m1.pack",
		Doc:     "E2M1 codes [..., 2n] -> bytes [..., n], element 2i in the low nibble",
		Params:  map[string]string{},
		Inputs:  []string{"codes"},
		Outputs: []string{"packed"},
		Run: func(p Params, in Tensors) (Tensors, error) {
			c := in["codes"]
			if err := e2m1Codes(c, "codes"); err != nil {
				return nil, err
			}
			if len(c.Shape) == 0 || c.Shape[len(c.Shape)-1]%2 != 0 {
				return nil, fmt.Errorf("tensor %q: shape %v, want a last dimension of even length (two codes per byte)", "codes", c.Shape)
			}
			shape := append([]int(nil), c.Shape...)
			shape[len(shape)-1] /= 2
			out := tensor.FromU8(shape, fp4.Pack(c.Data))
			out.Logical = "e2m1x2"
			return Tensors{"packed": out}, nil
		},
	})
	register(Op{
		Name:    "e2m1.unpack",
		Doc:     "bytes [..., n] of two E2M1 codes -> codes [..., 2n], low nibble first",
		Params:  map[string]string{},
		Inputs:  []string{"packed"},
		Outputs: []string{"codes"},
		Run: func(p Params, in Tensors) (Tensors, error) {
			t := in["packed"]
			if err := t.Expect("packed", tensor.U8); err != nil {
				return nil, err
			}
			if t.Logical != "" && t.Logical != "e2m1x2" {
				return nil, fmt.Errorf("tensor %q: logical format %q, want %q", "packed", t.Logical, "e2m1x2")
			}
			if len(t.Shape) == 0 {
				return nil, fmt.Errorf("tensor %q: a scalar cannot hold packed pairs; want rank >= 1", "packed")
			}
			shape := append([]int(nil), t.Shape...)
			shape[len(shape)-1] *= 2
			out := tensor.FromU8(shape, fp4.Unpack(t.Data, 2*len(t.Data)))
			out.Logical = "e2m1"
			return Tensors{"codes": out}, nil
		},
	})
}

// e2m1Codes checks a tensor of unpacked E2M1 codes: U8, Logical "" or
// "e2m1", every byte below 16.
func e2m1Codes(t tensor.Tensor, name string) error {
	if err := t.Expect(name, tensor.U8); err != nil {
		return err
	}
	switch t.Logical {
	case "", "e2m1":
	case "e2m1x2":
		return fmt.Errorf("tensor %q: holds packed pairs (e2m1x2); run e2m1.unpack first", name)
	default:
		return fmt.Errorf("tensor %q: logical format %q, want %q", name, t.Logical, "e2m1")
	}
	for i, c := range t.Data {
		if c > 0xF {
			return fmt.Errorf("tensor %q: element %d is %#x, not a 4-bit E2M1 code", name, i, c)
		}
	}
	return nil
}
