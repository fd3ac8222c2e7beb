package metal

import (
	"context"
	"fmt"
	"time"

	"github.com/bitexact/bitexact/conformance/certificate"
	"github.com/bitexact/bitexact/gate"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/ops"
)

// runSuite holds every kernel against the golden set s on backend b
// through gate:
//
//   - "golden" (gate.Golden): every case of s that a kernel claims,
//     outputs compared bit for bit with the committed expected files;
//   - "declared-schedule" (gate.Declared): each GEMV on the inputs of the
//     golden cases of its op, compared bit for bit with the reference
//     (ops.Run) evaluated under the schedule the kernel declares (the
//     committed GEMV cases use the CUDA/llama.cpp schedules, which these
//     kernels do not claim), once per variant parameter (scale_decode for
//     the sparse GEMV); a difference is explained, not excused, by
//     refimpl/gemv's error bound (gemvBound).
//
// It returns one verdict per kernel and check, sorted; an error only when
// the suite itself cannot run.
func runSuite(ctx context.Context, b Backend, s *golden.Set) ([]certificate.Verdict, error) {
	e := NewEngine(b)
	g, err := gate.Golden(ctx, e, s, 1)
	if err != nil {
		return nil, err
	}
	vs := g.Verdicts
	for _, k := range kernelList {
		if k.Schedule == nil {
			continue
		}
		v, err := gate.Declared(ctx, e, k, s, gate.DeclaredOptions{Variants: declaredVariants[k.Op], Fallback: boundFallback(k.Op), Note: scheduleNote})
		if err != nil {
			return nil, fmt.Errorf("metal: %w", err)
		}
		vs = append(vs, v)
	}
	rec := certificate.Gate{Verdicts: vs}
	rec.Finish()
	return rec.Verdicts, nil
}

// declaredVariants are the parameter sets each GEMV is checked under, on
// top of its declared schedule.
var declaredVariants = map[string][]ops.Params{
	"gemv.sparse_fp4": {{"scale_decode": "e4m3fn"}, {"scale_decode": "dgx_lut"}},
	"gemv.mxfp4_q8_1": {{}},
}

// scheduleNote is the verdict detail of a GEMV that differs from its
// declared schedule.
const scheduleNote = "on an Apple GPU a difference in a GEMV alone may be simd_sum's undocumented reduction order " +
	"(declared here as a butterfly); refimpl gemv.exact's error bound is then the fallback verdict"

// boundFallback says how many of a GEMV's outputs lie within refimpl/gemv's
// bound for any float32 summation order.
func boundFallback(op string) func(p ops.Params, in, got ops.Tensors) string {
	return func(p ops.Params, in, got ops.Tensors) string {
		br, err := gemvBound(op, p, in, got["y"])
		if err != nil {
			return err.Error()
		}
		return fmt.Sprintf("%d of %d outputs within refimpl/gemv's bound for any float32 summation order (%d non-finite)%s",
			br.Within, br.Outputs, br.NonFinite, firstOf(br.First))
	}
}

func firstOf(s string) string {
	if s == "" {
		return ""
	}
	return "; first outside: " + s
}

// newCertificate fills the gate record of a run on b with golden set s.
func newCertificate(tool string, b Backend, s *golden.Set, source string, vs []certificate.Verdict) *certificate.Gate {
	info := b.Describe()
	c := &certificate.Gate{Tool: tool, Date: time.Now().UTC().Format(time.RFC3339), Backend: info.Kind, Device: info.Name,
		Verifies: info.Verifies, Details: info.Details,
		Golden: certificate.GateGolden{Suite: s.Manifest.Suite, Source: source, Generator: s.Manifest.Generator}}
	for _, m := range modules {
		h, _ := m.SourceHash()
		src := certificate.Source{Module: m.Name, SourceSHA256: h}
		if sch, ok, _ := m.declaredSchedule(); ok {
			src.Schedule = sch.String()
		}
		c.Sources = append(c.Sources, src)
	}
	c.Add(vs...)
	c.Finish()
	return c
}
