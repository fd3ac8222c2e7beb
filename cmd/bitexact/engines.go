package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/wasm"
)

// wasmOptions configure the wasm engine (tests lower its memory limit).
var wasmOptions wasm.Options

// namedEngine is an engine with the short name used in tables.
type namedEngine struct {
	name string
	golden.Engine
}

// openEngines starts the engines named in a comma-separated list
// ("native", "wasm"). The returned function releases them.
func openEngines(ctx context.Context, list string) ([]namedEngine, func(), error) {
	var es []namedEngine
	var closers []func()
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	seen := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if seen[n] {
			continue
		}
		seen[n] = true
		switch n {
		case "native":
			es = append(es, namedEngine{"native", golden.Native{}})
		case "wasm":
			w, err := golden.NewWasm(context.WithoutCancel(ctx), wasmOptions)
			if err != nil {
				closeAll()
				return nil, nil, fmt.Errorf("starting the wasm engine: %w", err)
			}
			// Ctrl-C closes the runtime: a call in flight fails at its
			// next guest call (at most 256 KiB of output away).
			unhook := context.AfterFunc(ctx, func() { w.Close(context.Background()) })
			closers = append(closers, func() {
				unhook()
				w.Close(context.Background())
			})
			es = append(es, namedEngine{"wasm", plainWasm{w}})
		default:
			closeAll()
			return nil, nil, fmt.Errorf("unknown engine %q (engines: native, wasm)", n)
		}
	}
	if len(es) == 0 {
		return nil, nil, fmt.Errorf("no engine named")
	}
	return es, closeAll, nil
}

// lazyWasm is the embedded wasm reference started on first use: vendor
// certification needs it only for (task, profile) pairs the golden set
// has no case for. It names its module like golden.Wasm, so certificates
// record the expected outputs it computes as the reference's.
type lazyWasm struct {
	once   sync.Once
	w      golden.Wasm
	unhook func() bool
	err    error
}

func (l *lazyWasm) start(ctx context.Context) error {
	l.once.Do(func() {
		// As in openEngines: the plain compiled variant, closed by Ctrl-C.
		l.w, l.err = golden.NewWasm(context.WithoutCancel(ctx), wasmOptions)
		if l.err != nil {
			l.err = fmt.Errorf("starting the wasm engine: %w", l.err)
			return
		}
		w := l.w
		l.unhook = context.AfterFunc(ctx, func() { w.Close(context.Background()) })
	})
	return l.err
}

// Run starts the runtime if needed and runs op in it.
func (l *lazyWasm) Run(ctx context.Context, op string, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	if err := l.start(ctx); err != nil {
		return nil, err
	}
	return plainWasm{l.w}.Run(ctx, op, p, in)
}

// Unary starts the runtime if needed and encodes in it.
func (l *lazyWasm) Unary(ctx context.Context, conv string, start uint32, out []byte) error {
	if err := l.start(ctx); err != nil {
		return err
	}
	return plainWasm{l.w}.Unary(ctx, conv, start, out)
}

// ModuleDigest is the embedded module's digest, known without starting it.
func (l *lazyWasm) ModuleDigest() string { return wasm.ModuleDigest() }

// Close releases the runtime if it was started.
func (l *lazyWasm) Close() {
	if l.unhook != nil {
		l.unhook()
	}
	if l.w.Runtime != nil {
		l.w.Close(context.Background())
	}
}

// plainWasm runs the wasm engine's calls under contexts that can never be
// done, so that the runtime picks its plain compiled variant: the
// cancellable one checks for termination at every loop header and runs
// the guest several times slower (wasm.Runtime says why), and the
// command's context, wired to Ctrl-C, is always cancellable. Ctrl-C is
// still honoured: openEngines closes the runtime when the command's
// context is done, and a call whose context is done fails with its error.
type plainWasm struct{ golden.Wasm }

func (e plainWasm) Run(ctx context.Context, op string, p ops.Params, in ops.Tensors) (out ops.Tensors, err error) {
	err = plainCall(ctx, func(ctx context.Context) error {
		out, err = e.Wasm.Run(ctx, op, p, in)
		return err
	})
	return out, err
}

func (e plainWasm) Unary(ctx context.Context, conv string, start uint32, out []byte) error {
	return plainCall(ctx, func(ctx context.Context) error { return e.Wasm.Unary(ctx, conv, start, out) })
}

// plainCall calls f under ctx without its cancellation; when ctx is done,
// before or during the call, it returns ctx's error instead of f's (a
// closed runtime's).
func plainCall(ctx context.Context, f func(context.Context) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("wasm: %w", err)
	}
	err := f(context.WithoutCancel(ctx))
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("wasm: %w", ctx.Err())
	}
	return err
}

// progress reports a long run's progress on w. On a terminal it redraws a
// one-line bar at most ten times a second; on any other writer (a CI log,
// a file) it prints a plain line every logEvery, the first only after
// logEvery, so short runs and tests print nothing. Both give the rate and
// the time left.
type progress struct {
	w     io.Writer
	label string
	// unit names what done and total count ("inputs", "files").
	unit  string
	mu    sync.Mutex
	last  time.Time
	start time.Time
	tty   bool
	now   func() time.Time
}

// logEvery is the interval of progress lines off a terminal.
const logEvery = 5 * time.Second

func newProgress(w io.Writer, label string) *progress {
	p := &progress{w: w, label: label, unit: "items", now: time.Now}
	p.start = p.now()
	p.last = p.start
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *progress) update(done, total float64, item string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if p.tty && done < total && now.Sub(p.last) < 100*time.Millisecond ||
		!p.tty && (done >= total || now.Sub(p.last) < logEvery) {
		return
	}
	p.last = now
	frac := 0.0
	if total > 0 {
		frac = done / total
	}
	el := now.Sub(p.start)
	left, eta := "unknown", ""
	if frac > 0 && frac < 1 {
		left = (time.Duration(float64(el)/frac) - el).Round(time.Second).String()
		eta = " eta " + left
	}
	if !p.tty {
		fmt.Fprintf(p.w, "%s: %.1f%% (%s of %s %s), %s %s/s, about %s left\n", p.label, 100*frac,
			count(done), count(total), p.unit, count(done/el.Seconds()), p.unit, left)
		return
	}
	const width = 30
	n := int(frac * width)
	if len(item) > 40 {
		item = item[:37] + "..."
	}
	fmt.Fprintf(p.w, "\r%s [%s%s] %5.1f%%%s %-40s", p.label, strings.Repeat("#", n), strings.Repeat(".", width-n), 100*frac, eta, item)
}

// count prints a count or rate compactly: 950, 12.3k, 4.29G.
func count(v float64) string {
	for _, s := range []struct {
		f float64
		p string
	}{{1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if v >= s.f {
			return fmt.Sprintf("%.3g%s", v/s.f, s.p)
		}
	}
	return fmt.Sprintf("%.0f", v)
}

func (p *progress) done() {
	if p.tty {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", 110))
	}
}
