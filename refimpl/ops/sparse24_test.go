package ops

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/refimpl/tensor"
)

func sp24TestCodes(e, n, k int) tensor.Tensor {
	c := make([]uint8, e*n*k)
	for i := range c {
		c[i] = uint8((i*7 + i/5) % 16)
	}
	return tensor.FromU8([]int{e, n, k}, c)
}

func TestSparse24OpsRoundTrip(t *testing.T) {
	codes := sp24TestCodes(2, 32, 32)
	sel, err := Run("sparse24.select", Params{"tie": "cutlass"}, Tensors{"codes": codes})
	if err != nil {
		t.Fatal(err)
	}
	if s := sel["meta"].Shape; fmt.Sprint(s) != "[2 32 8]" {
		t.Errorf("select meta shape %v, want [2 32 8]", s)
	}
	scales := tensor.FromU8([]int{2, 32, 2}, make([]uint8, 128))
	scales.Logical = "e4m3"
	global := tensor.FromF32([]int{2}, []float32{1, 2})
	for _, layout := range []string{"rowmajor", "transposed"} {
		t.Run(layout, func(t *testing.T) {
			c, err := Run("sparse24.compress", Params{"tie": "cutlass", "layout": layout},
				Tensors{"codes": codes, "scales": scales, "global": global})
			if err != nil {
				t.Fatal(err)
			}
			wantComp, wantScales := "[2 32 8]", "[2 32 2]"
			if layout == "transposed" {
				wantComp, wantScales = "[2 8 32]", "[2 2 32]"
			}
			if fmt.Sprint(c["comp"].Shape) != wantComp || fmt.Sprint(c["scales"].Shape) != wantScales || !c["global"].Equal(global) {
				t.Errorf("comp %v scales %v, want %s %s", c["comp"].Shape, c["scales"].Shape, wantComp, wantScales)
			}
			d, err := Run("sparse24.decompress", Params{"layout": layout}, Tensors{"comp": c["comp"], "meta": c["meta"]})
			if err != nil {
				t.Fatal(err)
			}
			if !d["codes"].Equal(sel["kept"]) {
				t.Error("decompress(compress) differs from select's kept codes")
			}
		})
	}
	// K = 64: two 32-bit metadata elements per row (the swizzle pairs columns).
	c, _ := Run("sparse24.compress", Params{}, Tensors{"codes": tensor.FromU8([]int{32, 64}, sp24TestCodes(1, 32, 64).Data)})
	for _, dtype := range []string{"int16", "int32"} {
		r, err := Run("sparse24.reorder_meta", Params{"dtype": dtype}, Tensors{"meta": c["meta"]})
		if err != nil {
			t.Fatal(err)
		}
		u, err := Run("sparse24.unreorder_meta", Params{}, Tensors{"meta_reordered": r["meta_reordered"]})
		if err != nil {
			t.Fatal(err)
		}
		if !u["meta"].Equal(c["meta"]) {
			t.Errorf("%s: unreorder(reorder) differs", dtype)
		}
	}
}

func TestSparse24OpsErrors(t *testing.T) {
	tests := []struct {
		name string
		op   string
		p    Params
		in   Tensors
		want string
	}{
		{"tie", "sparse24.compress", Params{"tie": "random"}, Tensors{"codes": sp24TestCodes(1, 1, 8)}, "unknown tie rule"},
		{"layout", "sparse24.compress", Params{"layout": "cutlass"}, Tensors{"codes": sp24TestCodes(1, 1, 8)}, "unknown layout"},
		{"K", "sparse24.compress", Params{}, Tensors{"codes": sp24TestCodes(1, 1, 12)}, "K=12 is not a multiple of 8"},
		{"rank", "sparse24.compress", Params{}, Tensors{"codes": tensor.FromU8([]int{8}, make([]uint8, 8))}, `tensor "codes": shape [8]`},
		{"logical", "sparse24.select", Params{}, Tensors{"codes": tensor.Tensor{DType: tensor.U8, Shape: []int{1, 4}, Logical: "e2m1x2", Data: make([]byte, 4)}}, `logical format "e2m1x2"`},
		{"scales", "sparse24.compress", Params{}, Tensors{"codes": sp24TestCodes(1, 2, 16), "scales": tensor.FromU8([]int{1, 2, 3}, make([]uint8, 6))}, `tensor "scales"`},
		{"meta shape", "sparse24.decompress", Params{}, Tensors{"comp": tensor.FromU8([]int{2, 2}, make([]uint8, 4)), "meta": tensor.FromU8([]int{2, 2}, make([]uint8, 4))}, `tensor "meta"`},
		{"invalid meta", "sparse24.decompress", Params{}, Tensors{"comp": tensor.FromU8([]int{1, 2}, make([]uint8, 2)), "meta": tensor.FromU8([]int{1, 1}, []uint8{0x40})}, "names position 0 twice"},
		{"reorder rows", "sparse24.reorder_meta", Params{}, Tensors{"meta": tensor.FromU8([]int{8, 4}, make([]uint8, 32))}, "not a multiple of 32"},
		{"reorder dtype", "sparse24.reorder_meta", Params{"dtype": "int8"}, Tensors{"meta": tensor.FromU8([]int{32, 4}, make([]uint8, 128))}, "want int16 or int32"},
		{"unreorder dtype", "sparse24.unreorder_meta", Params{}, Tensors{"meta_reordered": tensor.FromU8([]int{32, 4}, make([]uint8, 128))}, "want I16 or I32"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Run(tc.op, tc.p, tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}
