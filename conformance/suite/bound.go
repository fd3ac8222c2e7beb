package suite

import (
	"fmt"
	"strconv"

	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/awq"
	"github.com/bitexact/bitexact/refimpl/claim"
	"github.com/bitexact/bitexact/refimpl/gemv"
	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// BoundOp is the reference op that gives a bound-mode suite its verdict:
// the exact product and the rigorous error bound of every float32
// summation order (refimpl/gemv Bound).
const BoundOp = "gemv.exact"

// BoundOutput is the one tensor a bound-mode results file holds: the
// kernel's y, shaped as the family's output, F32 or F16 as the declared
// model's out says.
const BoundOutput = "y"

// BoundChoice is a key of a family's bound model besides mul32, round16
// and out, with the values it may take (the first is the default a named
// model uses).
type BoundChoice struct {
	Key    string
	Values []string
}

// maxBoundCount bounds round16 where no task gives a reduction length
// (Spec.ParseBound, before the suite is resolved): beyond it the bound
// says nothing a certificate should carry.
const maxBoundCount = 1 << 16

// boundFactors is the number of factors of one exact term of each op's
// products: a term meets at most one fewer rounded multiplication, so a
// model's mul32 is at most that. gemv.exact and gemv.awq multiply a
// weight by an activation (AWQ's weight is the dequantized fp16 value);
// MXFP4 x Q8_1 multiplies the integer dot product of a block by the
// E8M0 scale and the Q8_1 scale d8; the sparse NVFP4 GEMV multiplies an
// E2M1 weight, an fp16 activation, the E4M3 block scale and the float32
// global scale.
var boundFactors = map[string]int{"gemv.exact": 2, "gemv.awq": 2, "gemv.mxfp4_q8_1": 3, "gemv.sparse_fp4": 4}

// BoundClaim is a parsed bound model: what the kernel declares it may do.
type BoundClaim struct {
	// Name is the canonical spelling, "mul32=M,round16=R,out=fp32|fp16"
	// followed by the family's own keys (",scale_decode=...").
	Name  string
	Model gemv.BoundModel
	// Params are the gemv.exact parameters (mul32, round16, out) and the
	// family keys.
	Params ops.Params
}

// boundGrammar is the claim grammar of the suite's bound models: mul32
// from 0 to one fewer than the op's factors per term (boundFactors),
// round16 from 0 to maxRound16 (a term of a K-element reduction meets at
// most K-1 additions and its own product, so the resolved suite passes
// its longest reduction), out fp32 or fp16, then the family's keys
// (BoundKeys), each taking the values it lists.
func (s Spec) boundGrammar(maxRound16 int) *claim.Grammar {
	if maxRound16 <= 0 {
		maxRound16 = maxBoundCount
	}
	f := boundFactors[s.Op]
	g := &claim.Grammar{What: "bound model", Keys: []claim.Key{
		{Name: "mul32", Check: boundCount(max(f-1, 0), fmt.Sprintf("a term of %s has %d factors, so at most %d rounded multiplications", s.Op, f, max(f-1, 0)))},
		{Name: "round16", Check: boundCount(maxRound16, fmt.Sprintf("a term of a reduction of at most %d elements meets at most %d additions and its own product", maxRound16, maxRound16-1))},
		{Name: "out", Values: []string{"fp32", "fp16"}},
	}}
	for _, c := range s.BoundKeys {
		g.Keys = append(g.Keys, claim.Key{Name: c.Key, Values: c.Values})
	}
	return g
}

// boundCount checks a count from 0 to hi, the error saying why hi.
func boundCount(hi int, why string) func(string) error {
	return func(v string) error {
		if _, err := claim.ParseCount(v, 0, hi); err != nil {
			return fmt.Errorf("value %q, want a count from 0 to %d in decimal (%s)", v, hi, why)
		}
		return nil
	}
}

// ParseBound parses a bound model declared for a bound-mode suite under
// the one claim rule (refimpl/claim): mul32, round16 and out, then the
// family's keys (BoundKeys), each once, in any order (recorded in that
// order: Name), no spaces; mul32 and round16 are decimal counts within
// their caps (boundGrammar), out is fp32 or fp16. A resolved suite caps
// round16 by its longest reduction (Suite.ParseBound).
func (s Spec) ParseBound(p string) (BoundClaim, error) {
	return s.parseBound(p, 0)
}

// ParseBound is Spec.ParseBound with round16 capped by the suite's
// longest reduction, MaxK, and by maxRound16.
func (s *Suite) ParseBound(p string) (BoundClaim, error) {
	return s.parseBound(p, min(s.MaxK, maxRound16))
}

// maxRound16 is the most fp16 roundings a model may declare whatever the
// reduction: from 1024 on, gamma(round16, 2^-11) is at least 1 and the
// bound is at least the terms' own magnitude, bounding nothing.
const maxRound16 = 1023

func (s Spec) parseBound(p string, maxRound16 int) (BoundClaim, error) {
	if !s.Bound {
		return BoundClaim{}, fmt.Errorf("suite %s is not a bound-mode suite", s.Name)
	}
	c, err := s.boundGrammar(maxRound16).Parse(p)
	if err != nil {
		return BoundClaim{}, err
	}
	bc := BoundClaim{Name: c.Canonical, Params: ops.Params{}}
	for k, v := range c.Values {
		bc.Params[k] = v
	}
	bc.Model.Mul32, _ = claim.ParseCount(c.Values["mul32"], 0, maxBoundCount)
	bc.Model.Round16, _ = claim.ParseCount(c.Values["round16"], 0, maxBoundCount)
	if c.Values["out"] == "fp16" {
		bc.Model.Out = gemv.FP16
	}
	return bc, nil
}

// BoundLayout is the results layout of task t under a bound model: one
// tensor y shaped as the family's output (the shape of the task's golden
// outputs), F16 for out=fp16, else F32.
func (s *Suite) BoundLayout(t Task, claim string) ([]golden.TensorInfo, error) {
	c, err := s.ParseBound(claim)
	if err != nil {
		return nil, err
	}
	outs := t.Cases[t.Profiles[0]].Outputs
	if len(outs) == 0 {
		return nil, fmt.Errorf("task %s: its golden case has no output", t.Name)
	}
	d := tensor.F32
	if c.Model.Out == gemv.FP16 {
		d = tensor.F16
	}
	return []golden.TensorInfo{{Name: BoundOutput, DType: string(d), Shape: append([]int{}, outs[0].Shape...)}}, nil
}

// BoundProblem is one exact matrix-vector product of a task: y[Offset+r]
// is held to Σ_k W[r*len(X)+k] * X[k] for r < N. W and X are the exact
// real values the kernel's inputs encode (a product of decoded fields is
// exact in float64); a NaN or infinite weight is kept as such.
type BoundProblem struct {
	W, X   []float64
	N      int
	Offset int
}

// BoundProblems decodes the inputs of task t of a bound-mode suite into
// its exact products under claim (whose family keys, such as the sparse
// GEMV's scale decode, choose how the inputs decode): the float inputs
// themselves for gemv.exact, refimpl's operands (ops.GEMVTerms) for the
// MXFP4 and sparse NVFP4 GEMVs, awq.Dequantize's fp16 weights for AWQ.
func (s *Suite) BoundProblems(t Task, in ops.Tensors, claim BoundClaim) ([]BoundProblem, error) {
	switch s.Op {
	case "gemv.exact":
		return exactProblems(in)
	case "gemv.mxfp4_q8_1":
		return termsProblems(s.Op, nil, in)
	case "gemv.awq":
		g := 128
		if v, ok := t.Params["group"]; ok {
			var err error
			if g, err = strconv.Atoi(v); err != nil || g <= 0 {
				return nil, fmt.Errorf("task %s: group %q", t.Name, v)
			}
		}
		return awqProblems(in, g)
	case "gemv.sparse_fp4":
		// The scale decode is the model's: dgx_lut reads 0x7F/0xFF as
		// +-480 (dgx-vllm's host table) instead of NaN.
		return termsProblems(s.Op, ops.Params{"scale_decode": claim.Params["scale_decode"]}, in)
	}
	return nil, fmt.Errorf("suite %s: op %s has no bound mode", s.Name, s.Op)
}

func exactProblems(in ops.Tensors) ([]BoundProblem, error) {
	wt, xt := in["w"], in["x"]
	if len(wt.Shape) != 2 || len(xt.Shape) != 1 || xt.Shape[0] != wt.Shape[1] {
		return nil, fmt.Errorf("tensors w %v and x %v: want [N K] and [K]", wt.Shape, xt.Shape)
	}
	w, err := ops.ExactFloats(wt, "w")
	if err != nil {
		return nil, err
	}
	x, err := ops.ExactFloats(xt, "x")
	if err != nil {
		return nil, err
	}
	return []BoundProblem{{W: w, X: x, N: wt.Shape[0]}}, nil
}

// termsProblems is the exact products refimpl gives for op
// (ops.GEMVTerms: the MXFP4 x Q8_1 and sparse NVFP4 GEMVs), outputs that
// share a row of activations grouped into one problem.
func termsProblems(op string, p ops.Params, in ops.Tensors) ([]BoundProblem, error) {
	t, err := ops.GEMVTerms(op, p, in)
	if err != nil {
		return nil, err
	}
	var ps []BoundProblem
	for i, w := range t.W {
		x := t.X[i]
		if n := len(ps); n > 0 && sameRow(ps[n-1].X, x) {
			ps[n-1].W = append(ps[n-1].W, w...)
			ps[n-1].N++
			continue
		}
		ps = append(ps, BoundProblem{W: append([]float64(nil), w...), X: x, N: 1, Offset: i})
	}
	return ps, nil
}

// sameRow reports whether a and b are the same row of activations (Terms
// shares one slice among the outputs that read it).
func sameRow(a, b []float64) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// awqProblems: the weights are awq.Dequantize's fp16 values (the
// reference's dequantization, vLLM's GEMM layout), W [IC, OC] read as OC
// rows of IC.
func awqProblems(in ops.Tensors, g int) ([]BoundProblem, error) {
	x, qw, qz, sc := in["x"], in["qweight"], in["qzeros"], in["scales"]
	if err := x.Expect("x", tensor.F16, -1); err != nil {
		return nil, err
	}
	ic := x.Shape[0]
	if err := qw.Expect("qweight", tensor.I32, ic, -1); err != nil {
		return nil, err
	}
	oc := 8 * qw.Shape[1]
	if ic%g != 0 {
		return nil, fmt.Errorf("IC=%d is not a multiple of group %d", ic, g)
	}
	if err := qz.Expect("qzeros", tensor.I32, ic/g, oc/8); err != nil {
		return nil, err
	}
	if err := sc.Expect("scales", tensor.F16, ic/g, oc); err != nil {
		return nil, err
	}
	wh, err := awq.Dequantize(qw.I32(), qz.I32(), sc.Bits16(), ic, oc, g)
	if err != nil {
		return nil, err
	}
	w := make([]float64, oc*ic)
	for i := 0; i < ic; i++ {
		for o := 0; o < oc; o++ {
			w[o*ic+i] = float64(half.DecodeFP16(wh[i*oc+o]))
		}
	}
	xf, err := ops.ExactFloats(x, "x")
	if err != nil {
		return nil, err
	}
	return []BoundProblem{{W: w, X: xf, N: oc}}, nil
}
