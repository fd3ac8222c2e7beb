package diagnose

import (
	"math"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/awq"
	"github.com/bitexact/bitexact/refimpl/fp8"
	"github.com/bitexact/bitexact/refimpl/gemv"
	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/nvfp4"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// TestUnaryTransforms pins each unary alternative on named inputs. The
// expected codes come from the E2M1 value table (0, 0.5, 1, 1.5, 2, 3, 4,
// 6; sign bit 0x8) and the E4M3 encoding (448 = 0x7e, NaN = 0x7f).
func TestUnaryTransforms(t *testing.T) {
	e2m1 := &suite.Suite{Spec: suite.Spec{Op: "e2m1.encode"}}
	e4m3 := &suite.Suite{Spec: suite.Spec{Op: "fp8.encode"}}
	bf16 := &suite.Suite{Spec: suite.Spec{Op: "bf16.encode"}}
	fp16 := &suite.Suite{Spec: suite.Spec{Op: "fp16.encode"}}
	negNaN := math.Float32frombits(0xffc00000)
	for _, tc := range []struct {
		name  string
		s     *suite.Suite
		class string
		x     float32
		ref   uint16 // the reference code (nearest-even, the claimed profile)
		want  uint16
	}{
		{"tie 0.25 away", e2m1, "ties-away", 0.25, 0x0, 0x1},
		{"tie -0.25 away", e2m1, "ties-away", -0.25, 0x8, 0x9},
		{"tie 1.25 away", e2m1, "ties-away", 1.25, 0x2, 0x3},
		{"tie 5 away", e2m1, "ties-away", 5, 0x6, 0x7},
		{"non-tie 1.3 stays", e2m1, "ties-away", 1.3, 0x3, 0x3},
		{"tie 0.75 toward zero", e2m1, "ties-toward-zero", 0.75, 0x2, 0x1},
		{"tie 3.5 toward zero", e2m1, "ties-toward-zero", 3.5, 0x6, 0x5},
		{"tie 2.5 toward zero (already)", e2m1, "ties-toward-zero", 2.5, 0x4, 0x4},
		{"truncate 1.7", e2m1, "truncation", 1.7, 0x4, 0x3},
		{"truncate -5.9", e2m1, "truncation", -5.9, 0xf, 0xe},
		{"truncate 6 exact", e2m1, "truncation", 6, 0x7, 0x7},
		{"-NaN sign kept", e2m1, "nan-sign-kept", negNaN, 0x7, 0xf},
		{"-0 cleared", e2m1, "negative-zero-cleared", float32(math.Copysign(0, -1)), 0x8, 0x0},
		{"e4m3 -NaN sign kept", e4m3, "nan-sign-kept", negNaN, 0x7f, 0xff},
		{"e4m3 -NaN cleared", e4m3, "nan-sign-cleared", negNaN, 0xff, 0x7f},
		{"e4m3 tie 17 away", e4m3, "ties-away", 17, 0x58, 0x59}, // 16 = 0x58, 18 = 0x59, 17 a tie
		{"e4m3 subnormal 2^-7 flushed", e4m3, "ftz-outputs", 0x1p-7, 0x04, 0x00},
		{"e4m3 min normal 2^-6 kept", e4m3, "ftz-outputs", 0x1p-6, 0x08, 0x08},
		// bf16 1+2^-8 is 0x3f808000: rne rounds the tie to even 0x3f80;
		// 1+3*2^-9 rounds up to 0x3f81 and truncates to 0x3f80.
		{"bf16 truncate 1+3*2^-9", bf16, "truncation", 1 + 3*0x1p-9, 0x3f81, 0x3f80},
		{"bf16 truncate -(1+3*2^-9)", bf16, "truncation", -(1 + 3*0x1p-9), 0xbf81, 0xbf80},
		{"bf16 truncate overflow to max finite", bf16, "truncation", math.MaxFloat32, 0x7f80, 0x7f7f},
		{"bf16 tie 1+2^-8 away", bf16, "ties-away", 1 + 0x1p-8, 0x3f80, 0x3f81},
		{"bf16 -NaN cleared", bf16, "nan-sign-cleared", negNaN, 0xffc0, 0x7fc0},
		// fp16 2^-24 is the smallest subnormal (0x0001); 2^-14 the
		// smallest normal (0x0400).
		{"fp16 subnormal flushed", fp16, "ftz-outputs", -0x1p-24, 0x8001, 0x8000},
		{"fp16 largest subnormal flushed", fp16, "ftz-outputs", 0x3ffp-24, 0x03ff, 0x0000},
		{"fp16 min normal kept", fp16, "ftz-outputs", 0x1p-14, 0x0400, 0x0400},
		{"fp16 truncate 65519", fp16, "truncation", 65519, 0x7bff, 0x7bff},
		{"fp16 truncate 65520 (rounds to Inf)", fp16, "truncation", 65520, 0x7c00, 0x7bff},
		{"fp16 tie 1+2^-11 toward zero", fp16, "ties-toward-zero", 1 + 0x1p-11, 0x3c00, 0x3c00},
		{"fp16 tie 1+3*2^-11 toward zero", fp16, "ties-toward-zero", 1 + 3*0x1p-11, 0x3c02, 0x3c01},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var alt *Alternative
			for _, a := range unaryAlternatives() {
				if a.Class == tc.class {
					a := a
					alt = &a
				}
			}
			if alt == nil {
				t.Fatalf("no alternative %s", tc.class)
			}
			ref, name := tensor.FromU8([]int{1}, []uint8{uint8(tc.ref)}), "codes"
			switch tc.s {
			case bf16:
				ref, name = tensor.FromBits16(tensor.BF16, []int{1}, []uint16{tc.ref}), "y"
			case fp16:
				ref, name = tensor.FromBits16(tensor.F16, []int{1}, []uint16{tc.ref}), "y"
			}
			task := Task{Params: ops.Params{"format": "e4m3"}, Inputs: ops.Tensors{"x": tensor.FromF32([]int{1}, []float32{tc.x})},
				Reference: ops.Tensors{name: ref}}
			out, ok, err := alt.Compute(tc.s, task)
			if err != nil || !ok {
				t.Fatalf("ok=%v err=%v", ok, err)
			}
			got := uint16(out[name].Data[0])
			if name == "y" {
				got = out[name].Bits16()[0]
			}
			if got != tc.want {
				t.Errorf("code 0x%02x, want 0x%02x", got, tc.want)
			}
		})
	}
}

