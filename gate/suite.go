package gate

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sort"
	"sync"

	"github.com/bitexact/bitexact/conformance/certificate"
	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/wasm"
)

// Task is one task of a vendor suite as Suite hands it to a kernel.
type Task struct {
	suite.Task
	// Profile is the profile the kernel is held to.
	Profile string
	// Params are the op parameters of the task under Profile
	// (suite.Suite.Params).
	Params ops.Params
	// Inputs are the task's golden inputs.
	Inputs ops.Tensors
	// Expected are the outputs the kernel is held to: the golden set's,
	// or, where it has no case of Profile for the task, those the
	// reference computed from Inputs (Computed is then true); none in a
	// bound-mode suite, where Params are the bound model's. Layout gives
	// the outputs' names, dtypes and shapes.
	Expected ops.Tensors
	Computed bool
	Layout   []golden.TensorInfo
}

// SuiteOptions configure Suite.
type SuiteOptions struct {
	// Set is the golden set and Suite the vendor suite resolved against
	// it (suite.Resolve); Profile the profile the kernel is held to.
	Set     *golden.Set
	Suite   *suite.Suite
	Profile string
	// Reference computes the expected outputs of a task the golden set
	// has no case of Profile for (Reference() for the embedded wasm
	// module); nil refuses such a task.
	Reference golden.Engine
	// Certificate carries the certificate's provenance (Backend,
	// Implementation, Platform, GoldenSHA256, ReferenceWasm, Extra,
	// Exhaustive, Reduced, MaxMismatches); Suite, Set, Claimed, Outputs
	// and Reference are filled here.
	Certificate certificate.Input
}

// Suite runs kernel run once per task of a vendor suite, on the task's
// golden inputs under the profile held to, and certifies its outputs with
// conformance/certificate, exactly as `bitexact certify` certifies a
// results directory: per-task verdicts, the verdict against every profile,
// the first mismatches decoded and the diagnosis. An error from run is
// returned as it is (run knows the task); any other error means the suite
// could not be run.
func Suite(ctx context.Context, o SuiteOptions, run func(ctx context.Context, t Task) (ops.Tensors, error)) (*certificate.Certificate, error) {
	s, p := o.Suite, o.Profile
	// One spelling per claim (refimpl/claim): the tasks and the
	// certificate use the canonical one. A bound model that would let a
	// zero output pass is refused before the kernel runs.
	if p != "" {
		var err error
		if p, err = s.CanonicalProfile(p); err != nil {
			return nil, err
		}
		if s.Bound {
			claim, err := s.ParseBound(p)
			if err != nil {
				return nil, err
			}
			if _, err := s.CheckBoundModel(o.Set, claim); err != nil {
				return nil, err
			}
		}
	}
	outputs := map[string]ops.Tensors{}
	for _, st := range s.Tasks {
		t, err := suiteTask(ctx, o.Set, s, st, p, o.Reference)
		if err != nil {
			return nil, err
		}
		out, err := run(ctx, t)
		if err != nil {
			return nil, err
		}
		outputs[st.Name] = out
	}
	in := o.Certificate
	in.Suite, in.Set, in.Claimed, in.Outputs, in.Reference = s, o.Set, p, outputs, o.Reference
	return certificate.BuildContext(ctx, in)
}

// suiteTask prepares task st of suite s under profile p: its inputs,
// parameters and expected outputs (computed by ref where the golden set
// has no case of p; nil ref refuses that).
func suiteTask(ctx context.Context, set *golden.Set, s *suite.Suite, st suite.Task, p string, ref golden.Engine) (Task, error) {
	t := Task{Task: st, Profile: p}
	if len(st.Profiles) == 0 {
		return t, fmt.Errorf("task %s has no golden case", st.Name)
	}
	var err error
	if t.Inputs, err = set.Inputs(st.Cases[st.Profiles[0]]); err != nil {
		return t, err
	}
	if s.Bound {
		// A bound-mode task has no expected outputs: the certificate
		// holds each output to the rigorous bound of the exact product
		// under the bound model p, whose parameters the kernel gets.
		claim, err := s.ParseBound(p)
		if err != nil {
			return t, err
		}
		t.Params = claim.Params
		t.Layout, err = s.BoundLayout(st, p)
		return t, err
	}
	if t.Params, err = s.Params(st, p); err != nil {
		return t, err
	}
	if gc, ok := st.Cases[p]; ok {
		if t.Expected, err = set.Expected(gc); err != nil {
			return t, err
		}
		t.Layout = gc.Outputs
		return t, nil
	}
	if ref == nil {
		return t, fmt.Errorf("task %s has no golden case for profile %s", st.Name, p)
	}
	if t.Expected, err = s.Compute(ctx, ref, st, p, t.Inputs); err != nil {
		return t, fmt.Errorf("profile %s cannot be checked on task %s: the golden set has no case for it and the reference cannot compute it: %w", p, st.Name, err)
	}
	t.Computed = true
	names := make([]string, 0, len(t.Expected))
	for n := range t.Expected {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		w := t.Expected[n]
		t.Layout = append(t.Layout, golden.TensorInfo{Name: n, DType: string(w.DType), Logical: w.Logical, Shape: w.Shape})
	}
	return t, nil
}

// WasmReference is the embedded WebAssembly reference module as a
// golden.Engine and an exhaustive.Unary: the engine `bitexact certify`
// computes expected outputs with. It starts the module on first use and
// remembers recent outputs, so that a layout check and the certificate
// that follows pay for one run. It is safe for concurrent use.
type WasmReference struct {
	once sync.Once
	rt   golden.Wasm
	err  error
	mu   sync.Mutex
	memo map[string]ops.Tensors
}

var theReference = &WasmReference{memo: map[string]ops.Tensors{}}

// Reference returns the process's WasmReference.
func Reference() *WasmReference { return theReference }

// ModuleDigest names the module, so certificates record "wasm sha256:...".
func (r *WasmReference) ModuleDigest() string { return wasm.ModuleDigest() }

func (r *WasmReference) start() error {
	r.once.Do(func() { r.rt, r.err = golden.NewWasm(context.Background(), wasm.Options{}) })
	return r.err
}

// Run runs op through the module.
func (r *WasmReference) Run(ctx context.Context, op string, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
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
func (r *WasmReference) Unary(ctx context.Context, conv string, start uint32, out []byte) error {
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
	for _, k := range sortedKeys(p) {
		put(k)
		put(p[k])
	}
	names := make([]string, 0, len(in))
	for k := range in {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		t := in[k]
		put(k)
		put(string(t.DType) + "/" + t.Logical + fmt.Sprint(t.Shape))
		put(string(t.Data))
	}
	return hex.EncodeToString(h.Sum(nil))
}
