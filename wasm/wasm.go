// Package wasm runs the bitexact reference (refimpl) compiled to one
// WebAssembly module, under the wazero runtime, with nothing in reach that
// could change its outputs: no files, network, arguments or environment, a
// clock stopped at the Unix epoch and a fixed random stream.
//
// WebAssembly rounds every float operation to nearest-even and never fuses
// a multiply and an add, so the module computes the same bytes on every
// host CPU. Golden data is generated through it, and the module's SHA-256
// (ModuleDigest) names the reference a certificate was made against.
//
// The module is built from wasm/guest and embedded (refimpl.wasm). After a
// change under refimpl/, rebuild it with `go generate ./wasm` or `make wasm`;
// TestModuleUpToDate fails until then.
package wasm

//go:generate go run ./internal/guestbuild/gen -o refimpl.wasm

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/unary"
	"github.com/bitexact/bitexact/wasm/internal/abi"
	"github.com/bitexact/bitexact/wasm/internal/guestbuild"
)

//go:embed refimpl.wasm
var module []byte

var digest = sync.OnceValue(func() string {
	s := sha256.Sum256(module)
	return hex.EncodeToString(s[:])
})

// Module returns a copy of the embedded reference module.
func Module() []byte { return bytes.Clone(module) }

// ModuleDigest is the lowercase hex SHA-256 of Module().
func ModuleDigest() string { return digest() }

// ModuleGoVersion is the Go toolchain that built the embedded module, for
// example "go1.26.8". Rebuilding the module reproduces its bytes only with
// this exact toolchain.
func ModuleGoVersion() string { return guestbuild.ModuleGoVersion(module) }

// Defaults of Options.
const (
	// DefaultMemoryLimitPages (65536 pages of 64 KiB, 4 GiB) is all that a
	// 32-bit guest can address. Memory is committed as the guest grows it,
	// so the limit costs nothing until used. Measured: nvfp4.quantize of a
	// 4096x11776 F32 tensor (184 MiB) peaks at 635 MiB of guest memory.
	DefaultMemoryLimitPages = 65536
	// retainPages: an instance whose memory grew beyond 1 GiB is dropped
	// after its call (WebAssembly memory never shrinks), so one huge
	// request does not pin its peak for the life of the pool.
	retainPages = 16384
	// unaryChunk is the number of output bytes one guest call of Unary
	// fills: large enough to make the call overhead (about 1 us) vanish,
	// small enough that the chunk is still in cache when the host copies
	// it out (measured: 1 MiB chunks made the table conversions about a
	// third slower).
	unaryChunk = 256 << 10
	// unaryMinPart is the least output a parallel part of Unary gets, so
	// that the split pays for itself.
	unaryMinPart = 256 << 10
	// nameArea is the head of the unary scratch buffer holding the
	// conversion name.
	nameArea = 256
)

// Options configure a Runtime. The zero value is ready to use.
type Options struct {
	// Instances bounds the number of guest instances, and so the number of
	// calls running at once; further calls wait. 0 means runtime.NumCPU().
	// Instances are created on demand and reused; Unary spreads a long
	// range over several.
	Instances int
	// CacheDir holds wazero's compiled machine code between processes, so
	// that only the first New on a machine pays for compiling the module.
	// "" means filepath.Join(os.UserCacheDir(), "bitexact", "wazero"). The
	// two variants (see Runtime) use its subdirectories plain/ and
	// cancellable/. When a directory cannot be created the cache is kept
	// in memory.
	CacheDir string
	// NoCache disables the on-disk compilation cache (CacheDir is ignored).
	NoCache bool
	// MemoryLimitPages caps each instance's memory, in 64 KiB pages.
	// 0 means DefaultMemoryLimitPages. Within it, one call may grow the
	// guest's memory only to a limit set from its request size (callLimit).
	// A request that needs more fails with an error wrapping
	// ErrInputTooLarge; the pool replaces the instance.
	MemoryLimitPages uint32
	// Interpreter selects wazero's interpreter instead of its compiler (the
	// default where the compiler supports the platform). Results are the
	// same; the interpreter is about ten times slower.
	Interpreter bool
}

