package bitexacttest

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bitexact/bitexact/conformance/certificate"
	"github.com/bitexact/bitexact/conformance/diagnose"
	"github.com/bitexact/bitexact/gate"
	"github.com/bitexact/bitexact/internal/golden/catalog"
	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
	"github.com/bitexact/bitexact/refimpl/unary"
)

// Code is the result type of a scalar encoder: uint8 for 4- and 8-bit
// codes (E2M1 in the low nibble), uint16 for 16-bit codes (bf16, fp16),
// or a type defined on one of them.
type Code interface{ ~uint8 | ~uint16 }

// Unary holds f, a scalar encoder, to the conversion conv ("format/profile",
// for example "e2m1/nvidia", "e4m3/satfinite", "e8m0/rz", "bf16/rne"):
// f(x) must be the reference's code for every float32 x, NaN payloads and
// -0 included. It fails t with a report (see Report) if it is not, and
// stops t (Fatal) when conv is unknown or C is not as wide as conv's codes.
//
// It calls f on all 2^32 float32 inputs, from GOMAXPROCS goroutines at
// once (f must be safe for concurrent use), or, under go test -short or
// with Sampled, on the golden and edge inputs and a seeded random sample.
// The golden inputs are also held to every other profile of the format, so
// the report says which profile f implements when it is not conv's.
func Unary[C Code](t testing.TB, conv string, f func(x float32) C, opts ...Option) {
	t.Helper()
	report(t)(CheckUnary(conv, f, logTo(t, opts)...))
}

// CheckUnary is Unary without a testing.TB: it returns the report, and an
// error for an unknown conversion or a code type of the wrong width.
func CheckUnary[C Code](conv string, f func(x float32) C, opts ...Option) (*Report, error) {
	c, err := lookup(conv, codeWidth[C]())
	if err != nil {
		return nil, err
	}
	return checkUnary(c, f32Inputs, scalarKernel(f, c.Width()), opts)
}

// UnaryBatch is Unary for a kernel that converts a whole buffer per call,
// such as a GPU launch: f writes the codes of in to out, Width bytes per
// code (one byte per code up to 8 bits, E2M1 in the low nibble; 16-bit
// codes little-endian), and returns an error only when it could not run
// (the check then stops with that error). Calls hold up to 2^20 inputs and
// are serialised unless Concurrent is given; in and out are reused
// between calls.
func UnaryBatch(t testing.TB, conv string, f func(in []float32, out []byte) error, opts ...Option) {
	t.Helper()
	report(t)(CheckUnaryBatch(conv, f, logTo(t, opts)...))
}

// CheckUnaryBatch is UnaryBatch without a testing.TB.
func CheckUnaryBatch(conv string, f func(in []float32, out []byte) error, opts ...Option) (*Report, error) {
	c, err := lookup(conv, 0)
	if err != nil {
		return nil, err
	}
	cfg := newConfig(opts)
	return checkUnary(c, f32Inputs, batchKernel(f, c.Width(), cfg.concurrent), opts)
}

// UnaryFromFP16 holds f, an encoder of IEEE binary16 inputs (bit
// patterns), to conv on all 2^16 of them: the expected code of h is conv's
// code of the float32 of the same value (the widening is exact, NaN
// payloads kept as github.com/x448/float16 widens them). I may be uint16 or
// a type defined on it, such as float16.Float16.
func UnaryFromFP16[I ~uint16, C Code](t testing.TB, conv string, f func(h I) C, opts ...Option) {
	t.Helper()
	report(t)(checkHalf(conv, fp16Inputs, f, opts))
}

// UnaryFromBF16 is UnaryFromFP16 for bfloat16 inputs, widened by a 16-bit
// shift.
func UnaryFromBF16[I ~uint16, C Code](t testing.TB, conv string, f func(h I) C, opts ...Option) {
	t.Helper()
	report(t)(checkHalf(conv, bf16Inputs, f, opts))
}

// CheckUnaryFromFP16 is UnaryFromFP16 without a testing.TB.
func CheckUnaryFromFP16[I ~uint16, C Code](conv string, f func(h I) C, opts ...Option) (*Report, error) {
	return checkHalf(conv, fp16Inputs, f, opts)
}

// CheckUnaryFromBF16 is UnaryFromBF16 without a testing.TB.
func CheckUnaryFromBF16[I ~uint16, C Code](conv string, f func(h I) C, opts ...Option) (*Report, error) {
	return checkHalf(conv, bf16Inputs, f, opts)
}