// TestLayoutTransforms pins the result transforms on one crafted element.
func TestLayoutTransforms(t *testing.T) {
	// sparse24: meta nibble i0=1,i1=3 is 1|3<<2 = 0xd; swapped 3|1<<2 = 0x7.
	meta := tensor.FromU8([]int{1}, []uint8{0x7d})
	comp := tensor.FromU8([]int{1}, []uint8{0x21})
	task := Task{Reference: ops.Tensors{"meta": meta, "comp": comp}}
	out, _, _ := sparseMeta(task, false)
	if got := out["meta"].Data[0]; got != 0xd7 {
		t.Errorf("indices swapped: meta 0x%02x, want 0xd7", got)
	}
	if got := out["comp"].Data[0]; got != 0x21 {
		t.Errorf("indices swapped: comp 0x%02x changed", got)
	}
	out, _, _ = sparseMeta(task, true)
	if got := out["comp"].Data[0]; got != 0x12 {
		t.Errorf("descending: comp 0x%02x, want 0x12", got)
	}
	// llama.cpp block: split halves q[j] | q[j+16]<<4 -> adjacent pairs.
	blk := make([]uint8, 17)
	blk[0] = 127
	for j := 0; j < 16; j++ {
		blk[1+j] = uint8(j) | uint8(j+16)&15<<4 // q[j] = j, q[j+16] = j (mod 16)
	}
	out, _, _ = ggmlAdjacent(nil, Task{Reference: ops.Tensors{"blocks": tensor.FromU8([]int{1, 17}, blk)}})
	// q = 0,1,...,15,0,1,...,15: adjacent byte j = q[2j] | q[2j+1]<<4.
	if got := out["blocks"].Data[1]; got != 0x10 {
		t.Errorf("adjacent byte 0 = 0x%02x, want 0x10", got)
	}
	if got := out["blocks"].Data[9]; got != 0x10 {
		t.Errorf("adjacent byte 8 = 0x%02x, want 0x10 (q[16], q[17])", got)
	}
	out, _, _ = nibbleSwap(nil, Task{Reference: ops.Tensors{"packed": {DType: tensor.U8, Shape: []int{1}, Logical: "e2m1x2", Data: []byte{0x3a}}}})
	if got := out["packed"].Data[0]; got != 0xa3 {
		t.Errorf("nibble swap 0x%02x, want 0xa3", got)
	}
}