// Runtime runs reference ops in a pool of guest instances. It is safe for
// concurrent use.
//
// A Runtime compiles the module in up to two variants. wazero can stop a
// running guest when its context is done only if the machine code checks
// for termination at every loop header, and Go-built modules enter a loop
// in every function: those checks slow the guest about tenfold. So a call
// whose context can never be done (ctx.Done() == nil, as for
// context.Background() or context.WithoutCancel) runs the plain variant,
// and any other call runs the cancellable variant, compiled on first use.
// Both give the same bytes; they share the Instances budget.
type Runtime struct {
	opt         Options
	wasm        []byte
	plain, canc variant
	tokens      chan struct{} // one per instance that may still be created
	closed      atomic.Bool
	closeMu     sync.Mutex
}

// variant is the module compiled with or without termination checks.
type variant struct {
	cancellable bool
	once        sync.Once
	err         error
	rt          wazero.Runtime
	compiled    wazero.CompiledModule
	cache       wazero.CompilationCache
	idle        chan *instance
}

// instance is one instantiated guest. It is used by one call at a time.
type instance struct {
	v                             *variant
	mod                           api.Module
	mem                           api.Memory
	alloc, free, encodeRange, nms api.Function
	request, call                 api.Function // the Run path
	scratch                       uint32       // unary buffer, nameArea+unaryChunk bytes
	stderr                        headBuffer
	// lm is the instance's memory (memory.go), which enforces the
	// per-call limit.
	lm guestMemory
}

// New compiles the embedded module (or loads it from the compilation
// cache) and instantiates the first guest, so that a broken module fails
// here rather than on the first call.
func New(ctx context.Context, opt Options) (*Runtime, error) {
	return newRuntime(ctx, opt, module)
}

func newRuntime(ctx context.Context, opt Options, wasm []byte) (*Runtime, error) {
	if opt.Instances <= 0 {
		opt.Instances = runtime.NumCPU()
	}
	if opt.MemoryLimitPages == 0 {
		opt.MemoryLimitPages = DefaultMemoryLimitPages
	}
	if opt.MemoryLimitPages > DefaultMemoryLimitPages {
		return nil, fmt.Errorf("wasm: MemoryLimitPages %d exceeds the 32-bit maximum %d", opt.MemoryLimitPages, DefaultMemoryLimitPages)
	}
	if !opt.NoCache && opt.CacheDir == "" {
		if base, err := os.UserCacheDir(); err == nil {
			opt.CacheDir = filepath.Join(base, "bitexact", "wazero")
		}
	}
	n := opt.Instances
	r := &Runtime{opt: opt, wasm: wasm, tokens: make(chan struct{}, n)}
	r.plain.idle = make(chan *instance, n)
	r.canc.idle = make(chan *instance, n)
	r.canc.cancellable = true
	for i := 0; i < n; i++ {
		r.tokens <- struct{}{}
	}
	// The first instance proves the module usable.
	in, err := r.get(context.WithoutCancel(ctx))
	if err != nil {
		r.Close(ctx)
		return nil, err
	}
	r.put(ctx, in, true)
	return r, nil
}

// init compiles the variant once.
func (r *Runtime) init(ctx context.Context, v *variant) error {
	v.once.Do(func() {
		cfg := wazero.NewRuntimeConfig()
		if r.opt.Interpreter {
			cfg = wazero.NewRuntimeConfigInterpreter()
		}
		cfg = cfg.WithCloseOnContextDone(v.cancellable).WithMemoryLimitPages(r.opt.MemoryLimitPages)
		if !r.opt.NoCache {
			// Separate directories: wazero's cache key is the module
			// and the CPU, not the termination checks, so one directory
			// would hand one variant the other's code.
			sub := "plain"
			if v.cancellable {
				sub = "cancellable"
			}
			v.cache = compilationCache(filepath.Join(r.opt.CacheDir, sub))
			cfg = cfg.WithCompilationCache(v.cache)
		}
		v.rt = wazero.NewRuntimeWithConfig(ctx, cfg)
		if _, err := wasi_snapshot_preview1.Instantiate(ctx, v.rt); err != nil {
			v.err = fmt.Errorf("wasm: instantiating WASI: %w", err)
			return
		}
		var err error
		if v.compiled, err = v.rt.CompileModule(ctx, r.wasm); err != nil {
			v.err = fmt.Errorf("wasm: compiling the reference module: %w", err)
		}
	})
	return v.err
}

