package block

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/bitexact/bitexact/refimpl/gguf"
)

// The GGUF block types of refimpl/gguf, each one description: ops
// gguf.quantize and gguf.dequantize with the fixed parameter type (ggml's
// type name) and the profile parameter profile (the four measured C
// builds), and gemv.gguf with the fixed parameter dot. One op per
// operation rather than one per type: the type is data the kernel author
// passes like fp8.encode's format, every type shares the profiles, and
// ggml itself dispatches through one type_traits table.
var _ = declare(ggufFormats(), ggufDots())

// ggufLayouts are the GGUF block layouts (ggml-org/ggml d99724f
// src/ggml-common.h), field by field.
var ggufLayouts = map[gguf.Type][]Field{
	gguf.Q4_0: {{"d", 0, 2, "fp16", "scale"}, {"qs", 2, 16, "nibbles", "q-8: byte j holds element j (low) and j+16 (high)"}},
	gguf.Q4_1: {{"d", 0, 2, "fp16", "scale"}, {"m", 2, 2, "fp16", "min"}, {"qs", 4, 16, "nibbles", "q: byte j holds element j (low) and j+16 (high)"}},
	gguf.Q5_0: {{"d", 0, 2, "fp16", "scale"}, {"qh", 2, 4, "bits", "bit j: the fifth bit of element j"}, {"qs", 6, 16, "nibbles", "low 4 bits, element j (low) and j+16 (high)"}},
	gguf.Q5_1: {{"d", 0, 2, "fp16", "scale"}, {"m", 2, 2, "fp16", "min"}, {"qh", 4, 4, "bits", "bit j: the fifth bit of element j"}, {"qs", 8, 16, "nibbles", "low 4 bits"}},
	gguf.Q8_0: {{"d", 0, 2, "fp16", "scale"}, {"qs", 2, 32, "i8", "q"}},
	gguf.Q2_K: {{"scales", 0, 16, "nibbles", "per 16 values: 4-bit scale (low) and 4-bit min (high)"}, {"qs", 16, 64, "crumbs", "2-bit quants"},
		{"d", 80, 2, "fp16", "super-block scale of the scales"}, {"dmin", 82, 2, "fp16", "super-block scale of the mins"}},
	gguf.Q3_K: {{"hmask", 0, 32, "bits", "the third bit of each quant"}, {"qs", 32, 64, "crumbs", "low 2 bits"},
		{"scales", 96, 12, "k3-scales", "16 6-bit scales (biased by 32)"}, {"d", 108, 2, "fp16", "super-block scale"}},
	gguf.Q4_K: {{"d", 0, 2, "fp16", "super-block scale of the scales"}, {"dmin", 2, 2, "fp16", "super-block scale of the mins"},
		{"scales", 4, 12, "k4-scales", "8 6-bit scales and 8 6-bit mins (get_scale_min_k4)"}, {"qs", 16, 128, "nibbles", "4-bit quants, 32 values per 16 bytes"}},
	gguf.Q5_K: {{"d", 0, 2, "fp16", "super-block scale of the scales"}, {"dmin", 2, 2, "fp16", "super-block scale of the mins"},
		{"scales", 4, 12, "k4-scales", "8 6-bit scales and 8 6-bit mins"}, {"qh", 16, 32, "bits", "the fifth bit of each quant"}, {"qs", 48, 128, "nibbles", "low 4 bits"}},
	gguf.Q6_K:   {{"ql", 0, 128, "nibbles", "low 4 bits"}, {"qh", 128, 64, "crumbs", "high 2 bits"}, {"scales", 192, 16, "i8", "8-bit scale per 16 values"}, {"d", 208, 2, "fp16", "super-block scale"}},
	gguf.Q8_K:   {{"d", 0, 4, "f32", "scale"}, {"qs", 4, 256, "i8", "q"}, {"bsums", 260, 32, "i16", "sum of q per 16 values"}},
	gguf.IQ4_NL: {{"d", 0, 2, "fp16", "scale"}, {"qs", 2, 16, "nibbles", "indices into kvalues_iq4nl"}},
	gguf.IQ4_XS: {{"d", 0, 2, "fp16", "super-block scale"}, {"scales_h", 2, 2, "bits", "high 2 bits of the 8 6-bit scales"},
		{"scales_l", 4, 4, "nibbles", "low 4 bits of the 8 6-bit scales"}, {"qs", 8, 128, "nibbles", "indices into kvalues_iq4nl"}},
	gguf.TQ1_0: {{"qs", 0, 48, "trits", "five trits a byte (base-3 fixed point)"}, {"qh", 48, 4, "trits", "four trits a byte"}, {"d", 52, 2, "fp16", "scale"}},
	gguf.TQ2_0: {{"qs", 0, 64, "crumbs", "2-bit quants (q-1)"}, {"d", 64, 2, "fp16", "scale"}},
	gguf.NVFP4: {{"d", 0, 4, "ue4m3", "UE4M3 scale per 16 values"}, {"qs", 4, 32, "nibbles", "E2M1 codes (kvalues_mxfp4)"}},
	gguf.Q1_0:  {{"d", 0, 2, "fp16", "scale (mean |x|)"}, {"qs", 2, 16, "bits", "bit j set: +d, clear: -d"}},
	gguf.Q2_0:  {{"d", 0, 2, "fp16", "scale (max |x|)"}, {"qs", 2, 16, "crumbs", "2-bit q, element (q-1)*d"}},
}