// TestRunExact: results equal to another profile are explained by it;
// results equal to the reference need no explanation.
func TestRunExact(t *testing.T) {
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	s, err := suite.Resolve(set, "e4m3")
	if err != nil {
		t.Fatal(err)
	}
	var tasks, same []Task
	for _, tk := range s.Tasks {
		in, _ := set.Inputs(tk.Cases["satfinite"])
		exp := map[string]ops.Tensors{}
		for _, p := range tk.Profiles {
			exp[p], _ = set.Expected(tk.Cases[p])
		}
		tasks = append(tasks, Task{Task: tk, Params: ops.Params(tk.Cases["satfinite"].Params), Inputs: in,
			Reference: exp["satfinite"], Expected: exp, Observed: exp["nosat"]})
		same = append(same, Task{Task: tk, Params: ops.Params(tk.Cases["satfinite"].Params), Inputs: in,
			Reference: exp["satfinite"], Expected: exp, Observed: exp["satfinite"]})
	}
	d, err := Run(s, "satfinite", tasks)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Explained || d.Classes[0].Class != "profile:nosat" || d.Mismatches == 0 {
		t.Errorf("diagnosis %+v", d)
	}
	d, err = Run(s, "satfinite", same)
	if err != nil {
		t.Fatal(err)
	}
	if d.Explained || d.Mismatches != 0 {
		t.Errorf("reference results diagnosed: %+v", d)
	}
}

// goldenTasks builds the diagnosis tasks of a golden suite against
// profile claim, with the observed outputs computed by kernel from each
// task's inputs and reference params.
func goldenTasks(t *testing.T, suiteName, claim string, kernel func(s *suite.Suite, p ops.Params, in ops.Tensors) ops.Tensors) (*suite.Suite, []Task) {
	t.Helper()
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	s, err := suite.Resolve(set, suiteName)
	if err != nil {
		t.Fatal(err)
	}
	var tasks []Task
	for _, tk := range s.Tasks {
		c, ok := tk.Cases[claim]
		if !ok {
			continue
		}
		in, err := set.Inputs(c)
		if err != nil {
			t.Fatal(err)
		}
		exp := map[string]ops.Tensors{}
		for _, p := range tk.Profiles {
			if exp[p], err = set.Expected(tk.Cases[p]); err != nil {
				t.Fatal(err)
			}
		}
		tasks = append(tasks, Task{Task: tk, Params: ops.Params(c.Params), Inputs: in, Reference: exp[claim], Expected: exp,
			Observed: kernel(s, ops.Params(c.Params), in)})
	}
	if len(tasks) == 0 {
		t.Fatalf("suite %s has no task of profile %s", suiteName, claim)
	}
	return s, tasks
}

// mustClass runs the diagnosis and fails unless class is among the exact
// classes.
func mustClass(t *testing.T, s *suite.Suite, claim string, tasks []Task, class string) Diagnosis {
	t.Helper()
	d, err := Run(s, claim, tasks)
	if err != nil {
		t.Fatal(err)
	}
	if d.Mismatches == 0 {
		t.Fatalf("the mutated kernel matches the reference on the golden inputs")
	}
	for _, c := range d.Classes {
		if c.Class == class {
			return d
		}
	}
	t.Errorf("diagnosis %q does not name %s", d.Summary(), class)
	return d
}

