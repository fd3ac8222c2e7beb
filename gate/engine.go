package gate

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/bitexact/bitexact/golden/exhaustive"
	"github.com/bitexact/bitexact/refimpl/ops"
)

// Backend launches kernels: the launch code is all a backend writes. The
// claim model, the choice of kernel and the checks are this package's.
type Backend interface {
	// Name names the backend in errors and reports ("cuda", "metal").
	Name() string
	// Kernels lists the backend's kernels with their claims.
	Kernels() []Kernel
	// Launch runs kernel k on op inputs in under parameters p: those k
	// claims, or those a check holds it to.
	Launch(ctx context.Context, k Kernel, p ops.Params, in ops.Tensors) (ops.Tensors, error)
}

// Loader is a Backend that cannot run every kernel on every device (a
// module the GPU's architecture cannot load). Loaded returns nil for a
// kernel it can run, else why not.
type Loader interface {
	Backend
	Loaded(k Kernel) error
}

// Ranger is a Backend with a range form of its unary kernels: Range
// writes the codes of the float32 inputs with bits start, start+1, ...
// into out, one byte per code. Range may be called concurrently.
type Ranger interface {
	Backend
	Range(ctx context.Context, k Kernel, start uint32, out []byte) error
}

// errNoKernel is claimed.Run's error for a case no kernel claims.
var errNoKernel = errors.New("no kernel claims this case")

// Engine runs reference operations on the kernels of a backend that
// claim them. It is a golden.Engine (golden.Check certifies it case by
// case) and an exhaustive.Unary (the 2^32 sweeps).
type Engine struct {
	Backend Backend
}

// Kernels lists the backend's kernels.
func (e Engine) Kernels() []Kernel { return e.Backend.Kernels() }

// KernelFor returns the kernel that claims op under p, if any.
func (e Engine) KernelFor(op string, p ops.Params) (Kernel, bool) {
	for _, k := range e.Backend.Kernels() {
		if k.Matches(op, p) {
			return k, true
		}
	}
	return Kernel{}, false
}

// Lookup finds a kernel by name.
func (e Engine) Lookup(name string) (Kernel, error) {
	k, err := lookup(e.Backend.Kernels(), name)
	if err != nil {
		return k, fmt.Errorf("%s: %w", e.Backend.Name(), err)
	}
	return k, nil
}

// Loaded returns nil when the backend can run k, else why not.
func (e Engine) Loaded(k Kernel) error {
	if l, ok := e.Backend.(Loader); ok {
		return l.Loaded(k)
	}
	return nil
}

// Supports reports whether a kernel the backend can run claims op under p.
func (e Engine) Supports(op string, p ops.Params) bool {
	k, ok := e.KernelFor(op, p)
	return ok && e.Loaded(k) == nil
}

// Run runs op on the kernel that claims it.
func (e Engine) Run(ctx context.Context, op string, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	k, ok := e.KernelFor(op, p)
	if !ok {
		return nil, fmt.Errorf("%s: no kernel implements %s with %s", e.Backend.Name(), op, ParamString(p))
	}
	return e.RunKernel(ctx, k, p, in)
}

// RunKernel runs kernel k on op inputs whatever its claim: a check uses it
// to hold a kernel to a profile it does not claim.
func (e Engine) RunKernel(ctx context.Context, k Kernel, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	if err := e.Loaded(k); err != nil {
		return nil, err
	}
	return e.Backend.Launch(ctx, k, p, in)
}

// Unary computes the codes of conversion conv for the inputs start,
// start+1, ... on the kernel that claims conv (exhaustive.Unary).
func (e Engine) Unary(ctx context.Context, conv string, start uint32, out []byte) error {
	for _, k := range e.Backend.Kernels() {
		if k.Conversion == conv {
			return e.KernelUnary(k).Unary(ctx, conv, start, out)
		}
	}
	return fmt.Errorf("%s: no kernel implements conversion %s", e.Backend.Name(), conv)
}

// KernelUnary is an exhaustive.Unary that runs k's range form (Ranger)
// whatever conversion it is asked for, to hold k to a profile it does not
// claim.
func (e Engine) KernelUnary(k Kernel) exhaustive.Unary { return kernelUnary{e, k} }

// kernelUnary runs one kernel's range form (Engine.KernelUnary).
type kernelUnary struct {
	e Engine
	k Kernel
}

// Unary ignores conv and runs the kernel.
func (u kernelUnary) Unary(ctx context.Context, conv string, start uint32, out []byte) error {
	r, ok := u.e.Backend.(Ranger)
	if !ok {
		return fmt.Errorf("%s: kernel %s has no range form", u.e.Backend.Name(), u.k.Name)
	}
	if err := u.e.Loaded(u.k); err != nil {
		return err
	}
	return r.Range(ctx, u.k, start, out)
}

// claimed is the engine restricted to the cases a kernel claims: it runs
// those and answers errNoKernel for the others, and adds up each kernel's
// time. Golden runs the golden set through it.
type claimed struct {
	Engine
	mu   sync.Mutex
	secs map[string]float64
}

// newClaimed returns e restricted to the cases a kernel claims.
func newClaimed(e Engine) *claimed { return &claimed{Engine: e, secs: map[string]float64{}} }

// Run runs a claimed case.
func (c *claimed) Run(ctx context.Context, op string, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	k, ok := c.KernelFor(op, p)
	if !ok || c.Loaded(k) != nil {
		return nil, errNoKernel
	}
	t0 := time.Now()
	out, err := c.Backend.Launch(ctx, k, p, in)
	c.mu.Lock()
	c.secs[k.Name] += time.Since(t0).Seconds()
	c.mu.Unlock()
	return out, err
}

// Seconds is the time spent in kernel name so far.
func (c *claimed) Seconds(name string) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.secs[name]
}
