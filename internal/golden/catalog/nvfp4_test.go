package catalog

import (
	"math"
	"testing"

	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/nvfp4"
	"github.com/bitexact/bitexact/refimpl/ops"
)

var nvfp4EdgeSets = []string{"blocks.nvfp4-ties", "blocks.nvfp4-near-ties", "blocks.nvfp4-subnormal"}

func nvfp4EdgeInputs(t *testing.T) map[string]ops.Tensors {
	t.Helper()
	ins, _ := Registered()
	out := map[string]ops.Tensors{}
	for _, in := range ins {
		for _, n := range nvfp4EdgeSets {
			if in.Name == n {
				x, err := in.Make(in.Seed)
				if err != nil {
					t.Fatalf("%s: %v", n, err)
				}
				out[n] = x
			}
		}
	}
	if len(out) != len(nvfp4EdgeSets) {
		t.Fatalf("catalog holds %d of the %d NVFP4 edge sets", len(out), len(nvfp4EdgeSets))
	}
	return out
}

// diffBytes counts the bytes of packed and scales that differ.
func diffBytes(a, b ops.Tensors) int {
	n := 0
	for _, k := range []string{"packed", "scales"} {
		x, y := a[k].Data, b[k].Data
		for i := range x {
			if x[i] != y[i] {
				n++
			}
		}
	}
	return n
}

// TestNVFP4EdgeSetsGlobal: each edge set pins the per-tensor scale it was
// built for (g = 1 for the ties set, 2688*2^116 for the subnormal
// set): the values follow from nvfp4.GlobalFromAmax of the first element.
func TestNVFP4EdgeSetsGlobal(t *testing.T) {
	in := nvfp4EdgeInputs(t)
	for _, tc := range []struct {
		set  string
		want float32
	}{
		{"blocks.nvfp4-ties", 1},                                   // 2688/2688
		{"blocks.nvfp4-subnormal", float32(math.Ldexp(2688, 116))}, // 2688/2^-116, exact
	} {
		out, err := ops.Run("nvfp4.quantize", ops.Params{}, in[tc.set])
		if err != nil {
			t.Fatal(err)
		}
		if g := out["global"].F32()[0]; g != tc.want {
			t.Errorf("%s: global %v, want %v", tc.set, g, tc.want)
		}
	}
}

// TestNVFP4EdgeSetsDiscriminate: on the NVFP4 edge sets the canonical
// recipe differs in packed codes or block scales from every other named
// recipe and from each single-rule variant that the mutant catalog
// (internal/conformance/mutants) plants: E2M1 ties away, reciprocal element and
// block-scale paths, FTZ inputs. Without these sets the whole golden set
// could not tell them apart (docs/rationale/certify.md).
func TestNVFP4EdgeSetsDiscriminate(t *testing.T) {
	in := nvfp4EdgeInputs(t)
	canon := map[string]ops.Tensors{}
	for _, n := range nvfp4EdgeSets {
		out, err := ops.Run("nvfp4.quantize", ops.Params{"recipe": "canonical"}, in[n])
		if err != nil {
			t.Fatal(err)
		}
		canon[n] = out
	}
	variant := func(edit func(r *nvfp4.Recipe)) func(x ops.Tensors) (ops.Tensors, error) {
		return func(x ops.Tensors) (ops.Tensors, error) {
			r := nvfp4.Canonical
			edit(&r)
			m, k := x["x"].Shape[0], x["x"].Shape[1]
			q, err := nvfp4.Quantize(x["x"].F32(), m, k, r)
			if err != nil {
				return nil, err
			}
			return ops.Tensors{"packed": {Data: q.Packed}, "scales": {Data: q.Scales}}, nil
		}
	}
	type alt struct {
		name string
		run  func(x ops.Tensors) (ops.Tensors, error)
	}
	var alts []alt
	for _, r := range nvfp4.Recipes() {
		if r.Name == "canonical" {
			continue
		}
		name := r.Name
		alts = append(alts, alt{"recipe " + name, func(x ops.Tensors) (ops.Tensors, error) {
			return ops.Run("nvfp4.quantize", ops.Params{"recipe": name}, x)
		}})
	}
	alts = append(alts,
		alt{"e2m1 ties-away", variant(func(r *nvfp4.Recipe) { r.FP4 = fp4.TiesAway })},
		alt{"element mul-rcp", variant(func(r *nvfp4.Recipe) { r.Element = nvfp4.MulRcpRcp })},
		alt{"block-scale mul-rcp6", variant(func(r *nvfp4.Recipe) { r.BlockScale = nvfp4.MulRcpSixMulGlobal })},
		alt{"ftz inputs", func(x ops.Tensors) (ops.Tensors, error) {
			b := x["x"].Bits32()
			for i, v := range b {
				if v&0x7f800000 == 0 {
					b[i] = v & 0x80000000
				}
			}
			y := x["x"]
			y.Data = make([]byte, len(y.Data))
			for i, v := range b {
				y.Data[4*i], y.Data[4*i+1], y.Data[4*i+2], y.Data[4*i+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
			}
			return ops.Run("nvfp4.quantize", ops.Params{}, ops.Tensors{"x": y})
		}},
	)
	for _, a := range alts {
		total := 0
		for _, n := range nvfp4EdgeSets {
			out, err := a.run(in[n])
			if err != nil {
				t.Fatalf("%s on %s: %v", a.name, n, err)
			}
			d := diffBytes(canon[n], out)
			total += d
			t.Logf("%-22s %-24s %4d bytes of packed+scales differ from canonical", a.name, n, d)
		}
		if total == 0 {
			t.Errorf("%s: identical to canonical on every NVFP4 edge set", a.name)
		}
	}
}
