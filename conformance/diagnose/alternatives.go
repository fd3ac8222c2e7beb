package diagnose

import (
	"context"
	"sort"
	"strings"

	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// The op-independent alternatives (other profiles, 16-bit outputs
// widened, FTZ inputs, nibble swap) and Alternatives, which gathers them
// with the op families' (alternatives_*.go, block.go, coverage.go,
// library.go).

// profileDoc describes profile p of op as the behaviour a kernel author
// would recognise: the one-line summaries that refimpl declares for the
// named values p is made of (refimpl/ops Op.Choices), for a profile
// spelled by its value ("nvidia") or by "k=v,k=v"
// ("schedule=sparse-v7-nofma,scale_decode=e4m3fn").
func profileDoc(op, p string) string {
	var docs []string
	if o, err := ops.Lookup(op); err == nil {
		if c, ok := o.Choice("", p); ok {
			docs = append(docs, c.Summary)
		} else {
			for _, kv := range strings.Split(p, ",") {
				if k, v, ok := strings.Cut(kv, "="); ok {
					if c, ok := o.Choice(k, v); ok {
						docs = append(docs, c.Summary)
					}
				}
			}
		}
	}
	if len(docs) == 0 {
		return "behaves as profile " + p
	}
	return strings.Join(docs, "; ") + " (profile " + p + ")"
}

func withParams(base ops.Params, over map[string]string) ops.Params {
	p := ops.Params{}
	for k, v := range base {
		p[k] = v
	}
	for k, v := range over {
		p[k] = v
	}
	return p
}

// Alternatives lists the alternatives tried for suite s when diagnosing
// against profile against.
func Alternatives(s *suite.Suite, against string) []Alternative {
	var alts []Alternative
	// 1. Every other named profile of the suite, on every task: from the
	// golden outputs where the set has them, else through the reference.
	for _, p := range s.Profiles {
		if p == against {
			continue
		}
		p := p
		alts = append(alts, Alternative{Class: "profile:" + p, Doc: profileDoc(s.Op, p),
			Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
				if e, ok := t.Expected[p]; ok {
					return e, true, nil
				}
				out, err := s.Compute(context.Background(), golden.Native{}, t.Task, p, t.Inputs)
				if err != nil {
					return nil, false, nil // the combination does not exist for this task
				}
				return out, true, nil
			}})
	}
	// 2. The claimed or another profile's fp16 or bf16 outputs written as
	// float32: the harness wrote the right numbers in the wrong dtype.
	if has16BitOutputs(s) {
		alts = append(alts, widenedAlternatives(s, against)...)
	}
	if encodesSignedFormat(s.Op) {
		alts = append(alts, unaryAlternatives()...)
		if s.InputDTypes["x"] == "U8" { // a conversion from a peer format's codes
			alts = append(alts, Alternative{Class: "codes-reinterpreted",
				Doc:     "the input codes passed through unchanged: one FP8 format's bits read as the other's (OCP E4M3 bytes used as E4M3FNUZ, or back) instead of converting the value",
				Compute: codesReinterpreted})
		}
	}
	alts = append(alts, Alternative{Class: "ftz-inputs", Doc: "float32 subnormal inputs flushed to zero (FTZ/DAZ) before the reference computation",
		Compute: ftzInputs})
	alts = append(alts, Alternative{Class: "nibble-swap", Doc: "the two E2M1 codes of each byte swapped (element 2i in the high nibble)",
		Compute: nibbleSwap})
	switch s.Op {
	case "nvfp4.quantize":
		alts = append(alts, nvfp4Alternatives(against)...)
	case "mxfp4.quantize":
		alts = append(alts, mxfp4Alternatives()...)
		alts = append(alts, mxfp4StepAlternatives()...)
	case "awq.pack":
		alts = append(alts, awqAlternatives()...)
	case "awq.quantize":
		alts = append(alts, awqQuantizeAlternatives()...)
		alts = append(alts, awqStepAlternatives()...)
	case "sparse24.compress":
		alts = append(alts,
			Alternative{Class: "sparse24-indices-swapped", Doc: "the two 2-bit indices of each metadata nibble swapped (i1 | i0<<2), values in ascending order",
				Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) { return sparseMeta(t, false) }},
			Alternative{Class: "sparse24-descending", Doc: "kept pairs stored in descending index order: metadata indices and value nibbles both swapped",
				Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) { return sparseMeta(t, true) }})
	case "ggml.mxfp4.quantize":
		alts = append(alts, Alternative{Class: "llama-adjacent-pairs", Doc: "block_mxfp4 qs packed as adjacent pairs (q[2j] | q[2j+1]<<4) instead of llama.cpp's split halves (q[j] | q[j+16]<<4)",
			Compute: ggmlAdjacent})
	}
	alts = append(alts, blockAlternatives(s)...)
	alts = append(alts, coverageAlternatives(s)...)
	// Last: a named bug class that reproduces the results (a NaN sign
	// cleared) comes before "the NaNs follow another convention".
	return append(alts, nanAlternatives(s, against)...)
}

