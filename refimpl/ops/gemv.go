package ops

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/bitexact/bitexact/refimpl/gemv"
	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

func init() {
	schedDoc := func(def string) string {
		return "a named schedule (" + fmt.Sprint(gemv.Names()) + ") or a spec string \"chunk=..,lanes=..,group=..,fma=0|1,acc=..,partial=..,reduce=..,out=..\"; default " + def
	}
	register(Op{
		Name: "gemv.sparse_fp4",
		Doc: "2:4-sparse NVFP4 batched MoE GEMV in the dgx-vllm v7 transposed layout, bit-exact under the declared schedule: " +
			"comp U8 [E,K/4,N] (v(i0)|v(i1)<<4), meta U8 [E,K/8,N] (i0|i1<<2 of group 2p, <<4 of group 2p+1), scales U8 e4m3 [E,K/S,N] (one per K/S elements, 16 for NVFP4), " +
			"global F32 [E], act F16 [A,K] or [K], experts I32 [A] -> y [A,N] (F16 when the schedule's out is fp16, else F32)",
		Params: map[string]string{
			"schedule":     schedDoc("sparse-v7"),
			"scale_decode": "e4m3fn (0x7F/0xFF are NaN; default) | dgx_lut (dgx-vllm host table: 0x7F = 480, 0xFF = -480)",
		},
		Defaults: Params{"schedule": "sparse-v7", "scale_decode": "e4m3fn"},
		Choices:  map[string][]Choice{"schedule": scheduleChoices()},
		Inputs:   []string{"comp", "meta", "scales", "global", "act", "experts"},
		Outputs:  []string{"y"},
		Run:      runSparseFP4,
	})
	register(Op{
		Name: "gemv.mxfp4_q8_1",
		Doc: "llama.cpp MXFP4 x Q8_1 GEMV (vec_dot_mxfp4_q8_1), bit-exact under the declared schedule: " +
			"w U8 [N,K/32,17] (block_mxfp4: e, qs[16], qs[j] low nibble = element j, high = j+16), act U8 [K/32,36] (block_q8_1: fp16 d, fp16 s, int8 qs[32]) -> y [N] (F32, or F16 for an fp16-out schedule)",
		Params:   map[string]string{"schedule": schedDoc("mmvq")},
		Defaults: Params{"schedule": "mmvq"},
		Choices:  map[string][]Choice{"schedule": scheduleChoices()},
		Inputs:   []string{"w", "act"},
		Outputs:  []string{"y"},
		Run:      runMXFP4Q81,
	})
	register(Op{
		Name: "gemv.awq",
		Doc: "AWQ W4A16 GEMV: awq.Dequantize (vLLM GEMM layout) to fp16 W [IC,OC], then y = x W in float32 under the declared schedule: " +
			"qweight I32 [IC,OC/8], qzeros I32 [IC/G,OC/8], scales F16 [IC/G,OC], x F16 [IC] -> y [OC] (F16 for an fp16-out schedule such as the default, else F32)",
		Params: map[string]string{
			"schedule": schedDoc("seq-f16out"),
			"group":    "AWQ group size G along IC (default 128)",
		},
		Defaults: Params{"schedule": "seq-f16out", "group": "128"},
		Choices:  map[string][]Choice{"schedule": scheduleChoices()},
		Inputs:   []string{"qweight", "qzeros", "scales", "x"},
		Outputs:  []string{"y"},
		Run:      runAWQ,
	})
	register(Op{
		Name: "gemv.exact",
		Doc: "exact y = W x (no rounding until the end) for kernels whose order is unknown: w [N,K] and x [K] (F16, F32 or F64, finite) -> exact [N] " +
			"(the exact result rounded to nearest even in out: F32 or F16); with the optional input got [N] (F32 or F16) also within U8 [N] " +
			"(1 when |got - y| <= the rigorous bound for any float32 summation order), error_ulp F64 [N] and bound_ulp F64 [N]. A verdict of 'within bound', never 'bit-exact'",
		Params: map[string]string{
			"mul32":   "float32-rounded multiplications on each term's path (default 0: exact products; 1: rounded float32 products, bound gamma_K)",
			"round16": "fp16 roundings on each term's path, e.g. 1 for fp16 split-K partials (default 0)",
			"out":     "fp32 (default) | fp16: the kernel's output precision",
		},
		Defaults: Params{"mul32": "0", "round16": "0", "out": "fp32"},
		Inputs:   []string{"w", "x"},
		Outputs:  []string{"exact", "within", "error_ulp", "bound_ulp"},
		Run:      runExact,
	})
}