// ggufElements and ggufScales say, per type, what the values and the
// scales are.
var ggufElements = map[gguf.Type][2]string{
	gguf.Q4_0:   {"4-bit q, x = (q-8)*d", "fp16 d = max/-8 per 32, the signed value of largest magnitude"},
	gguf.Q4_1:   {"4-bit q, x = q*d + m", "fp16 d = (max-min)/15 and fp16 m = min per 32"},
	gguf.Q5_0:   {"5-bit q, x = (q-16)*d", "fp16 d = max/-16 per 32"},
	gguf.Q5_1:   {"5-bit q, x = q*d + m", "fp16 d = (max-min)/31 and fp16 m = min per 32"},
	gguf.Q8_0:   {"int8 q, x = q*d", "fp16 d = amax/127 per 32"},
	gguf.Q2_K:   {"2-bit q, x = d*sc*q - dmin*m", "4-bit sc and m per 16, fp16 d and dmin per 256 (make_qkx2_quants)"},
	gguf.Q3_K:   {"3-bit q (2 bits + hmask), x = d*(sc-32)*(q-4)", "6-bit sc per 16, fp16 d per 256 (make_q3_quants)"},
	gguf.Q4_K:   {"4-bit q, x = d*sc*q - dmin*m", "6-bit sc and m per 32, fp16 d and dmin per 256 (make_qkx2_quants)"},
	gguf.Q5_K:   {"5-bit q, x = d*sc*q - dmin*m", "6-bit sc and m per 32, fp16 d and dmin per 256"},
	gguf.Q6_K:   {"6-bit q, x = d*sc*(q-32)", "int8 sc per 16, fp16 d per 256 (make_qx_quants)"},
	gguf.Q8_K:   {"int8 q, x = q*d", "float32 d = max/-127 per 256, int16 block sums per 16"},
	gguf.IQ4_NL: {"4-bit index into kvalues_iq4nl, x = kvalues[q]*d", "fp16 d per 32"},
	gguf.IQ4_XS: {"4-bit index into kvalues_iq4nl, x = kvalues[q]*d*(ls-32)", "6-bit ls per 32, fp16 d per 256"},
	gguf.TQ1_0:  {"ternary q in {-1,0,1}, base-3 packed, x = q*d", "fp16 d = amax per 256"},
	gguf.TQ2_0:  {"ternary q in {-1,0,1}, 2 bits each, x = q*d", "fp16 d = amax per 256"},
	gguf.NVFP4:  {"E2M1 (kvalues_mxfp4, doubled), x = kv[q]*d/2", "UE4M3 d = amax/6 per 16 (ggml_fp32_to_ue4m3)"},
	gguf.Q1_0:   {"sign bit, x = ±d", "fp16 d = mean |x| per 128"},
	gguf.Q2_0:   {"2-bit q in {0..3}, x = (q-1)*d", "fp16 d = amax per 64"},
}

