package ops

import (
	"strings"
	"testing"

	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

func awqWeight(ic, oc int) tensor.Tensor {
	w := make([]uint16, ic*oc)
	for i := range w {
		w[i] = half.EncodeFP16(float32(i%29-14) / 8)
	}
	return tensor.FromBits16(tensor.F16, []int{ic, oc}, w)
}

func TestAWQOpsRoundTrip(t *testing.T) {
	for _, qz := range []string{"forge", "autoawq"} {
		t.Run(qz, func(t *testing.T) {
			q, err := Run("awq.quantize", Params{"quantizer": qz, "group": "32"}, Tensors{"w": awqWeight(64, 16)})
			if err != nil {
				t.Fatal(err)
			}
			for name, want := range map[string][]int{"qweight": {64, 2}, "qzeros": {2, 2}, "scales": {2, 16}} {
				if got := q[name].Shape; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
					t.Errorf("%s shape %v, want %v", name, got, want)
				}
			}
			dq, err := Run("awq.dequantize", Params{}, q)
			if err != nil {
				t.Fatal(err)
			}
			if s := dq["w"].Shape; dq["w"].DType != tensor.F16 || s[0] != 64 || s[1] != 16 {
				t.Errorf("w %s %v", dq["w"].DType, s)
			}
			// Unpack as AWQ and repack under each layout, then back.
			u, err := Run("awq.unpack", Params{"group": "32"}, Tensors{"qweight": q["qweight"], "qzeros": q["qzeros"]})
			if err != nil {
				t.Fatal(err)
			}
			layouts := []string{"awq", "awq-gemv", "gptq-v2"}
			if qz == "forge" { // every zero point is 8: also packable without zeros
				layouts = append(layouts, "compressed-tensors")
			}
			for _, l := range layouts {
				pk, err := Run("awq.pack", Params{"layout": l}, Tensors{"q": u["q"], "zeros": u["zeros"]})
				if err != nil {
					t.Fatalf("%s: %v", l, err)
				}
				if l == "compressed-tensors" {
					if _, ok := pk["qzeros"]; ok {
						t.Fatal("compressed-tensors returned qzeros")
					}
					pk["qzeros"] = tensor.FromI32([]int{1, 1}, []int32{0}) // ignored: no stored zeros
				}
				back, err := Run("awq.unpack", Params{"layout": l, "group": "32"}, pk)
				if err != nil {
					t.Fatalf("%s: %v", l, err)
				}
				if !back["q"].Equal(u["q"]) || !back["zeros"].Equal(u["zeros"]) {
					t.Errorf("%s: unpack(pack) differs", l)
				}
			}
		})
	}
}

func TestAWQOpsErrors(t *testing.T) {
	tests := []struct {
		name string
		op   string
		p    Params
		in   Tensors
		want string
	}{
		{"quantize OC%8", "awq.quantize", Params{"group": "32"}, Tensors{"w": awqWeight(64, 12)}, "OC=12 is not a multiple of 8"},
		{"quantize IC%G", "awq.quantize", Params{"group": "48"}, Tensors{"w": awqWeight(64, 8)}, "group=48"},
		{"quantize dtype", "awq.quantize", Params{}, Tensors{"w": tensor.FromF32([]int{1, 8}, make([]float32, 8))}, `tensor "w": dtype F32, want F16`},
		{"quantize quantizer", "awq.quantize", Params{"quantizer": "gptq"}, Tensors{"w": awqWeight(64, 8)}, "unknown quantizer"},
		{"pack layout", "awq.pack", Params{"layout": "marlin"}, Tensors{"q": tensor.FromU8([]int{8, 8}, make([]uint8, 64))}, "unknown layout"},
		{"pack nibble", "awq.pack", Params{}, Tensors{"q": tensor.FromU8([]int{1, 8}, []uint8{0, 0, 0, 0, 0, 0, 0, 17})}, "not a 4-bit value"},
		{"pack zeros shape", "awq.pack", Params{}, Tensors{"q": tensor.FromU8([]int{8, 8}, make([]uint8, 64)), "zeros": tensor.FromU8([]int{3, 8}, make([]uint8, 24))}, `tensor "zeros"`},
		{"dequantize scales shape", "awq.dequantize", Params{"group": "32"}, Tensors{
			"qweight": tensor.FromI32([]int{64, 1}, make([]int32, 64)),
			"qzeros":  tensor.FromI32([]int{2, 1}, make([]int32, 2)),
			"scales":  tensor.FromBits16(tensor.F16, []int{2, 16}, make([]uint16, 32))}, `tensor "scales"`},
		{"unpack gemv needs group", "awq.unpack", Params{"layout": "awq-gemv"}, Tensors{
			"qweight": tensor.FromI32([]int{8, 8}, make([]int32, 64)),
			"qzeros":  tensor.FromI32([]int{8, 1}, make([]int32, 8))}, `missing parameter "group"`},
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