// halfKernel encodes every float32 input with enc (bf16 or fp16 bits).
func halfKernel(dt tensor.DType, enc func(x float32) uint16) func(*suite.Suite, ops.Params, ops.Tensors) ops.Tensors {
	return func(_ *suite.Suite, _ ops.Params, in ops.Tensors) ops.Tensors {
		xs := in["x"].F32()
		y := make([]uint16, len(xs))
		for i, x := range xs {
			y[i] = enc(x)
		}
		return ops.Tensors{"y": tensor.FromBits16(dt, in["x"].Shape, y)}
	}
}

// TestHalfRuleVariants: a bf16 encoder that truncates (the top 16 bits of
// the float32, NaN handled as the reference) is diagnosed as truncation;
// an fp16 encoder that flushes subnormal results to zero as ftz-outputs.
func TestHalfRuleVariants(t *testing.T) {
	t.Run("bf16 truncation", func(t *testing.T) {
		s, tasks := goldenTasks(t, "bf16", "rne", halfKernel(tensor.BF16, func(x float32) uint16 {
			if x != x {
				return half.RNE.EncodeBF16(x)
			}
			return uint16(math.Float32bits(x) >> 16)
		}))
		mustClass(t, s, "rne", tasks, "truncation")
	})
	t.Run("fp16 ftz", func(t *testing.T) {
		s, tasks := goldenTasks(t, "fp16", "rne", halfKernel(tensor.F16, func(x float32) uint16 {
			h := half.RNE.EncodeFP16(x)
			if h&0x7c00 == 0 {
				h &= 0x8000
			}
			return h
		}))
		mustClass(t, s, "rne", tasks, "ftz-outputs")
	})
}

// awqQuantizeKernel quantizes as quantizer qz and packs the nibbles in
// order wOrder (weights) and zOrder (zero points, stored plus zOff modulo
// 16), as AutoAWQ's from_linear with its order_map and zero storage
// edited: its repack values unmasked, forge's stored nibbles.
func awqQuantizeKernel(t *testing.T, qz awq.Quantizer, wOrder, zOrder [8]int, zOff int) func(*suite.Suite, ops.Params, ops.Tensors) ops.Tensors {
	pack := func(v func(i int) uint32, rows, cols int, order [8]int) tensor.Tensor {
		out := make([]int32, rows*cols/8)
		for i := range out {
			r, j := i/(cols/8), i%(cols/8)
			var w uint32
			for p := 0; p < 8; p++ {
				w |= v(r*cols+8*j+order[p]) << (4 * p)
			}
			out[i] = int32(w)
		}
		return tensor.FromI32([]int{rows, cols / 8}, out)
	}
	return func(_ *suite.Suite, p ops.Params, in ops.Tensors) ops.Tensors {
		w := in["w"]
		ic, oc := w.Shape[0], w.Shape[1]
		g, err := p.Int("group", 128)
		if err != nil {
			t.Fatal(err)
		}
		if g == -1 {
			g = ic
		}
		q, err := awq.Quantize(w.Bits16(), ic, oc, g, qz)
		if err != nil {
			t.Fatal(err)
		}
		wv := func(i int) uint32 { return uint32(q.Q[i]) }
		if q.IntWeight != nil {
			wv = func(i int) uint32 { return uint32(q.IntWeight[i]) }
		}
		zv := func(i int) uint32 { return uint32(int(q.Zeros[i])+zOff) & 15 }
		return ops.Tensors{"qweight": pack(wv, ic, oc, wOrder), "qzeros": pack(zv, ic/g, oc, zOrder),
			"scales": tensor.FromBits16(tensor.F16, []int{ic / g, oc}, q.Scales)}
	}
}