func ggufProfiles() []Profile {
	var ps []Profile
	for _, p := range gguf.Profiles() {
		ps = append(ps, Profile{p.Name, p.Summary, p.Source})
	}
	return ps
}

func ggufProfile(name string) (gguf.Profile, error) { return gguf.LookupProfile(name) }

func ggufFormats() []Format {
	var fs []Format
	for _, t := range gguf.Types() {
		t := t
		name := t.String()
		f := Format{
			Name: name, Suite: "gguf-" + strings.ToLower(name), Title: "GGUF " + strings.ToUpper(name), Family: "gguf",
			Elements: ggufElements[t][0], Scale: ggufElements[t][1],
			BlockElems: t.BlockElems(), BlockBytes: t.BlockBytes(), Layout: ggufLayouts[t],
			Dequantize: DequantizeOp{Op: "gguf.dequantize", Params: map[string]string{"type": name},
				Run: func(b []byte, profile string) ([]float32, error) {
					p, err := ggufProfile(profile)
					if err != nil {
						return nil, err
					}
					return gguf.Dequantize(t, b, p)
				},
				Inputs: []BlockSet{ggufBlockSet(t)},
				Doc:    "ggml dequantize_row_" + name + ": GGUF " + name + " blocks -> float32"},
			ProfileParam: "profile", Profiles: ggufProfiles(),
			Faults:    ggufFaults(t),
			Rationale: "docs/rationale/gguf.md",
		}
		if t.CanQuantize() {
			f.Quantize = &QuantizeOp{Op: "gguf.quantize", Params: map[string]string{"type": name},
				Run: func(x []float32, profile string) ([]byte, error) {
					p, err := ggufProfile(profile)
					if err != nil {
						return nil, err
					}
					return gguf.Quantize(t, x, p)
				},
				Inputs: []FloatSet{ggufFloatSet},
				Doc:    "ggml quantize_row_" + name + "_ref: float32 -> GGUF " + name + " blocks (" + f.Elements + "; " + f.Scale + ")"}
		}
		fs = append(fs, f)
	}
	return fs
}

func ggufDots() []Dot {
	var ds []Dot
	for _, d := range gguf.Dots() {
		d := d
		name := d.String()
		lower := strings.ToLower(name)
		ds = append(ds, Dot{Name: name, Suite: "gguf-vecdot-" + strings.ReplaceAll(lower, "_q", "-q"),
			Title: "GGUF " + strings.ToUpper(d.W.String()) + " x " + strings.ToUpper(d.Act.String()),
			W:     d.W.String(), Act: d.Act.String(), Op: "gemv.gguf", Params: map[string]string{"dot": name},
			Schedule:     ggufSchedule(d),
			ProfileParam: "profile", Profiles: ggufProfiles(),
			Run: func(w, act []byte, rows int, profile string) ([]float32, error) {
				p, err := ggufProfile(profile)
				if err != nil {
					return nil, err
				}
				if rows <= 0 || len(w)%rows != 0 {
					return nil, fmt.Errorf("%d weight bytes are not %d rows", len(w), rows)
				}
				rb := len(w) / rows
				y := make([]float32, rows)
				for r := range y {
					v, err := d.VecDot(w[r*rb:(r+1)*rb], act, p)
					if err != nil {
						return nil, err
					}
					y[r] = v
				}
				return y, nil
			},
			Inputs: ggufDotSet(d)})
	}
	return ds
}

// ggufSchedule is the declared order of ggml_vec_dot_<w>_<act>_generic
// (refimpl/gguf Dot).
func ggufSchedule(d gguf.Dot) string {
	switch d.W {
	case gguf.Q4_0:
		return "ggml CPU generic: per block an exact int32 sum, then sumf = ((float)sumi*dx)*dy + sumf block by block (the add fused under fma/arm64)"
	case gguf.Q8_0:
		return "ggml CPU generic: per block an exact int32 sum, then sumf = (float)sumi*(dx*dy) + sumf block by block (fused under fma/arm64)"
	}
	return "ggml CPU generic: per super-block 8 int32 lane sums (element index mod 8 within each 16, weighted by the sub-block scale), sums[l] += (d_x*d_y)*aux32[l] (fused under fma/arm64)" +
		map[bool]string{true: ", sumf -= (dmin_x*d_y)*sumi_min", false: ""}[d.W == gguf.Q4_K] + "; at the end sumf += sums[0..7] in lane order"
}

