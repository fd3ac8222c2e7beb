package ops

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/refimpl/tensor"
)

func f16T(shape []int, v ...uint16) tensor.Tensor { return tensor.FromBits16(tensor.F16, shape, v) }

// sparseInputs: one expert, K=8, N=1; group 0 keeps (0,1) = 1.0, 2.0,
// group 1 keeps (2,3) = -0.5, 6 (meta 0xE4); scale E4M3 0x40 = 2, global
// 0.5; activations 1..8: 1*1 + 2*2 - 0.5*7 + 6*8 = 49.5 (fp16 0x5230).
func sparseInputs() Tensors {
	return Tensors{
		"comp":    tensor.FromU8([]int{1, 2, 1}, []uint8{0x42, 0x79}),
		"meta":    tensor.FromU8([]int{1, 1, 1}, []uint8{0xE4}),
		"scales":  tensor.FromU8([]int{1, 1, 1}, []uint8{0x40}),
		"global":  tensor.FromF32([]int{1}, []float32{0.5}),
		"act":     f16T([]int{8}, 0x3C00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600, 0x4700, 0x4800),
		"experts": tensor.FromI32([]int{1}, []int32{0}),
	}
}

func TestGEMVSparseOp(t *testing.T) {
	out, err := Run("gemv.sparse_fp4", nil, sparseInputs())
	if err != nil {
		t.Fatal(err)
	}
	want := f16T([]int{1, 1}, 0x5230)
	if !out["y"].Equal(want) {
		t.Errorf("y = %+v, want %+v", out["y"], want)
	}
	_, err = Run("gemv.sparse_fp4", Params{"schedule": "seq-fma"}, sparseInputs())
	if err == nil || !strings.Contains(err.Error(), "multiple of 4") {
		t.Errorf("group-1 schedule: %v", err)
	}
	out, err = Run("gemv.sparse_fp4", Params{"schedule": "chunk=0,lanes=0,group=8,fma=1,acc=fp32,partial=fp32,reduce=seq,out=fp32"}, sparseInputs())
	if err != nil || !out["y"].Equal(tensor.FromF32([]int{1, 1}, []float32{49.5})) {
		t.Errorf("fp32 out: %+v, %v", out["y"], err)
	}
	for _, c := range []struct {
		name string
		edit func(Tensors)
		p    Params
		want string
	}{
		{"meta shape", func(in Tensors) { in["meta"] = tensor.FromU8([]int{1, 2, 1}, []uint8{0, 0}) }, nil, `tensor "meta"`},
		{"act dtype", func(in Tensors) { in["act"] = tensor.FromF32([]int{8}, make([]float32, 8)) }, nil, `tensor "act": dtype F32, want F16`},
		{"act shape", func(in Tensors) { in["act"] = f16T([]int{7}, make([]uint16, 7)...) }, nil, `tensor "act": shape [7]`},
		{"experts range", func(in Tensors) { in["experts"] = tensor.FromI32([]int{1}, []int32{3}) }, nil, "out of range"},
		{"scales blocks", func(in Tensors) { in["scales"] = tensor.FromU8([]int{1, 3, 1}, []uint8{0, 0, 0}) }, nil, "3 scale blocks do not divide K=8"},
		{"comp rank", func(in Tensors) { in["comp"] = tensor.FromU8([]int{2}, []uint8{0, 0}) }, nil, `tensor "comp": shape [2], want rank 3`},
		{"schedule", func(Tensors) {}, Params{"schedule": "fastest"}, "unknown schedule"},
		{"scale_decode", func(Tensors) {}, Params{"scale_decode": "x"}, "scale_decode"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := sparseInputs()
			c.edit(in)
			_, err := Run("gemv.sparse_fp4", c.p, in)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %v, want containing %q", err, c.want)
			}
		})
	}
}

func TestGEMVMXFP4Op(t *testing.T) {
	// One block: element 0 kvalue 2, element 16 kvalue -12 (qs[0] = 0xF2),
	// e = 127 (1 * 0.5); q8 d = 1.0, q[0] = 3, q[16] = 1: 0.5*(6-12) = -3.
	w := make([]uint8, 17)
	w[0], w[1] = 127, 0xF2
	a := make([]uint8, 36)
	a[1] = 0x3C // d = 0x3C00
	a[4], a[20] = 3, 1
	in := Tensors{"w": tensor.FromU8([]int{1, 1, 17}, w), "act": tensor.FromU8([]int{1, 36}, a)}
	out, err := Run("gemv.mxfp4_q8_1", nil, in)
	if err != nil {
		t.Fatal(err)
	}
	if want := tensor.FromF32([]int{1}, []float32{-3}); !out["y"].Equal(want) {
		t.Errorf("y = %v, want -3", out["y"].F32())
	}
	in["act"] = tensor.FromU8([]int{2, 36}, make([]uint8, 72))
	if _, err := Run("gemv.mxfp4_q8_1", nil, in); err == nil || !strings.Contains(err.Error(), `tensor "act"`) {
		t.Errorf("act shape error = %v", err)
	}
}

