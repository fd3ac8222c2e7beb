package golden

import (
	"fmt"
	"math"

	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
	"github.com/bitexact/bitexact/refimpl/unary"
)

// UnaryOp names the registered op and parameters that compute conversion
// c on a tensor "x" of float32, or ok=false when no op does.
func UnaryOp(c unary.Conversion) (op string, p ops.Params, ok bool) {
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

func init() {
	seen := map[string]bool{}
	for i, c := range unary.All() {
		op, params, ok := UnaryOp(c)
		if !ok {
			continue
		}
		if !seen[c.Format] {
			seen[c.Format] = true
			conv := c
			addInputs(Inputs{
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
			addInputs(Inputs{
				Name: "random." + c.Format,
				Description: fmt.Sprintf("%d float32 inputs: half approximately normal, scaled to a quarter of the largest %s magnitude, "+
					"half uniformly random bit patterns (every class)", unaryRandom, c.Format),
				Seed: 0x5eed0000 + uint64(i),
				Make: func(seed uint64) (ops.Tensors, error) {
					mags := Magnitudes(conv)
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
			addCase(Case{
				Name:        fmt.Sprintf("%s.%s.%s", c.Format, set, c.Profile),
				Family:      unaryFamily(c.Format),
				Op:          op,
				Params:      params,
				Inputs:      set + "." + c.Format,
				Description: fmt.Sprintf("%s %s inputs under profile %s (source: unary.Lookup(%q).Source)", c.Format, set, c.Profile, c.Name),
			})
		}
	}
}
