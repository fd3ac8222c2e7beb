package bitexacttest

import (
	"testing"

	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/unary"
)

// BenchmarkSweep measures the exhaustive sweep per input on one worker,
// for a scalar encoder (the reference's own E2M1 encoder, a stand-in for a
// kernel author's) and for the sweep alone (a kernel that only copies the
// reference codes). 2^32 inputs take 2^32 times ns/input, over the
// number of cores.
func BenchmarkSweep(b *testing.B) {
	c, err := unary.Lookup("e2m1/nvidia")
	if err != nil {
		b.Fatal(err)
	}
	p := fp4.NVIDIA
	for _, k := range []struct {
		name string
		k    kernel
	}{
		{"scalar-e2m1", scalarKernel(func(x float32) uint8 { return p.Encode(x) }, 1)},
		{"batch-e2m1", batchKernel(func(in []float32, out []byte) error {
			for i, x := range in {
				out[i] = p.Encode(x)
			}
			return nil
		}, 1, false)},
		{"sweep-only", kernel{rng: func(start uint32, out []byte) error { c.EncodeRange(start, out); return nil }}},
	} {
		b.Run(k.name, func(b *testing.B) {
			const blocks = 16
			for b.Loop() {
				sw, err := sweepBlocks(c, k.k, config{workers: 1}, blocks)
				if err != nil || sw.mismatches != 0 {
					b.Fatal(err, sw.mismatches)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(blocks*block), "ns/input")
		})
	}
}