func TestGEMVAWQOp(t *testing.T) {
	// IC=8, OC=8, G=8: all nibbles 9, zeros 8, scales 0.5 -> w = 0.5; x =
	// 1..8: y = 18 (fp16 0x4C80) everywhere.
	qw := make([]int32, 8)
	for i := range qw {
		qw[i] = int32(-0x66666667) // 0x99999999
	}
	sc := make([]uint16, 8)
	for i := range sc {
		sc[i] = 0x3800
	}
	in := Tensors{
		"qweight": tensor.FromI32([]int{8, 1}, qw),
		"qzeros":  tensor.FromI32([]int{1, 1}, []int32{-0x77777778}),
		"scales":  f16T([]int{1, 8}, sc...),
		"x":       f16T([]int{8}, 0x3C00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600, 0x4700, 0x4800),
	}
	out, err := Run("gemv.awq", Params{"group": "8"}, in)
	if err != nil {
		t.Fatal(err)
	}
	want := f16T([]int{8}, 0x4C80, 0x4C80, 0x4C80, 0x4C80, 0x4C80, 0x4C80, 0x4C80, 0x4C80)
	if !out["y"].Equal(want) {
		t.Errorf("y = %v, want 18s", out["y"].Bits16())
	}
	if _, err := Run("gemv.awq", Params{"group": "3"}, in); err == nil || !strings.Contains(err.Error(), "multiple of group 3") {
		t.Errorf("group 3: %v", err)
	}
	if _, err := Run("gemv.awq", nil, in); err == nil || !strings.Contains(err.Error(), "group 128") {
		t.Errorf("default group 128 with IC=8: %v", err)
	}
}

func TestGEMVExactOp(t *testing.T) {
	// Products 2^24, 1, -2^24: exact 1. got 0 (what a sequential float32
	// kernel returns) is 2^23 ulps off but within the bound gamma_2*(2^25+1).
	in := Tensors{
		"w":   tensor.FromF32([]int{1, 3}, []float32{4096, 1, -4096}),
		"x":   tensor.FromF32([]int{3}, []float32{4096, 1, 4096}),
		"got": tensor.FromF32([]int{1}, []float32{0}),
	}
	out, err := Run("gemv.exact", nil, in)
	if err != nil {
		t.Fatal(err)
	}
	if v := out["exact"].F32(); v[0] != 1 {
		t.Errorf("exact = %v, want 1", v)
	}
	if out["within"].Data[0] != 1 {
		t.Errorf("within = %v, want 1", out["within"].Data)
	}
	eu := math.Float64frombits(binary.LittleEndian.Uint64(out["error_ulp"].Data))
	if eu != 1<<23 {
		t.Errorf("error_ulp = %v, want 2^23", eu)
	}
	delete(in, "got")
	out, err = Run("gemv.exact", Params{"out": "fp16"}, in)
	if err != nil || !out["exact"].Equal(f16T([]int{1}, 0x3C00)) || out["within"].Data != nil {
		t.Errorf("fp16 exact without got: %+v, %v", out, err)
	}
	in["x"] = tensor.FromF32([]int{3}, []float32{float32(math.Inf(1)), 0, 0})
	if _, err := Run("gemv.exact", nil, in); err == nil || !strings.Contains(err.Error(), "not finite") {
		t.Errorf("Inf input: %v", err)
	}
	in["x"] = tensor.FromI32([]int{3}, []int32{1, 2, 3})
	if _, err := Run("gemv.exact", nil, in); err == nil || !strings.Contains(err.Error(), `tensor "x": dtype I32`) {
		t.Errorf("I32 input: %v", err)
	}
}

// TestGEMVTerms: the op-level operands are the gemv package's, with the
// op's defaults and input checks; other ops and bad inputs are errors.
func TestGEMVTerms(t *testing.T) {
	if _, err := GEMVTerms("gemv.awq", nil, nil); err == nil || !strings.Contains(err.Error(), "no exact operand model") {
		t.Errorf("gemv.awq: %v", err)
	}
	if _, err := GEMVTerms("gemv.mxfp4_q8_1", nil, Tensors{"w": tensor.FromU8([]int{1, 1, 17}, make([]uint8, 17)), "act": tensor.FromU8([]int{2, 36}, make([]uint8, 72))}); err == nil || !strings.Contains(err.Error(), `"act"`) {
		t.Errorf("mismatched act: %v", err)
	}
	w := make([]uint8, 17)
	w[0], w[1] = 128, 0x07 // scale 2^0; element 0 code 7 (kvalue 12)
	act := make([]uint8, 36)
	act[1], act[4] = 0x3c, 2 // d8 = 1, q0 = 2
	terms, err := GEMVTerms("gemv.mxfp4_q8_1", Params{"schedule": "seq"}, Tensors{"w": tensor.FromU8([]int{1, 1, 17}, w), "act": tensor.FromU8([]int{1, 36}, act)})
	if err != nil {
		t.Fatal(err)
	}
	if len(terms.W) != 1 || terms.W[0][0] != 12 || terms.X[0][0] != 2 {
		t.Errorf("terms %v x %v, want row 0 starting 12 and 2", terms.W, terms.X)
	}
}
