package separation

import (
	"crypto/sha256"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/bitexact/bitexact/conformance/diagnose"
	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/internal/conformance/mutants"
	"github.com/bitexact/bitexact/internal/golden/catalog"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/sparse24"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// env is one input of one task with every profile's outputs on it, which
// the diagnosis alternatives read as their reference.
type env struct {
	s    *suite.Suite
	task suite.Task
	in   ops.Tensors
	ref  map[string]ops.Tensors // profile -> outputs (absent: undefined)
}

// variant is one implementation of a suite's op.
type variant struct {
	name string
	run  func(e *env) (ops.Tensors, bool)
}

// safe runs f, treating a panic or an error as "not defined on this
// input" (a mutant written for the golden shapes may index past a
// perturbed tensor's assumptions; an op refuses malformed inputs).
func safe(f func() (ops.Tensors, error)) (out ops.Tensors, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			out, ok = nil, false
		}
	}()
	o, err := f()
	if err != nil {
		return nil, false
	}
	return o, true
}

// profileOutputs computes every profile of s on e's input.
func profileOutputs(e *env) {
	e.ref = map[string]ops.Tensors{}
	for _, p := range e.s.Profiles {
		params, err := e.s.Params(e.task, p)
		if err != nil {
			continue
		}
		if out, ok := safe(func() (ops.Tensors, error) { return ops.Run(e.s.Op, params, e.in) }); ok {
			e.ref[p] = out
		}
	}
}

// variants lists the suite's implementations: its profiles, the
// diagnosis alternatives against each profile in against (other than the
// "profile:" ones, which are the profiles themselves), and the CPU mutants
// certified on the suite (of cat, the mutant catalogue, built once per
// run: building it computes profile outputs).
func variants(s *suite.Suite, against []string, cat []mutants.Mutant) []variant {
	var vs []variant
	for _, p := range s.Profiles {
		p := p
		vs = append(vs, variant{name: "profile " + p, run: func(e *env) (ops.Tensors, bool) {
			o, ok := e.ref[p]
			return o, ok
		}})
	}
	seen := map[string]bool{}
	for _, p := range against {
		p := p
		for _, a := range diagnose.Alternatives(s, p) {
			if strings.HasPrefix(a.Class, "profile:") {
				continue
			}
			// The mxfp4:mode=..,profile=.. alternatives override every
			// profile parameter: the same function against every profile.
			if strings.HasPrefix(a.Class, "mxfp4:") {
				if seen[a.Class] {
					continue
				}
				seen[a.Class] = true
			}
			a := a
			vs = append(vs, variant{name: "diagnosis " + a.Class + " against " + p, run: func(e *env) (ops.Tensors, bool) {
				ref, ok := e.ref[p]
				if !ok {
					return nil, false
				}
				params, err := e.s.Params(e.task, p)
				if err != nil {
					return nil, false
				}
				var applies bool
				out, ok := safe(func() (ops.Tensors, error) {
					o, ok, err := a.Compute(e.s, diagnose.Task{Task: e.task, Params: params, Inputs: e.in, Reference: ref, Expected: e.ref})
					applies = ok
					return o, err
				})
				return out, ok && applies
			}})
		}
	}
	for _, m := range cat {
		if m.Suite != s.Name || !s.HasProfile(m.Claim) {
			continue
		}
		m := m
		vs = append(vs, variant{name: "mutant " + m.Name, run: func(e *env) (ops.Tensors, bool) {
			params, err := e.s.Params(e.task, m.Claim)
			if err != nil {
				return nil, false
			}
			return safe(func() (ops.Tensors, error) { return m.Run(params, e.in) })
		}})
	}
	return vs
}

// sig is the digest of a variant's outputs on one input; undefined marks
// a variant that does not apply there.
type sig [32]byte

var undefined sig

