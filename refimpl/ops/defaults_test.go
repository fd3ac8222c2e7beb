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
