package certificate

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/gemv"
	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// ModeBound is Certificate.Mode for a bound-mode suite (suite.Spec.Bound):
// every output is held to the rigorous error bound of the exact product
// under the declared bound model, not compared bit for bit. The verdict
// says so in every form of the certificate.
const ModeBound = "bound"

// BoundCheck summarises one task of a bound-mode certificate.
type BoundCheck struct {
	// Outputs is the number of outputs; Within how many are within the
	// bound (Outputs - Within is the case's Mismatches).
	Outputs int `json:"outputs"`
	Within  int `json:"within"`
	// NonFinite counts outputs with a NaN or infinite factor among their
	// terms: they have no exact value, and are within the model when NaN,
	// or an infinity of the sign of an infinite term.
	NonFinite int `json:"non_finite"`
	// Overflow counts outputs with finite terms whose magnitudes sum to
	// the overflow threshold of a precision on their path (float32, or
	// fp16 for fp16 partials or output): some summation order overflows
	// there, so the error bound does not hold, and an infinity or NaN is
	// within the model.
	Overflow int `json:"overflow,omitempty"`
	// ClosestErrorULP and ClosestBoundULP are |got - exact| and the bound
	// of the finite output within the bound whose error is the largest
	// fraction of its bound, in units of the output precision's spacing
	// at |exact| (0 and 0 when none has an error).
	ClosestErrorULP float64 `json:"closest_error_ulp"`
	ClosestBoundULP float64 `json:"closest_bound_ulp"`
}

// buildBound is BuildContext for a bound-mode suite: c holds the fields
// BuildContext derived before any verdict.
func buildBound(ctx context.Context, in Input, c *Certificate) (*Certificate, error) {
	s := in.Suite
	if in.Claimed == "" {
		return nil, fmt.Errorf("suite %s is a bound-mode suite: the results must declare their bound model as the profile (for example %s)", s.Name, s.Profiles[0])
	}
	claim, err := s.ParseBound(in.Claimed)
	if err != nil {
		return nil, fmt.Errorf("invalid bound model: %w", err)
	}
	if in.Reference == nil {
		return nil, fmt.Errorf("suite %s: no reference engine to compute the exact products", s.Name)
	}
	// A model must describe a plausible kernel: one under which zero or
	// negated outputs would pass is refused before any verdict.
	al, err := s.CheckBoundModel(in.Set, claim)
	if err != nil {
		return nil, fmt.Errorf("invalid bound model: %w", err)
	}
	c.Mode, c.Against, c.BoundAllowance = ModeBound, claim.Name, &al
	by := golden.EngineName(in.Reference)
	if want := "wasm sha256:" + in.ReferenceWasm; by != want && c.Valid {
		c.Valid, c.InvalidReason = false, fmt.Sprintf("exact products computed by %s, not by the reference module %s", by, want)
	}
	pv := Profile{Profile: claim.Name}
	for _, t := range s.Tasks {
		got, ok := in.Outputs[t.Name]
		if !ok {
			continue
		}
		cs, err := boundCase(ctx, s, in, t, claim, got)
		if err != nil {
			return nil, err
		}
		cs.ComputedBy = by
		c.Cases = append(c.Cases, cs)
		pv.Tasks++
		pv.Computed++
		pv.Mismatches += cs.Mismatches
	}
	if len(c.Cases) == 0 {
		return nil, fmt.Errorf("no task of suite %s has outputs", s.Name)
	}
	pv.TasksTotal = pv.Tasks
	pv.Conforms = pv.Mismatches == 0
	c.Profiles = []Profile{pv}
	c.Conforms = conformsFrom(c)
	c.Verdict = verdictLine(c)
	if err := c.seal(); err != nil {
		return nil, err
	}
	return c, nil
}