func gemvSchedule(p Params) (gemv.Schedule, error) {
	s, err := gemv.Lookup(p["schedule"])
	if err != nil {
		return gemv.Schedule{}, fmt.Errorf("parameter schedule: %w", err)
	}
	return s, nil
}

// gemvOut wraps results already rounded to s.Out as F16 or F32.
//
// An fp16 NaN result is stored as 0x7FFF, the NaN that CUDA's
// __float2half_rn writes (measured on the H100, as refimpl/ggml's cudaHalf
// pins it): GEMVs with fp16 output are CUDA kernels' contract, and a NaN
// carries no value to preserve, only a bit pattern to agree on.
func gemvOut(y []float32, shape []int, out gemv.Precision) tensor.Tensor {
	if out == gemv.FP16 {
		h := make([]uint16, len(y))
		for i, v := range y {
			if v != v {
				h[i] = 0x7FFF
				continue
			}
			h[i] = half.EncodeFP16(v) // exact: v is an fp16 value
		}
		return tensor.FromBits16(tensor.F16, shape, h)
	}
	return tensor.FromF32(shape, y)
}

func gemvRank(t tensor.Tensor, name string, d tensor.DType, rank int) error {
	if err := t.Expect(name, d); err != nil {
		return err
	}
	if len(t.Shape) != rank {
		return fmt.Errorf("tensor %q: shape %v, want rank %d", name, t.Shape, rank)
	}
	return nil
}

func runSparseFP4(p Params, in Tensors) (Tensors, error) {
	s, err := gemvSchedule(p)
	if err != nil {
		return nil, err
	}
	sp, err := sparseFP4Input(p, in)
	if err != nil {
		return nil, err
	}
	y, err := gemv.SparseFP4GEMV(sp, s)
	if err != nil {
		return nil, err
	}
	return Tensors{"y": gemvOut(y, []int{len(sp.Experts), sp.N}, s.Out)}, nil
}

// sparseFP4Input checks the tensors and scale_decode of gemv.sparse_fp4
// and gathers them for refimpl/gemv.
func sparseFP4Input(p Params, in Tensors) (gemv.SparseFP4, error) {
	var dec gemv.ScaleDecode
	switch v := p["scale_decode"]; v {
	case "e4m3fn":
		dec = gemv.E4M3FN
	case "dgx_lut":
		dec = gemv.DGXLUT
	default:
		return gemv.SparseFP4{}, fmt.Errorf("parameter scale_decode=%q: want e4m3fn or dgx_lut", v)
	}
	comp := in["comp"]
	if err := gemvRank(comp, "comp", tensor.U8, 3); err != nil {
		return gemv.SparseFP4{}, err
	}
	e, k, n := comp.Shape[0], 4*comp.Shape[1], comp.Shape[2]
	if k%8 != 0 {
		return gemv.SparseFP4{}, fmt.Errorf("tensor \"comp\": shape %v: K/4=%d must be even (K a multiple of 8)", comp.Shape, k/4)
	}
	if err := in["meta"].Expect("meta", tensor.U8, e, k/8, n); err != nil {
		return gemv.SparseFP4{}, err
	}
	scales := in["scales"]
	if err := scales.Expect("scales", tensor.U8, e, -1, n); err != nil {
		return gemv.SparseFP4{}, err
	}
	ns := scales.Shape[1]
	if ns == 0 || k%ns != 0 {
		return gemv.SparseFP4{}, fmt.Errorf("tensor \"scales\": shape %v: %d scale blocks do not divide K=%d", scales.Shape, ns, k)
	}
	if err := in["global"].Expect("global", tensor.F32, e); err != nil {
		return gemv.SparseFP4{}, err
	}
	experts := in["experts"]
	if err := gemvRank(experts, "experts", tensor.I32, 1); err != nil {
		return gemv.SparseFP4{}, err
	}
	a := experts.Shape[0]
	act := in["act"]
	if err := act.Expect("act", tensor.F16); err != nil {
		return gemv.SparseFP4{}, err
	}
	if !(len(act.Shape) == 1 && act.Shape[0] == k) && !(len(act.Shape) == 2 && act.Shape[0] == a && act.Shape[1] == k) {
		return gemv.SparseFP4{}, fmt.Errorf("tensor \"act\": shape %v, want [%d] or [%d %d]", act.Shape, k, a, k)
	}
	return gemv.SparseFP4{
		E: e, K: k, N: n, ScaleK: k / ns,
		Comp: comp.Data, Meta: in["meta"].Data, Scales: scales.Data,
		Global: in["global"].F32(), Act: act.Bits16(), Experts: experts.I32(),
		Decode: dec,
	}, nil
}

