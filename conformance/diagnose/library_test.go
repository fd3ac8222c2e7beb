package diagnose

import (
	"math"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/awq"
	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/ops"
)

func TestLibraryOf(t *testing.T) {
	for _, tc := range []struct{ source, want string }{
		{"pytorch/ao: torchao/prototype/mx_formats/nvfp4_tensor.py (v0.17+)", "pytorch/ao"},
		{"vllm-project/vllm@1e8e860 vllm/model_executor/layers/quantization/awq_triton.py", "vllm-project/vllm@1e8e860"},
		{"NVIDIA/cutlass:include/cutlass/exmy_base.h (float_e2m1_t convert_from_float)", "NVIDIA/cutlass"},
		{"ml_dtypes 0.6.0 float8_e8m0fnu (ran on the H100 host)", "ml_dtypes 0.6.0"},
		{"pytorch torch/headeronly/util/Float8_e8m0fnu.h fp8e8m0fnu_from_fp32_value", ""},
		{"bitexact: docs/rationale/blocks.md", ""},
		{"PTX ISA cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32, measured on H100 (CUDA 13.0)", ""},
	} {
		if got := libraryOf(tc.source); got != tc.want {
			t.Errorf("libraryOf(%q) = %q, want %q", tc.source, got, tc.want)
		}
	}
}

// TestLibraryMatch: results that are torchao 0.17's NVFP4 outputs (its
// CPU recipe, computed by the reference where the golden set holds no
// case) on every task but one are diagnosed as torchao (from the recipe's source) with
// that task, and only it, as the departure.
func TestLibraryMatch(t *testing.T) {
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	s, err := suite.Resolve(set, "nvfp4")
	if err != nil {
		t.Fatal(err)
	}
	const lib = "recipe=torchao-0.17-cpu,swizzle=0"
	var tasks []Task
	for i, tk := range s.Tasks {
		tc := Task{Task: tk, Expected: map[string]ops.Tensors{}}
		if tc.Inputs, err = set.Inputs(tk.Cases[tk.Profiles[0]]); err != nil {
			t.Fatal(err)
		}
		for _, p := range tk.Profiles {
			if tc.Expected[p], err = set.Expected(tk.Cases[p]); err != nil {
				t.Fatal(err)
			}
		}
		params, err := s.Params(tk, lib)
		if err != nil {
			t.Fatal(err)
		}
		want, ok := tc.Expected[lib]
		if !ok {
			if want, err = ops.Run(s.Op, params, tc.Inputs); err != nil {
				t.Fatal(err)
			}
			tc.Expected[lib] = want
		}
		tc.Reference, tc.Params = want, params
		obs := ops.Tensors{}
		for n, v := range want {
			obs[n] = v
		}
		if i == 0 { // depart on the first task: one scale byte flipped
			sc := obs["scales"]
			sc.Data = append([]byte(nil), sc.Data...)
			sc.Data[0] ^= 0x01
			obs["scales"] = sc
		}
		tc.Observed = obs
		tasks = append(tasks, tc)
	}
	d, err := Run(s, lib, tasks)
	if err != nil {
		t.Fatal(err)
	}
	l := d.Library
	if l == nil {
		t.Fatalf("no library named: %s", d.Summary())
	}
	if l.Profile != lib || l.Library != "pytorch/ao" || l.Matched != len(tasks)-1 || len(l.Departs) != 1 ||
		l.Departs[0].Task != s.Tasks[0].Name || l.Departs[0].Mismatches != 1 {
		t.Errorf("library match %+v", *l)
	}
	if !strings.Contains(d.Summary(), "matches pytorch/ao (profile "+lib+") on") {
		t.Errorf("summary %q does not name the library", d.Summary())
	}
}

