// Package mutants is a catalog of deliberately wrong implementations: each
// is a copy of a reference op with one realistic bug (a rounding rule, a
// saturation rule, a nibble order, an arithmetic order), built from the
// refimpl's own data-driven profiles, recipes and layouts with one field
// changed, or from the reference output with one layout step done wrong.
// The test certifies every mutant as a vendor would and requires that
// certify rejects it and, where the bug has a class in the diagnosis
// library, that the diagnosis names it. It measures the suite's power: a
// surviving mutant is a blind spot of the golden inputs.
//
// CUDACatalog lists the same kind of bugs in bitexact's own CUDA kernels,
// as textual patches of backends/cuda/kernels: the plain test checks that
// every patch still applies, and the cuda-tagged test compiles each
// mutant with nvcc, loads it in place of its module (cuda.Device.Override)
// and certifies it on the GPU.
package mutants

import (
	"fmt"
	"math"

	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/awq"
	"github.com/bitexact/bitexact/refimpl/e8m0"
	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/fp8"
	"github.com/bitexact/bitexact/refimpl/nvfp4"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// Mutant is one wrong implementation.
type Mutant struct {
	Name string
	// Suite is the vendor suite it is certified on, claiming profile
	// Claim.
	Suite, Claim string
	// Class is the diagnosis class that names the bug, or "" when the bug
	// is deliberately outside the diagnosis library (the certificate must
	// then say that no class explains it).
	Class string
	Doc   string
	// Survives, when set, says why the golden inputs cannot tell this
	// mutant from the reference (a blind spot of the suite, reported in
	// the kill rate); the test then requires that it survives, so that
	// strengthening the golden set shows up as a test to update.
	Survives string
	// Equivalent marks a survivor that no input can kill (it computes the
	// reference's function): it is left out of the kill rate.
	Equivalent bool
	// NeedsInput, when set, names the golden input that would kill this
	// realistic mutant, which the golden set does not have yet: the mutant
	// must survive and is left out of the kill rate until the input is
	// added, when the test asks for the mark to be removed.
	NeedsInput string
	// Hint, for a mutant outside the library (Class ""), is the class a
	// partial hint may name: a named behaviour the bug nearly equals.
	Hint string
	// Run computes the op the way the mutant does. params are the claimed
	// profile's op parameters.
	Run func(params ops.Params, in ops.Tensors) (ops.Tensors, error)
}

// Outputs runs m on the inputs of every task of s (s must be m.Suite
// resolved against set), with the claimed profile's parameters.
func (m Mutant) Outputs(s *suite.Suite, set *golden.Set) (map[string]ops.Tensors, error) {
	out := map[string]ops.Tensors{}
	for _, t := range s.Tasks {
		c, ok := t.Cases[m.Claim]
		params := ops.Params{}
		if ok {
			for k, v := range c.Params {
				params[k] = v
			}
		} else if len(t.Profiles) > 0 && t.Profiles[0] != "" && t.Cases[t.Profiles[0]].Name == t.Profiles[0] {
			// A bound-mode suite keys a task's cases by case name (its
			// profiles are bound models, with no case of their own): the
			// inputs are any case's, the parameters the task's.
			c = t.Cases[t.Profiles[0]]
			for k, v := range t.Params {
				params[k] = v
			}
		} else {
			return nil, fmt.Errorf("mutant %s: task %s has no case for claimed profile %s", m.Name, t.Name, m.Claim)
		}
		in, err := set.Inputs(c)
		if err != nil {
			return nil, err
		}
		o, err := m.Run(params, in)
		if err != nil {
			return nil, fmt.Errorf("mutant %s on task %s: %w", m.Name, t.Name, err)
		}
		out[t.Name] = o
	}
	return out, nil
}

// codes maps a float32 input "x" to one code per byte.
func codes(logical string, f func(float32) uint8) func(ops.Params, ops.Tensors) (ops.Tensors, error) {
	return func(_ ops.Params, in ops.Tensors) (ops.Tensors, error) {
		x := in["x"]
		if err := x.Expect("x", tensor.F32); err != nil {
			return nil, err
		}
		xs := x.F32()
		c := make([]uint8, len(xs))
		for i, v := range xs {
			c[i] = f(v)
		}
		t := tensor.FromU8(x.Shape, c)
		t.Logical = logical
		return ops.Tensors{"codes": t}, nil
	}
}

// withParams runs the reference op with some parameters replaced: the
// implementation follows another rule than the one it claims.
func withParams(op string, over ops.Params) func(ops.Params, ops.Tensors) (ops.Tensors, error) {
	return func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
		q := ops.Params{}
		for k, v := range p {
			q[k] = v
		}
		for k, v := range over {
			q[k] = v
		}
		return ops.Run(op, q, in)
	}
}