// boundCase holds task t's output y to the bound of each of its exact
// products, computed by in.Reference's gemv.exact.
func boundCase(ctx context.Context, s *suite.Suite, in Input, t suite.Task, claim suite.BoundClaim, got ops.Tensors) (Case, error) {
	cs := Case{Task: t.Name, Case: ComputedCase, Profile: claim.Name, Expected: ExpectedComputed}
	layout, err := s.BoundLayout(t, claim.Name)
	if err != nil {
		return cs, err
	}
	want := layout[0]
	n := 1
	for _, d := range want.Shape {
		n *= d
	}
	cs.Elements = n
	tv := Tensor{Name: want.Name, Elements: n}
	y, ok := got[want.Name]
	switch {
	case !ok:
		tv.Layout = "missing"
	case string(y.DType) != want.DType || !sameShape(y.Shape, want.Shape) || y.Validate() != nil:
		tv.Layout = fmt.Sprintf("%s%v, the bound model wants %s%v", y.DType, y.Shape, want.DType, want.Shape)
	}
	for name := range got {
		if name != want.Name && tv.Layout == "" {
			tv.Layout = fmt.Sprintf("extra tensor %q (a bound-mode result holds only %s)", name, want.Name)
		}
	}
	bc := &BoundCheck{Outputs: n}
	cs.Bound = bc
	if tv.Layout != "" {
		tv.Mismatches = n
		cs.Mismatches, cs.Tensors, cs.Result = n, []Tensor{tv}, "fail"
		return cs, nil
	}
	inputs, err := in.Set.Inputs(t.Cases[t.Profiles[0]])
	if err != nil {
		return cs, err
	}
	problems, err := s.BoundProblems(t, inputs, claim)
	if err != nil {
		return cs, fmt.Errorf("task %s: %w", t.Name, err)
	}
	g := outputValues(y)
	var first []Mismatch
	outside := func(idx int, exact, ulpErr, boundULP float64) {
		tv.Mismatches++
		if len(first) >= in.MaxMismatches {
			return
		}
		first = append(first, Mismatch{Tensor: want.Name, Index: idx, Position: unravel(idx, want.Shape),
			Expected: Code{Code: valueBits(exact, want.DType), Value: fmt.Sprint(exact), Fields: fmt.Sprintf("the exact value, rounded; bound %.4g ulp", boundULP)},
			Got:      Code{Code: valueBits(g[idx], want.DType), Value: fmt.Sprint(g[idx]), Fields: fmt.Sprintf("error %.4g ulp, outside the bound", ulpErr)}})
	}
	for _, p := range problems {
		k := len(p.X)
		w := append([]float64(nil), p.W...)
		// Outputs with a non-finite term have no exact value: they are
		// judged here, and their weights zeroed for the exact products.
		nonFinite := map[int]bool{}
		for r := 0; r < p.N; r++ {
			nan, pos, neg, finite := termClass(p.W[r*k:(r+1)*k], p.X)
			if finite {
				continue
			}
			nonFinite[r] = true
			bc.NonFinite++
			for i := r * k; i < (r+1)*k; i++ {
				w[i] = 0
			}
			v := g[p.Offset+r]
			switch {
			case math.IsNaN(v), math.IsInf(v, 1) && pos && !nan, math.IsInf(v, -1) && neg && !nan:
				bc.Within++
			default:
				want := math.NaN()
				if !nan && pos != neg {
					want = math.Inf(1)
					if neg {
						want = math.Inf(-1)
					}
				}
				outside(p.Offset+r, want, math.Inf(1), 0)
			}
		}
		if len(nonFinite) == p.N {
			continue
		}
		x := append([]float64(nil), p.X...)
		for i, v := range x {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				x[i] = 0 // every row reading it is non-finite, judged above
			}
		}
		gs := make([]float64, p.N)
		copy(gs, g[p.Offset:p.Offset+p.N])
		for r := range nonFinite {
			gs[r] = 0
		}
		out, err := in.Reference.Run(ctx, suite.BoundOp, ops.Params{"mul32": claim.Params["mul32"], "round16": claim.Params["round16"], "out": claim.Params["out"]},
			ops.Tensors{"w": f64Tensor([]int{p.N, k}, w), "x": f64Tensor([]int{k}, x), "got": f64GotTensor(gs, claim.Model.Out)})
		if err != nil {
			if ctx.Err() != nil {
				return cs, ctx.Err()
			}
			return cs, &ClaimError{Task: t.Name, Profile: claim.Name, Err: err}
		}
		within, errULP, boundULP := out["within"].Data, f64s(out["error_ulp"]), f64s(out["bound_ulp"])
		exact := outputValues(out["exact"])
		if len(within) != p.N || len(errULP) != p.N || len(boundULP) != p.N || len(exact) != p.N {
			return cs, fmt.Errorf("task %s: %s returned %d verdicts for %d outputs", t.Name, suite.BoundOp, len(within), p.N)
		}
		for r := 0; r < p.N; r++ {
			if nonFinite[r] {
				continue
			}
			v := g[p.Offset+r]
			// An exact value beyond the output's range rounds to an
			// infinity: the kernel's overflow to it is within.
			if within[r] == 1 || math.IsInf(v, 0) && v == exact[r] {
				bc.Within++
				if !math.IsInf(v, 0) && closer(errULP[r], boundULP[r], bc.ClosestErrorULP, bc.ClosestBoundULP) {
					bc.ClosestErrorULP, bc.ClosestBoundULP = errULP[r], boundULP[r]
				}
				continue
			}
			if within[r] != 1 && (math.IsInf(v, 0) || math.IsNaN(v)) && suite.MayOverflow(p.W[r*k:(r+1)*k], p.X, claim.Model) {
				bc.Within++
				bc.Overflow++
				continue
			}
			outside(p.Offset+r, exact[r], errULP[r], boundULP[r])
		}
	}
	cs.Mismatches, cs.Tensors, cs.First = tv.Mismatches, []Tensor{tv}, first
	cs.Result = "pass"
	if cs.Mismatches > 0 {
		cs.Result = "fail"
	}
	return cs, nil
}

