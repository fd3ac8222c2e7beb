package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bitexact/bitexact/golden/exhaustive"
)

func TestPlainCall(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	err := plainCall(ctx, func(c context.Context) error {
		calls++
		if c.Done() != nil {
			t.Error("the call's context can be done: the runtime would pick the cancellable variant")
		}
		return nil
	})
	if err != nil || calls != 1 {
		t.Fatalf("plainCall = %v after %d calls, want nil after 1", err, calls)
	}
	// Cancelled during the call: the runtime's error gives way to ctx's.
	err = plainCall(ctx, func(context.Context) error {
		cancel()
		return errors.New("wasm: module closed")
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("plainCall cancelled in flight = %v, want context.Canceled", err)
	}
	// Cancelled before: no call.
	err = plainCall(ctx, func(context.Context) error { calls++; return nil })
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Errorf("plainCall after cancel = %v (%d calls), want context.Canceled and no call", err, calls)
	}
}

// Ctrl-C (the command's context cancelled) stops a long wasm computation
// promptly: the runtime is closed under the running calls.
func TestWasmInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the wasm engine")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	es, closeEngines, err := openEngines(ctx, "wasm")
	if err != nil {
		t.Fatal(err)
	}
	defer closeEngines()
	done := make(chan error, 1)
	go func() {
		_, err := exhaustive.Compute(ctx, es[0].Engine, "fp16/rne", 0, nil)
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	cancel()
	t0 := time.Now()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("interrupted sweep returned %v, want context.Canceled", err)
		}
		t.Logf("stopped %s after the cancellation", time.Since(t0).Round(time.Millisecond))
	case <-time.After(time.Minute):
		t.Fatal("the sweep did not stop within a minute of the cancellation")
	}
}

// BenchmarkCLIUnary measures the CLI's own engines, opened as main opens
// them (under a cancellable context, as Ctrl-C handling makes it), on 4
// chunks (2^26 inputs) of fp16/rne: the per-input cost of `bitexact
// exhaustive` through each engine.
func BenchmarkCLIUnary(b *testing.B) {
	for _, engine := range []string{"native", "wasm"} {
		b.Run(engine, func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			es, closeEngines, err := openEngines(ctx, engine)
			if err != nil {
				b.Fatal(err)
			}
			defer closeEngines()
			chunks := []int{0x3c, 0x3d, 0x3e, 0x3f}
			// Warm up (the wasm instances start on first use).
			if _, err := exhaustive.ComputeLeaves(ctx, es[0].Engine, "fp16/rne", chunks[:1], 0); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := exhaustive.ComputeLeaves(ctx, es[0].Engine, "fp16/rne", chunks, 0); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*float64(len(chunks))*exhaustive.Chunk/b.Elapsed().Seconds()/1e6, "Minputs/s")
		})
	}
}

// Off a terminal, progress prints a plain line every logEvery (none for a
// run shorter than that), with the rate and the time left.
func TestProgressLines(t *testing.T) {
	var b strings.Builder
	p := newProgress(&b, "e2m1/nvidia")
	p.unit = "inputs"
	clock := p.start
	p.now = func() time.Time { return clock }
	const total = 1 << 32
	for i, step := range []struct {
		after time.Duration
		done  float64
		want  string
	}{
		{time.Second, total / 8, ""}, // too soon
		// 2^30 inputs in 6 s: 179M/s; 6 s for a quarter leaves 18 s.
		{logEvery, total / 4, "e2m1/nvidia: 25.0% (1.07G of 4.29G inputs), 179M inputs/s, about 18s left\n"},
		{logEvery / 2, total / 2, ""}, // too soon after the last line
		// 2^31 in 13.5 s: 159M/s, and 13.5 s left (rounded to 14 s).
		{logEvery, total / 2, "e2m1/nvidia: 50.0% (2.15G of 4.29G inputs), 159M inputs/s, about 14s left\n"},
		{logEvery, total, ""}, // the end: the command prints its result
	} {
		clock = clock.Add(step.after)
		b.Reset()
		p.update(step.done, total, "")
		if b.String() != step.want {
			t.Errorf("step %d: printed %q, want %q", i, b.String(), step.want)
		}
	}
	b.Reset()
	p.done()
	if b.Len() != 0 {
		t.Errorf("done printed %q off a terminal", b.String())
	}
}