func compilationCache(dir string) wazero.CompilationCache {
	if dir != "" {
		if c, err := wazero.NewCompilationCacheWithDir(dir); err == nil {
			return c
		}
	}
	return wazero.NewCompilationCache()
}

// The guest's view of the world: a wall clock stopped at the Unix epoch, a
// monotonic clock stopped at 1 ns (the Go runtime refuses to start on a
// monotonic clock reading 0), and a random stream that is the same for
// every instance. The Go runtime reads all three (hash seeds, GC pacing);
// nothing in the reference may depend on them, and fixing them means
// nothing can.
func fixedWalltime() (sec int64, nsec int32) { return 0, 0 }
func fixedNanotime() int64                   { return 1 }

func (r *Runtime) instantiate(ctx context.Context, v *variant) (*instance, error) {
	in := &instance{v: v}
	cfg := wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions("_initialize").
		WithWalltime(fixedWalltime, 1).
		WithNanotime(fixedNanotime, 1).
		WithRandSource(rand.NewChaCha8([32]byte{})).
		WithStderr(&in.stderr)
	alloc, lm := memoryAllocator(r.callLimit(0))
	mod, err := v.rt.InstantiateModule(experimental.WithMemoryAllocator(ctx, alloc), v.compiled, cfg)
	if in.lm = *lm; in.lm != nil {
		// A reservation starts busy (the guest's _initialize runs in
		// InstantiateModule); from here on, calls bracket their use.
		defer in.lm.leave()
	}
	if err != nil {
		return nil, &guestFailure{msg: "wasm: instantiating the reference module: " + firstLine(err.Error()) + in.stderr.suffix(), err: err}
	}
	in.mod, in.mem = mod, mod.Memory()
	fns := map[string]*api.Function{
		"bitexact_abi": new(api.Function), "bitexact_alloc": &in.alloc, "bitexact_free": &in.free,
		"bitexact_request": &in.request, "bitexact_call": &in.call,
		"bitexact_unary": &in.encodeRange, "bitexact_names": &in.nms,
	}
	for name, p := range fns {
		if *p = mod.ExportedFunction(name); *p == nil {
			mod.Close(ctx)
			return nil, fmt.Errorf("wasm: the module does not export %s (not a bitexact reference module?)", name)
		}
	}
	res, err := (*fns["bitexact_abi"]).Call(ctx)
	if err == nil && (len(res) != 1 || res[0] != abi.Version) {
		err = fmt.Errorf("module ABI version %v, host %d", res, abi.Version)
	}
	if err != nil {
		mod.Close(ctx)
		return nil, fmt.Errorf("wasm: %w", err)
	}
	if in.mem == nil {
		mod.Close(ctx)
		return nil, errors.New("wasm: the module exports no memory")
	}
	return in, nil
}

var errClosed = errors.New("wasm: runtime is closed")

