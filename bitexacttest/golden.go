package bitexacttest

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sort"
	"sync"

	"github.com/bitexact/bitexact/conformance/certificate"
	"github.com/bitexact/bitexact/conformance/diagnose"
	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/wasm"
)

// goldenSuite is a suite of the embedded golden set, with the digests a
// report names.
type goldenSuite struct {
	set          *golden.Set
	s            *suite.Suite
	manifestSHA  string
	referenceSHA string
}

var defaultSet = sync.OnceValues(golden.Default)

// loadGolden resolves the named suite against the embedded golden set.
func loadGolden(name string) (*goldenSuite, error) {
	set, err := defaultSet()
	if err != nil {
		return nil, fmt.Errorf("bitexacttest: the embedded golden set: %w", err)
	}
	s, err := suite.Resolve(set, name)
	if err != nil {
		return nil, fmt.Errorf("bitexacttest: %w", err)
	}
	return &goldenSuite{set: set, s: s, manifestSHA: certificate.ReleasedGoldenSHA256(), referenceSHA: wasm.ModuleDigest()}, nil
}

// certify holds outputs (per task) to profile p through
// conformance/certificate.
// max is how many mismatches per task it decodes.
func (g *goldenSuite) certify(p string, outputs map[string]ops.Tensors, max int) (*certificate.Certificate, error) {
	c, err := certificate.BuildContext(context.Background(), certificate.Input{
		Suite: g.s, Set: g.set, GoldenSHA256: g.manifestSHA, ReferenceWasm: g.referenceSHA,
		Reference: theReference, Backend: "go-test", Implementation: "bitexacttest", Claimed: p, Outputs: outputs, MaxMismatches: max,
	})
	if err != nil {
		return nil, fmt.Errorf("bitexacttest: %w", err)
	}
	return c, nil
}

// diagTask is the diagnosis data of a golden task: its inputs, the
// golden outputs of every profile, and the observed outputs.
func (g *goldenSuite) diagTask(name, p string, observed ops.Tensors) (diagnose.Task, error) {
	t, ok := g.s.Task(name)
	if !ok {
		return diagnose.Task{}, fmt.Errorf("bitexacttest: no task %s", name)
	}
	in, err := g.set.Inputs(t.Cases[t.Profiles[0]])
	if err != nil {
		return diagnose.Task{}, err
	}
	params, err := g.s.Params(t, p)
	if err != nil {
		return diagnose.Task{}, err
	}
	exp := map[string]ops.Tensors{}
	for _, q := range t.Profiles {
		if exp[q], err = g.set.Expected(t.Cases[q]); err != nil {
			return diagnose.Task{}, err
		}
	}
	ref, ok := exp[p]
	if !ok {
		if ref, err = g.s.Compute(context.Background(), theReference, t, p, in); err != nil {
			return diagnose.Task{}, err
		}
		exp[p] = ref
	}
	return diagnose.Task{Task: t, Params: params, Inputs: in, Reference: ref, Expected: exp, Observed: observed}, nil
}

// reference computes expected outputs the golden set lacks through the
// embedded wasm module (the engine certify uses), started on first use
// and remembering what it computed, so the layout check and the
// certificate pay for one run.
type reference struct {
	once sync.Once
	rt   golden.Wasm
	err  error
	mu   sync.Mutex
	memo map[string]ops.Tensors
}

var theReference = &reference{memo: map[string]ops.Tensors{}}

// ModuleDigest names the module, so certificates record "wasm sha256:...".
func (r *reference) ModuleDigest() string { return wasm.ModuleDigest() }

func (r *reference) start() error {
	r.once.Do(func() { r.rt, r.err = golden.NewWasm(context.Background(), wasm.Options{}) })
	return r.err
}

// Run runs op through the module.
func (r *reference) Run(ctx context.Context, op string, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	key := memoKey(op, p, in)
	r.mu.Lock()
	out, ok := r.memo[key]
	r.mu.Unlock()
	if ok {
		return out, nil
	}
	if err := r.start(); err != nil {
		return nil, fmt.Errorf("starting the wasm reference: %w", err)
	}
	out, err := r.rt.Run(ctx, op, p, in)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if len(r.memo) > 64 {
		clear(r.memo)
	}
	r.memo[key] = out
	r.mu.Unlock()
	return out, nil
}

// Unary runs a unary conversion through the module.
func (r *reference) Unary(ctx context.Context, conv string, start uint32, out []byte) error {
	if err := r.start(); err != nil {
		return err
	}
	return r.rt.Unary(ctx, conv, start, out)
}

func memoKey(op string, p ops.Params, in ops.Tensors) string {
	h := sha256.New()
	put := func(s string) {
		h.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(s))))
		h.Write([]byte(s))
	}
	put(op)
	var keys []string
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		put(k)
		put(p[k])
	}
	keys = keys[:0]
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t := in[k]
		put(k)
		put(string(t.DType) + "/" + t.Logical + fmt.Sprint(t.Shape))
		put(string(t.Data))
	}
	return hex.EncodeToString(h.Sum(nil))
}
