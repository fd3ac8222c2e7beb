package ops

import (
	"math"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/refimpl/tensor"
)

func TestDefault(t *testing.T) {
	for _, tc := range []struct {
		op, key string
		want    string
		ok      bool
	}{
		{"e2m1.encode", "profile", "nvidia", true},
		{"nvfp4.quantize", "recipe", "canonical", true},
		{"nvfp4.quantize", "swizzle", "0", true},
		{"nvfp4.quantize", "global", "", false}, // computed from the tensor amax
		{"mxfp4.quantize", "mode", "floor", true},
		{"mxfp4.quantize", "profile", "nvidia", true},
		{"awq.quantize", "quantizer", "forge", true},
		{"awq.unpack", "group", "", false},  // computed from the shapes
		{"fp8.encode", "format", "", false}, // required
		{"gemv.awq", "schedule", "seq-f16out", true},
		{"sparse24.compress", "layout", "rowmajor", true},
	} {
		op, err := Lookup(tc.op)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := op.Default(tc.key); got != tc.want || ok != tc.ok {
			t.Errorf("%s %s: Default = %q, %v; want %q, %v", tc.op, tc.key, got, ok, tc.want, tc.ok)
		}
	}
}

// TestDefaultsDocumented: every default names a parameter the op takes,
// and the parameter's documentation gives that value as the default.
func TestDefaultsDocumented(t *testing.T) {
	n := 0
	for _, name := range Names() {
		op, _ := Lookup(name)
		for k, v := range op.Defaults {
			n++
			doc, ok := op.Params[k]
			if !ok {
				t.Errorf("%s: default for unknown parameter %s", name, k)
				continue
			}
			if !strings.Contains(doc, v) || !strings.Contains(doc, "default") {
				t.Errorf("%s: %s defaults to %q, but its doc reads %q", name, k, v, doc)
			}
		}
	}
	if n < 20 {
		t.Errorf("%d defaults in all; the ops declare more", n)
	}
}

// TestRunSeesDefaults: an op's Run, called through Lookup as well as
// through Run, computes with the defaults of the parameters left out,
// exactly as with them spelled out; another value gives another result.
func TestRunSeesDefaults(t *testing.T) {
	x := tensor.FromBits32(tensor.F32, []int{4}, []uint32{math.Float32bits(0.75), 0xFFC00000, math.Float32bits(-5), 0x80000000})
	op, err := Lookup("e2m1.encode")
	if err != nil {
		t.Fatal(err)
	}
	direct, err := op.Run(nil, Tensors{"x": x})
	if err != nil {
		t.Fatal(err)
	}
	if got := direct["codes"].Data; string(got) != "\x02\x07\x0e\x08" {
		t.Errorf("e2m1.encode without params: codes % x, want 02 07 0e 08 (nvidia: -NaN -> +6)", got)
	}
	spelled, _ := Run("e2m1.encode", Params{"profile": "nvidia"}, Tensors{"x": x})
	other, _ := Run("e2m1.encode", Params{"profile": "ml_dtypes"}, Tensors{"x": x})
	if !spelled["codes"].Equal(direct["codes"]) || other["codes"].Equal(direct["codes"]) {
		t.Errorf("codes: default % x, profile=nvidia % x, profile=ml_dtypes % x", direct["codes"].Data, spelled["codes"].Data, other["codes"].Data)
	}
	p := Params{"swizzle": "0"}
	if q := p.withDefaults(Params{"swizzle": "1", "recipe": "canonical"}); q["swizzle"] != "0" || q["recipe"] != "canonical" || len(p) != 1 {
		t.Errorf("withDefaults: %v from %v", q, p)
	}
}

// TestChoices: every named value of a rule-selecting parameter has a
// summary and (schedules aside) a source and is named in the parameter's
// doc, and a parameter's default is one of its named values.
func TestChoices(t *testing.T) {
	n := 0
	for _, name := range Names() {
		op, _ := Lookup(name)
		for key, cs := range op.Choices {
			if _, ok := op.Params[key]; !ok {
				t.Errorf("%s: choices for unknown parameter %s", name, key)
			}
			for _, c := range cs {
				n++
				if c.Name == "" || c.Summary == "" || (c.Source == "" && key != "schedule") {
					t.Errorf("%s %s: choice %+v lacks a name, summary or source", name, key, c)
				}
			}
			for _, c := range cs {
				if !strings.Contains(op.Params[key], c.Name) {
					t.Errorf("%s: the doc of %s, %q, does not name %s", name, key, op.Params[key], c.Name)
				}
			}
			if def, ok := op.Default(key); ok {
				if _, ok := op.Choice(key, def); !ok {
					t.Errorf("%s: default %s=%s is not among its choices", name, key, def)
				}
			}
		}
	}
	if n < 50 {
		t.Errorf("%d choices in all; the ops declare more", n)
	}
	for _, tc := range []struct{ op, key, name, summary string }{
		{"e2m1.encode", "profile", "sw-sm121", "NaN sign kept (-NaN -> -6): dgx-vllm software E2M1"},
		{"bf16.encode", "", "sign-nan", "NaN keeps its sign, payload dropped: sign | 0x7FC0 (Eigen bfloat16, ml_dtypes)"},
		{"fp16.encode", "", "sign-nan", "NaN keeps its sign, payload dropped: sign | 0x7E00 (ggml fp32_to_fp16, Eigen half)"},
		{"mxfp4.quantize", "mode", "rceil", "E8M0 scale from amax/emax rounded up (cuBLAS/TE RCEIL)"},
		{"gemv.awq", "schedule", "seq-f16out", "float32 accumulation as seq, the result rounded once to an fp16 output"},
	} {
		op, _ := Lookup(tc.op)
		if c, ok := op.Choice(tc.key, tc.name); !ok || c.Summary != tc.summary {
			t.Errorf("%s %s=%s: %+v, %v; want summary %q", tc.op, tc.key, tc.name, c, ok, tc.summary)
		}
	}
	op, _ := Lookup("fp16.encode")
	if c, ok := op.Choice("profile", "torch-cpu"); ok {
		t.Errorf("fp16.encode offers torch-cpu (a bf16-only profile): %+v", c)
	}
}
