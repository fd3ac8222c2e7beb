package certificate

import (
	"math"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/gemv"
	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// scheduleOutputs returns, per task of bound suite s, the golden output y
// of the first case whose y has dtype d (for gemv.exact: its exact
// output, the exact product rounded), renamed y.
func scheduleOutputs(t *testing.T, set *golden.Set, s *suite.Suite, d tensor.DType, caseFilter string) map[string]ops.Tensors {
	t.Helper()
	out := map[string]ops.Tensors{}
	for _, tk := range s.Tasks {
		var names []string
		// caseFilter is alternatives "a|b": the first that names a case
		// of the task.
		for _, f := range strings.Split(caseFilter, "|") {
			for _, p := range tk.Profiles {
				if strings.Contains(tk.Cases[p].Name, f) {
					names = append(names, p)
				}
			}
			if len(names) > 0 {
				break
			}
		}
		for _, p := range names {
			c := tk.Cases[p]
			e, err := set.Expected(c)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range e {
				if v.DType == d {
					v.Logical = ""
					out[tk.Name] = ops.Tensors{suite.BoundOutput: v}
				}
			}
			if _, ok := out[tk.Name]; ok {
				break
			}
		}
		if _, ok := out[tk.Name]; !ok {
			t.Fatalf("suite %s task %s: no golden case with a %s output (filter %q)", s.Name, tk.Name, d, caseFilter)
		}
	}
	return out
}

// TestBoundScheduleOutputsPass: the reference's own bit-exact schedule
// outputs (deterministic kernels) are within each bound suite's named
// models, and the certificate says it is a bound, not bit-exactness.
func TestBoundScheduleOutputsPass(t *testing.T) {
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		suite, model, filter string
		d                    tensor.DType
	}{
		{"gemv-bound", "mul32=1,round16=0,out=fp32", "", tensor.F32},
		{"gemv-f16-bound", "mul32=0,round16=0,out=fp32", "", tensor.F32},
		{"gemv-f16-bound", "mul32=0,round16=0,out=fp16", "", tensor.F16},
		{"gemv-bound", "mul32=1,round16=0,out=fp16", "", tensor.F16},
		{"gemv-mxfp4-bound", "mul32=2,round16=0,out=fp32", ".mmvq", tensor.F32},
		{"gemv-mxfp4-bound", "mul32=2,round16=0,out=fp32", ".seq", tensor.F32},
		{"gemv-awq-bound", "mul32=0,round16=0,out=fp32", ".warp32", tensor.F32},
		{"gemv-awq-bound", "mul32=0,round16=0,out=fp16", ".seq-f16out", tensor.F16},
		{"gemv-sparse-fp4-bound", "mul32=2,round16=1,out=fp16,scale_decode=e4m3fn", ".sparse-v7-nofma", tensor.F16},
		{"gemv-sparse-fp4-bound", "mul32=2,round16=1,out=fp16,scale_decode=dgx_lut", ".dgx_lut|.sparse-v7", tensor.F16},
	} {
		t.Run(c.suite+"/"+c.filter+"/"+c.model, func(t *testing.T) {
			if testing.Short() && !strings.HasPrefix(c.suite, "gemv-bound") && !strings.HasPrefix(c.suite, "gemv-f16") && c.filter != ".mmvq" {
				t.Skip("-short: the dense and MXFP4 suites only")
			}
			s, err := suite.Resolve(set, c.suite)
			if err != nil {
				t.Fatal(err)
			}
			out := scheduleOutputs(t, set, s, c.d, c.filter)
			cert, err := Build(Input{Suite: s, Set: set, GoldenSHA256: ReleasedGoldenSHA256(), ReferenceWasm: "w", Reference: golden.Native{},
				Backend: "results", Implementation: "reference schedule", Claimed: c.model, Outputs: out})
			if err != nil {
				t.Fatal(err)
			}
			if !cert.Conforms || cert.Mode != ModeBound || cert.Against != c.model {
				t.Fatalf("conforms=%v mode %q against %q: %s", cert.Conforms, cert.Mode, cert.Against, cert.Verdict)
			}
			want := "CONFORMS WITHIN THE RIGOROUS BOUND (not bit-exact) of bound model `" + c.model + "`"
			if !strings.Contains(cert.Verdict, want) {
				t.Errorf("verdict %q lacks %q", cert.Verdict, want)
			}
			t.Log(cert.Verdict)
			// The unfused seq schedule overflows a float32 product on the
			// separation row whose exact sum is -2^127 (fused, it does not):
			// within the model only by the overflow rule.
			if c.filter == ".seq" && !strings.Contains(cert.Verdict, "may overflow in some summation order") {
				t.Errorf("seq's overflowing outputs are not reported as such: %s", cert.Verdict)
			}
			n := 0
			for _, cs := range cert.Cases {
				n += cs.Bound.Outputs
				if cs.Bound.Within != cs.Bound.Outputs || cs.Expected != ExpectedComputed {
					t.Errorf("task %s: %+v", cs.Task, cs.Bound)
				}
			}
			if n == 0 {
				t.Error("no outputs checked")
			}
			if err := Verify(cert, Context{Set: set, GoldenSHA256: ReleasedGoldenSHA256(), ReferenceWasm: "w"}); err != nil {
				t.Errorf("fresh certificate rejected: %v", err)
			}
		})
	}
}

