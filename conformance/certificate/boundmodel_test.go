package certificate

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// boundSuites are the bound-mode suites with a golden case filter that
// names a schedule of each task whose y the tests below edit.
var boundSuites = []struct {
	suite, filter, family string
	d                     tensor.DType
}{
	{"gemv-bound", "", "", tensor.F32},
	{"gemv-f16-bound", "", "", tensor.F32},
	{"gemv-mxfp4-bound", ".mmvq", "", tensor.F32},
	{"gemv-awq-bound", ".warp32", "", tensor.F32},
	{"gemv-sparse-fp4-bound", ".sparse-v7-nofma", ",scale_decode=e4m3fn", tensor.F16},
}

// TestBoundModelsRefuseTrivialOutputs: on every bound suite, under its
// named models and under models of growing fp16 rounding counts up to the
// issue's mul32=0,round16=1024, all-zero, negated and random outputs are
// either refused with the model (too loose, or beyond its caps) or do
// not conform; the reference's own outputs conform under every model
// accepted. Before the plausibility rule, mul32=0,round16=1024 let zeros
// conform on gemv-bound.
func TestBoundModelsRefuseTrivialOutputs(t *testing.T) {
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, bs := range boundSuites {
		s, err := suite.Resolve(set, bs.suite)
		if err != nil {
			t.Fatal(err)
		}
		exact := scheduleOutputs(t, set, s, bs.d, bs.filter)
		models := append([]string{}, s.BoundModels...)
		for _, r := range []string{"16", "64", "200", "512", "1024"} {
			models = append(models, "mul32=0,round16="+r+",out=fp32"+bs.family)
		}
		for _, m := range models {
			t.Run(bs.suite+"/"+m, func(t *testing.T) {
				claim, err := s.ParseBound(m)
				if err != nil {
					if !strings.Contains(err.Error(), "want a count from 0 to") {
						t.Fatalf("refused with %v, want the cap named", err)
					}
					return
				}
				build := func(out map[string]ops.Tensors) (*Certificate, error) {
					return Build(Input{Suite: s, Set: set, GoldenSHA256: ReleasedGoldenSHA256(), ReferenceWasm: "w", Reference: golden.Native{},
						Backend: "results", Implementation: "k", Claimed: m, Outputs: out})
				}
				rng := rand.New(rand.NewPCG(1, 2))
				for _, attack := range []struct {
					name string
					f    func(v float64) float64
				}{
					{"zeros", func(float64) float64 { return 0 }},
					{"negated", func(v float64) float64 { return -v }},
					{"random", func(v float64) float64 { return (2*rng.Float64() - 1) * math.Max(math.Abs(v), 1) }},
				} {
					c, err := build(edited(exact, claim.Model.Out == 1, attack.f))
					if err != nil {
						if !strings.Contains(err.Error(), "too loose") {
							t.Fatalf("%s: refused with %v, want the model called too loose", attack.name, err)
						}
						continue
					}
					if c.Conforms {
						t.Errorf("%s outputs conform: %s", attack.name, c.Verdict)
					}
					if c.BoundAllowance == nil || c.BoundAllowance.Informative == 0 || c.BoundAllowance.MedianRatio >= 1 {
						t.Errorf("%s: allowance %+v", attack.name, c.BoundAllowance)
					}
				}
			})
		}
	}
}

// edited applies f to every value of the outputs y, written as F16 when
// f16, else as F32.
func edited(out map[string]ops.Tensors, f16 bool, f func(float64) float64) map[string]ops.Tensors {
	e := map[string]ops.Tensors{}
	for task, ts := range out {
		y := ts[suite.BoundOutput]
		v := outputValues(y)
		if f16 {
			h := make([]uint16, len(v))
			for i, x := range v {
				h[i] = half.EncodeFP16(float32(f(float64(x))))
			}
			e[task] = ops.Tensors{suite.BoundOutput: tensor.FromBits16(tensor.F16, y.Shape, h)}
			continue
		}
		w := make([]float32, len(v))
		for i, x := range v {
			w[i] = float32(f(float64(x)))
		}
		e[task] = ops.Tensors{suite.BoundOutput: tensor.FromF32(y.Shape, w)}
	}
	return e
}