// closer reports whether error e is a larger fraction of bound b than e0
// is of b0 (a zero error is no fraction; a zero bound holds only zero
// errors).
func closer(e, b, e0, b0 float64) bool {
	if e == 0 {
		return false
	}
	if e0 == 0 {
		return true
	}
	return e*b0 > e0*b
}

// termClass classifies the terms w[i]*x[i]: finite when every factor is
// finite; else whether a term is NaN (a NaN factor, or an infinity times
// zero) and whether one is +Inf or -Inf.
func termClass(w, x []float64) (nan, pos, neg, finite bool) {
	finite = true
	for i, a := range w {
		b := x[i]
		if !math.IsNaN(a) && !math.IsInf(a, 0) && !math.IsNaN(b) && !math.IsInf(b, 0) {
			continue
		}
		finite = false
		switch p := a * b; {
		case math.IsNaN(p):
			nan = true
		case p > 0:
			pos = true
		default:
			neg = true
		}
	}
	return nan, pos, neg, finite
}

// outputValues decodes an F32 or F16 tensor exactly.
func outputValues(t tensor.Tensor) []float64 {
	var v []float64
	switch t.DType {
	case tensor.F16:
		for _, h := range t.Bits16() {
			v = append(v, float64(half.DecodeFP16(h)))
		}
	case tensor.F32:
		for i := 0; i+4 <= len(t.Data); i += 4 {
			v = append(v, float64(math.Float32frombits(binary.LittleEndian.Uint32(t.Data[i:]))))
		}
	}
	return v
}

func f64s(t tensor.Tensor) []float64 {
	v := make([]float64, len(t.Data)/8)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(t.Data[8*i:]))
	}
	return v
}

func f64Tensor(shape []int, v []float64) tensor.Tensor {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return tensor.Tensor{DType: tensor.F64, Shape: shape, Data: b}
}

// f64GotTensor is the kernel's outputs as gemv.exact's got: F16 or F32
// as the output precision (the values are exact in it).
func f64GotTensor(v []float64, out gemv.Precision) tensor.Tensor {
	if out == gemv.FP16 {
		h := make([]uint16, len(v))
		for i, x := range v {
			h[i] = half.EncodeFP16(float32(x))
		}
		return tensor.FromBits16(tensor.F16, []int{len(v)}, h)
	}
	f := make([]float32, len(v))
	for i, x := range v {
		f[i] = float32(x)
	}
	return tensor.FromF32([]int{len(v)}, f)
}

// valueBits spells v's bits in the output dtype.
func valueBits(v float64, dtype string) string {
	if dtype == string(tensor.F16) {
		return fmt.Sprintf("0x%04x", half.EncodeFP16(float32(v)))
	}
	return fmt.Sprintf("0x%08x", math.Float32bits(float32(v)))
}

func unravel(i int, shape []int) []int {
	p := make([]int, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] > 0 {
			p[d] = i % shape[d]
			i /= shape[d]
		}
	}
	return p
}