// TestBoundPerturbedRowFails: one output moved past its bound fails the
// certificate with that row, its error and its bound; the rest stay
// within.
func TestBoundPerturbedRowFails(t *testing.T) {
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	s, err := suite.Resolve(set, "gemv-mxfp4-bound")
	if err != nil {
		t.Fatal(err)
	}
	const model = "mul32=2,round16=0,out=fp32"
	claim, err := s.ParseBound(model)
	if err != nil {
		t.Fatal(err)
	}
	out := scheduleOutputs(t, set, s, tensor.F32, ".mmvq")
	tk := s.Tasks[0]
	in, err := set.Inputs(tk.Cases[tk.Profiles[0]])
	if err != nil {
		t.Fatal(err)
	}
	ps, err := s.BoundProblems(tk, in, claim)
	if err != nil {
		t.Fatal(err)
	}
	const row = 7
	p := ps[0]
	k := len(p.X)
	y := out[tk.Name][suite.BoundOutput].F32()
	v, err := gemv.Bound(p.W[row*k:(row+1)*k], p.X, claim.Model, float64(y[row]))
	if err != nil || !v.Within {
		t.Fatalf("unperturbed row %d: %+v, %v", row, v, err)
	}
	// Step away from the exact value by more than the bound (in float32
	// steps, which are the ulps the bound is counted in within a binade).
	moved := float32(v.ExactValue)
	dir := float32(math.Inf(1))
	if moved < 0 {
		dir = float32(math.Inf(-1))
	}
	for i := 0; i < int(math.Ceil(v.BoundULP))+2; i++ {
		moved = math.Nextafter32(moved, dir)
	}
	y[row] = moved
	out[tk.Name] = ops.Tensors{suite.BoundOutput: tensor.FromF32(out[tk.Name][suite.BoundOutput].Shape, y)}
	cert, err := Build(Input{Suite: s, Set: set, GoldenSHA256: ReleasedGoldenSHA256(), ReferenceWasm: "w", Reference: golden.Native{},
		Backend: "results", Implementation: "perturbed", Claimed: model, Outputs: out})
	if err != nil {
		t.Fatal(err)
	}
	if cert.Conforms {
		t.Fatalf("perturbed output accepted: %s", cert.Verdict)
	}
	var cs Case
	for _, c := range cert.Cases {
		if c.Task == tk.Name {
			cs = c
		}
	}
	if cs.Mismatches != 1 || len(cs.First) != 1 || cs.First[0].Index != row || cs.Bound.Within != cs.Bound.Outputs-1 {
		t.Fatalf("case %+v", cs)
	}
	if f := cs.First[0]; !strings.Contains(f.Got.Fields, "outside the bound") || !strings.Contains(f.Expected.Fields, "bound ") {
		t.Errorf("row %d decoded as %+v", row, f)
	}
	for _, w := range []string{"DOES NOT CONFORM: OUTSIDE THE RIGOROUS BOUND (bound mode, not bit-exact)", "1 of"} {
		if !strings.Contains(cert.Verdict, w) {
			t.Errorf("verdict %q lacks %q", cert.Verdict, w)
		}
	}
	md := string(cert.Markdown())
	if !strings.Contains(md, "OUTSIDE THE RIGOROUS BOUND") || !strings.Contains(md, "outside the bound") {
		t.Errorf("markdown does not say bound:\n%s", md)
	}
	j, err := cert.JUnit()
	if err != nil || !strings.Contains(string(j), "outside the rigorous bound") {
		t.Errorf("JUnit does not say bound (%v):\n%s", err, j)
	}
	if err := Verify(cert, Context{Set: set, GoldenSHA256: ReleasedGoldenSHA256(), ReferenceWasm: "w"}); err != nil {
		t.Errorf("fresh certificate rejected: %v", err)
	}
	// The certificate says what the model allows, in every form.
	for form, text := range map[string]string{"verdict": cert.VerdictText(), "markdown": md, "junit": string(j)} {
		if !strings.Contains(text, "at the median and at most") || !strings.Contains(text, "not tiny by construction") {
			t.Errorf("%s does not say what the model allows:\n%s", form, text)
		}
	}
	if a := cert.BoundAllowance; a == nil || a.Informative == 0 || a.MedianRatio <= 0 || a.MaxRatio < a.MedianRatio {
		t.Errorf("bound allowance %+v", a)
	}
	// Edited and resealed: a bound certificate passed off as bit-exact,
	// or with a summary that does not give its counts, is rejected.
	for name, edit := range map[string]func(c *Certificate){
		"mode dropped":      func(c *Certificate) { c.Mode = "" },
		"within inflated":   func(c *Certificate) { c.Cases[0].Bound.Within = c.Cases[0].Bound.Outputs },
		"allowance dropped": func(c *Certificate) { c.BoundAllowance = nil },
		"allowance shrunk":  func(c *Certificate) { c.BoundAllowance.MaxRatio /= 2 },
		// A model too loose to certify, written into a certificate by
		// hand: Verify recomputes what it allows and refuses it.
		"loose model": func(c *Certificate) {
			c.Claimed, c.Against, c.Profiles[0].Profile = "mul32=0,round16=200,out=fp32", "mul32=0,round16=200,out=fp32", "mul32=0,round16=200,out=fp32"
			for i := range c.Cases {
				c.Cases[i].Profile = c.Against
			}
		},
		"reordered claim": func(c *Certificate) {
			c.Claimed, c.Against, c.Profiles[0].Profile = "out=fp32,mul32=1,round16=0", "out=fp32,mul32=1,round16=0", "out=fp32,mul32=1,round16=0"
			for i := range c.Cases {
				c.Cases[i].Profile = c.Against
			}
		},
	} {
		b, err := cert.JSON()
		if err != nil {
			t.Fatal(err)
		}
		c, err := Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		edit(c)
		c.Verdict = verdictLine(c)
		if err := c.seal(); err != nil {
			t.Fatal(err)
		}
		if err := Verify(c, Context{Set: set, GoldenSHA256: ReleasedGoldenSHA256(), ReferenceWasm: "w"}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestBoundClaims: a bound-mode suite needs a well-formed model.
func TestBoundClaims(t *testing.T) {
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	s, err := suite.Resolve(set, "gemv-bound")
	if err != nil {
		t.Fatal(err)
	}
	out := scheduleOutputs(t, set, s, tensor.F32, "")
	for _, c := range []struct{ claim, want string }{
		{"", "must declare their bound model"},
		{"mul32=1", `key "round16": missing`},
		{"mul32=1, round16=0,out=fp32", `write it as "mul32=1,round16=0,out=fp32"`},
		{"mul32=1,round16=0,out=fp32,mul32=1", `key "mul32": given twice`},
		{"mul32=1,round16=0,out=fp32,scale_decode=e4m3fn", `key "scale_decode": unknown key`},
		{"mul32=-1,round16=0,out=fp32", "want a count"},
		{"mul32=2,round16=0,out=fp32", "a term of gemv.exact has 2 factors, so at most 1 rounded multiplications"},
		{"mul32=0,round16=1024,out=fp32", "want a count from 0 to 256"},
		{"mul32=0,round16=200,out=fp32", "too loose for suite gemv-bound"},
		{"mul32=1,round16=0,out=bf16", "want one of fp32, fp16"},
		{"mul32=01,round16=0,out=fp32", "want a count"},
	} {
		_, err := Build(Input{Suite: s, Set: set, GoldenSHA256: ReleasedGoldenSHA256(), ReferenceWasm: "w", Reference: golden.Native{},
			Backend: "results", Implementation: "k", Claimed: c.claim, Outputs: out})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("claim %q: error %v, want containing %q", c.claim, err, c.want)
		}
	}
	// Reordered keys name the same model, recorded canonically.
	cert, err := Build(Input{Suite: s, Set: set, GoldenSHA256: ReleasedGoldenSHA256(), ReferenceWasm: "w", Reference: golden.Native{},
		Backend: "results", Implementation: "k", Claimed: "out=fp32,round16=0,mul32=1", Outputs: out})
	if err != nil || cert.Claimed != "mul32=1,round16=0,out=fp32" || cert.Against != cert.Claimed || !cert.Conforms {
		t.Errorf("reordered model: %v, claimed %q against %q", err, cert.Claimed, cert.Against)
	}
	// An output in the wrong precision for its model fails as a layout.
	cert, err = Build(Input{Suite: s, Set: set, GoldenSHA256: ReleasedGoldenSHA256(), ReferenceWasm: "w", Reference: golden.Native{},
		Backend: "results", Implementation: "k", Claimed: "mul32=1,round16=0,out=fp16", Outputs: out})
	if err != nil || cert.Conforms || cert.Cases[0].Tensors[0].Layout == "" {
		t.Errorf("F32 outputs under out=fp16: %v, %+v", err, cert)
	}
}

// TestBoundF16Schedules: the dense fp16 GEMV of every named float32
// schedule (refimpl/gemv F16GEMV, the AWQ GEMV's product) conforms to
// gemv-f16-bound under the model of its output precision.
func TestBoundF16Schedules(t *testing.T) {
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	s, err := suite.Resolve(set, "gemv-f16-bound")
	if err != nil {
		t.Fatal(err)
	}
	tk := s.Tasks[0]
	in, err := set.Inputs(tk.Cases[tk.Profiles[0]])
	if err != nil {
		t.Fatal(err)
	}
	w, x := in["w"], in["x"]
	n, k := w.Shape[0], w.Shape[1]
	wb := w.Bits16()
	wt := make([]uint16, k*n) // F16GEMV's [IC, OC]
	for r := 0; r < n; r++ {
		for i := 0; i < k; i++ {
			wt[i*n+r] = wb[r*k+i]
		}
	}
	for _, name := range []string{"seq", "seq-fma", "tree64", "warp32", "seq-f16out"} {
		sch, err := gemv.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		y, err := gemv.F16GEMV(wt, x.Bits16(), k, n, sch)
		if err != nil {
			t.Fatal(err)
		}
		model, yt := "mul32=0,round16=0,out=fp32", tensor.FromF32([]int{n}, y)
		if sch.Out == gemv.FP16 {
			model = "mul32=0,round16=0,out=fp16"
			h := make([]uint16, n)
			for i, v := range y {
				h[i] = half.EncodeFP16(v) // exact: v is an fp16 value
			}
			yt = tensor.FromBits16(tensor.F16, []int{n}, h)
		}
		cert, err := Build(Input{Suite: s, Set: set, GoldenSHA256: ReleasedGoldenSHA256(), ReferenceWasm: "w", Reference: golden.Native{},
			Backend: "results", Implementation: name, Claimed: model, Outputs: map[string]ops.Tensors{tk.Name: {suite.BoundOutput: yt}}})
		if err != nil {
			t.Fatal(err)
		}
		if !cert.Conforms || !strings.HasPrefix(cert.Verdict, "CONFORMS WITHIN THE RIGOROUS BOUND (not bit-exact)") {
			t.Errorf("schedule %s under %s: %s", name, model, cert.Verdict)
		}
	}
}
