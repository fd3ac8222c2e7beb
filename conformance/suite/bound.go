package suite

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/awq"
	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/fp8"
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
// GEMV's scale decode, choose how the inputs decode).
func (s *Suite) BoundProblems(t Task, in ops.Tensors, claim BoundClaim) ([]BoundProblem, error) {
	switch s.Op {
	case "gemv.exact":
		return exactProblems(in)
	case "gemv.mxfp4_q8_1":
		return mxfp4Problems(in)
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
		return sparseProblems(in, claim.Params["scale_decode"] == "dgx_lut")
	}
	return nil, fmt.Errorf("suite %s: op %s has no bound mode", s.Name, s.Op)
}

// floats decodes an F16, F32 or F64 tensor exactly.
func floats(t tensor.Tensor, name string) ([]float64, error) {
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("tensor %q: %w", name, err)
	}
	v := make([]float64, t.Len())
	switch t.DType {
	case tensor.F16:
		for i, h := range t.Bits16() {
			v[i] = float64(half.DecodeFP16(h))
		}
	case tensor.F32:
		for i := range v {
			v[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(t.Data[4*i:])))
		}
	case tensor.F64:
		for i := range v {
			v[i] = math.Float64frombits(binary.LittleEndian.Uint64(t.Data[8*i:]))
		}
	default:
		return nil, fmt.Errorf("tensor %q: dtype %s, want F16, F32 or F64", name, t.DType)
	}
	return v, nil
}

func exactProblems(in ops.Tensors) ([]BoundProblem, error) {
	wt, xt := in["w"], in["x"]
	if len(wt.Shape) != 2 || len(xt.Shape) != 1 || xt.Shape[0] != wt.Shape[1] {
		return nil, fmt.Errorf("tensors w %v and x %v: want [N K] and [K]", wt.Shape, xt.Shape)
	}
	w, err := floats(wt, "w")
	if err != nil {
		return nil, err
	}
	x, err := floats(xt, "x")
	if err != nil {
		return nil, err
	}
	return []BoundProblem{{W: w, X: x, N: wt.Shape[0]}}, nil
}

// mxfp4Problems: element j of a block_mxfp4 row is kvalues_mxfp4[code] *
// 2^(e-128) (kvalues are twice the E2M1 values; e = 0xFF is NaN, as
// gemv.MXFP4Q81GEMV decodes it), and activation j of a block_q8_1 is
// qs[j] * fp16(d).
func mxfp4Problems(in ops.Tensors) ([]BoundProblem, error) {
	w, act := in["w"], in["act"]
	if err := w.Expect("w", tensor.U8, -1, -1, gemv.MXFP4BlockBytes); err != nil {
		return nil, err
	}
	n, nb := w.Shape[0], w.Shape[1]
	if err := act.Expect("act", tensor.U8, nb, gemv.Q81BlockBytes); err != nil {
		return nil, err
	}
	k := nb * gemv.QK
	x := make([]float64, k)
	for b := 0; b < nb; b++ {
		blk := act.Data[b*gemv.Q81BlockBytes:]
		d := float64(half.DecodeFP16(binary.LittleEndian.Uint16(blk)))
		for j := 0; j < gemv.QK; j++ {
			x[b*gemv.QK+j] = float64(int8(blk[4+j])) * d
		}
	}
	wf := make([]float64, n*k)
	for r := 0; r < n; r++ {
		for b := 0; b < nb; b++ {
			blk := w.Data[(r*nb+b)*gemv.MXFP4BlockBytes:]
			sc := math.NaN()
			if blk[0] != 0xFF {
				sc = math.Ldexp(1, int(blk[0])-128)
			}
			row := wf[r*k+b*gemv.QK:]
			for j := 0; j < 16; j++ {
				row[j] = float64(gemv.KValuesMXFP4[blk[1+j]&15]) * sc
				row[j+16] = float64(gemv.KValuesMXFP4[blk[1+j]>>4]) * sc
			}
		}
	}
	return []BoundProblem{{W: wf, X: x, N: n}}, nil
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
	xf, err := floats(x, "x")
	if err != nil {
		return nil, err
	}
	return []BoundProblem{{W: w, X: xf, N: oc}}, nil
}

