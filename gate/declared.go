package gate

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/bitexact/bitexact/conformance/certificate"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/ops"
)

// DeclaredOptions configure Declared.
type DeclaredOptions struct {
	// Variants are the parameter sets the kernel is checked under, on top
	// of its declared schedule (nil: once, as declared).
	Variants []ops.Params
	// Fallback, when set, explains outputs that differ from the declared
	// schedule (a bound that holds for any summation order); its line is
	// added to the verdict's detail. It never turns a failure into a pass.
	Fallback func(p ops.Params, in ops.Tensors, got ops.Tensors) string
	// Note is added to the detail of a failing verdict.
	Note string
}

// Declared holds kernel k, which declares a float schedule (k.Schedule),
// to the reference (ops.Run) evaluated under that schedule, bit for bit,
// on the inputs of the first golden case of its op in s: a kernel whose
// schedule no golden case uses is checked on golden inputs all the same.
// An error means the reference refused the inputs.
func Declared(ctx context.Context, e Engine, k Kernel, s *golden.Set, o DeclaredOptions) (certificate.Verdict, error) {
	if k.Schedule == nil {
		return certificate.Verdict{}, fmt.Errorf("kernel %s declares no schedule", k.Name)
	}
	spec := k.Schedule.String()
	v := certificate.Verdict{Kernel: k.Name, Claim: k.Claim(), Check: "declared-schedule",
		Reference: "refimpl ops.Run " + k.Op + " schedule=" + spec, Result: certificate.Pass}
	var c golden.CaseFile
	found := false
	for _, cf := range s.Manifest.Cases {
		if cf.Op == k.Op {
			c, found = cf, true
			break
		}
	}
	if !found {
		v.Result, v.Detail = certificate.Fail, "the golden set has no case of "+k.Op+" to take inputs from"
		return v, nil
	}
	in, err := s.Inputs(c)
	if err != nil {
		return v, err
	}
	v.Reference += " on the inputs of golden case " + c.Name
	variants := o.Variants
	if len(variants) == 0 {
		variants = []ops.Params{{}}
	}
	t0 := time.Now()
	var fails, fallbacks []string
	for _, variant := range variants {
		p := ops.Params{"schedule": spec}
		for key, val := range variant {
			p[key] = val
		}
		want, err := ops.Run(k.Op, p, in)
		if err != nil {
			return v, fmt.Errorf("reference %s %s: %w", k.Op, ParamString(p), err)
		}
		for _, t := range want {
			v.Inputs += uint64(t.Len())
		}
		got, err := e.RunKernel(ctx, k, p, in)
		if err != nil {
			fails = append(fails, fmt.Sprintf("%s: %v", ParamString(variant), err))
			continue
		}
		diffs := golden.DiffTensors(want, got)
		for _, d := range diffs {
			fails = append(fails, fmt.Sprintf("%s: %s: %s", ParamString(variant), d.Tensor, d.Problem))
		}
		if len(diffs) > 0 && o.Fallback != nil {
			fallbacks = append(fallbacks, ParamString(variant)+": "+o.Fallback(p, in, got))
		}
	}
	v.Seconds = time.Since(t0).Seconds()
	v.Detail = fmt.Sprintf("%d variants (%s)", len(variants), variantString(variants))
	if len(fails) > 0 {
		v.Result = certificate.Fail
		v.Detail = fmt.Sprintf("%s; first: %s", v.Detail, fails[0])
		if o.Note != "" {
			v.Detail += "; " + o.Note
		}
		if len(fallbacks) > 0 {
			v.Detail += "; fallback: " + strings.Join(fallbacks, "; ")
		}
	}
	return v, nil
}

func variantString(vs []ops.Params) string {
	var s []string
	for _, v := range vs {
		if len(v) == 0 {
			s = append(s, "as declared")
			continue
		}
		s = append(s, ParamString(v))
	}
	return strings.Join(s, ", ")
}