func checkHalf[I ~uint16, C Code](conv string, kind inputKind, f func(h I) C, opts []Option) (*Report, error) {
	c, err := lookup(conv, codeWidth[C]())
	if err != nil {
		return nil, err
	}
	w := c.Width()
	k := kernel{list: func(in []uint32, out []byte) error {
		for i, b := range in {
			putCode(out, i, w, uint32(f(I(b))))
		}
		return nil
	}}
	return checkUnary(c, kind, k, opts)
}

// inputKind is the input format of a unary kernel.
type inputKind int

const (
	f32Inputs inputKind = iota
	fp16Inputs
	bf16Inputs
)

// widen is the float32 pattern of input pattern b.
func (k inputKind) widen(b uint32) uint32 {
	switch k {
	case fp16Inputs:
		return math.Float32bits(half.DecodeFP16(uint16(b)))
	case bf16Inputs:
		return b << 16
	}
	return b
}

func (k inputKind) String() string {
	return [...]string{"float32", "fp16", "bf16"}[k]
}

// codeWidth is the bytes of C.
func codeWidth[C Code]() int {
	if uint64(^C(0)) > 0xff {
		return 2
	}
	return 1
}

// lookup finds conv and checks that codes of w bytes (0: any) hold its
// codes exactly.
func lookup(conv string, w int) (unary.Conversion, error) {
	c, err := unary.Lookup(conv)
	if err != nil {
		return c, fmt.Errorf("bitexacttest: %w", err)
	}
	if w != 0 && w != c.Width() {
		want := "uint8"
		if c.Width() == 2 {
			want = "uint16"
		}
		return c, fmt.Errorf("bitexacttest: %s has %d-bit codes: the encoder must return %s (or a type defined on it), not a %d-byte code", conv, c.Bits, want, w)
	}
	return c, nil
}

// kernel computes codes of inputs: of the consecutive float32 patterns
// start, start+1, ... (rng), or of the patterns in (list).
type kernel struct {
	rng  func(start uint32, out []byte) error
	list func(in []uint32, out []byte) error
}

func putCode(out []byte, i, w int, v uint32) {
	if w == 1 {
		out[i] = byte(v)
		return
	}
	out[2*i], out[2*i+1] = byte(v), byte(v>>8)
}

func getCode(b []byte, i, w int) uint32 {
	if w == 1 {
		return uint32(b[i])
	}
	return uint32(b[2*i]) | uint32(b[2*i+1])<<8
}

func scalarKernel[C Code](f func(float32) C, w int) kernel {
	if w == 1 {
		return kernel{
			rng: func(start uint32, out []byte) error {
				for i := range out {
					out[i] = byte(f(math.Float32frombits(start + uint32(i))))
				}
				return nil
			},
			list: func(in []uint32, out []byte) error {
				for i, b := range in {
					out[i] = byte(f(math.Float32frombits(b)))
				}
				return nil
			},
		}
	}
	return kernel{
		rng: func(start uint32, out []byte) error {
			for i := 0; 2*i+1 < len(out); i++ {
				v := f(math.Float32frombits(start + uint32(i)))
				out[2*i], out[2*i+1] = byte(v), byte(uint16(v)>>8)
			}
			return nil
		},
		list: func(in []uint32, out []byte) error {
			for i, b := range in {
				v := f(math.Float32frombits(b))
				out[2*i], out[2*i+1] = byte(v), byte(uint16(v)>>8)
			}
			return nil
		},
	}
}

func batchKernel(f func(in []float32, out []byte) error, w int, concurrent bool) kernel {
	var mu sync.Mutex
	pool := sync.Pool{New: func() any { return new([]float32) }}
	call := func(n int, fill func(x []float32), out []byte) error {
		p := pool.Get().(*[]float32)
		defer pool.Put(p)
		if cap(*p) < n {
			*p = make([]float32, n)
		}
		x := (*p)[:n]
		fill(x)
		if !concurrent {
			mu.Lock()
			defer mu.Unlock()
		}
		return f(x, out)
	}
	return kernel{
		rng: func(start uint32, out []byte) error {
			n := len(out) / w
			return call(n, func(x []float32) {
				for i := range x {
					x[i] = math.Float32frombits(start + uint32(i))
				}
			}, out)
		},
		list: func(in []uint32, out []byte) error {
			return call(len(in), func(x []float32) {
				for i, b := range in {
					x[i] = math.Float32frombits(b)
				}
			}, out)
		},
	}
}

// diff is one input on which the kernel and the reference disagree.
type diff struct {
	in        uint32 // input pattern (of the input kind)
	want, got uint32
}