func runMXFP4Q81(p Params, in Tensors) (Tensors, error) {
	s, err := gemvSchedule(p)
	if err != nil {
		return nil, err
	}
	n, k, err := mxfp4Q81Input(in)
	if err != nil {
		return nil, err
	}
	y, err := gemv.MXFP4Q81GEMV(in["w"].Data, in["act"].Data, n, k, s)
	if err != nil {
		return nil, err
	}
	return Tensors{"y": gemvOut(y, []int{n}, s.Out)}, nil
}

// mxfp4Q81Input checks the tensors of gemv.mxfp4_q8_1 and returns N and K.
func mxfp4Q81Input(in Tensors) (n, k int, err error) {
	w := in["w"]
	if err := w.Expect("w", tensor.U8, -1, -1, gemv.MXFP4BlockBytes); err != nil {
		return 0, 0, err
	}
	n, nb := w.Shape[0], w.Shape[1]
	if err := in["act"].Expect("act", tensor.U8, nb, gemv.Q81BlockBytes); err != nil {
		return 0, 0, err
	}
	return n, nb * gemv.QK, nil
}

// GEMVTerms returns the operands of GEMV op ("gemv.sparse_fp4" or
// "gemv.mxfp4_q8_1") on inputs in under parameters p (the op's defaults
// filling those left out) as exact float64 values, one row of weights and
// one of activations per output element, in the output's order: what
// gemv.Bound holds a kernel's output to when its summation order is not
// the declared schedule. Inputs are checked as the op checks them.
func GEMVTerms(op string, p Params, in Tensors) (gemv.Terms, error) {
	o, err := Lookup(op)
	if err != nil {
		return gemv.Terms{}, err
	}
	p = p.withDefaults(o.Defaults)
	var t gemv.Terms
	switch op {
	case "gemv.sparse_fp4":
		var sp gemv.SparseFP4
		if sp, err = sparseFP4Input(p, in); err == nil {
			t, err = sp.Terms()
		}
	case "gemv.mxfp4_q8_1":
		var n, k int
		if n, k, err = mxfp4Q81Input(in); err == nil {
			t, err = gemv.MXFP4Q81Terms(in["w"].Data, in["act"].Data, n, k)
		}
	default:
		return gemv.Terms{}, fmt.Errorf("op %s: no exact operand model (gemv.sparse_fp4, gemv.mxfp4_q8_1 have one)", op)
	}
	if err != nil {
		return gemv.Terms{}, fmt.Errorf("op %s: %w", op, err)
	}
	return t, nil
}