// digest hashes out. For a GEMV (nanBits false) every NaN of a float
// output hashes alike: refimpl/gemv leaves the bits of a NaN that its
// arithmetic creates (Inf - Inf, 0 * Inf) to the host (x86-64 makes it
// negative, arm64 positive), so the golden GEMV inputs create none, and
// two schedules that differ only in such bits (seq and seq-fma on an
// infinite AWQ scale) are not a pair the golden set could separate.
func digest(out ops.Tensors, nanBits bool) sig {
	h := sha256.New()
	names := make([]string, 0, len(out))
	for n := range out {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t := out[n]
		fmt.Fprintf(h, "%s %s %v %d\n", n, t.DType, t.Shape, len(t.Data))
		if !nanBits {
			t = canonNaN(t)
		}
		h.Write(t.Data)
	}
	var s sig
	copy(s[:], h.Sum(nil))
	if s == undefined {
		s[0] = 1 // unreachable in practice; keeps undefined unique
	}
	return s
}

// canonNaN returns t with every NaN of a float32 or fp16 tensor replaced
// by one pattern.
func canonNaN(t tensor.Tensor) tensor.Tensor {
	switch t.DType {
	case tensor.F32:
		b := t.Bits32()
		for i, v := range b {
			if v&0x7fffffff > 0x7f800000 {
				b[i] = 0x7fc00000
			}
		}
		return tensor.FromBits32(t.DType, t.Shape, b)
	case tensor.F16:
		b := t.Bits16()
		for i, v := range b {
			if v&0x7fff > 0x7c00 {
				b[i] = 0x7e00
			}
		}
		return tensor.FromBits16(t.DType, t.Shape, b)
	}
	return t
}

// evaluate runs the variants on one input: every variant when only is
// nil, else those i with only[i] (the others' signatures stay undefined).
func evaluate(s *suite.Suite, vs []variant, task suite.Task, in ops.Tensors, only []bool) []sig {
	e := &env{s: s, task: task, in: in}
	profileOutputs(e)
	out := make([]sig, len(vs))
	for i, v := range vs {
		if only != nil && !only[i] {
			continue
		}
		if o, ok := v.run(e); ok {
			out[i] = digest(o, !strings.HasPrefix(s.Op, "gemv."))
		}
	}
	return out
}

// probe is one search input.
type probe struct {
	task suite.Task
	in   ops.Tensors
	desc string
}

// maxSearchBytes bounds the golden tasks whose inputs are perturbed
// (larger ones cost seconds per variant); a suite with no task this small
// perturbs its smallest.
const maxSearchBytes = 1 << 20

func inputBytes(in ops.Tensors) int {
	n := 0
	for _, t := range in {
		n += len(t.Data)
	}
	return n
}

// unaryOps take one float32 tensor and map it elementwise: they are swept
// over every float32 whose top 16 bits take all 65536 values.
var unaryOps = map[string]bool{"e2m1.encode": true, "fp8.encode": true, "e8m0.encode": true,
	"bf16.encode": true, "fp16.encode": true, "e8m0.shared_scale": true}

