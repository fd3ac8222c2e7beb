package suite

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/awq"
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

// The keys every bound model spells, in this order.
var boundKeys = []string{"mul32", "round16", "out"}

// maxBoundCount bounds mul32 and round16: beyond it the bound says
// nothing a certificate should carry (gemv.Bound itself refuses n*u >= 1).
const maxBoundCount = 1 << 16

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

// ParseBound parses a bound model declared for a bound-mode suite. It
// must be spelled canonically: mul32, round16 and out, then the family's
// keys (BoundKeys), each once, in that order, "k=v" joined by commas;
// mul32 and round16 are decimal counts, out is fp32 or fp16.
func (s Spec) ParseBound(p string) (BoundClaim, error) {
	if !s.Bound {
		return BoundClaim{}, fmt.Errorf("suite %s is not a bound-mode suite", s.Name)
	}
	keys := append([]string{}, boundKeys...)
	allowed := map[string][]string{"out": {"fp32", "fp16"}}
	for _, c := range s.BoundKeys {
		keys = append(keys, c.Key)
		allowed[c.Key] = c.Values
	}
	want := strings.Join(keys, "=..,") + "=.."
	parts := strings.Split(p, ",")
	if len(parts) != len(keys) {
		return BoundClaim{}, fmt.Errorf("bound model %q: want %d keys spelled %s", p, len(keys), want)
	}
	c := BoundClaim{Name: p, Params: ops.Params{}}
	for i, part := range parts {
		k, v, ok := strings.Cut(part, "=")
		if !ok || k != keys[i] {
			return BoundClaim{}, fmt.Errorf("bound model %q: key %d is %q, want %s (spelled %s)", p, i+1, part, keys[i], want)
		}
		switch k {
		case "mul32", "round16":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > maxBoundCount || strconv.Itoa(n) != v {
				return BoundClaim{}, fmt.Errorf("bound model %q: %s=%q, want a count from 0 to %d", p, k, v, maxBoundCount)
			}
			if k == "mul32" {
				c.Model.Mul32 = n
			} else {
				c.Model.Round16 = n
			}
		default:
			okv := false
			for _, a := range allowed[k] {
				okv = okv || a == v
			}
			if !okv {
				return BoundClaim{}, fmt.Errorf("bound model %q: %s=%q, want one of %s", p, k, v, strings.Join(allowed[k], ", "))
			}
			if k == "out" && v == "fp16" {
				c.Model.Out = gemv.FP16
			}
		}
		c.Params[k] = v
	}
	return c, nil
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