// sparseProblems: for active expert a (e = experts[a]), output [a, n] is
// Σ_k W_e[k, n] * act[a, k] with W_e's kept values E2M1(code) *
// E4M3(scale) * global[e] (exact: the reference's float32 rounding of
// scale * global is one of the model's mul32 roundings), 0 where 2:4
// dropped. dgx decodes scale bytes 0x7F/0xFF as ±480 (dgx-vllm's host
// table) instead of NaN.
func sparseProblems(in ops.Tensors, dgx bool) ([]BoundProblem, error) {
	comp, meta, scales := in["comp"], in["meta"], in["scales"]
	if err := comp.Expect("comp", tensor.U8, -1, -1, -1); err != nil {
		return nil, err
	}
	e, k, n := comp.Shape[0], 4*comp.Shape[1], comp.Shape[2]
	if k%8 != 0 {
		return nil, fmt.Errorf("tensor \"comp\": shape %v: K must be a multiple of 8", comp.Shape)
	}
	if err := meta.Expect("meta", tensor.U8, e, k/8, n); err != nil {
		return nil, err
	}
	if err := scales.Expect("scales", tensor.U8, e, -1, n); err != nil {
		return nil, err
	}
	ns := scales.Shape[1]
	if ns == 0 || k%ns != 0 {
		return nil, fmt.Errorf("tensor \"scales\": shape %v: %d scale blocks do not divide K=%d", scales.Shape, ns, k)
	}
	if err := in["global"].Expect("global", tensor.F32, e); err != nil {
		return nil, err
	}
	experts := in["experts"]
	if err := experts.Expect("experts", tensor.I32, -1); err != nil {
		return nil, err
	}
	act := in["act"]
	if err := act.Expect("act", tensor.F16); err != nil {
		return nil, err
	}
	a := experts.Shape[0]
	if !(len(act.Shape) == 1 && act.Shape[0] == k) && !(len(act.Shape) == 2 && act.Shape[0] == a && act.Shape[1] == k) {
		return nil, fmt.Errorf("tensor \"act\": shape %v, want [%d] or [%d %d]", act.Shape, k, a, k)
	}
	glob, actb := in["global"].F32(), act.Bits16()
	var ps []BoundProblem
	for ai, ex := range experts.I32() {
		if ex < 0 || int(ex) >= e {
			return nil, fmt.Errorf("experts[%d]=%d out of range [0, %d)", ai, ex, e)
		}
		ei := int(ex)
		off := 0
		if len(act.Shape) == 2 {
			off = ai * k
		}
		x := make([]float64, k)
		for i := range x {
			x[i] = float64(half.DecodeFP16(actb[off+i]))
		}
		w := make([]float64, n*k)
		for col := 0; col < n; col++ {
			row := w[col*k : (col+1)*k]
			for q := 0; q < k/4; q++ {
				c := comp.Data[(ei*(k/4)+q)*n+col]
				m := meta.Data[(ei*(k/8)+q/2)*n+col] >> (4 * uint(q%2))
				sb := scales.Data[(ei*ns+(4*q)/(k/ns))*n+col]
				sv := float64(fp8.E4M3.Decode(sb))
				if dgx && sb&0x7F == 0x7F {
					sv = math.Copysign(480, float64(int8(sb)))
				}
				sv *= float64(glob[ei])
				row[4*q+int(m&3)] += float64(fp4.Decode(c&15)) * sv
				row[4*q+int(m>>2&3)] += float64(fp4.Decode(c>>4)) * sv
			}
		}
		ps = append(ps, BoundProblem{W: w, X: x, N: n, Offset: ai * n})
	}
	return ps, nil
}