// get takes an idle instance of the variant ctx needs, else creates one
// while the budget allows, else replaces an idle instance of the other
// variant, else waits.
func (r *Runtime) get(ctx context.Context) (*instance, error) {
	if r.closed.Load() {
		return nil, errClosed
	}
	v, other := &r.plain, &r.canc
	if ctx.Done() != nil {
		v, other = other, v
	}
	if err := r.init(ctx, v); err != nil {
		return nil, err
	}
	select {
	case in := <-v.idle:
		return in, nil
	default:
	}
	select {
	case in := <-v.idle:
		return in, nil
	case <-r.tokens:
	case in := <-other.idle:
		in.mod.Close(ctx)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	in, err := r.instantiate(ctx, v)
	if err != nil {
		r.tokens <- struct{}{}
		return nil, err
	}
	return in, nil
}

// put returns an instance to the pool. An instance that failed (trapped,
// exited, was cancelled: its Go runtime may be mid-operation) or grew past
// retainPages is closed instead, and its slot freed for a fresh one.
func (r *Runtime) put(ctx context.Context, in *instance, healthy bool) {
	in.stderr.reset()
	r.closeMu.Lock()
	defer r.closeMu.Unlock()
	if !healthy || r.closed.Load() || in.mod.IsClosed() || in.pages() > retainPages {
		in.mod.Close(context.WithoutCancel(ctx))
		r.tokens <- struct{}{}
		return
	}
	in.v.idle <- in
}

// Close releases every instance and the compiled module. Calls in flight
// fail; later calls return an error.
func (r *Runtime) Close(ctx context.Context) error {
	r.closeMu.Lock()
	defer r.closeMu.Unlock()
	if r.closed.Swap(true) {
		return nil
	}
	var errs []error
	for _, v := range []*variant{&r.plain, &r.canc} {
		v.once.Do(func() { v.err = errClosed }) // no compilation after Close
		if v.rt != nil {
			errs = append(errs, v.rt.Close(ctx))
		}
		if v.cache != nil {
			errs = append(errs, v.cache.Close(ctx))
		}
	}
	return errors.Join(errs...)
}

// ErrInputTooLarge is wrapped by the error of a call whose input needs
// more guest memory than its limit (Runtime.callLimit): the input is
// too large for the reference, which is bad input, not a wrong output.
var ErrInputTooLarge = errors.New("input too large")

// Guest memory allowed for one call: callBase plus callPerByte bytes per
// byte of the request, at most the runtime's MemoryLimitPages. Measured
// by tiling the inputs of every golden case to a 16 MiB request (one
// fresh instance each, committed memory after the call): the worst is
// ggml.mxfp4.dequantize at 24.7x the request above the runtime's 3 MiB
// baseline (its F32 outputs are 7.5x its blocks), then mxfp4.dequantize
// 23.7x, gemv.awq 14.8x and the unary decodes 13.1x; every encoder and
// quantizer stays under 4.4x (nvfp4.quantize of a 184 MiB tensor: 3.5x).
// 48x is twice the worst; a request of a few KiB can no longer make an
// instance commit gigabytes.
const (
	callBase    = 64 << 20
	callPerByte = 48
)

// callLimit is the guest memory, in bytes, a call with an n-byte request
// may grow to.
func (r *Runtime) callLimit(n uint64) uint64 {
	most := uint64(r.opt.MemoryLimitPages) * 65536
	if most <= callBase || n > (most-callBase)/callPerByte {
		return most
	}
	return callBase + callPerByte*n
}

// call runs f on an instance whose memory may grow to limit bytes; a Go
// error from f (a trap, an exit, a cancellation) retires the instance.
// A guest that ran out of memory gives an error wrapping
// ErrInputTooLarge.
func (r *Runtime) call(ctx context.Context, what string, limit uint64, f func(*instance) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("wasm: %s: %w", what, err)
	}
	in, err := r.get(ctx)
	if err != nil {
		return fmt.Errorf("wasm: %s: %w", what, err)
	}
	if in.lm != nil {
		in.lm.enter(limit)
	}
	err = f(in)
	if in.lm != nil {
		in.lm.leave()
	}
	var ge *guestError
	healthy := err == nil || errors.As(err, &ge)
	switch {
	case healthy:
	case errors.Is(err, ErrInputTooLarge) || strings.Contains(string(in.stderr.b), "out of memory"):
		// The Go runtime in the guest reports "fatal error: out of
		// memory" and exits when memory.grow fails.
		err = fmt.Errorf("%w: %s needs more than the %d MiB of guest memory allowed for it (the reference ran out of memory)",
			ErrInputTooLarge, what, limit>>20)
	default:
		err = &guestFailure{msg: fmt.Sprintf("wasm: %s: the guest failed: %s%s", what, firstLine(err.Error()), in.stderr.suffix()), err: err}
	}
	r.put(ctx, in, healthy)
	return err
}

