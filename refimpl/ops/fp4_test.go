package ops

import (
	"math"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/refimpl/tensor"
)

func TestE2M1Ops(t *testing.T) {
	// -NaN is the input class where the profiles split three ways:
	// cuda_fp4.hpp 0x7, dgx-vllm sw-sm121 0xF, ml_dtypes 0x0 (see
	// refimpl/fp4 profile docs).
	x := tensor.FromBits32(tensor.F32, []int{2, 2}, []uint32{
		math.Float32bits(0.75), 0xFFC00000, math.Float32bits(-5), 0x80000000,
	})
	for _, c := range []struct {
		name   string
		params Params
		want   []uint8
	}{
		{"default nvidia", nil, []uint8{0x2, 0x7, 0xE, 0x8}},
		{"sw-sm121", Params{"profile": "sw-sm121"}, []uint8{0x2, 0xF, 0xE, 0x8}},
		{"ml_dtypes", Params{"profile": "ml_dtypes"}, []uint8{0x2, 0x0, 0xE, 0x8}},
		{"ties-away", Params{"profile": "ties-away"}, []uint8{0x2, 0x7, 0xF, 0x8}},
		{"ties-toward-zero", Params{"profile": "ties-toward-zero"}, []uint8{0x1, 0x0, 0xE, 0x0}},
	} {
		out, err := Run("e2m1.encode", c.params, Tensors{"x": x})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want := tensor.FromU8([]int{2, 2}, c.want)
		want.Logical = "e2m1"
		if got := out["codes"]; !got.Equal(want) {
			t.Errorf("%s: codes %v %x, want %v %x", c.name, got.Shape, got.Data, want.Shape, want.Data)
		}
	}

	codes := tensor.FromU8([]int{1, 4}, []uint8{0x1, 0xF, 0x8, 0x6})
	dec, err := Run("e2m1.decode", nil, Tensors{"codes": codes})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := dec["x"].Bits32(), []uint32{math.Float32bits(0.5), math.Float32bits(-6), 0x80000000, math.Float32bits(4)}; !e2m1EqualU32(got, want) {
		t.Errorf("decode = %x, want %x", got, want)
	}

	packed, err := Run("e2m1.pack", nil, Tensors{"codes": codes})
	if err != nil {
		t.Fatal(err)
	}
	wantPacked := tensor.FromU8([]int{1, 2}, []uint8{0xF1, 0x68})
	wantPacked.Logical = "e2m1x2"
	if got := packed["packed"]; !got.Equal(wantPacked) {
		t.Errorf("pack = %v %x %q, want %v %x", got.Shape, got.Data, got.Logical, wantPacked.Shape, wantPacked.Data)
	}
	un, err := Run("e2m1.unpack", nil, packed)
	if err != nil {
		t.Fatal(err)
	}
	if got := un["codes"]; got.Logical != "e2m1" || string(got.Data) != string(codes.Data) || got.Shape[1] != 4 {
		t.Errorf("unpack(pack(c)) = %v %x, want %x", got.Shape, got.Data, codes.Data)
	}
}

func TestE2M1OpErrors(t *testing.T) {
	f := tensor.FromF32([]int{2}, []float32{1, 2})
	packed := tensor.FromU8([]int{1}, []uint8{0x21})
	packed.Logical = "e2m1x2"
	for _, c := range []struct {
		name, op string
		p        Params
		in       Tensors
		want     string
	}{
		{"unknown profile", "e2m1.encode", Params{"profile": "rne"}, Tensors{"x": f}, `unknown profile "rne"`},
		{"unknown param", "e2m1.encode", Params{"tie": "even"}, Tensors{"x": f}, `unknown parameter "tie"`},
		{"encode dtype", "e2m1.encode", nil, Tensors{"x": tensor.FromU8([]int{2}, []uint8{1, 2})}, `tensor "x": dtype U8, want F32`},
		{"missing input", "e2m1.decode", nil, Tensors{}, `missing input tensor "codes"`},
		{"code out of range", "e2m1.decode", nil, Tensors{"codes": tensor.FromU8([]int{2}, []uint8{1, 0x10})}, "element 1 is 0x10"},
		{"decode packed", "e2m1.decode", nil, Tensors{"codes": packed}, "run e2m1.unpack first"},
		{"pack odd", "e2m1.pack", nil, Tensors{"codes": tensor.FromU8([]int{3}, []uint8{1, 2, 3})}, "even length"},
		{"pack scalar", "e2m1.pack", nil, Tensors{"codes": tensor.FromU8(nil, []uint8{1})}, "even length"},
		{"unpack logical", "e2m1.unpack", nil, Tensors{"packed": func() tensor.Tensor { t := packed; t.Logical = "e4m3"; return t }()}, `logical format "e4m3"`},
		{"bad shape", "e2m1.decode", nil, Tensors{"codes": tensor.Tensor{DType: tensor.U8, Shape: []int{3}, Data: []byte{1}}}, "needs 3 bytes"},
	} {
		_, err := Run(c.op, c.p, c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func e2m1EqualU32(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
