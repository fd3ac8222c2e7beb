package ops

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// TestHalfInputs: the encoders take F16 and BF16 x, and their codes are
// those of the exactly widened float32 values: hand-checked codes first,
// then all 65536 codes of each 16-bit type against the F32 path.
func TestHalfInputs(t *testing.T) {
	for _, c := range []struct {
		name  string
		op    string
		p     Params
		dtype tensor.DType
		in    []uint16
		out   string
		want  []byte
	}{
		// fp16 1.5, -0 -> E2M1 0x3, 0x8; 6.5 and +Inf saturate to 6 (0x7) under nvidia.
		{"fp16 to e2m1", "e2m1.encode", Params{"profile": "nvidia"}, tensor.F16, []uint16{0x3E00, 0x8000, 0x4680, 0x7C00}, "codes", []byte{0x3, 0x8, 0x7, 0x7}},
		// bf16 3.0, 480, -Inf, NaN -> E4M3 satfinite 0x44, 0x7e, 0xfe, 0x7f.
		{"bf16 to e4m3", "fp8.encode", Params{"format": "e4m3", "profile": "satfinite"}, tensor.BF16, []uint16{0x4040, 0x43F0, 0xFF80, 0x7FC0}, "codes", []byte{0x44, 0x7e, 0xfe, 0x7f}},
		// fp16 65504 is past 61440, the midpoint between E5M2's max 57344 and 2^16: Inf 0x7c under nosat; 1.0 -> 0x3c.
		{"fp16 to e5m2", "fp8.encode", Params{"format": "e5m2", "profile": "nosat"}, tensor.F16, []uint16{0x7BFF, 0x3C00}, "codes", []byte{0x7c, 0x3c}},
		// fp16 1.0, 3.0 -> E8M0 round-up 127, 129 (2^2 >= 3).
		{"fp16 to e8m0", "e8m0.encode", Params{"rounding": "rp"}, tensor.F16, []uint16{0x3C00, 0x4200}, "codes", []byte{127, 129}},
		// bf16 1+2^-7 -> fp16 0x3C08 (exact); bf16 2^16 -> fp16 +Inf 0x7C00 (rne), 0x7BFF (satfinite row below).
		{"bf16 to fp16", "fp16.encode", Params{"profile": "rne"}, tensor.BF16, []uint16{0x3F81, 0x4780}, "y", []byte{0x08, 0x3C, 0x00, 0x7C}},
		{"bf16 to fp16 satfinite", "fp16.encode", Params{"profile": "satfinite"}, tensor.BF16, []uint16{0x4780}, "y", []byte{0xFF, 0x7B}},
		// fp16 1+2^-10 -> bf16 ties to even 1.0 (0x3F80); fp16 2^-24 -> bf16 0x3380 (exact).
		{"fp16 to bf16", "bf16.encode", Params{"profile": "rne"}, tensor.F16, []uint16{0x3C01, 0x0001}, "y", []byte{0x80, 0x3F, 0x80, 0x33}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.p["input"] = inputName(c.dtype)
			out, err := Run(c.op, c.p, Tensors{"x": tensor.FromBits16(c.dtype, []int{len(c.in)}, c.in)})
			if err != nil {
				t.Fatal(err)
			}
			if got := out[c.out].Data; !bytes.Equal(got, c.want) {
				t.Errorf("got % x, want % x", got, c.want)
			}
		})
	}
	all := make([]uint16, 1<<16)
	for i := range all {
		all[i] = uint16(i)
	}
	for _, d := range []tensor.DType{tensor.F16, tensor.BF16} {
		wide := make([]float32, len(all))
		for i, h := range all {
			if d == tensor.BF16 {
				wide[i] = math.Float32frombits(uint32(h) << 16)
			} else {
				wide[i] = half.DecodeFP16(h)
			}
		}
		for _, c := range []struct {
			op string
			p  Params
		}{
			{"e2m1.encode", Params{"profile": "ties-away"}},
			{"fp8.encode", Params{"format": "e4m3", "profile": "nosat"}},
			{"fp8.encode", Params{"format": "e5m2", "profile": "ml_dtypes"}},
			{"e8m0.encode", Params{"rounding": "torch"}},
			{"bf16.encode", Params{"profile": "sign-nan"}},
			{"fp16.encode", Params{"profile": "numpy"}},
		} {
			got, err := Run(c.op, withInput(c.p, d), Tensors{"x": tensor.FromBits16(d, []int{256, 256}, all)})
			if err != nil {
				t.Fatalf("%s %s %v: %v", d, c.op, c.p, err)
			}
			want, err := Run(c.op, c.p, Tensors{"x": tensor.FromF32([]int{256, 256}, wide)})
			if err != nil {
				t.Fatal(err)
			}
			for n, w := range want {
				if !w.Equal(got[n]) {
					t.Errorf("%s input, %s %v: output %s differs from the widened float32 path", d, c.op, c.p, n)
				}
			}
		}
	}
	// The block quantizers: every code in a [2048, 32] matrix (NaN and
	// infinite codes included, so block and tensor amax rules run).
	for _, d := range []tensor.DType{tensor.F16, tensor.BF16} {
		wide := make([]float32, len(all))
		for i, h := range all {
			if d == tensor.BF16 {
				wide[i] = math.Float32frombits(uint32(h) << 16)
			} else {
				wide[i] = half.DecodeFP16(h)
			}
		}
		for _, c := range []struct {
			op string
			p  Params
		}{
			{"nvfp4.quantize", Params{"recipe": "vllm-model-exact-rcp"}},
			{"nvfp4.quantize", Params{"swizzle": "1"}},
			{"mxfp4.quantize", Params{"mode": "even", "profile": "cutlass"}},
		} {
			got, err := Run(c.op, withInput(c.p, d), Tensors{"x": tensor.FromBits16(d, []int{2048, 32}, all)})
			if err != nil {
				t.Fatalf("%s %s %v: %v", d, c.op, c.p, err)
			}
			want, err := Run(c.op, c.p, Tensors{"x": tensor.FromF32([]int{2048, 32}, wide)})
			if err != nil {
				t.Fatal(err)
			}
			for n, w := range want {
				if !w.Equal(got[n]) {
					t.Errorf("%s input, %s %v: output %s differs from the widened float32 path", d, c.op, c.p, n)
				}
			}
		}
	}
	// A library recipe computes as its library does on 16-bit input: the
	// x86 tensor amax NaN of a bfloat16 tensor is 0x7FC0 (c10's scalar
	// conversion), so torchao's per-tensor value is 0x7FC00000/2688 =
	// 0x7FC00000 where the widened float32 tensor gives x86's vectorized
	// max NaN 0xFFFFFFFF.
	{
		x := []uint16{0x3f80, 0x7fc0, 0xffc0}
		x = append(x, make([]uint16, 13)...)
		got, err := Run("nvfp4.quantize", Params{"recipe": "torchao-0.17-cpu", "input": "bf16"}, Tensors{"x": tensor.FromBits16(tensor.BF16, []int{1, 16}, x)})
		if err != nil {
			t.Fatal(err)
		}
		if b := got["global"].Bits32()[0]; b != 0x7FC00000 {
			t.Errorf("torchao-0.17-cpu bf16 per-tensor value %#08x, want 0x7fc00000", b)
		}
		wide := make([]float32, 16)
		for i, h := range x {
			wide[i] = math.Float32frombits(uint32(h) << 16)
		}
		got, err = Run("nvfp4.quantize", Params{"recipe": "torchao-0.17-cpu"}, Tensors{"x": tensor.FromF32([]int{1, 16}, wide)})
		if err != nil {
			t.Fatal(err)
		}
		if b := got["global"].Bits32()[0]; b != 0xFFFFFFFF {
			t.Errorf("torchao-0.17-cpu float32 per-tensor value %#08x, want 0xffffffff", b)
		}
		if _, err := Run("nvfp4.quantize", Params{"recipe": "torchao-0.17-cpu", "input": "fp16"}, Tensors{"x": tensor.FromBits16(tensor.F16, []int{1, 16}, make([]uint16, 16))}); err == nil || !strings.Contains(err.Error(), "fp16") {
			t.Errorf("torchao-0.17-cpu took fp16 input: %v", err)
		}
	}
	// The input type is declared: a 16-bit x without input, or an x of
	// another dtype than declared, is refused with the reason.
	h := tensor.FromBits16(tensor.F16, []int{1}, []uint16{0x3C00})
	for _, c := range []struct {
		name string
		p    Params
		x    tensor.Tensor
		want string
	}{
		{"U8 x", nil, tensor.FromU8([]int{1}, []byte{1}), "dtype U8"},
		{"F16 x undeclared", nil, h, "dtype F16"},
		{"F32 x declared fp16", Params{"input": "fp16"}, tensor.FromF32([]int{1}, []float32{1}), "parameter input=fp16 wants F16"},
		{"BF16 x declared fp16", Params{"input": "fp16"}, tensor.FromBits16(tensor.BF16, []int{1}, []uint16{0x3F80}), "dtype BF16"},
		{"unknown input", Params{"input": "fp8"}, h, `input="fp8": want fp32, fp16, bf16 or a code format of at most 8 bits`},
		{"F16 x declared e4m3", Params{"input": "e4m3"}, h, "dtype F16"},
		{"codes of another format", Params{"input": "e4m3"}, func() tensor.Tensor { x := tensor.FromU8([]int{1}, []byte{1}); x.Logical = "e5m2"; return x }(), `logical format "e5m2", want "e4m3"`},
		{"FP6 code out of range", Params{"input": "e2m3"}, tensor.FromU8([]int{1}, []byte{0x40}), "not a 6-bit e2m3 code"},
	} {
		for _, op := range []string{"e2m1.encode", "fp16.encode", "nvfp4.quantize"} {
			x := c.x
			if op == "nvfp4.quantize" {
				x.Shape = []int{1, 1}
			}
			if _, err := Run(op, c.p, Tensors{"x": x}); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s, %s: error %v, want containing %q", c.name, op, err, c.want)
			}
		}
	}
}

func inputName(d tensor.DType) string {
	if d == tensor.BF16 {
		return "bf16"
	}
	return "fp16"
}

// withInput is p with input naming d.
func withInput(p Params, d tensor.DType) Params {
	q := Params{"input": inputName(d)}
	for k, v := range p {
		q[k] = v
	}
	return q
}