// guestError is an error the reference reported (or a panic it
// recovered from); its message is exactly what the native call returns.
type guestError struct{ msg string }

func (e *guestError) Error() string { return e.msg }

// Run executes ops.Run(op, p, in) in the guest and returns its outputs, or
// its error with the same message the native call would give. Failures of
// the guest itself (out of memory, a trap, cancellation through ctx) are
// errors naming the op.
func (r *Runtime) Run(ctx context.Context, op string, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	req := abi.Request{Op: op, Params: p, Inputs: in}
	n := abi.RequestSize(req)
	if n > math.MaxUint32 {
		return nil, fmt.Errorf("op %s: request of %d bytes exceeds the 4 GiB guest address space", op, n)
	}
	var out ops.Tensors
	err := r.call(ctx, fmt.Sprintf("op %s on a %d-byte request", op, n), r.callLimit(uint64(n)), func(g *instance) error {
		res, err := g.request.Call(ctx, uint64(n))
		if err != nil {
			return err
		}
		view, ok := g.mem.Read(uint32(res[0]), uint32(n))
		if res[0] == 0 || !ok {
			return fmt.Errorf("%w: the guest cannot allocate a %d-byte request", ErrInputTooLarge, n)
		}
		if err := abi.EncodeRequest(view, req); err != nil {
			return err
		}
		if res, err = g.call.Call(ctx, uint64(n)); err != nil {
			return err
		}
		a, m := uint32(res[0]>>32), uint32(res[0])
		b, ok := g.mem.Read(a, m)
		if !ok {
			return fmt.Errorf("guest returned buffer [%#x,+%d) outside its memory", a, m)
		}
		// The views stay valid until the next guest call, the free.
		resp, err := abi.DecodeRefResponse(b, func(a uint32, n uint64) ([]byte, bool) {
			v, ok := g.mem.Read(a, uint32(n))
			if !ok || uint64(uint32(n)) != n {
				return nil, false
			}
			// append, unlike make and copy, does not zero the
			// allocation first.
			return append([]byte(nil), v...)[:n:n], true
		})
		if _, ferr := g.free.Call(ctx, uint64(a)); ferr != nil {
			return ferr
		}
		if err != nil {
			return fmt.Errorf("op %s: %w", op, err)
		}
		if resp.Err != "" {
			return &guestError{resp.Err}
		}
		out = resp.Outputs
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Unary executes unary.Lookup(conv).EncodeRange(start, out) in the guest,
// 256 KiB of output per guest call. A range of more than 256 KiB of
// output is split over up to Options.Instances instances running in
// parallel. Like the native call it leaves untouched a trailing byte that
// does not make a whole code.
func (r *Runtime) Unary(ctx context.Context, conv string, start uint32, out []byte) error {
	c, err := unary.Lookup(conv)
	if err != nil {
		return err
	}
	w := c.Width()
	out = out[:len(out)/w*w]
	parts := min(r.opt.Instances, (len(out)+unaryMinPart-1)/unaryMinPart)
	if parts <= 1 {
		return r.unary(ctx, conv, w, start, out)
	}
	errs := make([]error, parts)
	var wg sync.WaitGroup
	codes := len(out) / w
	for i, lo := 0, 0; i < parts; i++ {
		hi := codes * (i + 1) / parts
		wg.Add(1)
		go func(i int, s uint32, o []byte) {
			defer wg.Done()
			errs[i] = r.unary(ctx, conv, w, s, o)
		}(i, start+uint32(lo), out[lo*w:hi*w])
		lo = hi
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err // the parts fail alike; one message is enough
		}
	}
	return nil
}

// unary encodes out on one instance.
func (r *Runtime) unary(ctx context.Context, conv string, w int, start uint32, out []byte) error {
	return r.call(ctx, "conversion "+conv, r.callLimit(nameArea+unaryChunk), func(g *instance) error {
		if g.scratch == 0 {
			a, err := g.allocate(ctx, nameArea+unaryChunk)
			if err != nil {
				return err
			}
			g.scratch = a
		}
		if len(conv) > nameArea || !g.mem.WriteString(g.scratch, conv) {
			return fmt.Errorf("conversion name %q does not fit the guest buffer", conv)
		}
		for len(out) > 0 {
			n := min(len(out), unaryChunk)
			res, err := g.encodeRange.Call(ctx, uint64(g.scratch), uint64(len(conv)), uint64(start), nameArea, uint64(n))
			if err != nil {
				return err
			}
			if res[0] != 0 {
				b, err := g.take(ctx, res[0])
				if err != nil {
					return err
				}
				resp, err := abi.DecodeResponse(b)
				if err != nil {
					return err
				}
				return &guestError{resp.Err}
			}
			view, ok := g.mem.Read(g.scratch+nameArea, uint32(n))
			if !ok {
				return errors.New("guest output buffer out of range")
			}
			copy(out, view)
			out = out[n:]
			start += uint32(n / w)
		}
		return nil
	})
}

// Names lists the ops registered in the guest, sorted. It equals
// ops.Names() when the embedded module is up to date.
func (r *Runtime) Names(ctx context.Context) ([]string, error) {
	var names []string
	err := r.call(ctx, "names", r.callLimit(0), func(g *instance) error {
		res, err := g.nms.Call(ctx)
		if err != nil {
			return err
		}
		b, err := g.take(ctx, res[0])
		if err != nil {
			return err
		}
		if len(b) > 0 {
			names = strings.Split(string(b), "\n")
		}
		return nil
	})
	return names, err
}

func (g *instance) allocate(ctx context.Context, n uint32) (uint32, error) {
	res, err := g.alloc.Call(ctx, uint64(n))
	if err != nil {
		return 0, err
	}
	if res[0] == 0 {
		return 0, fmt.Errorf("%w: the guest cannot allocate %d bytes", ErrInputTooLarge, n)
	}
	return uint32(res[0]), nil
}

// pages is the guest's memory size in pages (Memory.Size, in bytes as a
// uint32, wraps at 4 GiB).
func (g *instance) pages() uint32 {
	p, _ := g.mem.Grow(0)
	return p
}

// take copies out a guest buffer given as (address<<32 | length) and frees
// it. The copy is needed: a view of guest memory goes stale when the guest
// next grows its memory, and the buffer is reused once freed.
func (g *instance) take(ctx context.Context, ptrLen uint64) ([]byte, error) {
	a, n := uint32(ptrLen>>32), uint32(ptrLen)
	view, ok := g.mem.Read(a, n)
	if !ok {
		return nil, fmt.Errorf("guest returned buffer [%#x,+%d) outside its memory", a, n)
	}
	b := bytes.Clone(view)
	if _, err := g.free.Call(ctx, uint64(a)); err != nil {
		return nil, err
	}
	return b, nil
}

// headBuffer keeps the first 4 KiB written to the guest's stderr, where
// the Go runtime reports fatal errors ("fatal error: out of memory")
// before its goroutine dump.
type headBuffer struct{ b []byte }

const headMax = 4096

func (h *headBuffer) Write(p []byte) (int, error) {
	if room := headMax - len(h.b); room > 0 {
		h.b = append(h.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (h *headBuffer) reset() { h.b = h.b[:0] }

// suffix is the first line of what the guest wrote to stderr (the Go
// runtime's "fatal error: ..." or "panic: ..."), for an error message.
func (h *headBuffer) suffix() string {
	s := firstLine(strings.TrimSpace(string(h.b)))
	if s == "" {
		return ""
	}
	return "; guest stderr: " + s
}

// guestFailure is a failure of the guest itself in one line: wazero's
// errors carry a wasm stack trace on the lines after their first, and
// the guest's stderr a goroutine dump, which say nothing to the user of
// a command; the full error stays reachable through Unwrap.
type guestFailure struct {
	msg string
	err error
}

func (e *guestFailure) Error() string { return e.msg }
func (e *guestFailure) Unwrap() error { return e.err }

// firstLine is s up to its first line break, with " (...)" where more
// followed.
func firstLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return strings.TrimSpace(s[:i]) + " (...)"
	}
	return s
}

var _ io.Writer = (*headBuffer)(nil)