// probes builds the search inputs of suite s from its golden tasks.
func probes(t *testing.T, s *suite.Suite, set *golden.Set, short bool) []probe {
	var ps []probe
	r := catalog.NewRNG(0x5e9a7a7e)
	type taskIn struct {
		t  suite.Task
		in ops.Tensors
	}
	var tasks []taskIn
	for _, task := range s.Tasks {
		in, err := set.Inputs(task.Cases[task.Profiles[0]])
		if err != nil {
			t.Fatal(err)
		}
		tasks = append(tasks, taskIn{task, in})
	}
	if unaryOps[s.Op] {
		// The low 16 bits: zero, ones, and the patterns just below, at and
		// above the round bit of bf16 (bit 15) and of fp16 (bit 12, with
		// the fp16 lsb bit 13 clear and set).
		lows := []uint32{0, 1, 0x0fff, 0x1000, 0x1001, 0x2fff, 0x3000, 0x3001, 0x7fff, 0x8000, 0x8001, 0xffff}
		if short {
			lows = []uint32{0, 0x1000, 0x3000, 0x8000, 0xffff}
		}
		seen := map[string]bool{}
		for _, ti := range tasks {
			key := fmt.Sprint(ti.t.Params)
			if seen[key] {
				continue
			}
			seen[key] = true
			var name string
			for n := range ti.in {
				name = n
			}
			for _, lo := range lows {
				b := make([]uint32, 1<<16)
				for h := range b {
					b[h] = uint32(h)<<16 | lo
				}
				ps = append(ps, probe{ti.t, ops.Tensors{name: tensor.FromBits32(tensor.F32, []int{len(b)}, b)},
					fmt.Sprintf("every float32 with low 16 bits %#04x (task %s params)", lo, ti.t.Name)})
			}
		}
		return ps
	}
	var small []taskIn
	for _, ti := range tasks {
		if inputBytes(ti.in) <= maxSearchBytes {
			small = append(small, ti)
		}
	}
	if len(small) == 0 {
		best := tasks[0]
		for _, ti := range tasks {
			if inputBytes(ti.in) < inputBytes(best.in) {
				best = ti
			}
		}
		small = []taskIn{best}
	}
	for _, ti := range small {
		// Every position of a block on small tasks; on larger ones (a
		// GEMV's weights) one drawn from each quarter of the block.
		positions, reps := 32, 2
		if inputBytes(ti.in) > 64<<10 {
			positions = 4
		}
		if short {
			positions = 4
		}
		names := make([]string, 0, len(ti.in))
		for n := range ti.in {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			for _, m := range mutations(ti.in, n) {
				for i := 0; i < m.count; i++ {
					if in, desc, ok := m.apply(r, ti.in, n, i); ok {
						ps = append(ps, probe{ti.t, in, fmt.Sprintf("task %s, tensor %s: %s", ti.t.Name, n, desc)})
					}
				}
				if m.count > 0 {
					continue
				}
				for rep := 0; rep < reps; rep++ {
					for i := 0; i < positions; i++ {
						if !m.positional && i > 0 {
							break
						}
						pos := i * (32 / positions)
						if positions < 32 {
							pos += r.Intn(32 / positions)
						}
						in, desc, ok := m.apply(r, ti.in, n, pos)
						if !ok {
							continue
						}
						ps = append(ps, probe{ti.t, in, fmt.Sprintf("task %s, tensor %s: %s", ti.t.Name, n, desc)})
					}
					if m.positional && rep > 0 {
						break // the positional sweep is deterministic up to the value list
					}
				}
			}
		}
	}
	return ps
}

// mutation perturbs one tensor of a golden input.
type mutation struct {
	positional bool
	// count, when set, makes the mutation an exhaustive sweep: it is
	// applied with pos = 0..count-1, once each.
	count int
	apply func(r *catalog.RNG, in ops.Tensors, name string, pos int) (ops.Tensors, string, bool)
}

func with(in ops.Tensors, name string, t tensor.Tensor) ops.Tensors {
	out := ops.Tensors{}
	for k, v := range in {
		out[k] = v
	}
	out[name] = t
	return out
}

var (
	f32Specials = []uint32{0x7fc00000, 0xffc00001, 0x7f800000, 0xff800000, 0x80000000, 0x00000000,
		0x00000001, 0x807fffff, 0x7f7fffff, 0xff7fffff}
	f16Specials = []uint16{0x7e00, 0xfe01, 0x7c00, 0xfc00, 0x8000, 0x0000, 0x0001, 0x83ff, 0x7bff, 0xfbff}
	u8Specials  = []uint8{0x00, 0xff, 0x7f, 0x80, 0xfe, 0x01, 0x7e, 0xfe}
)