// rng is splitmix64, for the GGUF input sets.
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9E3779B97F4A7C15
	z := r.s
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

// unit is uniform in [-1, 1) on a 2^-23 grid.
func (r *rng) unit() float32 { return float32(int32(r.next()>>40)-(1<<23)) / (1 << 23) }

func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

func nextBelow(v float32) float32 {
	b := math.Float32bits(v)
	if v > 0 {
		return math.Float32frombits(b - 1)
	}
	return math.Float32frombits(b + 1)
}

// ggufFloatSet is the GGUF quantizers' input: one input class per run of
// values (Classes), 256 of them (one super-block) unless a class is about
// the 32- and 64-value blocks only, built to find the reported ways
// reimplementations break and to separate every pair of builds that
// differ somewhere (conformance/separation).
var ggufFloatSet = FloatSet{Name: "gguf.quantize",
	Doc: "x F32 [G*256], input classes in runs (Classes): all-zero and -0 blocks; sub-blocks whose scales (and mins) all differ, " +
		"so a 6-bit/4-bit scale unpack mix-up moves every value; x.5 ties of the q4_0, q5_0, q8_0 and q2_0 grids and the float32 just below " +
		"(roundf against floor(x+0.5), x*id+c contracted or not), 0.49999997 at unit scale; super-blocks where contraction changes a K-quant code; " +
		"tiny, huge and MaxFloat32 blocks; blocks whose scale is subnormal (1/d overflows, the overflowing casts differ by target) and blocks holding " +
		"one subnormal (FTZ inputs); NaN, ±Inf and all-non-finite blocks, and MaxFloat32 before a NaN (the NaN resets a running max)",
	Make: func() []float32 { x, _ := ggufQuantizeInputs(); return x },
	Classes: func() []Class {
		_, c := ggufQuantizeInputs()
		return c
	}()}