// sweep is the outcome of comparing a kernel with the reference.
type sweep struct {
	inputs, mismatches uint64
	first              []diff // ascending by input, at most keepDiffs
}

// keepDiffs bounds the differing inputs kept for the report and the
// diagnosis.
const keepDiffs = 4096

// block is the inputs per kernel call.
const block = 1 << 20

func checkUnary(c unary.Conversion, kind inputKind, k kernel, opts []Option) (*Report, error) {
	cfg := newConfig(opts)
	start := time.Now()
	w := c.Width()
	r := &Report{Subject: c.Name}
	var sw sweep
	var err error
	switch {
	case kind != f32Inputs:
		in := make([]uint32, 1<<16)
		for i := range in {
			in[i] = uint32(i)
		}
		r.Sweep = "every " + kind.String() + " input (2^16)"
		sw, err = sweepList(c, kind, k, in, cfg)
	case cfg.sample > 0:
		var in []uint32
		if in, err = sampleInputs(c, cfg); err != nil {
			return nil, err
		}
		r.Sweep = fmt.Sprintf("sampled: %d golden inputs and %d random inputs, seed %#x", len(in)-cfg.sample, cfg.sample, cfg.seed)
		sw, err = sweepList(c, kind, k, in, cfg)
	default:
		r.Sweep = "every float32 input (2^32)"
		sw, err = sweepRange(c, k, cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("bitexacttest: %s: %w", c.Name, err)
	}
	r.Inputs, r.Mismatches = sw.inputs, sw.mismatches
	// The first input of each (expected, got) pair: 8 NaN payloads that
	// differ the same way would say less than 8 different differences.
	seen := map[[2]uint32]bool{}
	for _, d := range sw.first {
		if len(r.First) == cfg.maxFirst {
			break
		}
		if p := [2]uint32{d.want, d.got}; !seen[p] {
			seen[p] = true
			r.First = append(r.First, decodeDiff(c, kind, d))
		}
	}
	// The golden tasks: every profile of the format, and the digests.
	g, err := loadGolden(c.Format)
	if err != nil {
		return nil, err
	}
	var tasks []diagnose.Task
	if kind == f32Inputs {
		outputs := map[string]ops.Tensors{}
		cert, err := g.certify(c.Profile, cfg.maxFirst, func(t gate.Task) (ops.Tensors, error) {
			gc, ok := t.Cases[c.Profile]
			if !ok || len(gc.Outputs) != 1 {
				return nil, fmt.Errorf("bitexacttest: golden task %s has no case of %s", t.Name, c.Name)
			}
			x := t.Inputs["x"].Bits32()
			info := gc.Outputs[0]
			out := make([]byte, len(x)*w)
			if err := k.list(x, out); err != nil {
				return nil, fmt.Errorf("bitexacttest: %s on golden task %s: %w", c.Name, t.Name, err)
			}
			outputs[t.Name] = ops.Tensors{info.Name: {DType: tensor.DType(info.DType), Logical: info.Logical, Shape: info.Shape, Data: out}}
			return outputs[t.Name], nil
		})
		if err != nil {
			return nil, err
		}
		r.Golden = cert
		r.Conforms = sw.mismatches == 0 && cert.Conforms
		if !r.Conforms {
			for _, cs := range cert.Cases {
				td, err := g.diagTask(cs.Task, c.Profile, outputs[cs.Task])
				if err != nil {
					return nil, err
				}
				tasks = append(tasks, td)
			}
		}
	} else {
		r.Conforms = sw.mismatches == 0
		r.Profiles = halfProfiles(c, kind, k)
	}
	if !r.Conforms && len(sw.first) > 0 {
		ds := sw.first
		if kind != f32Inputs {
			// Every 16-bit input, so that an alternative is exact only if it
			// reproduces the agreeing inputs too (the golden tasks do that
			// for float32 inputs).
			if ds, err = allDiffs(c, kind, k); err != nil {
				return nil, err
			}
		}
		td, err := g.sweepTask(c, kind, ds)
		if err != nil {
			return nil, err
		}
		tasks = append(tasks, td)
	}
	if len(tasks) > 0 {
		d, err := diagnose.Run(g.s, c.Profile, tasks)
		if err != nil {
			return nil, err
		}
		r.Diagnosis = &d
	}
	r.Elapsed = time.Since(start)
	return r, nil
}

// sampleInputs are the golden inputs of c's format (its tasks: every edge
// class of the format, catalog.Edges, and its random inputs) and
// cfg.sample seeded random patterns.
func sampleInputs(c unary.Conversion, cfg config) ([]uint32, error) {
	g, err := loadGolden(c.Format)
	if err != nil {
		return nil, err
	}
	var in []uint32
	for _, t := range g.s.Tasks {
		x, err := g.set.Inputs(t.Cases[t.Profiles[0]])
		if err != nil {
			return nil, err
		}
		in = append(in, x["x"].Bits32()...)
	}
	r := catalog.NewRNG(cfg.seed)
	for range cfg.sample {
		in = append(in, r.Uint32())
	}
	return in, nil
}

// sweepRange compares k with the reference on all 2^32 float32 inputs,
// block by block on cfg.workers goroutines.
func sweepRange(c unary.Conversion, k kernel, cfg config) (sweep, error) {
	return sweepBlocks(c, k, cfg, 1<<32/block)
}

// sweepBlocks is sweepRange over the first blocks blocks of inputs.
func sweepBlocks(c unary.Conversion, k kernel, cfg config, blocks int64) (sweep, error) {
	w := c.Width()
	var next atomic.Int64
	var count atomic.Uint64
	firsts := make([][]diff, cfg.workers)
	errs := make([]error, cfg.workers)
	var wg sync.WaitGroup
	if cfg.logf != nil {
		// Stopped, and waited for, before the sweep returns: a test must
		// not log after it ends.
		stop := make(chan struct{})
		var logging sync.WaitGroup
		logging.Go(func() { progress(cfg.logf, c.Name, &next, blocks, stop) })
		defer func() { close(stop); logging.Wait() }()
	}
	for wk := range cfg.workers {
		wg.Go(func() {
			got, want := make([]byte, block*w), make([]byte, block*w)
			for {
				i := next.Add(1) - 1
				if i >= blocks {
					return
				}
				start := uint32(i) * block
				if err := k.rng(start, got); err != nil {
					errs[wk] = fmt.Errorf("inputs %#08x..: %w", start, err)
					next.Store(blocks)
					return
				}
				c.EncodeRange(start, want)
				if bytes.Equal(got, want) {
					continue
				}
				n := uint64(0)
				for j := range block {
					if a, b := getCode(want, j, w), getCode(got, j, w); a != b {
						n++
						if len(firsts[wk]) < keepDiffs {
							firsts[wk] = append(firsts[wk], diff{start + uint32(j), a, b})
						}
					}
				}
				count.Add(n)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return sweep{}, err
		}
	}
	return sweep{inputs: uint64(blocks) * block, mismatches: count.Load(), first: merge(firsts)}, nil
}

// progressEvery is how often a long sweep logs its progress.
const progressEvery = 10 * time.Second

// progress logs the share of blocks handed out, the rate and the time
// left every progressEvery until stop is closed.
func progress(logf func(string, ...any), name string, next *atomic.Int64, blocks int64, stop <-chan struct{}) {
	start := time.Now()
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			done := min(next.Load(), blocks)
			if done == 0 {
				continue
			}
			el := time.Since(start)
			left := time.Duration(float64(el) * float64(blocks-done) / float64(done))
			logf("%s: %.0f%% of %d inputs, %.0f M inputs/s, about %s left", name,
				100*float64(done)/float64(blocks), blocks*block, float64(done*block)/el.Seconds()/1e6, left.Round(time.Second))
		}
	}
}

// sweepList compares k with the reference on the given input patterns.
func sweepList(c unary.Conversion, kind inputKind, k kernel, in []uint32, cfg config) (sweep, error) {
	w := c.Width()
	const chunk = 1 << 16
	var next atomic.Int64
	var count atomic.Uint64
	firsts := make([][]diff, cfg.workers)
	errs := make([]error, cfg.workers)
	var wg sync.WaitGroup
	for wk := range cfg.workers {
		wg.Go(func() {
			got := make([]byte, chunk*w)
			for {
				lo := int(next.Add(chunk) - chunk)
				if lo >= len(in) {
					return
				}
				part := in[lo:min(lo+chunk, len(in))]
				g := got[:len(part)*w]
				if err := k.list(part, g); err != nil {
					errs[wk] = err
					next.Store(int64(len(in)))
					return
				}
				n := uint64(0)
				for j, b := range part {
					want := c.Encode(math.Float32frombits(kind.widen(b)))
					if gv := getCode(g, j, w); gv != want {
						n++
						firsts[wk] = append(firsts[wk], diff{b, want, gv})
					}
				}
				count.Add(n)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return sweep{}, err
		}
	}
	return sweep{inputs: uint64(len(in)), mismatches: count.Load(), first: merge(firsts)}, nil
}

// merge sorts the differing inputs of every worker, without repeats, and
// keeps the first keepDiffs.
func merge(firsts [][]diff) []diff {
	var all []diff
	for _, f := range firsts {
		all = append(all, f...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].in < all[j].in })
	all = slices.CompactFunc(all, func(a, b diff) bool { return a.in == b.in })
	if len(all) > keepDiffs {
		all = all[:keepDiffs]
	}
	return all
}

// decodeDiff spells a differing input and both codes, field by field.
func decodeDiff(c unary.Conversion, kind inputKind, d diff) Difference {
	dt, logical := codeType(c)
	enc := func(v uint32) []byte {
		b := make([]byte, c.Width())
		putCode(b, 0, c.Width(), v)
		return b
	}
	x := math.Float32frombits(kind.widen(d.in))
	where := fmt.Sprintf("x = %s (%#08x)", fmtValue(x), d.in)
	if kind != f32Inputs {
		where = fmt.Sprintf("x = %s (%s %#04x)", fmtValue(x), kind, d.in)
	}
	return Difference{Where: where, Want: certificate.DecodeElement(dt, logical, enc(d.want)), Got: certificate.DecodeElement(dt, logical, enc(d.got))}
}

// codeType is the storage dtype and logical format of c's codes, as the
// golden cases store them.
func codeType(c unary.Conversion) (tensor.DType, string) {
	switch c.Format {
	case "bf16":
		return tensor.BF16, ""
	case "fp16":
		return tensor.F16, ""
	}
	return tensor.U8, c.Format
}

func fmtValue(x float32) string {
	if x == 0 && math.Signbit(float64(x)) {
		return "-0"
	}
	return fmt.Sprintf("%g", x)
}

// halfProfiles counts, for every profile of c's format, the 16-bit inputs
// on which k differs from it.
func halfProfiles(c unary.Conversion, kind inputKind, k kernel) []ProfileResult {
	w := c.Width()
	in := make([]uint32, 1<<16)
	for i := range in {
		in[i] = uint32(i)
	}
	got := make([]byte, len(in)*w)
	if k.list(in, got) != nil {
		return nil
	}
	var ps []ProfileResult
	for _, o := range unary.All() {
		if o.Format != c.Format {
			continue
		}
		p := ProfileResult{Profile: o.Profile}
		for i, b := range in {
			if o.Encode(math.Float32frombits(kind.widen(b))) != getCode(got, i, w) {
				p.Mismatches++
			}
		}
		ps = append(ps, p)
	}
	return ps
}

// allDiffs is every 16-bit input with both codes, differing or not.
func allDiffs(c unary.Conversion, kind inputKind, k kernel) ([]diff, error) {
	w := c.Width()
	ds := make([]diff, 1<<16)
	in := make([]uint32, len(ds))
	for i := range in {
		in[i] = uint32(i)
	}
	got := make([]byte, len(in)*w)
	if err := k.list(in, got); err != nil {
		return nil, err
	}
	for i, b := range in {
		ds[i] = diff{b, c.Encode(math.Float32frombits(kind.widen(b))), getCode(got, i, w)}
	}
	return ds, nil
}

// sweepTask is a diagnosis task of the inputs ds (the differing ones, or
// every 16-bit input): the format's first golden task with x replaced by
// them.
func (g *goldenSuite) sweepTask(c unary.Conversion, kind inputKind, ds []diff) (diagnose.Task, error) {
	t := g.s.Tasks[0]
	t.Name = "swept inputs"
	params, err := g.s.Params(t, c.Profile)
	if err != nil {
		return diagnose.Task{}, err
	}
	xs := make([]uint32, len(ds))
	want, got := make([]byte, len(ds)*c.Width()), make([]byte, len(ds)*c.Width())
	for i, d := range ds {
		xs[i] = kind.widen(d.in)
		putCode(want, i, c.Width(), d.want)
		putCode(got, i, c.Width(), d.got)
	}
	info := g.s.Tasks[0].Cases[c.Profile].Outputs[0]
	shape := []int{len(ds)}
	mk := func(b []byte) ops.Tensors {
		return ops.Tensors{info.Name: {DType: tensor.DType(info.DType), Logical: info.Logical, Shape: shape, Data: b}}
	}
	return diagnose.Task{Task: t, Params: params, Inputs: ops.Tensors{"x": tensor.FromBits32(tensor.F32, shape, xs)},
		Reference: mk(want), Expected: map[string]ops.Tensors{}, Observed: mk(got)}, nil
}
