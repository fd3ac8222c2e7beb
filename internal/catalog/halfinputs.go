package catalog

import (
	"fmt"

	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
	"github.com/bitexact/bitexact/refimpl/unary"
)

// halfInputCatalog is the conversions of fp16 and bf16 inputs (issue 17:
// kernels that quantize fp16/bf16 activations are the common case) and
// the dense fp16 GEMV of the bound mode.
//
// Every 16-bit code is an input, so each conversion is covered
// exhaustively: all.fp16 and all.bf16 hold the 65536 codes of each type
// in code order. Every unary conversion of the reference runs on both,
// under every profile, except a format's own type (fp16.encode of an fp16
// input is the identity but for NaN quieting, which no kernel ships as a
// conversion). The expected codes are those of the exactly widened
// float32 value (refimpl/ops widenHalf).
func halfInputCatalog() ([]Inputs, []Case) {
	var ins []Inputs
	var cases []Case
	for _, src := range []struct {
		name  string
		dtype tensor.DType
	}{{"fp16", tensor.F16}, {"bf16", tensor.BF16}} {
		d := src.dtype
		ins = append(ins, Inputs{
			Name:        "all." + src.name,
			Description: fmt.Sprintf("every %s code, 0x0000 to 0xFFFF in order (x %s [65536]): zeros, subnormals, normals, infinities and every NaN payload of both signs", src.name, d),
			Make: func(uint64) (ops.Tensors, error) {
				v := make([]uint16, 1<<16)
				for i := range v {
					v[i] = uint16(i)
				}
				return ops.Tensors{"x": tensor.FromBits16(d, []int{len(v)}, v)}, nil
			},
		})
		for _, c := range unary.All() {
			op, params, ok := unaryOp(c)
			if !ok || c.Format == src.name {
				continue
			}
			cases = append(cases, Case{
				Name:   fmt.Sprintf("%s.from-%s.%s", c.Format, src.name, c.Profile),
				Family: unaryFamily(c.Format), Op: op, Params: params, Inputs: "all." + src.name,
				Description: fmt.Sprintf("every %s code converted to %s under profile %s: the conversion of its exact float32 value (source: unary.Lookup(%q).Source)",
					src.name, c.Format, c.Profile, c.Name),
			})
		}
	}
	const n, k = 64, 1024
	ins = append(ins, Inputs{
		Name: "gemv.exact.fp16", Seed: 0x65786166,
		Description: fmt.Sprintf("w F16 [%d,%d] and x F16 [%d]: rows 0-59 approximately normal (w scaled by 1/16); row 60 cancels (pairs +-2^10 * x with small terms between); "+
			"row 61 is fp16's largest magnitudes; row 62 subnormal weights; row 63 zeros", n, k, k),
		Make: func(seed uint64) (ops.Tensors, error) {
			r := NewRNG(seed)
			w := make([]uint16, n*k)
			x := make([]uint16, k)
			for i := range x {
				x[i] = half.EncodeFP16(r.Normal())
			}
			for row := 0; row < n; row++ {
				for i := 0; i < k; i++ {
					var v uint16
					switch row {
					case 60:
						// +2^10 and -2^10 at elements 4j and 4j+1, whose
						// activations are equal (below): each pair cancels
						// exactly, leaving the small terms of 4j+2, 4j+3.
						switch i % 4 {
						case 0:
							v = 0x6400
						case 1:
							v = 0xE400
						default:
							v = half.EncodeFP16(r.Normal() / 1024)
						}
					case 61:
						v = 0x7BFF | uint16(r.Intn(2))<<15 // +-65504
					case 62:
						v = uint16(1+r.Intn(0x3FF)) | uint16(r.Intn(2))<<15 // subnormal
					case 63:
					default:
						v = half.EncodeFP16(r.Normal() / 16)
					}
					w[row*k+i] = v
				}
			}
			for i := 0; i+1 < k; i += 4 {
				x[i+1] = x[i]
			}
			return ops.Tensors{"w": tensor.FromBits16(tensor.F16, []int{n, k}, w), "x": tensor.FromBits16(tensor.F16, []int{k}, x)}, nil
		},
	})
	for _, out := range []string{"fp32", "fp16"} {
		cases = append(cases, Case{Name: "gemv.exact.fp16.out=" + out, Family: "gemv", Op: "gemv.exact", Params: ops.Params{"out": out},
			Inputs: "gemv.exact.fp16", Description: "exact y = W x of fp16 w and x, rounded to " + out})
	}
	return ins, cases
}
