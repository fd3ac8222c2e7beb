package wasm

import (
	"context"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
	"github.com/bitexact/bitexact/refimpl/unary"
)

// BenchmarkUnary compares the native conversion loop with the same loop in
// the guest over 4 Mi consecutive inputs per iteration (from 1.0f, a range
// crossing many exponents). "wasm-1" runs on one instance, the per-core
// comparison; "wasm-1-cancellable" the same with a context that can be
// cancelled (the variant with termination checks); "wasm" on Options{} (runtime.NumCPU() instances), across
// which Unary splits the range. The elem/s metric is conversions per
// second.
func BenchmarkUnary(b *testing.B) {
	const n = 4 << 20
	const start = 0x3f800000
	one, err := New(context.Background(), Options{Instances: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer one.Close(context.Background())
	all, err := New(context.Background(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer all.Close(context.Background())
	cancellable, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, mode := range []string{"native", "wasm-1", "wasm-1-cancellable", "wasm"} {
		r := map[string]*Runtime{"wasm-1": one, "wasm-1-cancellable": one, "wasm": all}[mode]
		ctx := context.Background()
		if mode == "wasm-1-cancellable" {
			ctx = cancellable
		}
		for _, c := range unary.All() {
			b.Run(mode+"/"+c.Name, func(b *testing.B) {
				out := make([]byte, n*c.Width())
				for b.Loop() {
					if r == nil {
						c.EncodeRange(start, out)
					} else if err := r.Unary(ctx, c.Name, start, out); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "elem/s")
			})
		}
	}
}

// benchOps are realistic inputs for the ops whose throughput matters most
// to golden generation, built with the native reference. An op that is not
// registered or rejects its inputs is skipped with a log line.
var benchOps = []struct {
	name string
	op   string
	p    ops.Params
	in   func() (ops.Tensors, error)
}{
	{"fp8.encode/1Mi", "fp8.encode", ops.Params{"format": "e4m3", "profile": "satfinite"}, func() (ops.Tensors, error) {
		return ops.Tensors{"x": randF32(1 << 20)}, nil
	}},
	{"nvfp4.quantize/1024x4096", "nvfp4.quantize", ops.Params{}, func() (ops.Tensors, error) {
		return ops.Tensors{"x": randF32(1024, 4096)}, nil
	}},
	{"gemv.mxfp4_q8_1/1024x4096", "gemv.mxfp4_q8_1", ops.Params{}, func() (ops.Tensors, error) {
		return mxfp4GEMVInputs(1024, 4096)
	}},
	{"gemv.mxfp4_q8_1/4096x11776", "gemv.mxfp4_q8_1", ops.Params{}, func() (ops.Tensors, error) {
		return mxfp4GEMVInputs(4096, 11776)
	}},
	{"gemv.exact/256x4096", "gemv.exact", ops.Params{}, func() (ops.Tensors, error) {
		return ops.Tensors{"w": randF32(256, 4096), "x": randF32(4096)}, nil
	}},
}

// mxfp4GEMVInputs quantizes random N x K weights to llama.cpp block_mxfp4
// ([N, K/32, 17]) and a random activation to block_q8_1 ([K/32, 36]).
func mxfp4GEMVInputs(n, k int) (ops.Tensors, error) {
	w, err := ops.Run("ggml.mxfp4.quantize", nil, ops.Tensors{"x": randF32(n * k)})
	if err != nil {
		return nil, err
	}
	a, err := ops.Run("ggml.q8_1.quantize", nil, ops.Tensors{"x": randF32(k)})
	if err != nil {
		return nil, err
	}
	wb, ab := w["blocks"], a["blocks"]
	wb.Shape = []int{n, k / 32, len(wb.Data) / (n * k / 32)}
	ab.Shape = []int{k / 32, len(ab.Data) / (k / 32)}
	return ops.Tensors{"w": wb, "act": ab}, nil
}

func randF32(shape ...int) tensor.Tensor {
	n := 1
	for _, d := range shape {
		n *= d
	}
	rng := rand.New(rand.NewPCG(5, 6))
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return tensor.FromF32(shape, v)
}

// BenchmarkRun compares native ops.Run with Runtime.Run (request encoding,
// copies in and out of the guest included). BITEXACT_BENCH_OPS, a
// comma-separated list, restricts it.
func BenchmarkRun(b *testing.B) {
	r := sharedRuntime(b)
	only := os.Getenv("BITEXACT_BENCH_OPS")
	for _, bo := range benchOps {
		if _, err := ops.Lookup(bo.op); err != nil || (only != "" && !strings.Contains(","+only+",", ","+bo.op+",")) {
			continue
		}
		in, err := bo.in()
		if err == nil {
			_, err = ops.Run(bo.op, bo.p, in)
		}
		if err != nil {
			b.Logf("%s: %v (skipped)", bo.name, err)
			continue
		}
		for _, mode := range []string{"native", "wasm"} {
			b.Run(mode+"/"+bo.name, func(b *testing.B) {
				for b.Loop() {
					var err error
					if mode == "native" {
						_, err = ops.Run(bo.op, bo.p, in)
					} else {
						_, err = r.Run(context.Background(), bo.op, bo.p, in)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkNew measures New with one instance: "cold" compiles the module
// from scratch (no cache), "cached" loads the compiled code from a warm
// on-disk cache. BenchmarkInstantiate measures one more instance.
func BenchmarkNew(b *testing.B) {
	dir := b.TempDir()
	warm, err := New(context.Background(), Options{Instances: 1, CacheDir: dir})
	if err != nil {
		b.Fatal(err)
	}
	warm.Close(context.Background())
	for _, c := range []struct {
		name string
		opt  Options
	}{
		{"cold", Options{Instances: 1, NoCache: true}},
		{"cached", Options{Instances: 1, CacheDir: dir}},
		{"interpreter", Options{Instances: 1, Interpreter: true, NoCache: true}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				r, err := New(context.Background(), c.opt)
				if err != nil {
					b.Fatal(err)
				}
				r.Close(context.Background())
			}
		})
	}
}

func BenchmarkInstantiate(b *testing.B) {
	r, err := New(context.Background(), Options{Instances: 1, CacheDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close(context.Background())
	for b.Loop() {
		in, err := r.instantiate(context.Background(), &r.plain)
		if err != nil {
			b.Fatal(err)
		}
		in.mod.Close(context.Background())
	}
}

// BenchmarkRatio reports the throughput of the wasm reference relative to
// the native one, as the metric "wasm/native" (the target: at least
// 0.5), for every unary conversion (4 Mi codes from 1.0f, as in
// BenchmarkUnary) and every op of BenchmarkRun. Each iteration makes one
// native call and then the same wasm call on a one-instance Runtime (the
// per-core comparison; request and response marshalling included), so
// both sides see the same load on a noisy machine; native-ns/op and
// wasm-ns/op are the two halves. BITEXACT_BENCH_OPS restricts the ops.
//
//	go test -run '^$' -bench Ratio -benchtime 2s ./wasm/
func BenchmarkRatio(b *testing.B) {
	ctx := context.Background()
	r, err := New(ctx, Options{Instances: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close(ctx)
	const n, start = 4 << 20, 0x3f800000
	for _, c := range unary.All() {
		out := make([]byte, n*c.Width())
		b.Run("unary/"+c.Name, func(b *testing.B) {
			ratio(b, func() error { c.EncodeRange(start, out); return nil },
				func() error { return r.Unary(ctx, c.Name, start, out) })
		})
	}
	only := os.Getenv("BITEXACT_BENCH_OPS")
	for _, bo := range benchOps {
		if _, err := ops.Lookup(bo.op); err != nil || (only != "" && !strings.Contains(","+only+",", ","+bo.op+",")) {
			continue
		}
		in, err := bo.in()
		if err != nil {
			b.Logf("%s: %v (skipped)", bo.name, err)
			continue
		}
		b.Run("op/"+bo.name, func(b *testing.B) {
			ratio(b, func() error { _, err := ops.Run(bo.op, bo.p, in); return err },
				func() error { _, err := r.Run(ctx, bo.op, bo.p, in); return err })
		})
	}
}

// ratio times native and wasm alternately, after one untimed call of each
// (tables built, guest memory grown).
func ratio(b *testing.B, native, wasm func() error) {
	if err := native(); err != nil {
		b.Fatal(err)
	}
	if err := wasm(); err != nil {
		b.Fatal(err)
	}
	var tn, tw time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := native(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := wasm(); err != nil {
			b.Fatal(err)
		}
		tn += t1.Sub(t0)
		tw += time.Since(t1)
	}
	b.ReportMetric(tn.Seconds()/tw.Seconds(), "wasm/native")
	b.ReportMetric(float64(tn.Nanoseconds())/float64(b.N), "native-ns/op")
	b.ReportMetric(float64(tw.Nanoseconds())/float64(b.N), "wasm-ns/op")
}
