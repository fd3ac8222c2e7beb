package gate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/bitexact/bitexact/conformance/certificate"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// GoldenRun is the outcome of Golden.
type GoldenRun struct {
	// Verdicts has one verdict per kernel that claims a case, in the
	// order of the kernels' first cases.
	Verdicts []certificate.Verdict
	// Failures has one line per failing case (describe).
	Failures []string
	// Claimed counts the cases a kernel claims, of Cases in the set.
	Claimed, Cases int
}

// Golden runs every case of s that a kernel of e claims (and the backend
// can run), compares every output bit for bit and returns one verdict per
// kernel. workers bounds the cases run at once (golden.Options).
func Golden(ctx context.Context, e Engine, s *golden.Set, workers int) (*GoldenRun, error) {
	cl := newClaimed(e)
	res, err := golden.Check(ctx, cl, s, &golden.Options{Workers: workers})
	if err != nil {
		return nil, err
	}
	type agg struct {
		cases, elems int
		fails        []string
	}
	per := map[string]*agg{}
	var order []string
	run := &GoldenRun{Cases: len(res)}
	for _, r := range res {
		if errors.Is(r.Err, errNoKernel) {
			continue
		}
		run.Claimed++
		k, _ := e.KernelFor(r.Case.Op, r.Case.Params)
		a := per[k.Name]
		if a == nil {
			a = &agg{}
			per[k.Name] = a
			order = append(order, k.Name)
		}
		a.cases++
		a.elems += r.Elements
		if !r.OK() {
			msg := describe(s, r)
			a.fails = append(a.fails, msg)
			run.Failures = append(run.Failures, msg)
		}
	}
	for _, name := range order {
		a := per[name]
		k, _ := e.Lookup(name)
		v := certificate.Verdict{Kernel: name, Claim: k.Claim(), Check: "golden", Reference: "golden set " + s.Manifest.Suite,
			Result: certificate.Pass, Inputs: uint64(a.elems), Seconds: cl.Seconds(name), Detail: fmt.Sprintf("%d cases", a.cases)}
		if len(a.fails) > 0 {
			v.Result, v.Detail = certificate.Fail, fmt.Sprintf("%d of %d cases differ; first: %s", len(a.fails), a.cases, a.fails[0])
		}
		run.Verdicts = append(run.Verdicts, v)
	}
	return run, nil
}

// describe spells a failing golden case on one line: each differing
// tensor, how many elements differ, and the first of them decoded (its
// float32 input, when the case has one input x, and the expected and
// obtained codes).
func describe(s *golden.Set, r golden.Result) string {
	if r.Err != nil {
		return fmt.Sprintf("case %s (%s %s): %v", r.Case.Name, r.Case.Op, ParamString(r.Case.Params), r.Err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "case %s (%s %s):", r.Case.Name, r.Case.Op, ParamString(r.Case.Params))
	in, _ := s.Inputs(r.Case)
	for _, d := range r.Diffs {
		fmt.Fprintf(&b, " %s: %s (%d differ)", d.Tensor, d.Problem, d.Count)
		if d.First < 0 || len(d.Want) == 0 {
			continue
		}
		if x, ok := in["x"]; ok && len(in) == 1 && x.DType == tensor.F32 && d.First < x.Len() {
			v := x.F32()[d.First]
			fmt.Fprintf(&b, "; input %g [0x%08x]", v, math.Float32bits(v))
		}
		for _, o := range r.Case.Outputs {
			if o.Name == d.Tensor {
				dt := tensor.DType(o.DType)
				fmt.Fprintf(&b, "; want %s, got %s", certificate.DecodeElement(dt, o.Logical, d.Want), certificate.DecodeElement(dt, o.Logical, d.Got))
			}
		}
	}
	return b.String()
}