func ggufQuantizeInputs() ([]float32, []Class) {
	r := &rng{s: 0x67677566}
	var x []float32
	var classes []Class
	// addN appends n values of class kind; add a whole super-block.
	addN := func(kind string, n int, f func(i int) float32) {
		for i := 0; i < n; i++ {
			x = append(x, f(i))
		}
		if k := len(classes); k > 0 && classes[k-1].Name == kind {
			classes[k-1].Count += n
		} else {
			classes = append(classes, Class{kind, n})
		}
	}
	add := func(kind string, f func(i int) float32) { addN(kind, 256, f) }
	inf := float32(math.Inf(1))
	nan := math.Float32frombits(0x7FC00000)
	negNaN := math.Float32frombits(0xFFC00000)
	add("zero", func(int) float32 { return 0 })
	add("negzero", func(i int) float32 { return math.Float32frombits(uint32(1-i%2) << 31) })
	add("uniform", func(int) float32 { return r.unit() })
	add("gauss", func(int) float32 { return float32(r.unit()+r.unit()+r.unit()+r.unit()) * 0.02 })
	add("subscales", func(i int) float32 {
		sub := i / 16
		return r.unit() * float32(math.Ldexp(1+float64(sub)/7, sub%5-2))
	})
	off := r.unit()
	add("subscales-min", func(i int) float32 {
		sub := i / 32
		return float32(off*float32(sub)) + float32(r.unit()*float32(1+sub+2*(i/16%2)))
	})
	big := r.intn(16)
	add("one-big-subblock", func(i int) float32 {
		if i/16 == big {
			return r.unit() * 100
		}
		return r.unit() * 0.01
	})
	// The tie classes are about the 32- and 64-value grids: four blocks of
	// 32 (two of 64) each, the tie and the float32 below it sharing a
	// super-block.
	for _, a := range []struct {
		kind       string
		anchor, hi float32
	}{{"ties-q4_0", -8, 8}, {"ties-q5_0", -16, 16}, {"ties-q8_0", 127, 127}, {"ties-q2_0", 1, 2}} {
		for _, below := range []bool{false, true} {
			var ds [4]float32
			for b := range ds {
				ds[b] = float32(math.Ldexp(1+float64(r.intn(1000))/1000, r.intn(8)-4))
			}
			kind := a.kind
			if below {
				kind += "-below"
			}
			addN(kind, 128, func(i int) float32 {
				d := ds[i/32]
				if i%32 == 0 {
					return a.anchor * d
				}
				v := (float32(r.intn(int(2*a.hi))) - a.hi + 0.5) * d
				if below {
					v = nextBelow(v)
				}
				return v
			})
		}
	}
	// contraction: super-blocks of half-integer multiples of a scale per
	// 32 values (many near-equal candidate errors), from seeds a search
	// chose so that contraction (fma, arm64: q4_1's (x-min)*id + 0.5, the
	// K-quants' sums and fused nearest_int) and arm64's scalar sum of
	// squares (q4_K and q5_K weights) change a code: random values rarely
	// do, and the differences sit in a few rounding near-ties
	// (TestGGUFClassesSeparate).
	for _, seed := range ggufContractionSeeds {
		x = append(x, ggufContractionBlock(seed)...)
	}
	classes = append(classes, Class{"contraction", 256 * len(ggufContractionSeeds)})
	add("half-ulp", func(i int) float32 {
		return [8]float32{127, 0.49999997, 0.5, -0.49999997, 1.5, 2.5, -2.5, 126.5}[i%8]
	})
	add("ramp", func(i int) float32 { return float32(i-128) / 16 })
	for _, s := range []float32{1e-15, 1e-30, 1e-44} {
		add("tiny", func(int) float32 { return r.unit() * s })
	}
	// subnormal-scale (four blocks of 32): values in [2^-126, 2^-125), a
	// quarter replaced by subnormals; blocks 0 and 2 of random signs,
	// 1 positive, 3 negative, so that max-min is below 2^-125 too: the
	// legacy scale (max/-8 .. amax/127) is subnormal, 1/d overflows to
	// Inf and x*id is ±Inf, whose cast to an integer x86-64 (0x80000000)
	// and arm64 (saturated) give differently; the elements stay normal
	// under FTZ, so an FTZ build still meets the overflow.
	addN("subnormal-scale", 128, func(i int) float32 {
		v := float32(math.Ldexp(1+float64(abs32(r.unit())), -126))
		if i%4 == 3 {
			v = r.unit() * float32(math.Ldexp(1, -126))
		}
		if b := i / 32; b%2 == 0 && r.intn(2) == 0 || b == 3 {
			v = -v
		}
		return v
	})
	// subnormal-codes (four blocks of 32): values below 2^-120 and, every
	// other one, subnormals, which the K-quants' super-block scale (set by
	// the 2^-120 values) quantizes to nonzero codes, so that FTZ inputs
	// change codes.
	addN("subnormal-codes", 128, func(i int) float32 {
		if i%2 == 1 {
			return r.unit() * float32(math.Ldexp(1, -126))
		}
		return r.unit() * float32(math.Ldexp(1, -120))
	})
	// lone-subnormal: zeros and, in each block of 32, the largest
	// subnormal (sign alternating by block): FTZ makes the block all zero,
	// the reference derives a subnormal scale from it (and codes through
	// 1/d = Inf as in subnormal-scale).
	add("lone-subnormal", func(i int) float32 {
		if i%32 != (i/32*5+8)%32 {
			return 0
		}
		return math.Float32frombits(0x007FFFFF | uint32(i/32%2)<<31)
	})
	for _, s := range []float32{1e5, 3e38} {
		add("large", func(int) float32 { return r.unit() * s })
	}
	add("max", func(i int) float32 {
		if i%3 == 0 {
			return math.MaxFloat32
		}
		return -r.unit() * math.MaxFloat32
	})
	// Two blocks of 32 per non-finite value, at a position that moves by
	// block.
	for _, v := range []float32{inf, -inf, nan, negNaN} {
		addN("nonfinite", 64, func(i int) float32 {
			if i%32 == (i/32*5)%32 {
				return v
			}
			return r.unit()
		})
	}
	add("nonfinite-blocks", func(i int) float32 {
		switch i / 32 % 4 {
		case 0:
			return inf
		case 1:
			return -inf
		case 2:
			return nan
		}
		if i%2 == 0 {
			return inf
		}
		return nan
	})
	// nan-after-max: ±MaxFloat32 (sign alternating by block) before a NaN
	// and values below 1 after it: q8_0's MAX(amax, |x|) and the ternary
	// types' running max let the NaN replace the max and the next element
	// replace the NaN, so the scale comes from the small values and the
	// large one's x*id overflows the integer cast (0x80000000 on x86-64,
	// saturated on arm64).
	add("nan-after-max", func(i int) float32 {
		b, j := i/32, i%32
		switch {
		case j == (b*3+1)%16:
			return math.Float32frombits(math.Float32bits(math.MaxFloat32) | uint32(b%2)<<31)
		case j == 16+(b*5)%16:
			return math.Float32frombits(math.Float32bits(nan) | uint32(b/2%2)<<31)
		}
		return r.unit()
	})
	return x, classes
}

