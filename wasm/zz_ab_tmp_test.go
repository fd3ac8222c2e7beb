package wasm

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/unary"
)

// Temporary A/B harness (to be deleted): interleaves modules.
func BenchmarkZZAB(b *testing.B) {
	mods := map[string][]byte{"new": module}
	for _, f := range strings.Split(os.Getenv("AB_MODS"), ",") {
		if f == "" {
			continue
		}
		m, err := os.ReadFile("/tmp/ab/" + f + ".wasm")
		if err != nil {
			b.Fatal(err)
		}
		mods[f] = m
	}
	rts := map[string]*Runtime{}
	for k, m := range mods {
		r, err := newRuntime(context.Background(), Options{Instances: 1, NoCache: true}, m)
		if err != nil {
			b.Fatal(err)
		}
		rts[k] = r
	}
	const n = 4 << 20
	for _, name := range strings.Split(os.Getenv("AB_CONVS"), ",") {
		c, _ := unary.Lookup(name)
		for _, k := range append([]string{"native"}, strings.Split("new,"+os.Getenv("AB_MODS"), ",")...) {
			if k == "" {
				continue
			}
			b.Run(name+"/"+k, func(b *testing.B) {
				out := make([]byte, n*c.Width())
				for b.Loop() {
					if k == "native" {
						c.EncodeRange(0x3f800000, out)
					} else if err := rts[k].Unary(context.Background(), name, 0x3f800000, out); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "M/s")
			})
		}
	}
}

func BenchmarkZZRun(b *testing.B) {
	mods := map[string][]byte{"new": module}
	names := []string{"new"}
	for _, f := range strings.Split(os.Getenv("AB_MODS"), ",") {
		m, err := os.ReadFile("/tmp/ab/" + f + ".wasm")
		if err != nil {
			b.Fatal(err)
		}
		mods[f] = m
		names = append(names, f)
	}
	for _, bo := range benchOps {
		if !strings.Contains(bo.name, os.Getenv("AB_OPS")) {
			continue
		}
		in, err := bo.in()
		if err != nil {
			b.Fatal(err)
		}
		for _, k := range append([]string{"native"}, names...) {
			var r *Runtime
			if k != "native" {
				r, err = newRuntime(context.Background(), Options{Instances: 1, NoCache: true}, mods[k])
				if err != nil {
					b.Fatal(err)
				}
				r.Run(context.Background(), bo.op, bo.p, in)
			}
			b.Run(bo.name+"/"+k, func(b *testing.B) {
				for b.Loop() {
					if r == nil {
						_, err = ops.Run(bo.op, bo.p, in)
					} else {
						_, err = r.Run(context.Background(), bo.op, bo.p, in)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
			if r != nil {
				r.Close(context.Background())
			}
		}
	}
}
