package catalog

import (
	"fmt"

	"github.com/bitexact/bitexact/refimpl/block"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// blockFormatCatalog is the golden family of every block format and dot
// product of refimpl/block, derived from their descriptions: each input
// set the descriptions name (once, however many formats share it), and
// one case per profile of each quantizer, dequantizer and dot product.
func blockFormatCatalog() ([]Inputs, []Case) {
	var t table
	seen := map[string]bool{}
	addInputs := func(name, doc string, mk func() ops.Tensors) {
		if !seen[name] {
			seen[name] = true
			t.addInputs(Inputs{Name: name, Description: doc, Make: func(uint64) (ops.Tensors, error) { return mk(), nil }})
		}
	}
	for _, f := range block.Formats() {
		if q := f.Quantize; q != nil {
			for i, s := range q.Inputs {
				addInputs(s.Name, s.Doc, func() ops.Tensors {
					x := s.Make()
					return ops.Tensors{"x": tensor.FromF32([]int{len(x)}, x)}
				})
				for _, p := range f.Profiles {
					t.addCase(Case{Name: blockCaseName(f.Suite+".quantize", i, p.Name), Family: f.Family, Op: q.Op,
						Params: block.Params(q.Params, f.ProfileParam, p.Name), Inputs: s.Name,
						Description: fmt.Sprintf("%s under profile %s on %s", q.Doc, p.Name, s.Name)})
				}
			}
		}
		d := f.Dequantize
		for i, s := range d.Inputs {
			f := f
			addInputs(s.Name, s.Doc, func() ops.Tensors {
				b := s.Make()
				x := tensor.FromU8([]int{len(b) / f.BlockBytes, f.BlockBytes}, b)
				x.Logical = f.Suite
				return ops.Tensors{"blocks": x}
			})
			for _, p := range f.Profiles {
				t.addCase(Case{Name: blockCaseName(f.Suite+".dequantize", i, p.Name), Family: f.Family, Op: d.Op,
					Params: block.Params(d.Params, f.ProfileParam, p.Name), Inputs: s.Name,
					Description: fmt.Sprintf("%s under profile %s", d.Doc, p.Name)})
			}
		}
	}
	for _, d := range block.Dots() {
		wf, err := block.Lookup(d.W)
		if err != nil {
			panic(err) // unreachable: refimpl/block checks a dot's formats when it declares it
		}
		af, err := block.Lookup(d.Act)
		if err != nil {
			panic(err)
		}
		s := d.Inputs
		addInputs(s.Name, s.Doc, func() ops.Tensors {
			w, rows, act := s.Make()
			wt := tensor.FromU8([]int{rows, len(w) / rows / wf.BlockBytes, wf.BlockBytes}, w)
			wt.Logical = wf.Suite
			at := tensor.FromU8([]int{len(act) / af.BlockBytes, af.BlockBytes}, act)
			at.Logical = af.Suite
			return ops.Tensors{"w": wt, "act": at}
		})
		for _, p := range d.Profiles {
			t.addCase(Case{Name: d.Suite + "." + p.Name, Family: "gemv", Op: d.Op,
				Params: block.Params(d.Params, d.ProfileParam, p.Name), Inputs: s.Name,
				Description: fmt.Sprintf("%s GEMV under profile %s; schedule: %s", d.Title, p.Name, d.Schedule)})
		}
	}
	return t.inputs, t.cases
}

// blockCaseName is stem.profile for a format's first input set, and
// stem.setN.profile for the others.
func blockCaseName(stem string, set int, profile string) string {
	if set == 0 {
		return stem + "." + profile
	}
	return fmt.Sprintf("%s.set%d.%s", stem, set, profile)
}