// TestAWQQuantizeLayouts: a quantizer that writes the right values in a
// wrong layout is diagnosed with the layout classes of awq.pack.
func TestAWQQuantizeLayouts(t *testing.T) {
	// forge stores every zero point as 8, whose nibbles read the same in
	// either order: there both order classes are exact. AutoAWQ's zero
	// points vary and tell them apart.
	awqO, seq := awq.OrderAWQ, awq.OrderSequential
	for _, tc := range []struct {
		name, class    string
		wOrder, zOrder [8]int
		zOff           int
	}{
		{"sequential nibbles", "awq-nibble-order", seq, seq, 0},
		{"sequential weight nibbles", "awq-weight-nibble-order", seq, awqO, 0},
		{"zero points minus one", "gptq-zero-minus-one", awqO, awqO, -1},
	} {
		for _, qz := range []awq.Quantizer{awq.Forge, awq.AutoAWQ} {
			t.Run(tc.name+"/"+qz.Name, func(t *testing.T) {
				s, tasks := goldenTasks(t, "awq-quantize", qz.Name, awqQuantizeKernel(t, qz, tc.wOrder, tc.zOrder, tc.zOff))
				d := mustClass(t, s, qz.Name, tasks, tc.class)
				if qz.Name == "autoawq" && len(d.Classes) != 1 {
					t.Errorf("classes %v, want only %s", d.Classes, tc.class)
				}
			})
		}
	}
	// The unmutated kernel reproduces the reference (the harness is right).
	for _, qz := range []awq.Quantizer{awq.Forge, awq.AutoAWQ} {
		s, tasks := goldenTasks(t, "awq-quantize", qz.Name, awqQuantizeKernel(t, qz, awqO, awqO, 0))
		d, err := Run(s, qz.Name, tasks)
		if err != nil || d.Mismatches != 0 {
			t.Fatalf("%s reference kernel: %d mismatches, err %v", qz.Name, d.Mismatches, err)
		}
	}
}

// canonicalKernel is the canonical NVFP4 recipe written plainly (amax over
// finite and infinite |x|, g = 2688/amax, t = float32(b/6)*g), with the
// E4M3 scale cast by search over the codes: rounding toward zero (rz) or
// the reference's satfinite nearest-even; the element q = x/d or, with
// rcp, x*float32(1/d).
func canonicalKernel(rz, rcp bool) func(*suite.Suite, ops.Params, ops.Tensors) ops.Tensors {
	return func(_ *suite.Suite, p ops.Params, in ops.Tensors) ops.Tensors {
		x := in["x"]
		m, k := x.Shape[0], x.Shape[1]
		xs := x.F32()
		g := nvfp4.GlobalFromAmax(nvfp4.TensorAmax(xs), nvfp4.Canonical)
		scales, packed := make([]uint8, len(xs)/16), make([]uint8, len(xs)/2)
		for blk := range scales {
			bx := xs[16*blk : 16*blk+16]
			var b float32
			for _, v := range bx {
				if v == v {
					b = max(b, float32(math.Abs(float64(v))))
				}
			}
			tv := float32(b/6) * g
			sc := fp8.E4M3.Encode(tv, fp8.Satfinite)
			if rz && tv == tv {
				sc = 0
				for c := uint8(0); c <= 0x7e; c++ {
					if fp8.E4M3.Decode(c) <= tv {
						sc = c
					}
				}
			}
			scales[blk] = sc
			d := fp8.E4M3.Decode(sc) / g
			for i, v := range bx {
				var q float32
				switch {
				case d == 0:
					q = v * 0
				case rcp:
					q = v * (1 / d)
				default:
					q = v / d
				}
				if q != q {
					q = math.Float32frombits(0x7fc00000)
				}
				packed[(16*blk+i)/2] |= nvfp4.Canonical.FP4.Encode(q) & 15 << (4 * (i % 2))
			}
		}
		sct := tensor.FromU8([]int{m, k / 16}, scales)
		sct.Logical = "e4m3"
		pt := tensor.FromU8([]int{m, k / 2}, packed)
		pt.Logical = "e2m1x2"
		return ops.Tensors{"packed": pt, "scales": sct, "global": tensor.FromF32([]int{1}, []float32{g})}
	}
}