// TestGPTQZeroPlusOne: a reader that adds one to the zero points in
// integer arithmetic (15 -> 16, GPTQ v1) and one that adds it within the
// nibble (15 -> 0) are told apart on the golden awq-dequantize inputs,
// which hold zero points of 15; each is diagnosed as itself only. The
// unwrapped output at a zero point of 15 is (u - 16) * s, checked by hand
// for u = 0: -16 * s, exact in fp16 for the scale there.
func TestGPTQZeroPlusOne(t *testing.T) {
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	s, err := suite.Resolve(set, "awq-dequantize")
	if err != nil {
		t.Fatal(err)
	}
	tasks := func(f func(Task) (ops.Tensors, bool, error)) []Task {
		var v []Task
		for _, tk := range s.Tasks {
			tc := Task{Task: tk, Expected: map[string]ops.Tensors{}}
			if tc.Inputs, err = set.Inputs(tk.Cases["cuda"]); err != nil {
				t.Fatal(err)
			}
			if tc.Reference, err = set.Expected(tk.Cases["cuda"]); err != nil {
				t.Fatal(err)
			}
			tc.Expected["cuda"] = tc.Reference
			tc.Params = ops.Params(tk.Cases["cuda"].Params)
			out, ok, err := f(tc)
			if err != nil || !ok {
				t.Fatalf("%s: %v %v", tk.Name, ok, err)
			}
			tc.Observed = out
			v = append(v, tc)
		}
		return v
	}
	wrapped := tasks(func(tc Task) (ops.Tensors, bool, error) { return awqReadAs(s, tc, false, 1) })
	unwrapped := tasks(func(tc Task) (ops.Tensors, bool, error) { return awqZeroPlusOneUnwrapped(s, tc) })
	for _, tc := range []struct {
		name      string
		tasks     []Task
		want, not string
	}{
		{"nibble wraps", wrapped, "gptq-zero-plus-one", "gptq-v1-zero-plus-one"},
		{"integer +1", unwrapped, "gptq-v1-zero-plus-one", "gptq-zero-plus-one"},
	} {
		d, err := Run(s, "cuda", tc.tasks)
		if err != nil {
			t.Fatal(err)
		}
		var classes []string
		for _, c := range d.Classes {
			classes = append(classes, c.Class)
		}
		got := "," + strings.Join(classes, ",") + ","
		if !strings.Contains(got, ","+tc.want+",") || strings.Contains(got, ","+tc.not+",") {
			t.Errorf("%s: classes %v, want %s and not %s", tc.name, classes, tc.want, tc.not)
		}
	}
	// By hand: the first element with u = 0 under a zero point of 15.
	tc := unwrapped[0]
	ic, oc := tc.Inputs["qweight"].Shape[0], 8*tc.Inputs["qweight"].Shape[1]
	g := ic / tc.Inputs["scales"].Shape[0]
	q, _ := awq.AWQ.UnpackWeight(tc.Inputs["qweight"].I32(), ic, oc)
	z, _ := awq.AWQ.UnpackZeros(tc.Inputs["qzeros"].I32(), ic, oc, g)
	sc := tc.Inputs["scales"].Bits16()
	w := tc.Observed["w"].Bits16()
	for i := range q {
		r, n := i/oc, i%oc
		if q[i] != 0 || z[(r/g)*oc+n] != 15 {
			continue
		}
		s := half.DecodeFP16(sc[(r/g)*oc+n])
		if math.IsNaN(float64(s)) || math.IsInf(float64(s), 0) || math.Abs(float64(s)) > 1000 {
			continue
		}
		want := half.EncodeFP16(-16 * s)
		if w[i] != want {
			t.Errorf("element %d: u=0, z=15, s=%g: got %#04x, want %#04x = fp16(-16*s)", i, s, w[i], want)
		}
		return
	}
	t.Fatal("no element with u = 0 and a zero point of 15 in the first task")
}

// TestSwizzleLinearPadding: swizzle-linear is row-major with the 128x4
// layout's padding: a row stride of the column count rounded up to 4.
func TestSwizzleLinearPadding(t *testing.T) {
	for _, tc := range []struct{ m, k, cols, want int }{
		{0, 4, 5, 4},
		{1, 0, 5, 8}, // stride 8, not 5
		{2, 3, 8, 19},
		{129, 1, 4, 129*4 + 1},
	} {
		if got := swizzleOffsetAs("swizzle-linear", tc.m, tc.k, tc.cols); got != tc.want {
			t.Errorf("scale (%d, %d) of %d columns at %d, want %d", tc.m, tc.k, tc.cols, got, tc.want)
		}
	}
}
