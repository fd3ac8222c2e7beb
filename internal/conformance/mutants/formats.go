package mutants

import (
	"math"
	"sort"

	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
	"github.com/bitexact/bitexact/refimpl/unary"
)

// formatCatalog is the bugs every sign-magnitude code format can have,
// written from the format's decode table alone (not from the reference's
// encoder, nor from the diagnosis): a rounder that sends exact midpoints
// away from zero, on the float32 suite and the fp16- and bf16-input
// suites; a conversion from a peer format that copies the codes; and a
// decoder without the subnormal branch. They are built for
// every format refimpl/unary declares, so a new format has mutants on
// its suites without an entry here.
func formatCatalog() []Mutant {
	var ms []Mutant
	for _, f := range unary.Formats() {
		if f.Fields.Sign != 1 {
			continue
		}
		claim := f.Canonical()
		suites := []string{f.Name}
		for _, src := range []string{"fp16", "bf16"} {
			if src != f.Name {
				suites = append(suites, f.Name+"-from-"+src)
			}
		}
		for _, s := range suites {
			ms = append(ms, Mutant{Name: s + "-generic-ties-away", Suite: s, Claim: claim, Class: "ties-away",
				Doc: f.Title + " midpoints rounded away from zero (a floor(|x|/ulp + 0.5) rounder), every other input as claimed",
				Run: tiesAway(f)})
		}
		for _, pp := range unary.PeerPairs() {
			if pp.To.Name == f.Name {
				ms = append(ms, Mutant{Name: f.Name + "-from-" + pp.From.Name + "-generic-reinterpreted", Suite: f.Name + "-from-" + pp.From.Name, Claim: claim,
					Class: "codes-reinterpreted",
					Doc:   pp.From.Title + " bytes passed on as " + f.Title + " unconverted (the OCP/FNUZ confusion of triton#10458 and aiter#3807)",
					Run: func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
						x := in["x"]
						if err := x.Expect("x", tensor.U8); err != nil {
							return nil, err
						}
						y := tensor.FromU8(x.Shape, append([]uint8(nil), x.Data...))
						y.Logical = f.Name
						return ops.Tensors{f.Encode.Output: y}, nil
					}})
			}
		}
		if f.DecodeOp.NoGolden == "" && f.Fields.Man > 0 {
			fl := f.Fields
			ms = append(ms, Mutant{Name: f.Name + "-decode-generic-no-subnormal-branch", Suite: f.Name + "-decode", Claim: "default", Class: "subnormals-as-normal",
				Doc: f.Title + " codes of exponent field 0 decoded by the normal formula with the implicit 1 (tile-ai/tilelang's _tir_u8_to_f8_e4m3_to_f16 had this bug)",
				Run: decodeCodes(func(_ ops.Params, b uint8) float32 {
					if int(b)>>fl.Man&(1<<fl.Exp-1) == 0 {
						return formulaDecode(b, fl.Exp, fl.Man, fl.Bias)
					}
					return f.Decode(uint32(b))
				})})
		}
	}
	return ms
}

// tiesAway runs the claimed conversion and moves every input that lies
// exactly halfway between two neighbouring magnitudes of f to the larger
// one, sign kept.
func tiesAway(f unary.Format) func(ops.Params, ops.Tensors) (ops.Tensors, error) {
	// The finite magnitudes of f with their codes, ascending.
	type mag struct {
		v    float64
		code uint32
	}
	var mags []mag
	seen := map[float64]bool{}
	for c := uint32(0); c < 1<<f.Fields.Bits(); c++ {
		v := float64(f.Decode(c))
		if math.IsNaN(v) || math.IsInf(v, 0) || math.Signbit(v) || seen[v] {
			continue
		}
		seen[v] = true
		mags = append(mags, mag{v, c})
	}
	sort.Slice(mags, func(i, j int) bool { return mags[i].v < mags[j].v })
	signBit := uint32(1) << (f.Fields.Exp + f.Fields.Man)
	return func(p ops.Params, in ops.Tensors) (ops.Tensors, error) {
		out, err := ops.Run(f.Encode.Op, p, in)
		if err != nil {
			return nil, err
		}
		xs, err := widenedInputs(in["x"])
		if err != nil {
			return nil, err
		}
		y := out[f.Encode.Output]
		set := func(i int, code uint32) {
			if y.DType.Size() == 2 {
				y.Data[2*i], y.Data[2*i+1] = byte(code), byte(code>>8)
			} else {
				y.Data[i] = byte(code)
			}
		}
		y.Data = append([]byte(nil), y.Data...)
		for i, x := range xs {
			a := math.Abs(float64(x))
			k := sort.Search(len(mags), func(k int) bool { return mags[k].v >= a })
			if k == 0 || k == len(mags) || (mags[k-1].v+mags[k].v)/2 != a {
				continue
			}
			code := mags[k].code
			if math.Signbit(float64(x)) {
				code |= signBit
			}
			set(i, code)
		}
		out[f.Encode.Output] = y
		return out, nil
	}
}

// widenedInputs are the float32 values of an F32 x or of an F16 or BF16
// x widened exactly.
func widenedInputs(x tensor.Tensor) ([]float32, error) {
	switch x.DType {
	case tensor.F16:
		h := x.Bits16()
		v := make([]float32, len(h))
		for i, b := range h {
			v[i] = half.DecodeFP16(b)
		}
		return v, nil
	case tensor.BF16:
		h := x.Bits16()
		v := make([]float32, len(h))
		for i, b := range h {
			v[i] = math.Float32frombits(uint32(b) << 16)
		}
		return v, nil
	}
	if err := x.Expect("x", tensor.F32); err != nil {
		return nil, err
	}
	return x.F32(), nil
}