func runAWQ(p Params, in Tensors) (Tensors, error) {
	s, err := gemvSchedule(p)
	if err != nil {
		return nil, err
	}
	g, err := p.Int("group", 0)
	if err != nil {
		return nil, err
	}
	if g <= 0 {
		return nil, fmt.Errorf("parameter group=%d must be positive", g)
	}
	x := in["x"]
	if err := gemvRank(x, "x", tensor.F16, 1); err != nil {
		return nil, err
	}
	ic := x.Shape[0]
	qw := in["qweight"]
	if err := qw.Expect("qweight", tensor.I32, ic, -1); err != nil {
		return nil, err
	}
	oc := 8 * qw.Shape[1]
	if ic%g != 0 {
		return nil, fmt.Errorf("IC=%d is not a multiple of group %d", ic, g)
	}
	if err := in["qzeros"].Expect("qzeros", tensor.I32, ic/g, oc/8); err != nil {
		return nil, err
	}
	if err := in["scales"].Expect("scales", tensor.F16, ic/g, oc); err != nil {
		return nil, err
	}
	y, err := gemv.AWQGEMV(qw.I32(), in["qzeros"].I32(), in["scales"].Bits16(), x.Bits16(), ic, oc, g, s)
	if err != nil {
		return nil, err
	}
	return Tensors{"y": gemvOut(y, []int{oc}, s.Out)}, nil
}

// ExactFloats decodes an F16, F32 or F64 tensor exactly into float64: the
// values gemv.exact sums, and those a bound-mode certificate decodes.
func ExactFloats(t tensor.Tensor, name string) ([]float64, error) {
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
		// Read in place: t.F32() would make two more copies, whose
		// allocation and passes cost more than this loop under GOARCH=wasm.
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

func gemvF64(shape []int, v []float64) tensor.Tensor {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return tensor.Tensor{DType: tensor.F64, Shape: append([]int(nil), shape...), Data: b}
}

func runExact(p Params, in Tensors) (Tensors, error) {
	var m gemv.BoundModel
	var err error
	if m.Mul32, err = p.Int("mul32", 0); err != nil {
		return nil, err
	}
	if m.Round16, err = p.Int("round16", 0); err != nil {
		return nil, err
	}
	switch v := p["out"]; v {
	case "fp32":
		m.Out = gemv.FP32
	case "fp16":
		m.Out = gemv.FP16
	default:
		return nil, fmt.Errorf("parameter out=%q: want fp32 or fp16", v)
	}
	wt, xt := in["w"], in["x"]
	if len(wt.Shape) != 2 {
		return nil, fmt.Errorf("tensor \"w\": shape %v, want rank 2 [N K]", wt.Shape)
	}
	n, k := wt.Shape[0], wt.Shape[1]
	if len(xt.Shape) != 1 || xt.Shape[0] != k {
		return nil, fmt.Errorf("tensor \"x\": shape %v, want [%d]", xt.Shape, k)
	}
	w, err := ExactFloats(wt, "w")
	if err != nil {
		return nil, err
	}
	x, err := ExactFloats(xt, "x")
	if err != nil {
		return nil, err
	}
	var got []float64
	if gt, ok := in["got"]; ok {
		if len(gt.Shape) != 1 || gt.Shape[0] != n || (gt.DType != tensor.F32 && gt.DType != tensor.F16) {
			return nil, fmt.Errorf("tensor \"got\": %s %v, want F32 or F16 [%d]", gt.DType, gt.Shape, n)
		}
		if got, err = ExactFloats(gt, "got"); err != nil {
			return nil, err
		}
	}
	exact := make([]float32, n)
	var within []uint8
	var errULP, boundULP []float64
	if got != nil {
		within, errULP, boundULP = make([]uint8, n), make([]float64, n), make([]float64, n)
	}
	vs, err := gemv.BoundRows(w, n, x, m, got)
	if err != nil {
		return nil, err
	}
	for r, v := range vs {
		exact[r] = float32(v.ExactValue)
		if got != nil {
			if v.Within {
				within[r] = 1
			}
			errULP[r], boundULP[r] = v.ULPError, v.BoundULP
		}
	}
	out := Tensors{"exact": gemvOut(exact, []int{n}, m.Out)}
	if got != nil {
		out["within"] = tensor.FromU8([]int{n}, within)
		out["error_ulp"] = gemvF64([]int{n}, errULP)
		out["bound_ulp"] = gemvF64([]int{n}, boundULP)
	}
	return out, nil
}