// TestNVFP4Steps: the step-by-step recipe of the scale-cast:rz and
// element-rule:mul-rcp-d classes, with neither change, is the reference
// on every golden task of every profile; with one, a plainly written
// kernel doing that is diagnosed as it.
func TestNVFP4Steps(t *testing.T) {
	s, tasks := goldenTasks(t, "nvfp4", "recipe=canonical,swizzle=0", canonicalKernel(false, false))
	if d, err := Run(s, "recipe=canonical,swizzle=0", tasks); err != nil || d.Mismatches != 0 {
		t.Fatalf("plain canonical kernel: %d mismatches, err %v", d.Mismatches, err)
	}
	n := 0
	for _, tk := range tasks {
		for p, want := range tk.Expected {
			params := ops.Params(tk.Task.Cases[p].Params)
			r, err := nvfp4.LookupRecipe(params.Get("recipe", "canonical"))
			if err != nil {
				t.Fatal(err)
			}
			if r.Arith != nvfp4.CanonicalNaN {
				continue // nvfp4Steps writes out the reference recipes only
			}
			got, ok, err := nvfp4Steps(Task{Params: params, Inputs: tk.Inputs}, r, false, false)
			if err != nil || !ok {
				t.Fatalf("%s/%s: ok=%v err=%v", tk.Task.Name, p, ok, err)
			}
			if countDiff(want, got) != 0 {
				t.Errorf("%s/%s: nvfp4Steps differs from the reference in %d elements", tk.Task.Name, p, countDiff(want, got))
			}
			n++
		}
	}
	t.Logf("nvfp4Steps equals the reference on %d task/profile pairs", n)
	for _, tc := range []struct {
		name, class string
		rz, rcp     bool
	}{
		{"truncating scale cast", "scale-cast:rz", true, false},
		{"reciprocal element scale", "element-rule:mul-rcp-d", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, tasks := goldenTasks(t, "nvfp4", "recipe=canonical,swizzle=0", canonicalKernel(tc.rz, tc.rcp))
			mustClass(t, s, "recipe=canonical,swizzle=0", tasks, tc.class)
		})
	}
}

// TestNVFP4ZeroPositiveEveryRecipe: the negative-zero-cleared alternative
// is offered against every NVFP4 recipe, the reference recipes (which also
// get the step-written alternatives) and the library recipes alike.
func TestNVFP4ZeroPositiveEveryRecipe(t *testing.T) {
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	s, err := suite.Resolve(set, "nvfp4")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range nvfp4.Recipes() {
		t.Run(r.Name, func(t *testing.T) {
			against := "recipe=" + r.Name + ",swizzle=0"
			var classes []string
			for _, a := range Alternatives(s, against) {
				if a.Class == "negative-zero-cleared" {
					return
				}
				classes = append(classes, a.Class)
			}
			t.Errorf("alternatives against %s lack negative-zero-cleared: %v", against, classes)
		})
	}
}