// transform runs the reference op and post-processes one output.
func transform(op string, f func(out ops.Tensors) ops.Tensors) func(ops.Params, ops.Tensors) (ops.Tensors, error) {
	return func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
		out, err := ops.Run(op, p, in)
		if err != nil {
			return nil, err
		}
		return f(out), nil
	}
}

func swapNibbles(name string) func(ops.Tensors) ops.Tensors {
	return func(out ops.Tensors) ops.Tensors {
		t := out[name]
		d := make([]byte, len(t.Data))
		for i, b := range t.Data {
			d[i] = b<<4 | b>>4
		}
		t.Data = d
		out[name] = t
		return out
	}
}

func nvfp4Recipe(edit func(r *nvfp4.Recipe)) func(ops.Params, ops.Tensors) (ops.Tensors, error) {
	return func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
		r, err := nvfp4.LookupRecipe(p.Get("recipe", "canonical"))
		if err != nil {
			return nil, err
		}
		edit(&r)
		// The op's own body with the edited recipe: a case that fixes the
		// per-tensor value (global) is honoured as the reference does, so
		// only the edited rule differs.
		return ops.NVFP4Quantize(r, p, in)
	}
}

// nearestTiesAway is an FP8 encoder written by search over the finite
// magnitudes, saturating, with ties away from zero (the bug: the
// reference rounds ties to even).
func nearestTiesAway(f fp8.Format) func(float32) uint8 {
	return func(x float32) uint8 {
		if x != x {
			return 0x7f
		}
		sign := uint8(0)
		if math.Signbit(float64(x)) {
			sign = 0x80
		}
		a := math.Abs(float64(x))
		best, bestErr := uint8(0), math.Inf(1)
		for c := 0; c < 0x80; c++ {
			v := float64(f.Decode(uint8(c)))
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			e := math.Abs(v - a)
			if e < bestErr || e == bestErr && v > float64(f.Decode(best)) {
				best, bestErr = uint8(c), e
			}
		}
		return sign | best
	}
}

// truncE2M1 rounds toward zero: the largest magnitude not above |x|.
func truncE2M1(x float32) uint8 {
	if x != x {
		return 0x7
	}
	sign := uint8(0)
	if math.Signbit(float64(x)) {
		sign = 0x8
	}
	a := math.Abs(float64(x))
	c := uint8(0)
	for m := uint8(0); m < 8; m++ {
		if float64(fp4.Decode(m)) <= a {
			c = m
		}
	}
	return sign | c
}

