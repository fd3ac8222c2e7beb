package diagnose

import (
	"strings"
	"testing"

	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
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

// TestLibraryMatch: results that are torchao 0.17's NVFP4 outputs on every
// task but one are diagnosed as torchao (from the recipe's source) with
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
	const lib = "recipe=torchao-0.17,swizzle=0"
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
		want := tc.Expected[lib]
		tc.Reference, tc.Params = want, ops.Params(tk.Cases[lib].Params)
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
