package ops

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bitexact/bitexact/refimpl/tensor"
	"github.com/bitexact/bitexact/refimpl/unary"
)

// The ops of every format that refimpl/unary declares with the generic
// minifloat.encode and minifloat.decode (the FP6 and FNUZ formats): the
// format is a parameter, and its profiles, encoders and decoder are the
// format's description, so a format declared there needs nothing here.
func init() {
	// A profile name shared by several formats (ml_dtypes) is one
	// choice, its summary and sources those of each format.
	var names []string
	summaries, sources := map[string][]string{}, map[string][]string{}
	var profiles []Choice
	for _, f := range minifloatFormats() {
		names = append(names, f.Name)
		for _, c := range f.Conversions() {
			if _, seen := summaries[c.Profile]; !seen {
				profiles = append(profiles, Choice{Name: c.Profile})
			}
			summaries[c.Profile] = append(summaries[c.Profile], f.Name+": "+c.Summary)
			if !slices.Contains(sources[c.Profile], c.Source) {
				sources[c.Profile] = append(sources[c.Profile], c.Source)
			}
		}
	}
	for i, p := range profiles {
		profiles[i].Summary = strings.Join(summaries[p.Name], "; ")
		profiles[i].Source = strings.Join(sources[p.Name], "; ")
	}
	formatParam := strings.Join(names, " | ") + " (required)"
	register(Op{
		Name: "minifloat.encode",
		Doc:  "float32 (or F16/BF16 x with parameter input, widened exactly to float32 first) -> codes of an FP6 or FNUZ FP8 format, one per byte, nearest even, overflow/Inf/NaN per profile",
		Params: map[string]string{
			"format":  formatParam,
			"profile": "a profile of the format (required): " + choiceNames(profiles),
			"input":   inputParam,
		},
		Defaults: Params{"input": "fp32"},
		Choices:  map[string][]Choice{"profile": profiles},
		Inputs:   []string{"x"},
		Outputs:  []string{"codes"},
		Run: func(p Params, in Tensors) (Tensors, error) {
			f, err := minifloatFormat(p)
			if err != nil {
				return nil, err
			}
			profile, err := param8(p, "profile")
			if err != nil {
				return nil, err
			}
			c, err := unary.Lookup(f.Name + "/" + profile)
			if err != nil {
				return nil, err
			}
			return encodeCodes(p, in["x"], f.Name, c.Name, func(x float32) uint8 { return uint8(c.Encode(x)) })
		},
	})
	register(Op{
		Name:    "minifloat.decode",
		Doc:     "codes of an FP6 or FNUZ FP8 format, one per byte -> exact float32 (an FNUZ NaN -> 0xffc00000)",
		Params:  map[string]string{"format": formatParam},
		Inputs:  []string{"codes"},
		Outputs: []string{"x"},
		Run: func(p Params, in Tensors) (Tensors, error) {
			f, err := minifloatFormat(p)
			if err != nil {
				return nil, err
			}
			c := in["codes"]
			if err := checkCodesU8(c, "codes", f.Name); err != nil {
				return nil, err
			}
			v := make([]float32, len(c.Data))
			for i, ci := range c.Data {
				if ci>>f.Fields.Bits() != 0 {
					return nil, fmt.Errorf("tensor %q: element %d is %#x, not a %d-bit %s code", "codes", i, ci, f.Fields.Bits(), f.Name)
				}
				v[i] = f.Decode(uint32(ci))
			}
			return Tensors{"x": tensor.FromF32(c.Shape, v)}, nil
		},
	})
}

// minifloatFormats are the formats refimpl/unary declares with
// minifloat.encode.
func minifloatFormats() []unary.Format {
	var fs []unary.Format
	for _, f := range unary.Formats() {
		if f.Encode.Op == "minifloat.encode" {
			fs = append(fs, f)
		}
	}
	return fs
}

// minifloatFormat is the format named by the required parameter format.
func minifloatFormat(p Params) (unary.Format, error) {
	name, err := param8(p, "format")
	if err != nil {
		return unary.Format{}, err
	}
	var names []string
	for _, f := range minifloatFormats() {
		if f.Name == name {
			return f, nil
		}
		names = append(names, f.Name)
	}
	return unary.Format{}, fmt.Errorf("parameter format=%q: want one of %s", name, strings.Join(names, ", "))
}

func choiceNames(cs []Choice) string {
	n := make([]string, len(cs))
	for i, c := range cs {
		n[i] = c.Name
	}
	return strings.Join(n, " | ")
}
