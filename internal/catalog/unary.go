package catalog

import (
	"fmt"
	"math"

	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
	"github.com/bitexact/bitexact/refimpl/unary"
)

// unaryOp names the registered op and parameters that compute conversion
// c on a tensor "x" of float32, or ok=false when no op does.
func unaryOp(c unary.Conversion) (op string, p ops.Params, ok bool) {
	switch c.Format {
	case "e2m1":
		return "e2m1.encode", ops.Params{"profile": c.Profile}, true
	case "e4m3", "e5m2":
		return "fp8.encode", ops.Params{"format": c.Format, "profile": c.Profile}, true
	case "e8m0":
		return "e8m0.encode", ops.Params{"rounding": c.Profile}, true
	case "bf16", "fp16":
		return c.Format + ".encode", ops.Params{"profile": c.Profile}, true
	}
	return "", nil, false
}

// unaryFamily is the report family of a format.
func unaryFamily(format string) string {
	switch format {
	case "e4m3", "e5m2":
		return "fp8"
	case "bf16", "fp16":
		return "half"
	}
	return format
}

// Unary random inputs per format.
const unaryRandom = 16384

// unarySeed offsets each format's random inputs' seed (from 0x5eed0000) by
// the index its first conversion had in unary.All() when the seeds were
// fixed (suite 2026.11-2), so that a profile added later does not move
// another format's inputs.
var unarySeed = map[string]uint64{"e2m1": 0, "e4m3": 6, "e5m2": 8, "e8m0": 10, "bf16": 14, "fp16": 16}

// unaryCatalog lists, for every format with a unary conversion, its edge
// inputs and random inputs, and one case per profile and input set.
func unaryCatalog() ([]Inputs, []Case) {
	var t table
	seen := map[string]bool{}
	for _, c := range unary.All() {
		op, params, ok := unaryOp(c)
		if !ok {
			continue
		}
		if !seen[c.Format] {
			seen[c.Format] = true
			seed, known := unarySeed[c.Format]
			if !known {
				panic("golden: no random seed for unary format " + c.Format) // a new format needs one
			}
			conv := c
			t.addInputs(Inputs{
				Name: "edges." + c.Format,
				Description: fmt.Sprintf("every %s edge class from its decode table: each representable value and its float32 ±1ulp, "+
					"each midpoint of consecutive magnitudes and its ±1ulp, both signs; overflow ties; ±0; float32 subnormals; ±Inf; "+
					"quiet and signalling NaNs of both signs with several payloads", c.Format),
				Make: func(uint64) (ops.Tensors, error) {
					e := Edges(conv)
					b := make([]uint32, len(e))
					for i, x := range e {
						b[i] = x.Bits
					}
					return ops.Tensors{"x": tensor.FromBits32(tensor.F32, []int{len(b)}, b)}, nil
				},
			})
			t.addInputs(Inputs{
				Name: "random." + c.Format,
				Description: fmt.Sprintf("%d float32 inputs: half approximately normal, scaled to a quarter of the largest %s magnitude, "+
					"half uniformly random bit patterns (every class)", unaryRandom, c.Format),
				Seed: 0x5eed0000 + seed,
				Make: func(seed uint64) (ops.Tensors, error) {
					mags := magnitudes(conv)
					scale := mags[len(mags)-1] / 4
					r := NewRNG(seed)
					v := make([]uint32, unaryRandom)
					for i := range v {
						if i%2 == 0 {
							v[i] = math.Float32bits(float32(r.Normal() * scale))
						} else {
							v[i] = r.Uint32()
						}
					}
					return ops.Tensors{"x": tensor.FromBits32(tensor.F32, []int{len(v)}, v)}, nil
				},
			})
		}
		for _, set := range []string{"edges", "random"} {
			t.addCase(Case{
				Name:        fmt.Sprintf("%s.%s.%s", c.Format, set, c.Profile),
				Family:      unaryFamily(c.Format),
				Op:          op,
				Params:      params,
				Inputs:      set + "." + c.Format,
				Description: fmt.Sprintf("%s %s inputs under profile %s (source: unary.Lookup(%q).Source)", c.Format, set, c.Profile, c.Name),
			})
		}
	}
	return t.inputs, t.cases
}