// ggufContractionSeeds seed the contraction super-blocks (see
// ggufQuantizeInputs).
var ggufContractionSeeds = []uint64{
	559,  // q6_K: fma against nofma
	1157, // q4_K: arm64 against fma and against nofma
	2708, // q4_1 and q4_K: fma against nofma
	6254, // q5_K: arm64 against fma
}

// ggufContractionBlock is one super-block of (k + 0.5) * d_b, k in
// [-32, 32), with one d_b per 32 values in [1/16, 8).
func ggufContractionBlock(seed uint64) []float32 {
	r := &rng{s: seed}
	var ds [8]float32
	for b := range ds {
		ds[b] = float32(math.Ldexp(1+float64(r.intn(1000))/1000, r.intn(8)-4))
	}
	x := make([]float32, 256)
	for i := range x {
		x[i] = (float32(r.intn(64)) - 32 + 0.5) * ds[i/32]
	}
	return x
}

func abs32(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }

// specialFP16 are the scale values a dequantizer must survive: ±0, the
// smallest subnormal, the largest finite, ±Inf, ±NaN and a signalling NaN.
var specialFP16 = []uint16{0x0000, 0x8000, 0x0001, 0x7BFF, 0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7D01}

// ggufRandomBlocks is the number of random blocks before the special ones.
const ggufRandomBlocks = 3

// ggufBlockSet is type t's dequantize input: random blocks with finite
// fp16 scales, then one block per special value of the first scale field
// (the second keeps a finite random value, so a NaN never meets a NaN);
// IQ4 blocks hold every grid level, IQ4_XS blocks together every 6-bit
// scale, NVFP4 blocks every UE4M3 code, Q8_K's float32 d zero, Inf, NaN
// and a subnormal (2^-133: every q*d subnormal). Zeros meet the scales:
// the last random block has a negative first scale, a zero second one
// (-0 for Q4_1 and Q5_1's m, +0 for the K-quants' dmin) and the low bit
// or nibble of each packed field's first byte clear (element 0's code
// zero in the legacy layouts), so that a zero quant gives -0; the
// ±Inf-scale blocks of Q8_0 and IQ4_XS hold a zero code or a zero
// sub-block scale (0*Inf: the default NaN, negative on x86-64, positive
// on arm64).
func ggufBlockSet(t gguf.Type) BlockSet {
	n := ggufRandomBlocks + len(specialFP16)
	switch t {
	case gguf.NVFP4:
		n = 64
	case gguf.IQ4_XS:
		n = max(n, 8)
	}
	return BlockSet{Name: "gguf." + t.String() + ".blocks",
		Doc: fmt.Sprintf("blocks U8 [%d,%d] of GGUF %s: %d with random bytes and finite scales (the last with a negative first scale and a zero second, so that zero quants give -0), then a block per special scale (±0, subnormal, max, ±Inf, ±NaN, sNaN); "+
			"IQ4 quants cycle through every grid level, IQ4_XS scales take every 6-bit value, NVFP4 scales every UE4M3 code; a zero code or sub-block scale meets each ±Inf scale", n, t.BlockBytes(), t, ggufRandomBlocks),
		Make:    func() []byte { return ggufBlocks(t, n) },
		Classes: []Class{{"random", ggufRandomBlocks}, {"special-scale", n - ggufRandomBlocks}}}
}

