package gate

import (
	"context"
	"fmt"
	"time"

	"github.com/bitexact/bitexact/conformance/certificate"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/ops"
)

// Case is one op call of a Random check.
type Case struct {
	Name   string
	Op     string
	Params ops.Params
	In     ops.Tensors
}

// RandomRun is the outcome of Random.
type RandomRun struct {
	// Verdicts has one verdict per kernel, in the order of its first case.
	Verdicts []certificate.Verdict
	// Failures has one line per case that failed (no kernel claims it,
	// the kernel failed, or its outputs differ); Passes one per case that
	// passed.
	Failures, Passes []string
}

// Random runs each case on the kernel of e that claims it and compares
// the outputs bit for bit with the reference (refimpl/ops) run in this
// process with the same parameters: inputs larger than the golden cases
// (many thread blocks, grid-stride loops, benchmark shapes). A GEMV case
// names the kernel's declared schedule in its parameters, so the reference
// evaluates exactly that. An error means the reference refused a case.
func Random(ctx context.Context, e Engine, cases []Case) (*RandomRun, error) {
	run := &RandomRun{}
	per := map[string]*certificate.Verdict{}
	var order []string
	for _, c := range cases {
		k, ok := e.KernelFor(c.Op, c.Params)
		if !ok {
			run.Failures = append(run.Failures, fmt.Sprintf("%s: no kernel claims %s %s", c.Name, c.Op, ParamString(c.Params)))
			continue
		}
		want, err := ops.Run(c.Op, c.Params, c.In)
		if err != nil {
			return nil, fmt.Errorf("%s: reference: %w", c.Name, err)
		}
		v := per[k.Name]
		if v == nil {
			v = &certificate.Verdict{Kernel: k.Name, Claim: k.Claim(), Check: "random",
				Reference: "refimpl/ops run in this process with the same parameters", Result: certificate.Pass}
			per[k.Name] = v
			order = append(order, k.Name)
		}
		t0 := time.Now()
		got, err := e.RunKernel(ctx, k, c.Params, c.In)
		v.Seconds += time.Since(t0).Seconds()
		if err != nil {
			v.Result, v.Detail = certificate.Fail, c.Name+": "+err.Error()
			run.Failures = append(run.Failures, fmt.Sprintf("%s: %v", c.Name, err))
			continue
		}
		n := 0
		for _, t := range want {
			n += t.Len()
		}
		v.Inputs += uint64(n)
		if d := golden.DiffTensors(want, got); len(d) > 0 {
			v.Result, v.Detail = certificate.Fail, c.Name+": "+d[0].Tensor+": "+d[0].Problem
			run.Failures = append(run.Failures, fmt.Sprintf("%s (%s %s): %s: %s (%d differ)", c.Name, c.Op, ParamString(c.Params), d[0].Tensor, d[0].Problem, d[0].Count))
			continue
		}
		run.Passes = append(run.Passes, fmt.Sprintf("%-32s %-18s ok (%d output elements)", c.Name, k.Name, n))
	}
	for _, name := range order {
		v := per[name]
		if v.Result == certificate.Pass {
			v.Detail = "outputs compared element by element"
		}
		run.Verdicts = append(run.Verdicts, *v)
	}
	return run, nil
}