// boundVerdict is the verdict of a bound-mode certificate: it always names
// the bound and says that it is not bit-exactness.
func boundVerdict(c *Certificate) string {
	outputs, within, nonFinite, overflow, tasks := 0, 0, 0, 0, len(c.Cases)
	maxErr, atBound := 0.0, 0.0
	for _, cs := range c.Cases {
		if b := cs.Bound; b != nil {
			outputs += b.Outputs
			within += b.Within
			nonFinite += b.NonFinite
			overflow += b.Overflow
			if closer(b.ClosestErrorULP, b.ClosestBoundULP, maxErr, atBound) {
				maxErr, atBound = b.ClosestErrorULP, b.ClosestBoundULP
			}
		}
	}
	ts := "tasks"
	if tasks == 1 {
		ts = "task"
	}
	var b strings.Builder
	if c.Conforms {
		fmt.Fprintf(&b, "CONFORMS WITHIN THE RIGOROUS BOUND (not bit-exact) of bound model `%s`: all %d outputs of %d %s within the bound of the exact product for any float32 summation order", c.Against, outputs, tasks, ts)
		if maxErr > 0 {
			fmt.Fprintf(&b, " (closest to its bound: error %.4g ulp of a bound of %.4g ulp)", maxErr, atBound)
		}
	} else {
		fmt.Fprintf(&b, "DOES NOT CONFORM: OUTSIDE THE RIGOROUS BOUND (bound mode, not bit-exact) of bound model `%s`: %d of %d outputs of %d %s outside the bound of the exact product", c.Against, outputs-within, outputs, tasks, ts)
	}
	if a := c.BoundAllowance; a != nil {
		fmt.Fprintf(&b, "; the model's bound is %s of |y| at the median and at most %s over the %d outputs that are not tiny by construction",
			fmtRatio(a.MedianRatio), fmtRatio(a.MaxRatio), a.Informative)
		if a.ZeroWithin > 0 {
			fmt.Fprintf(&b, " (a zero output would be within it at %d of them)", a.ZeroWithin)
		}
		if a.Tiny > 0 {
			fmt.Fprintf(&b, "; %d outputs are tiny by construction (within the rounding any summation order of their terms allows) and cannot be told from zero", a.Tiny)
		}
	}
	switch {
	case nonFinite == 1:
		b.WriteString("; 1 output has a NaN or infinite term and no exact value")
	case nonFinite > 1:
		fmt.Fprintf(&b, "; %d outputs have a NaN or infinite term and no exact value", nonFinite)
	}
	switch {
	case overflow == 1:
		b.WriteString("; 1 output may overflow in some summation order (its terms' magnitudes reach the overflow threshold) and is infinite or NaN, which the bound allows there")
	case overflow > 1:
		fmt.Fprintf(&b, "; %d outputs may overflow in some summation order (their terms' magnitudes reach the overflow threshold) and are infinite or NaN, which the bound allows there", overflow)
	}
	return b.String()
}

// fmtRatio spells a ratio of the bound to |y|: "0.0073x".
func fmtRatio(r float64) string { return fmt.Sprintf("%.3gx", r) }

// checkBound is Verify's check of the bound mode: a bound-mode suite's
// certificate is in bound mode (and no other is), holds every case to the
// claimed model with a summary whose counts give the case's, and gives one
// profile verdict, the model's.
func checkBound(c *Certificate, s *suite.Suite, set *golden.Set) error {
	if (c.Mode == ModeBound) != s.Bound {
		return reject("mode %q, but suite %s is %s", c.Mode, s.Name, map[bool]string{true: "a bound-mode suite", false: "bit-exact"}[s.Bound])
	}
	if !s.Bound {
		for _, cs := range c.Cases {
			if cs.Bound != nil {
				return reject("task %s has a bound summary in a bit-exact certificate", cs.Task)
			}
		}
		if c.BoundAllowance != nil {
			return reject("a bit-exact certificate carries a bound allowance")
		}
		return nil
	}
	claim, err := s.ParseBound(c.Against)
	if err != nil || c.Claimed != c.Against || claim.Name != c.Against {
		return reject("bound model %q (claimed %q) is not a well-formed claim in its canonical spelling: %v", c.Against, c.Claimed, err)
	}
	al, err := s.CheckBoundModel(set, claim)
	if err != nil {
		return reject("%v", err)
	}
	if c.BoundAllowance == nil || *c.BoundAllowance != al {
		return reject("bound allowance %+v, but the model allows %+v on this golden set", c.BoundAllowance, al)
	}
	if len(c.Profiles) != 1 || c.Profiles[0].Profile != c.Against {
		return reject("a bound-mode certificate gives one verdict, the bound model's")
	}
	for _, cs := range c.Cases {
		b := cs.Bound
		if b == nil || b.Outputs != cs.Elements || b.Within < 0 || b.Within > b.Outputs || b.Outputs-b.Within != cs.Mismatches ||
			b.NonFinite < 0 || b.NonFinite > b.Outputs || b.Overflow < 0 || b.Overflow > b.Outputs || b.ClosestErrorULP > b.ClosestBoundULP {
			return reject("task %s: bound summary %+v does not give its %d outputs and %d outside the bound", cs.Task, b, cs.Elements, cs.Mismatches)
		}
		if cs.Expected != ExpectedComputed {
			return reject("task %s: a bound-mode verdict is computed, not %s", cs.Task, cs.Expected)
		}
	}
	return nil
}