func ggufBlocks(t gguf.Type, n int) []byte {
	r := &rng{s: 0xB10C5 ^ uint64(t)<<32}
	bb := t.BlockBytes()
	b := make([]byte, n*bb)
	for i := range b {
		b[i] = byte(r.next())
	}
	for i := 0; i < n; i++ {
		blk := b[i*bb : (i+1)*bb]
		field := 0
		infScale := false
		for _, f := range ggufLayouts[t] {
			switch f.Kind {
			case "fp16":
				h := uint16(r.intn(2))<<15 | uint16(3+r.intn(16))<<10 | uint16(r.intn(1024))
				switch {
				case field == 0 && i >= ggufRandomBlocks && i-ggufRandomBlocks < len(specialFP16):
					h = specialFP16[i-ggufRandomBlocks]
					infScale = h&0x7FFF == 0x7C00
				case field == 0 && i == ggufRandomBlocks-1:
					h |= 0x8000
				case field == 1 && i == ggufRandomBlocks-1:
					// the zero whose sum with a -0 product is -0: q*d + m
					// takes m = -0, d*sc*q - dmin*m takes dmin = +0
					h = 0
					if f.Name == "m" {
						h = 0x8000
					}
				}
				field++
				binary.LittleEndian.PutUint16(blk[f.Offset:], h)
			case "f32":
				d := (r.unit() + 2) * 1e-3
				if k := i - ggufRandomBlocks; k >= 0 && k < 5 {
					d = [5]float32{0, float32(math.Inf(1)), math.Float32frombits(0x7FC00000), math.Float32frombits(0xFFA00001), math.Float32frombits(0x00040000)}[k]
				}
				binary.LittleEndian.PutUint32(blk[f.Offset:], math.Float32bits(d))
			case "ue4m3":
				for s := 0; s < f.Bytes; s++ {
					blk[f.Offset+s] = byte(4*i + s)
				}
			case "nibbles":
				if i == ggufRandomBlocks-1 {
					blk[f.Offset] &= 0xF0 // element 0's low bits zero
				}
			case "bits":
				if i == ggufRandomBlocks-1 {
					blk[f.Offset] &^= 1 // element 0's high bit zero
				}
			}
		}
		switch t {
		case gguf.Q8_0:
			if infScale {
				blk[2] = 0
			}
		case gguf.IQ4_NL:
			for j := 0; j < 16; j++ {
				blk[2+j] = byte((j+i)%16 | (15-(j+i)%16)<<4)
			}
		case gguf.IQ4_XS:
			for j := 0; j < 128; j++ {
				blk[8+j] = byte((j+i)%16 | (15-(j+i)%16)<<4)
			}
			switch {
			case i < 8:
				// blocks 0-7 take the 64 6-bit scales, block 7 (the +Inf
				// scale) 32-39
				var sh uint16
				for ib := 0; ib < 8; ib++ {
					ls := uint8(8*(i+5)+ib) % 64
					if ib%2 == 0 {
						blk[4+ib/2] = ls & 0xF
					} else {
						blk[4+ib/2] |= (ls & 0xF) << 4
					}
					sh |= uint16(ls>>4) << (2 * ib)
				}
				binary.LittleEndian.PutUint16(blk[2:], sh)
			case infScale:
				// sub-block 0 at ls = 32 (0x20: low nibble 0, high bits 2)
				blk[4] &= 0xF0
				blk[2] = blk[2]&^3 | 2
			}
		}
	}
	return b
}

// Dot product inputs: rows of random weight blocks with finite scales,
// activations quantized from sub-block-scaled values under nofma.
const ggufDotRows, ggufDotK = 8, 512