// has16BitOutputs reports whether some golden case of s has an F16 or
// BF16 output.
func has16BitOutputs(s *suite.Suite) bool {
	for _, t := range s.Tasks {
		for _, c := range t.Cases {
			for _, o := range c.Outputs {
				if o.DType == string(tensor.F16) || o.DType == string(tensor.BF16) {
					return true
				}
			}
		}
	}
	return false
}

// widenedAlternatives are the claimed profile's and every other profile's
// outputs with their 16-bit float tensors written as float32.
func widenedAlternatives(s *suite.Suite, against string) []Alternative {
	alts := []Alternative{{Class: "written-as-f32",
		Doc:     "the claimed profile's fp16/bf16 outputs, each value widened to float32: the kernel computes the claim; write the results file's tensor in its 16-bit dtype",
		Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) { return widened(t.Reference) }}}
	for _, p := range s.Profiles {
		if p == against {
			continue
		}
		p := p
		alts = append(alts, Alternative{Class: "written-as-f32:profile:" + p,
			Doc: "the fp16/bf16 outputs of " + profileDoc(s.Op, p) + ", each value widened to float32: the kernel computes that profile; claim it and write the results file's tensor in its 16-bit dtype",
			Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
				out, ok := t.Expected[p]
				if !ok {
					var err error
					if out, err = s.Compute(context.Background(), golden.Native{}, t.Task, p, t.Inputs); err != nil {
						return nil, false, nil
					}
				}
				return widened(out)
			}})
	}
	return alts
}

// widened returns out with every F16 and BF16 tensor converted exactly to
// F32 (same shape), or ok=false when out has none (the alternative would
// then be the profile itself).
func widened(out ops.Tensors) (ops.Tensors, bool, error) {
	w := ops.Tensors{}
	any := false
	for n, x := range out {
		var dec func(uint16) float32
		switch x.DType {
		case tensor.F16:
			dec = half.DecodeFP16
		case tensor.BF16:
			dec = half.DecodeBF16
		}
		if dec != nil {
			b := x.Bits16()
			v := make([]float32, len(b))
			for i, h := range b {
				v[i] = dec(h)
			}
			y := tensor.FromF32(x.Shape, v)
			y.Logical = x.Logical
			x, any = y, true
		}
		w[n] = x
	}
	return w, any, nil
}

// Unary code alternatives, derived from the reference codes and inputs.

// ftzInputs reruns the reference profile on inputs whose float32
// subnormals are flushed to zero of the same sign.
func ftzInputs(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
	in := ops.Tensors{}
	flushed := false
	for n, x := range t.Inputs {
		if x.DType == tensor.F32 {
			b := x.Bits32()
			for i, v := range b {
				if v&0x7f800000 == 0 && v&0x007fffff != 0 {
					b[i] = v & 0x80000000
					flushed = true
				}
			}
			y := tensor.FromBits32(tensor.F32, x.Shape, b)
			y.Logical = x.Logical
			x = y
		}
		in[n] = x
	}
	if !flushed {
		// FTZ is the identity on a task without subnormals: it predicts
		// the reference there (not "does not apply", which would keep the
		// class from being exact over a suite whose other tasks lack
		// subnormals).
		return t.Reference, true, nil
	}
	out, err := ops.Run(s.Op, t.Params, in)
	if err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// nibbleSwap swaps the nibbles of every packed-E2M1 output; an op without
// one that reads packed E2M1 (unpack, dequantize) is rerun on inputs with
// their nibbles swapped.
func nibbleSwap(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
	if out, ok, err := nibbleSwapOutputs(t); ok || err != nil {
		return out, ok, err
	}
	in := ops.Tensors{}
	any := false
	for n, x := range t.Inputs {
		if x.Logical == "e2m1x2" {
			x, any = mapBytes(x, func(b byte) byte { return b<<4 | b>>4 }), true
		}
		in[n] = x
	}
	if !any {
		return nil, false, nil
	}
	out, err := ops.Run(s.Op, t.Params, in)
	if err != nil {
		return nil, false, nil
	}
	return out, true, nil
}

func nibbleSwapOutputs(t Task) (ops.Tensors, bool, error) {
	out := ops.Tensors{}
	any := false
	for n, r := range t.Reference {
		if r.Logical == "e2m1x2" {
			d := make([]byte, len(r.Data))
			for i, b := range r.Data {
				d[i] = b<<4 | b>>4
			}
			r = tensor.Tensor{DType: r.DType, Shape: r.Shape, Logical: r.Logical, Data: d}
			any = true
		}
		out[n] = r
	}
	return out, any, nil
}

// NVFP4: the scale and element arithmetic of the reference recipe varied
// one rule at a time, and its E2M1 profile replaced by each other profile.

// Classes lists every class name Alternatives can produce for s, sorted
// (for documentation and tests).
func Classes(s *suite.Suite, against string) []string {
	var n []string
	for _, a := range Alternatives(s, against) {
		n = append(n, a.Class)
	}
	sort.Strings(n)
	return n
}
