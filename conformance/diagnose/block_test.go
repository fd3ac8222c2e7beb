package diagnose_test

import (
	"testing"

	"github.com/bitexact/bitexact/conformance/diagnose"
	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/block"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// TestBlockFaultsDiagnosed: each fault a block format declares, run on
// the golden inputs of the format's suite, is named by the diagnosis as
// the class that reproduces it, and differs from the reference there (the
// inputs find the bug).
func TestBlockFaultsDiagnosed(t *testing.T) {
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range block.Formats() {
		for _, fault := range f.Faults {
			name := f.Suite + "-dequantize"
			if fault.Quantize != nil {
				name = f.Suite
			}
			t.Run(f.Name+"/"+fault.Class, func(t *testing.T) {
				s, err := suite.Resolve(set, name)
				if err != nil {
					t.Fatal(err)
				}
				against := f.Profiles[0].Name
				task := s.Tasks[0]
				c := task.Cases[against]
				in, err := set.Inputs(c)
				if err != nil {
					t.Fatal(err)
				}
				ref, err := set.Expected(c)
				if err != nil {
					t.Fatal(err)
				}
				var obs ops.Tensors
				if fault.Quantize != nil {
					b, err := fault.Quantize(in["x"].F32(), against)
					if err != nil {
						t.Fatal(err)
					}
					o := tensor.FromU8(ref["blocks"].Shape, b)
					o.Logical = ref["blocks"].Logical
					obs = ops.Tensors{"blocks": o}
				} else {
					y, err := fault.Dequantize(in["blocks"].Data, against)
					if err != nil {
						t.Fatal(err)
					}
					obs = ops.Tensors{"y": tensor.FromF32(ref["y"].Shape, y)}
				}
				if countBytesDiff(obs, ref) == 0 {
					t.Fatalf("fault %s gives the reference's outputs on the golden inputs: they do not find it", fault.Class)
				}
				exp := map[string]ops.Tensors{}
				for p, pc := range task.Cases {
					if exp[p], err = set.Expected(pc); err != nil {
						t.Fatal(err)
					}
				}
				d, err := diagnose.Run(s, against, []diagnose.Task{{Task: task, Params: c.Params, Inputs: in, Reference: ref, Expected: exp, Observed: obs}})
				if err != nil {
					t.Fatal(err)
				}
				if !d.Explained || d.Classes[0].Class != fault.Class {
					t.Errorf("diagnosis of fault %s: %s", fault.Class, d.Summary())
				}
			})
			n++
		}
	}
	if n == 0 {
		t.Fatal("no block format declares a fault")
	}
}

func countBytesDiff(a, b ops.Tensors) int {
	n := 0
	for k, x := range a {
		y := b[k]
		if len(x.Data) != len(y.Data) {
			return -1
		}
		for i := range x.Data {
			if x.Data[i] != y.Data[i] {
				n++
			}
		}
	}
	return n
}