// mutations lists the perturbations that keep tensor name of in valid for
// its op: special values at one position of every block of 32 (which is
// also one position of every block of 16), a random rescaling of float
// tensors (new amax, new per-tensor scales), and random codes at random
// positions.
func mutations(in ops.Tensors, name string) []mutation {
	x := in[name]
	var ms []mutation
	switch {
	case x.DType == tensor.F32:
		if n := x.Len(); n < 32 {
			// A per-tensor or per-expert scale vector: every special value
			// at every element.
			ms = append(ms, mutation{count: n * len(f32Specials), apply: func(_ *catalog.RNG, in ops.Tensors, name string, i int) (ops.Tensors, string, bool) {
				b := x.Bits32()
				e, v := i/len(f32Specials), f32Specials[i%len(f32Specials)]
				b[e] = v
				y := tensor.FromBits32(tensor.F32, x.Shape, b)
				y.Logical = x.Logical
				return with(in, name, y), fmt.Sprintf("float32 %#08x at element %d", v, e), true
			}})
		}
		ms = append(ms, mutation{positional: true, apply: func(r *catalog.RNG, in ops.Tensors, name string, pos int) (ops.Tensors, string, bool) {
			b := x.Bits32()
			v := f32Specials[r.Intn(len(f32Specials))]
			for i := pos; i < len(b); i += 32 {
				b[i] = v ^ uint32(i/32%2)<<31
			}
			y := tensor.FromBits32(tensor.F32, x.Shape, b)
			y.Logical = x.Logical
			return with(in, name, y), fmt.Sprintf("float32 %#08x (sign alternating by block) at position %d of every 32", v, pos), true
		}})
		ms = append(ms, mutation{apply: func(r *catalog.RNG, in ops.Tensors, name string, _ int) (ops.Tensors, string, bool) {
			f := float32(math.Ldexp(1+float64(r.Unit()), r.Intn(41)-20))
			v := x.F32()
			for i := range v {
				v[i] = float32(v[i] * f)
			}
			y := tensor.FromF32(x.Shape, v)
			y.Logical = x.Logical
			return with(in, name, y), fmt.Sprintf("every element times %g", f), true
		}})
		ms = append(ms, mutation{apply: func(r *catalog.RNG, in ops.Tensors, name string, _ int) (ops.Tensors, string, bool) {
			b := x.Bits32()
			for i := range b {
				if r.Intn(8) == 0 {
					b[i] = r.Uint32()
				}
			}
			y := tensor.FromBits32(tensor.F32, x.Shape, b)
			y.Logical = x.Logical
			return with(in, name, y), "an eighth of the elements random bit patterns", true
		}})
	case x.DType == tensor.F16 || x.DType == tensor.BF16:
		ms = append(ms, mutation{positional: true, apply: func(r *catalog.RNG, in ops.Tensors, name string, pos int) (ops.Tensors, string, bool) {
			b := x.Bits16()
			v := f16Specials[r.Intn(len(f16Specials))]
			for i := pos; i < len(b); i += 32 {
				b[i] = v
			}
			return with(in, name, tensor.FromBits16(x.DType, x.Shape, b)), fmt.Sprintf("16-bit code %#04x at position %d of every 32", v, pos), true
		}})
		ms = append(ms, mutation{apply: func(r *catalog.RNG, in ops.Tensors, name string, _ int) (ops.Tensors, string, bool) {
			b := x.Bits16()
			for i := range b {
				if r.Intn(8) == 0 {
					b[i] = uint16(r.Uint64())
				}
			}
			return with(in, name, tensor.FromBits16(x.DType, x.Shape, b)), "an eighth of the codes random", true
		}})
	case x.DType == tensor.U8 && (name == "meta"):
		ms = append(ms, mutation{apply: func(r *catalog.RNG, in ops.Tensors, name string, _ int) (ops.Tensors, string, bool) {
			d := append([]byte(nil), x.Data...)
			for i := range d {
				d[i] = sparse24.MetaNibbles[r.Intn(6)] | sparse24.MetaNibbles[r.Intn(6)]<<4
			}
			y := tensor.FromU8(x.Shape, d)
			y.Logical = x.Logical
			return with(in, name, y), "random valid metadata", true
		}})
	case x.DType == tensor.U8 && x.Logical == "e2m1":
		ms = append(ms, mutation{apply: func(r *catalog.RNG, in ops.Tensors, name string, _ int) (ops.Tensors, string, bool) {
			d := append([]byte(nil), x.Data...)
			for i := range d {
				d[i] = uint8(r.Uint64() & 15)
			}
			y := tensor.FromU8(x.Shape, d)
			y.Logical = x.Logical
			return with(in, name, y), "random E2M1 codes", true
		}})
	case x.DType == tensor.U8:
		// Block records carry their scale in leading bytes: byte 0 of a
		// block_mxfp4 (E8M0), bytes 0-3 of a block_q8_1 (fp16 d and s).
		last := 1
		if len(x.Shape) > 0 {
			last = x.Shape[len(x.Shape)-1]
		}
		ms = append(ms, mutation{positional: true, apply: func(r *catalog.RNG, in ops.Tensors, name string, pos int) (ops.Tensors, string, bool) {
			d := append([]byte(nil), x.Data...)
			v := u8Specials[r.Intn(len(u8Specials))]
			switch last {
			case 17:
				for i := pos; i*17 < len(d); i += 32 {
					d[i*17] = v
				}
				return with(in, name, retag(x, d)), fmt.Sprintf("block scale byte %#02x in block %d of every 32", v, pos), true
			case 36:
				h := f16Specials[r.Intn(len(f16Specials))]
				off := 2 * (pos % 2)
				for i := pos; i*36 < len(d); i += 32 {
					d[i*36+off], d[i*36+off+1] = uint8(h), uint8(h>>8)
				}
				return with(in, name, retag(x, d)), fmt.Sprintf("block fp16 field at byte %d = %#04x in block %d of every 32", off, h, pos), true
			}
			for i := pos; i < len(d); i += 32 {
				d[i] = v
			}
			return with(in, name, retag(x, d)), fmt.Sprintf("byte %#02x at position %d of every 32", v, pos), true
		}})
		ms = append(ms, mutation{apply: func(r *catalog.RNG, in ops.Tensors, name string, _ int) (ops.Tensors, string, bool) {
			d := append([]byte(nil), x.Data...)
			for i := range d {
				if r.Intn(8) == 0 {
					d[i] = uint8(r.Uint64())
				}
			}
			return with(in, name, retag(x, d)), "an eighth of the bytes random", true
		}})
	case x.DType == tensor.I32 && name == "experts":
		g, ok := in["global"]
		if !ok || len(g.Shape) != 1 {
			break
		}
		ms = append(ms, mutation{apply: func(r *catalog.RNG, in ops.Tensors, name string, _ int) (ops.Tensors, string, bool) {
			e := make([]int32, x.Len())
			for i := range e {
				e[i] = int32(r.Intn(g.Shape[0]))
			}
			return with(in, name, tensor.FromI32(x.Shape, e)), fmt.Sprintf("experts %v", e), true
		}})
	case x.DType == tensor.I32 || x.DType == tensor.I16:
		ms = append(ms, mutation{apply: func(r *catalog.RNG, in ops.Tensors, name string, _ int) (ops.Tensors, string, bool) {
			d := append([]byte(nil), x.Data...)
			for i := range d {
				d[i] = uint8(r.Uint64())
			}
			return with(in, name, retag(x, d)), "random words", true
		}})
	}
	return ms
}

