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
			w, err := golden.NewWasm(ctx, wasmOptions)
			if err != nil {
				closeAll()
				return nil, nil, fmt.Errorf("starting the wasm engine: %w", err)
			}
			closers = append(closers, func() { w.Close(context.Background()) })
			es = append(es, namedEngine{"wasm", w})
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
	once sync.Once
	w    golden.Wasm
	err  error
}

func (l *lazyWasm) start(ctx context.Context) error {
	l.once.Do(func() {
		l.w, l.err = golden.NewWasm(ctx, wasm.Options{})
		if l.err != nil {
			l.err = fmt.Errorf("starting the wasm engine: %w", l.err)
		}
	})
	return l.err
}

// Run starts the runtime if needed and runs op in it.
func (l *lazyWasm) Run(ctx context.Context, op string, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	if err := l.start(ctx); err != nil {
		return nil, err
	}
	return l.w.Run(ctx, op, p, in)
}

// Unary starts the runtime if needed and encodes in it.
func (l *lazyWasm) Unary(ctx context.Context, conv string, start uint32, out []byte) error {
	if err := l.start(ctx); err != nil {
		return err
	}
	return l.w.Unary(ctx, conv, start, out)
}

// ModuleDigest is the embedded module's digest, known without starting it.
func (l *lazyWasm) ModuleDigest() string { return wasm.ModuleDigest() }

// Close releases the runtime if it was started.
func (l *lazyWasm) Close() {
	if l.w.Runtime != nil {
		l.w.Close(context.Background())
	}
}

// progress draws a one-line progress bar on w when w is a terminal, at
// most ten times a second; on other writers it prints nothing, so logs and
// tests stay clean.
type progress struct {
	w     io.Writer
	label string
	mu    sync.Mutex
	last  time.Time
	start time.Time
	tty   bool
}

func newProgress(w io.Writer, label string) *progress {
	p := &progress{w: w, label: label, start: time.Now()}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *progress) update(done, total float64, item string) {
	if !p.tty {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if done < total && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	const width = 30
	frac := 0.0
	if total > 0 {
		frac = done / total
	}
	n := int(frac * width)
	eta := ""
	if frac > 0 && frac < 1 {
		el := now.Sub(p.start)
		eta = fmt.Sprintf(" eta %s", (time.Duration(float64(el)/frac) - el).Round(time.Second))
	}
	if len(item) > 40 {
		item = item[:37] + "..."
	}
	fmt.Fprintf(p.w, "\r%s [%s%s] %5.1f%%%s %-40s", p.label, strings.Repeat("#", n), strings.Repeat(".", width-n), 100*frac, eta, item)
}

func (p *progress) done() {
	if p.tty {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", 110))
	}
}