// scale32 quantizes NVFP4 with the block amax taken over 32 elements
// (the MX block size) instead of 16: a bug outside the diagnosis library.
func scale32(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	x := in["x"]
	if err := x.Expect("x", tensor.F32, -1, -1); err != nil {
		return nil, err
	}
	m, k := x.Shape[0], x.Shape[1]
	xs := x.F32()
	// The canonical recipe written out by hand, with the one wrong bound.
	r := nvfp4.Canonical
	g := nvfp4.GlobalFromAmax(nvfp4.TensorAmax(xs), r)
	packed := make([]uint8, m*k/2)
	scales := make([]uint8, m*k/16)
	for b := 0; b < m*k/16; b++ {
		lo := (b / 2) * 32
		var amax float32
		for _, v := range xs[lo : lo+32] {
			if a := float32(math.Abs(float64(v))); a > amax {
				amax = a
			}
		}
		sc := r.BlockScaleCode(amax, g)
		scales[b] = sc
		s := fp8.E4M3.Decode(sc)
		d := float32(s / g)
		for i := 0; i < 16; i++ {
			v := xs[b*16+i]
			var q float32
			if d == 0 {
				q = v * 0
			} else {
				q = float32(v / d)
			}
			c := fp4.NVIDIA.Encode(q)
			j := b*16 + i
			if j%2 == 0 {
				packed[j/2] |= c
			} else {
				packed[j/2] |= c << 4
			}
		}
	}
	pt := tensor.FromU8([]int{m, k / 2}, packed)
	pt.Logical = "e2m1x2"
	st := tensor.FromU8([]int{m, k / 16}, scales)
	st.Logical = "e4m3"
	return ops.Tensors{"packed": pt, "scales": st, "global": tensor.FromF32([]int{1}, []float32{g})}, nil
}

func awqPack(edit func(l *awq.Layout)) func(ops.Params, ops.Tensors) (ops.Tensors, error) {
	return func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
		l, err := awq.LayoutByName(p.Get("layout", "awq"))
		if err != nil {
			return nil, err
		}
		edit(&l)
		q, z := in["q"], in["zeros"]
		ic, oc := q.Shape[0], q.Shape[1]
		w, ws, err := l.PackWeight(q.Data, ic, oc)
		if err != nil {
			return nil, err
		}
		zw, zs, err := l.PackZeros(z.Data, ic, oc, ic/z.Shape[0])
		if err != nil {
			return nil, err
		}
		return ops.Tensors{"qweight": tensor.FromI32(ws, w), "qzeros": tensor.FromI32(zs, zw)}, nil
	}
}

func sparseSwap(values bool) func(ops.Tensors) ops.Tensors {
	return func(out ops.Tensors) ops.Tensors {
		sw := func(n uint8) uint8 { return (n&3)<<2 | (n>>2)&3 }
		m := out["meta"]
		d := make([]byte, len(m.Data))
		for i, b := range m.Data {
			d[i] = sw(b&15) | sw(b>>4)<<4
		}
		m.Data = d
		out["meta"] = m
		if values {
			out = swapNibbles("comp")(out)
		}
		return out
	}
}

func ggmlAdjacent(out ops.Tensors) ops.Tensors {
	b := out["blocks"]
	d := append([]byte{}, b.Data...)
	for off := 0; off+17 <= len(d); off += 17 {
		var q [32]uint8
		for j := 0; j < 16; j++ {
			q[j], q[j+16] = b.Data[off+1+j]&15, b.Data[off+1+j]>>4
		}
		for j := 0; j < 16; j++ {
			d[off+1+j] = q[2*j] | q[2*j+1]<<4
		}
	}
	b.Data = d
	out["blocks"] = b
	return out
}

func flushSubnormalInputs(op string) func(ops.Params, ops.Tensors) (ops.Tensors, error) {
	return func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
		x := in["x"]
		b := x.Bits32()
		for i, v := range b {
			if v&0x7f800000 == 0 {
				b[i] = v & 0x80000000
			}
		}
		return ops.Run(op, p, ops.Tensors{"x": tensor.FromBits32(tensor.F32, x.Shape, b)})
	}
}