func retag(x tensor.Tensor, d []byte) tensor.Tensor {
	return tensor.Tensor{DType: x.DType, Shape: x.Shape, Logical: x.Logical, Data: d}
}

// firstDiff describes where two outputs differ first.
func firstDiff(a, b ops.Tensors, in ops.Tensors) string {
	ds := golden.DiffTensors(a, b)
	if len(ds) == 0 {
		return "outputs differ"
	}
	s := fmt.Sprintf("%s %s", ds[0].Tensor, ds[0].Problem)
	if x, ok := in["x"]; ok && x.DType == tensor.F32 && len(ds[0].Tensor) > 0 {
		s += fmt.Sprintf(" (input x has %d elements)", x.Len())
	}
	return s
}

// TestSeparation: for every suite, every pair of variants that some
// search input tells apart is told apart by the suite's golden inputs.
// The positional sweeps visit every position of a block of 32 on golden
// inputs up to 64 KiB and 4 (one drawn from each quarter) on larger ones.
// With -short, they visit 4 positions on every input, the float32 sweeps
// use 5 low-bit patterns instead of 12, and the diagnosis alternatives are
// taken against the suite's first profile only instead of against every
// profile.
func TestSeparation(t *testing.T) {
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	short := testing.Short()
	cat := mutants.Catalog()
	for _, spec := range suite.Specs() {
		spec := spec
		t.Run(spec.Name, func(t *testing.T) {
			// The suites share only read-only state (the set, the
			// catalogue): searched side by side on every core.
			t.Parallel()
			start := time.Now()
			s, err := spec.Resolve(set)
			if err != nil {
				t.Fatal(err)
			}
			against := s.Profiles
			if short {
				against = s.Profiles[:1]
			}
			vs := variants(s, against, cat)
			// Golden signature of each variant: its digest on every task.
			gold := make([][]sig, len(vs))
			for _, task := range s.Tasks {
				in, err := set.Inputs(task.Cases[task.Profiles[0]])
				if err != nil {
					t.Fatal(err)
				}
				for i, d := range evaluate(s, vs, task, in, nil) {
					gold[i] = append(gold[i], d)
				}
			}
			groups := map[string][]int{}
			for i, g := range gold {
				h := sha256.New()
				for _, d := range g {
					h.Write(d[:])
				}
				k := string(h.Sum(nil))
				groups[k] = append(groups[k], i)
			}
			var multi [][]int
			for _, g := range groups {
				if len(g) > 1 {
					multi = append(multi, g)
				}
			}
			sort.Slice(multi, func(i, j int) bool { return multi[i][0] < multi[j][0] })
			// Only a variant that agrees with another on every golden
			// input can be in a failing pair: the search runs those.
			grouped := make([]bool, len(vs))
			for _, g := range multi {
				for _, i := range g {
					grouped[i] = true
				}
			}
			ps := probes(t, s, set, short)
			failed := map[[2]int]bool{}
			if len(multi) > 0 {
				for _, p := range ps {
					d := evaluate(s, vs, p.task, p.in, grouped)
					for _, g := range multi {
						for a := 0; a < len(g); a++ {
							for b := a + 1; b < len(g); b++ {
								i, j := g[a], g[b]
								if d[i] == undefined || d[j] == undefined || d[i] == d[j] || failed[[2]int{i, j}] {
									continue
								}
								failed[[2]int{i, j}] = true
								e := &env{s: s, task: p.task, in: p.in}
								profileOutputs(e)
								oi, _ := vs[i].run(e)
								oj, _ := vs[j].run(e)
								t.Errorf("%s and %s agree on every golden input but differ on %s: %s",
									vs[i].name, vs[j].name, p.desc, firstDiff(oi, oj, p.in))
							}
						}
					}
				}
			}
			t.Logf("%d variants, %d golden tasks, %d groups of variants equal on the golden inputs, %d search inputs, %d pairs separated only by search, %v",
				len(vs), len(s.Tasks), len(multi), len(ps), len(failed), time.Since(start).Round(time.Millisecond))
		})
	}
}