func ggufDotSet(d gguf.Dot) DotSet {
	return DotSet{Name: "gguf." + d.String() + ".gemv",
		Doc: fmt.Sprintf("w U8 [%d,%d,%d] (%d rows of random %s blocks, finite fp16 scales), act U8 [%d,%d] (%d values whose 16-value sub-blocks all differ in scale, quantized to %s under nofma)",
			ggufDotRows, ggufDotK/d.W.BlockElems(), d.W.BlockBytes(), ggufDotRows, d.W, ggufDotK/d.Act.BlockElems(), d.Act.BlockBytes(), ggufDotK, d.Act),
		Make: func() ([]byte, int, []byte) {
			r := &rng{s: 0xD07 ^ uint64(d.W)<<32}
			nb := ggufDotRows * ggufDotK / d.W.BlockElems()
			w := make([]byte, nb*d.W.BlockBytes())
			for i := range w {
				w[i] = byte(r.next())
			}
			bb := d.W.BlockBytes()
			for i := 0; i < nb; i++ {
				for _, f := range ggufLayouts[d.W] {
					if f.Kind == "fp16" {
						h := uint16(r.intn(2))<<15 | uint16(8+r.intn(8))<<10 | uint16(r.intn(1024))
						binary.LittleEndian.PutUint16(w[i*bb+f.Offset:], h)
					}
				}
			}
			x := make([]float32, ggufDotK)
			for i := range x {
				x[i] = r.unit() * float32(math.Ldexp(1+float64(i/16%16)/7, i/16%5-2))
			}
			act, err := gguf.Quantize(d.Act, x, gguf.NoFMA)
			if err != nil {
				panic(err) // unreachable: ggufDotK is a whole number of blocks
			}
			return w, ggufDotRows, act
		}}
}

// ggufFaults are the reported GGUF bugs that a computation reproduces.
func ggufFaults(t gguf.Type) []Fault {
	dropHigh := func(class, doc string, patch func(blk []byte)) Fault {
		return Fault{Class: class, Doc: doc, Dequantize: func(b []byte, profile string) ([]float32, error) {
			p, err := ggufProfile(profile)
			if err != nil {
				return nil, err
			}
			c := append([]byte(nil), b...)
			for off := 0; off+t.BlockBytes() <= len(c); off += t.BlockBytes() {
				patch(c[off : off+t.BlockBytes()])
			}
			return gguf.Dequantize(t, c, p)
		}}
	}
	switch t {
	case gguf.Q3_K:
		return []Fault{dropHigh("k-scales-4bit", "Q3_K's 6-bit sub-block scales unpacked as 4-bit (the high 2 bits dropped; reported in aprender#2115, unseen on all-zero blocks)",
			func(blk []byte) {
				for j := 104; j < 108; j++ {
					blk[j] = 0
				}
			})}
	case gguf.Q4_K, gguf.Q5_K:
		return []Fault{dropHigh("k-scales-4bit", "the 6-bit sub-block scales and mins unpacked as 4-bit (the high 2 bits dropped)",
			func(blk []byte) {
				for j := 4; j < 12; j++ {
					blk[j] &= 0x0F
				}
			})}
	case gguf.Q8_0:
		return []Fault{{Class: "floor-half-up", Doc: "roundf emulated by floor(x+0.5): wrong at 0.49999997 and at negative ties (reported in GPTQModel#3058)",
			Quantize: func(x []float32, profile string) ([]byte, error) {
				p, err := ggufProfile(profile)
				if err != nil {
					return nil, err
				}
				y, err := gguf.Quantize(gguf.Q8_0, x, p)
				if err != nil {
					return nil, err
				}
				for b := 0; b < len(x)/32; b++ {
					xb := x[32*b : 32*b+32]
					var amax float32
					for _, v := range xb {
						if a := float32(math.Abs(float64(v))); !(amax > a) {
							amax = a
						}
					}
					d := amax / 127
					if d != d || math.IsInf(float64(d), 0) || d == 0 {
						continue // the fault changes nothing the reference's casts do not decide
					}
					id := 1 / d
					for j, v := range xb {
						y[34*b+2+j] = byte(int8(math.Floor(float64(float32(float32(v*id) + 0.5)))))
					}
				}
				return y, nil
			}}}
	}
	return nil
}
