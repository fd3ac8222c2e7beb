package mutants

import (
	"math"
	"slices"

	"github.com/bitexact/bitexact/refimpl/block"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// blockFormatCatalog is the bugs of every block format and dot product
// refimpl/block declares, built from the description alone, so a new
// block format has mutants on its suites without an entry here: the
// faults the description declares (the reported bugs), a dequantizer that
// returns +0 for -0, and a kernel built the way another profile is (the
// first profile whose outputs on the description's own inputs differ
// from the canonical one's: a build with the other contraction or casts).
func blockFormatCatalog() []Mutant {
	var ms []Mutant
	for _, f := range block.Formats() {
		canon := f.Profiles[0].Name
		for _, fault := range f.Faults {
			fault, f := fault, f
			m := Mutant{Name: f.Suite + "-" + fault.Class, Claim: canon, Class: fault.Class, Doc: fault.Doc}
			if fault.Quantize != nil {
				m.Suite = f.Suite
				m.Run = func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
					b, err := fault.Quantize(in["x"].F32(), p[f.ProfileParam])
					if err != nil {
						return nil, err
					}
					y := tensor.FromU8([]int{len(b) / f.BlockBytes, f.BlockBytes}, b)
					y.Logical = f.Suite
					return ops.Tensors{"blocks": y}, nil
				}
			} else {
				m.Suite = f.Suite + "-dequantize"
				m.Run = func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
					y, err := fault.Dequantize(in["blocks"].Data, p[f.ProfileParam])
					if err != nil {
						return nil, err
					}
					return ops.Tensors{"y": tensor.FromF32([]int{len(y)}, y)}, nil
				}
			}
			ms = append(ms, m)
		}
		d := f.Dequantize
		if len(d.Inputs) > 0 && hasNegZero(d.Run(d.Inputs[0].Make(), canon)) {
			ms = append(ms, Mutant{Name: f.Suite + "-dequantize-generic-zero-sign", Suite: f.Suite + "-dequantize", Claim: canon,
				Class: "negative-zero-cleared", Doc: f.Title + " dequantized with every -0 result written as +0 (an integer product or a LUT without -0)",
				Run: func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
					y, err := d.Run(in["blocks"].Data, p[f.ProfileParam])
					if err != nil {
						return nil, err
					}
					for i, v := range y {
						if v == 0 {
							y[i] = 0
						}
					}
					return ops.Tensors{"y": tensor.FromF32([]int{len(y)}, y)}, nil
				}})
		}
		if len(d.Inputs) > 0 && !hasNegZero(d.Run(d.Inputs[0].Make(), canon)) && hasNegNaN(d.Run(d.Inputs[0].Make(), canon)) {
			ms = append(ms, Mutant{Name: f.Suite + "-dequantize-generic-nan-sign", Suite: f.Suite + "-dequantize", Claim: canon,
				Class: "nan-sign-cleared", Doc: f.Title + " dequantized with every NaN result the positive canonical NaN (a NaN scale's sign dropped)",
				Run: func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
					y, err := d.Run(in["blocks"].Data, p[f.ProfileParam])
					if err != nil {
						return nil, err
					}
					for i, v := range y {
						if v != v {
							y[i] = math.Float32frombits(0x7FC00000)
						}
					}
					return ops.Tensors{"y": tensor.FromF32([]int{len(y)}, y)}, nil
				}})
		}
		if q := f.Quantize; q != nil {
			if sf, ok := scaleField(f); ok {
				ms = append(ms, Mutant{Name: f.Suite + "-generic-scale-bytes-reversed", Suite: f.Suite, Claim: canon,
					Doc: f.Title + " blocks with the bytes of field " + sf.Name + " (" + sf.Kind + ") written in reverse order (a big-endian or reversed store)",
					Run: func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
						b, err := q.Run(in["x"].F32(), p[f.ProfileParam])
						if err != nil {
							return nil, err
						}
						for off := 0; off < len(b); off += f.BlockBytes {
							slices.Reverse(b[off+sf.Offset : off+sf.Offset+sf.Bytes])
						}
						y := tensor.FromU8([]int{len(b) / f.BlockBytes, f.BlockBytes}, b)
						y.Logical = f.Suite
						return ops.Tensors{"blocks": y}, nil
					}})
			}
		}
		if q := f.Quantize; q != nil && len(q.Inputs) > 0 {
			x := q.Inputs[0].Make()
			if other := firstDiffering(f.Profiles, func(p string) []byte { b, _ := q.Run(x, p); return b }); other != "" {
				ms = append(ms, Mutant{Name: f.Suite + "-generic-" + other + "-build", Suite: f.Suite, Claim: canon, Class: "profile:" + other,
					Doc: f.Title + " quantized by a build that behaves as profile " + other + " while " + canon + " is claimed",
					Run: func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
						b, err := q.Run(in["x"].F32(), other)
						if err != nil {
							return nil, err
						}
						y := tensor.FromU8([]int{len(b) / f.BlockBytes, f.BlockBytes}, b)
						y.Logical = f.Suite
						return ops.Tensors{"blocks": y}, nil
					}})
			}
		}
	}
	for _, d := range block.Dots() {
		w, rows, act := d.Inputs.Make()
		canon := d.Profiles[0].Name
		other := firstDiffering(d.Profiles, func(p string) []byte {
			y, _ := d.Run(w, act, rows, p)
			return tensor.FromF32([]int{len(y)}, y).Data
		})
		if other == "" {
			continue
		}
		ms = append(ms, Mutant{Name: d.Suite + "-generic-" + other + "-build", Suite: d.Suite, Claim: canon, Class: "profile:" + other,
			Doc: d.Title + " dot product built as profile " + other + " (other contraction) while " + canon + " is claimed",
			Run: func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
				wt := in["w"]
				y, err := d.Run(wt.Data, in["act"].Data, wt.Shape[0], other)
				if err != nil {
					return nil, err
				}
				return ops.Tensors{"y": tensor.FromF32([]int{len(y)}, y)}, nil
			}})
	}
	return ms
}

// firstDiffering is the first profile after the canonical one whose
// output differs from the canonical's, or "".
func firstDiffering(ps []block.Profile, run func(string) []byte) string {
	ref := run(ps[0].Name)
	for _, p := range ps[1:] {
		if !slices.Equal(run(p.Name), ref) {
			return p.Name
		}
	}
	return ""
}

// hasNegZero reports whether y holds a -0.
func hasNegZero(y []float32, err error) bool {
	for _, v := range y {
		if v == 0 && math.Signbit(float64(v)) {
			return err == nil
		}
	}
	return false
}

// scaleField is the first multi-byte scale field of f's layout.
func scaleField(f block.Format) (block.Field, bool) {
	for _, l := range f.Layout {
		if (l.Kind == "fp16" || l.Kind == "f32" || l.Kind == "ue4m3") && l.Bytes > 1 {
			return l, true
		}
	}
	return block.Field{}, false
}

// hasNegNaN reports whether y holds a NaN with its sign bit set.
func hasNegNaN(y []float32, err error) bool {
	for _, v := range y {
		if v != v && math.Signbit(float64(v)) {
			return err == nil
		}
	}
	return false
}
