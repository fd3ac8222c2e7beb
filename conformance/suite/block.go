package suite

import (
	"strings"

	"github.com/bitexact/bitexact/refimpl/block"
)

// blockSpecs are the suites of every block format and dot product of
// refimpl/block, from their descriptions: the quantizer (and, for a
// quantizer that widens, its fp16 and bf16 inputs), the dequantizer and
// each dot product's GEMV, the profile parameter the profile key.
func blockSpecs() []Spec {
	var v []Spec
	for _, f := range block.Formats() {
		profiles := " (profiles " + strings.Join(block.ProfileNames(f.Profiles), ", ") + ")"
		if q := f.Quantize; q != nil {
			v = append(v, blockSpec(f.Suite, q.Op, q.Params, f.ProfileParam, f.Profiles, "F32", q.Doc+profiles))
			if q.Widens {
				for _, src := range []struct{ name, dtype string }{{"fp16", "F16"}, {"bf16", "BF16"}} {
					v = append(v, blockSpec(f.Suite+"-from-"+src.name, q.Op, q.Params, f.ProfileParam, f.Profiles, src.dtype,
						q.Doc+" ("+src.name+" input widened exactly to float32, then quantized)"))
				}
			}
		}
		d := f.Dequantize
		v = append(v, blockSpec(f.Suite+"-dequantize", d.Op, d.Params, f.ProfileParam, f.Profiles, "", d.Doc+profiles))
	}
	for _, d := range block.Dots() {
		v = append(v, blockSpec(d.Suite, d.Op, d.Params, d.ProfileParam, d.Profiles, "",
			d.Title+" GEMV (activations already quantized to "+d.Act+"); the declared schedule: "+d.Schedule))
	}
	return v
}

func blockSpec(name, op string, fixed map[string]string, key string, profiles []block.Profile, xDType, doc string) Spec {
	s := Spec{Name: name, Op: op, Filter: copyParams(fixed), ProfileKeys: []string{key},
		Defaults: map[string]string{key: profiles[0].Name}, Doc: doc}
	if xDType != "" {
		s.InputDTypes = map[string]string{"x": xDType}
	}
	return s
}
