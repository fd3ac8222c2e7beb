//go:build cuda

package cuda

import (
	"context"
	"testing"
)

// benchN is the element count of the bandwidth benchmarks: 2^28 float32
// inputs (1 GiB), far larger than L2, so that they measure DRAM.
const benchN = 1 << 28

// copyGBps measures a device-to-device copy of n bytes (bytes read plus
// bytes written per second), the yardstick each kernel is compared with in
// the same run.
func copyGBps(b *testing.B, d *Device, n int64) float64 {
	ctx := context.Background()
	src, err := d.Alloc(ctx, n)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Free(ctx, src)
	dst, err := d.Alloc(ctx, n)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Free(ctx, dst)
	ms, err := d.TimeCopy(ctx, 20, dst, src, n)
	if err != nil {
		b.Fatal(err)
	}
	return 2 * float64(n) / (ms * 1e6)
}

func BenchmarkCopy(b *testing.B) {
	d := device(b)
	for i := 0; i < b.N; i++ {
		gbps := copyGBps(b, d, 4*benchN)
		b.ReportMetric(gbps, "GB/s")
	}
}

// BenchmarkUnary times the tensor form of each unary kernel over benchN
// float32 inputs (4 bytes read, 1 byte written per element).
func BenchmarkUnary(b *testing.B) {
	d := device(b)
	ctx := context.Background()
	in, err := d.Alloc(ctx, 4*benchN)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Free(ctx, in)
	if err := d.Memset(ctx, in, 0x3F); err != nil {
		b.Fatal(err)
	}
	out, err := d.Alloc(ctx, benchN)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Free(ctx, out)
	copyBW := copyGBps(b, d, 4*benchN)
	sms := 132
	if info, err := d.Info(ctx); err == nil {
		sms = info.SMs
	}
	for _, k := range Kernels {
		if k.Conversion == "" {
			continue
		}
		b.Run(k.Name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				ms, err := d.Time(ctx, 20, k.Name, Dims{sms * 16, 1, 1}, Dims{256, 1, 1}, 0, in, out, uint64(benchN))
				if err != nil {
					b.Fatal(err)
				}
				gbps := 5 * float64(benchN) / (ms * 1e6)
				b.ReportMetric(ms, "ms/op")
				b.ReportMetric(gbps, "GB/s")
				b.ReportMetric(gbps/copyBW, "x_copy")
			}
		})
	}
}
