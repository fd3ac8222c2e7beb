package wasm

import (
	"context"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
	"github.com/bitexact/bitexact/refimpl/unary"
)

// BenchmarkUnary compares the native conversion loop with the same loop in
// the guest over 1 Mi consecutive inputs per iteration (from 1.0f, a range
// crossing many exponents). The elem/s metric is conversions per second.
func BenchmarkUnary(b *testing.B) {
	const n = 1 << 20
	const start = 0x3f800000
	r := sharedRuntime(b)
	for _, mode := range []string{"native", "wasm"} {
		for _, c := range unary.All() {
			b.Run(mode+"/"+c.Name, func(b *testing.B) {
				out := make([]byte, n*c.Width())
				for b.Loop() {
					if mode == "native" {
						c.EncodeRange(start, out)
					} else if err := r.Unary(context.Background(), c.Name, start, out); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "elem/s")
			})
		}
	}
}

// benchOps are realistic inputs for the ops whose throughput matters most
// to golden generation. An op not registered yet is skipped.
var benchOps = []struct {
	op string
	p  ops.Params
	in func() ops.Tensors
}{
	{"fp8.encode", ops.Params{"format": "e4m3", "profile": "satfinite"}, func() ops.Tensors {
		return ops.Tensors{"x": randF32(1 << 20)}
	}},
	{"nvfp4.quantize", ops.Params{}, func() ops.Tensors {
		t := randF32(4096 * 1024)
		t.Shape = []int{4096, 1024}
		return ops.Tensors{"x": t}
	}},
}

func randF32(n int) tensor.Tensor {
	rng := rand.New(rand.NewPCG(5, 6))
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return tensor.FromF32([]int{n}, v)
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
		in := bo.in()
		if _, err := ops.Run(bo.op, bo.p, in); err != nil {
			b.Logf("%s: %v (skipped)", bo.op, err)
			continue
		}
		for _, mode := range []string{"native", "wasm"} {
			b.Run(mode+"/"+bo.op, func(b *testing.B) {
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