// TestLikelyCause pins the rule for showing a partial hint.
func TestLikelyCause(t *testing.T) {
	for _, tc := range []struct {
		name                          string
		explained, broken, mismatches int
		want                          bool
	}{
		{"a few subnormals of a kernel wrong everywhere", 321, 0, 41536, false},
		{"all but one mismatch", 99, 0, 100, true},
		{"three quarters", 75, 0, 100, true},
		{"just under three quarters", 74, 0, 100, false},
		// A CUDA mutant that counts Inf in the NVFP4 amax: a saturating
		// scale cast accounts for the blocks whose scale overflowed, not
		// for the rest, and is not the cause.
		{"cuda-nvfp4-amax-counts-inf's closest, scale-cast:nosat", 288, 0, 505, false},
		{"most, but breaks a correct element", 99, 1, 100, false},
		{"nothing explained", 0, 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := likelyCause(Match{Explained: tc.explained, Broken: tc.broken}, tc.mismatches); got != tc.want {
				t.Errorf("likelyCause = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestWrittenAsF32: a GEMV computing fp16 outputs whose harness writes
// them as float32 is told so, whether it claims the fp16 profile or
// another.
func TestWrittenAsF32(t *testing.T) {
	f16out := func(_ *suite.Suite, p ops.Params, in ops.Tensors) ops.Tensors {
		p = withParams(p, map[string]string{"schedule": "seq-f16out"})
		out, err := ops.Run("gemv.awq", p, in)
		if err != nil {
			t.Fatal(err)
		}
		y := out["y"]
		if y.DType != tensor.F16 {
			t.Fatalf("seq-f16out y is %s, want F16", y.DType)
		}
		b := y.Bits16()
		v := make([]float32, len(b))
		for i, h := range b {
			v[i] = half.DecodeFP16(h) // as a harness's y.float() does
		}
		return ops.Tensors{"y": tensor.FromF32(y.Shape, v)}
	}
	for _, tc := range []struct{ claim, class string }{
		{"seq", "written-as-f32:profile:seq-f16out"},
		{"seq-f16out", "written-as-f32"},
	} {
		t.Run(tc.claim, func(t *testing.T) {
			s, tasks := goldenTasks(t, "gemv-awq", tc.claim, f16out)
			d := mustClass(t, s, tc.claim, tasks, tc.class)
			if len(d.Classes) != 1 {
				t.Errorf("classes %v, want only %s", d.Classes, tc.class)
			}
		})
	}
}

// TestGEMVProfileDocs: a GEMV profile's doc, spelled by the schedule
// alone or among other keys, names fp16 partials or an fp16 output exactly
// when its schedule has them.
func TestGEMVProfileDocs(t *testing.T) {
	n := 0
	for _, op := range []string{"gemv.awq", "gemv.mxfp4_q8_1", "gemv.sparse_fp4"} {
		for _, name := range gemv.Names() {
			sc, err := gemv.Lookup(name)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, p := range []string{name, "schedule=" + name + ",scale_decode=e4m3fn"} {
				doc := profileDoc(op, p)
				n++
				if !strings.HasSuffix(doc, " (profile "+p+")") {
					t.Errorf("%s %s: doc %q has no summary", op, p, doc)
				}
				if got, want := strings.Contains(doc, "fp16 partial"), sc.Partial == gemv.FP16 || sc.Accum == gemv.FP16; got != want {
					t.Errorf("%s %s: doc %q mentions fp16 partials: %v, schedule has them: %v", op, p, doc, got, want)
				}
				if got, want := strings.Contains(doc, "fp16 output"), sc.Out == gemv.FP16; got != want {
					t.Errorf("%s %s: doc %q mentions an fp16 output: %v, schedule has one: %v", op, p, doc, got, want)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no GEMV profile docs")
	}
	if got := profileDoc("gemv.awq", "chunk=64,lanes=1,group=1,fma=1,acc=fp32,partial=fp32,reduce=seq,out=fp32"); got != "behaves as profile chunk=64,lanes=1,group=1,fma=1,acc=fp32,partial=fp32,reduce=seq,out=fp32" {
		t.Errorf("spec-string profile: doc %q", got)
	}
	if got, want := profileDoc("e2m1.encode", "cutlass"), "NaN sign kept (-NaN -> -6): cutlass float_e2m1_t (profile cutlass)"; got != want {
		t.Errorf("e2m1 cutlass: doc %q, want %q", got, want)
	}
	if got, want := profileDoc("mxfp4.quantize", "mode=ceil,profile=ml_dtypes"), "E8M0 scale rounded up (ceil of log2); NaN -> -0 / +0 (ml_dtypes float4_e2m1fn) (profile mode=ceil,profile=ml_dtypes)"; got != want {
		t.Errorf("mxfp4: doc %q, want %q", got, want)
	}
}