// Catalog lists the mutants.
func Catalog() []Mutant {
	nv := fp4.NVIDIA
	e2m1 := func(edit func(p *fp4.Profile)) func(float32) uint8 {
		p := nv
		edit(&p)
		return p.Encode
	}
	return append([]Mutant{
		{Name: "e2m1-ties-away", Suite: "e2m1", Claim: "nvidia", Class: "ties-away",
			Doc: "E2M1 midpoints rounded away from zero (a floor(|x|+0.5)-style rounder)",
			Run: codes("e2m1", e2m1(func(p *fp4.Profile) { p.Tie = fp4.TieAway }))},
		{Name: "e2m1-ties-toward-zero", Suite: "e2m1", Claim: "nvidia", Class: "ties-toward-zero",
			Doc: "E2M1 midpoints rounded toward zero (argmin with strict <)",
			Run: codes("e2m1", e2m1(func(p *fp4.Profile) { p.Tie = fp4.TieTowardZero }))},
		{Name: "e2m1-negative-zero-cleared", Suite: "e2m1", Claim: "nvidia", Class: "negative-zero-cleared",
			Doc: "E2M1 zero results always +0 (sign dropped for magnitude 0)",
			Run: codes("e2m1", e2m1(func(p *fp4.Profile) { p.Zero = fp4.ZeroPositive }))},
		{Name: "e2m1-nan-sign-kept", Suite: "e2m1", Claim: "nvidia", Class: "nan-sign-kept",
			Doc: "E2M1 -NaN -> 0xF (sign copied from bit 31 before the NaN check)",
			Run: codes("e2m1", e2m1(func(p *fp4.Profile) { p.NaNNeg = 0xF }))},
		{Name: "e2m1-truncation", Suite: "e2m1", Claim: "nvidia", Class: "truncation",
			Doc: "E2M1 rounded toward zero (largest magnitude not above |x|)",
			Run: codes("e2m1", truncE2M1)},
		{Name: "e4m3-no-saturation", Suite: "e4m3", Claim: "satfinite", Class: "profile:nosat",
			Doc: "E4M3 overflow to NaN where satfinite is claimed (plain cvt.rn without .satfinite)",
			Run: withParams("fp8.encode", ops.Params{"profile": "nosat"})},
		{Name: "e4m3-nan-sign-kept", Suite: "e4m3", Claim: "satfinite", Class: "nan-sign-kept",
			Doc: "E4M3 saturating, but -NaN -> 0xFF",
			Run: codes("e4m3", func(x float32) uint8 {
				return fp8.E4M3.Encode(x, fp8.Profile{Name: "m", Saturate: true, NaNKeepsSign: true})
			})},
		{Name: "e5m2-ties-away", Suite: "e5m2", Claim: "satfinite", Class: "ties-away",
			Doc: "E5M2 by nearest-value search with ties to the larger magnitude",
			Run: codes("e5m2", nearestTiesAway(fp8.E5M2))},
		{Name: "e4m3-saturation-claimed-nosat", Suite: "e4m3", Claim: "nosat", Class: "profile:satfinite",
			Doc: "E4M3 saturates where the torch behaviour (no saturation) is claimed",
			Run: withParams("fp8.encode", ops.Params{"profile": "satfinite"})},
		{Name: "e8m0-rz-for-rp", Suite: "e8m0", Claim: "rp", Class: "profile:rz",
			Doc: "E8M0 scale rounded toward zero where round-up is claimed",
			Run: withParams("e8m0.encode", ops.Params{"rounding": "rz"})},
		{Name: "e8m0-rp-ftz", Suite: "e8m0", Claim: "rp", Class: "ftz-inputs",
			Doc: "E8M0 round-up with subnormal inputs flushed to zero (FTZ)",
			Run: codes("e8m0", func(x float32) uint8 {
				if b := math.Float32bits(x); b&0x7f800000 == 0 {
					x = math.Float32frombits(b & 0x80000000)
				}
				return e8m0.RP.Encode(x)
			})},
		{Name: "e8m0-scale-even-for-floor", Suite: "e8m0-scale", Claim: "floor", Class: "profile:even",
			Doc: "MX shared scale rounded to nearest even where floor (OCP) is claimed",
			Run: withParams("e8m0.shared_scale", ops.Params{"mode": "even"})},
		{Name: "e8m0-scale-ceil-for-floor", Suite: "e8m0-scale", Claim: "floor", Class: "profile:ceil",
			Doc: "MX shared scale rounded up where floor is claimed (FBGEMM PR 2816's change)",
			Run: withParams("e8m0.shared_scale", ops.Params{"mode": "ceil"})},
		{Name: "nvfp4-nibble-swap", Suite: "nvfp4", Claim: "recipe=canonical,swizzle=0", Class: "nibble-swap",
			Doc: "NVFP4 element 2i stored in the high nibble",
			Run: transform("nvfp4.quantize", swapNibbles("packed"))},
		{Name: "nvfp4-element-reciprocal", Suite: "nvfp4", Claim: "recipe=canonical,swizzle=0", Class: "element-rule:mul-rcp",
			Doc: "NVFP4 elements scaled by x * (1/(s/g)) where the canonical recipe divides",
			Run: nvfp4Recipe(func(r *nvfp4.Recipe) { r.Element = nvfp4.MulRcpRcp })},
		{Name: "nvfp4-scale-reciprocal", Suite: "nvfp4", Claim: "recipe=canonical,swizzle=0", Class: "block-scale-rule:mul-rcp6-mul-global",
			Doc: "NVFP4 block scale computed as g * (amax * (1/6)) where the canonical recipe divides by 6",
			Run: nvfp4Recipe(func(r *nvfp4.Recipe) { r.BlockScale = nvfp4.MulRcpSixMulGlobal })},
		{Name: "nvfp4-e2m1-ties-away", Suite: "nvfp4", Claim: "recipe=canonical,swizzle=0", Class: "e2m1-profile:ties-away",
			Doc: "NVFP4 elements rounded with ties away from zero",
			Run: nvfp4Recipe(func(r *nvfp4.Recipe) { r.FP4 = fp4.TiesAway })},
		{Name: "nvfp4-negative-zero-cleared", Suite: "nvfp4", Claim: "recipe=canonical,swizzle=0", Class: "negative-zero-cleared",
			Doc: "NVFP4 elements of magnitude zero always +0",
			Run: nvfp4Recipe(func(r *nvfp4.Recipe) { r.FP4.Zero = fp4.ZeroPositive })},
		{Name: "nvfp4-ftz-inputs", Suite: "nvfp4", Claim: "recipe=canonical,swizzle=0", Class: "ftz-inputs",
			Doc: "NVFP4 quantize compiled with FTZ: float32 subnormal inputs read as zero",
			Run: flushSubnormalInputs("nvfp4.quantize")},
		{Name: "nvfp4-amax-over-32", Suite: "nvfp4", Claim: "recipe=canonical,swizzle=0", Class: "",
			Doc: "NVFP4 block scale from the amax of 32 elements (the MX block size) instead of 16: outside the diagnosis library",
			Run: scale32},
		{Name: "mxfp4-nibble-swap", Suite: "mxfp4", Claim: "mode=floor,profile=nvidia", Class: "nibble-swap",
			Doc: "MXFP4 element 2i stored in the high nibble",
			Run: transform("mxfp4.quantize", swapNibbles("packed"))},
		{Name: "mxfp4-ceil-for-floor", Suite: "mxfp4", Claim: "mode=floor,profile=nvidia", Class: "profile:mode=ceil,profile=nvidia",
			Doc: "MXFP4 scale rounded up where floor is claimed",
			Run: withParams("mxfp4.quantize", ops.Params{"mode": "ceil"})},
		{Name: "awq-sequential-order", Suite: "awq-pack", Claim: "awq", Class: "awq-nibble-order",
			Doc: "AWQ words packed in sequential nibble order instead of [0,2,4,6,1,3,5,7]",
			Run: awqPack(func(l *awq.Layout) { l.Weight.Order = awq.OrderSequential; l.Zeros.Packing.Order = awq.OrderSequential })},
		{Name: "awq-zero-minus-one", Suite: "awq-pack", Claim: "awq", Class: "gptq-zero-minus-one",
			Doc: "AWQ zero points stored minus one (GPTQ v1 habit)",
			Run: awqPack(func(l *awq.Layout) { l.Zeros.Offset = -1 })},
		{Name: "sparse24-indices-swapped", Suite: "sparse24", Claim: "tie=lower-index,layout=rowmajor", Class: "sparse24-indices-swapped",
			Doc: "2:4 metadata nibble written i1 | i0<<2",
			Run: transform("sparse24.compress", sparseSwap(false))},
		{Name: "sparse24-descending", Suite: "sparse24", Claim: "tie=lower-index,layout=rowmajor", Class: "sparse24-descending",
			Doc: "2:4 kept pair stored in descending index order (indices and values)",
			Run: transform("sparse24.compress", sparseSwap(true))},
		{Name: "sparse24-cutlass-ties", Suite: "sparse24", Claim: "tie=lower-index,layout=rowmajor", Class: "profile:tie=cutlass,layout=rowmajor",
			Doc: "2:4 selection with CUTLASS's tie-break where lower-index is claimed",
			Run: withParams("sparse24.compress", ops.Params{"tie": "cutlass"})},
		{Name: "ggml-mxfp4-adjacent-pairs", Suite: "ggml-mxfp4", Claim: "log2=exact,cast=x86-64", Class: "llama-adjacent-pairs",
			Doc: "block_mxfp4 qs packed as adjacent pairs instead of split halves",
			Run: transform("ggml.mxfp4.quantize", ggmlAdjacent)},
		{Name: "gemv-awq-fp16-partials", Suite: "gemv-awq", Claim: "seq", Class: "profile:seq-f16out",
			Doc: "AWQ GEMV accumulating in fp16 where fp32 partials are claimed",
			Run: withParams("gemv.awq", ops.Params{"schedule": "seq-f16out"})},
		{Name: "gemv-mxfp4-fused", Suite: "gemv-mxfp4", Claim: "mmvq-nofma", Class: "profile:mmvq",
			Doc: "MXFP4 GEMV with a*b+c contracted into FMA where the unfused mmvq order is claimed",
			Run: withParams("gemv.mxfp4_q8_1", ops.Params{"schedule": "mmvq"})},
		{Name: "gemv-sparse-fp4-fused", Suite: "gemv-sparse-fp4", Claim: "schedule=sparse-v7-nofma,scale_decode=e4m3fn", Class: "profile:schedule=sparse-v7,scale_decode=e4m3fn",
			Doc: "sparse FP4 GEMV with FMA contraction where the unfused v7 order is claimed",
			Run: withParams("gemv.sparse_fp4", ops.Params{"schedule": "sparse-v7"})},
		{Name: "gemv-awq-fused", Suite: "gemv-awq", Claim: "seq", Class: "profile:seq-fma",
			Equivalent: true,
			Survives:   "an equivalent mutant, on every input: fp16 x fp16 products are exact in float32, so contracting a*b+c into an FMA never changes a rounding (golden's TestGEMVAWQFusionIrrelevant asserts seq and seq-fma agree)",
			Doc:        "AWQ GEMV with FMA contraction where the unfused order is claimed",
			Run:        withParams("gemv.awq", ops.Params{"schedule": "seq-fma"})},
		{Name: "q8_1-cpu-sum-for-cuda", Suite: "q8_1", Claim: "cuda", Class: "profile:cpu",
			Doc: "block_q8_1 s computed as the CPU path does where the CUDA path is claimed",
			Run: withParams("ggml.q8_1.quantize", ops.Params{"s": "cpu"})},
		{Name: "e2m1-pack-nibble-swap", Suite: "e2m1-pack", Claim: "default", Class: "nibble-swap",
			Doc: "E2M1 pack with element 2i in the high nibble",
			Run: transform("e2m1.pack", swapNibbles("packed"))},
	}, append(append(append(coverageCatalog(), extraCatalog()...), halfBoundCatalog()...), append(formatCatalog(), blockFormatCatalog()...)...)...)
}
