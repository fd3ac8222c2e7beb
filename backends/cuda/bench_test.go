//go:build cuda

package cuda

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/bitexact/bitexact/internal/golden/catalog"
	"github.com/bitexact/bitexact/refimpl/sparse24"
	"github.com/bitexact/bitexact/refimpl/tensor"
	"gorgonia.org/cu"
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
	ms, err := d.timeCopy(ctx, 20, dst, src, n)
	if err != nil {
		b.Fatal(err)
	}
	return 2 * float64(n) / (ms * 1e6)
}

// readGBps measures util_read streaming n bytes (rounded up to 16) from
// each of rot buffers in turn, launched the way the GEMV benchmarks launch
// their kernels: the read bandwidth any kernel reading n bytes reaches at
// that size, launch and ramp-up included. With rot = 1 the bytes stay in
// the H100's 50 MB L2 from one launch to the next, as the GEMV's own do
// in its l2warm form; with rotation(n) buffers they come from DRAM.
func readGBps(b *testing.B, d *Device, n int64, rot int) float64 {
	ctx := context.Background()
	bufs := d.Buffers(ctx)
	defer bufs.Free()
	n16 := (n + 15) / 16
	sink, err := bufs.Zeros(4 * 1024)
	if err != nil {
		b.Fatal(err)
	}
	steps := make([]launchStep, rot)
	for r := range steps {
		src, err := bufs.Alloc(16 * n16)
		if err != nil {
			b.Fatal(err)
		}
		if err := d.Memset(ctx, src, 0x5A); err != nil {
			b.Fatal(err)
		}
		steps[r] = launchStep{Kernel: "util_read", Grid: Grid1D(n16, 256, d.sms*8), Block: Dims{256, 1, 1}, Args: []any{src, uint64(n16), sink}}
	}
	// the median of 5 timings: a 4.5 MB read took 3.4 to 6.1 us from one
	// run to the next, which moved the MoE step's x_read by a third
	return float64(16*n16) / (medianLaunchMS(b, d, 5, steps) * 1e6)
}

// medianLaunchMS times the steps, launched in order about 50 times in all
// (gemvReps), count times and returns the median milliseconds per launch:
// one timing of 50 launches of a few-microsecond kernel moves by several
// percent from one to the next.
func medianLaunchMS(b *testing.B, d *Device, count int, steps []launchStep) float64 {
	times := make([]float64, count)
	for i := range times {
		ms, err := d.timeSteps(context.Background(), gemvReps(len(steps)), steps...)
		if err != nil {
			b.Fatal(err)
		}
		times[i] = ms / float64(len(steps))
	}
	slices.Sort(times)
	return times[len(times)/2]
}

// rotation is how many independent copies of n bytes of GEMV weights the
// dram benchmarks cycle through: enough that more than the L2's 50 MB pass
// between two launches on the same copy, as in inference, where the other
// layers' weights pass through L2 between two uses of one layer's.
func rotation(n float64) int {
	r := int(math.Ceil(160e6 / n))
	if r < 1 {
		r = 1
	}
	return r
}

// gemvReps is the repetitions of a sequence of rot launches that make
// about 50 launches.
func gemvReps(rot int) int { return (50 + rot - 1) / rot }

func BenchmarkCopy(b *testing.B) {
	d := device(b)
	for i := 0; i < b.N; i++ {
		gbps := copyGBps(b, d, 4*benchN)
		b.ReportMetric(gbps, "GB/s")
	}
}

// BenchmarkUnary times the tensor form of each unary kernel over benchN
// float32 inputs (4 bytes read, 1 byte written per element), launched as
// the engine launches it (unaryGrid). torch's .to(float8_*) on the same
// size is conformance/harness/torch/bandwidth.py; run both in one device
// run to compare (docs/rationale/cuda.md).
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
	for _, k := range Kernels {
		if k.Conversion == "" {
			continue
		}
		b.Run(k.Name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				ms, err := d.Time(ctx, 20, k.Name, unaryGrid(benchN), Dims{256, 1, 1}, 0, in, out, uint64(benchN))
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

// randomF32 returns n float32 values of a deterministic normal-ish
// distribution (sum of uniforms), as bytes.
func randomF32(n int, scale float32) []byte {
	b := make([]byte, 4*n)
	s := uint64(0x9E3779B97F4A7C15)
	for i := 0; i < n; i++ {
		var acc float32
		for j := 0; j < 4; j++ {
			s ^= s << 13
			s ^= s >> 7
			s ^= s << 17
			acc += float32(s>>40) / (1 << 24)
		}
		v := math.Float32bits((acc - 2) * scale)
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	return b
}

// BenchmarkBlocks times the block quantizers on an 8192x8192 matrix
// (float32 in for NVFP4 and MXFP4, fp16 in for AWQ) and reports the bytes
// they move per second, and the ratio to a device-to-device copy of the
// same input size measured in the same run.
func BenchmarkBlocks(b *testing.B) {
	const rows, cols = 8192, 8192
	const n = rows * cols
	d := device(b)
	ctx := context.Background()
	bufs := d.Buffers(ctx)
	defer bufs.Free()
	x, err := bufs.Upload(randomF32(n, 1))
	if err != nil {
		b.Fatal(err)
	}
	wh, err := bufs.Alloc(2 * n)
	if err != nil {
		b.Fatal(err)
	}
	if err := d.Memset(ctx, wh, 0x2A); err != nil { // fp16 0x2A2A ~ 0.0456, finite
		b.Fatal(err)
	}
	amax, _ := bufs.Zeros(4)
	packed, _ := bufs.Alloc(n / 2)
	scales, _ := bufs.Alloc(n / 16)
	gout, _ := bufs.Alloc(4)
	qw, _ := bufs.Alloc(4 * n / 8)
	qz, _ := bufs.Alloc(4 * n / 8)
	sc, _ := bufs.Alloc(2 * n)
	bad, _ := bufs.Zeros(4)
	copyBW := copyGBps(b, d, 4*n)
	copyBW16 := copyGBps(b, d, 2*n)
	nb16, nb32 := int64(n/16), int64(n/32)
	cases := []struct {
		name  string
		bytes float64
		copy  float64
		steps []launchStep
	}{
		{"nvfp4_quantize", 4*n + 4*n + n/2 + n/16, copyBW, []launchStep{
			{Kernel: "nvfp4_amax", Grid: Grid1D(n/4, 256, d.sms*8), Block: Dims{256, 1, 1}, Args: []any{x, uint64(n / 4), amax}},
			{Kernel: "nvfp4_quantize", Grid: Grid1D(nb16, 256, 65535), Block: Dims{256, 1, 1},
				Args: []any{x, uint64(rows), uint64(cols), amax, float32(0), uint32(0), packed, scales, uint32(0), gout}},
		}},
		{"nvfp4_quantize_given_global", 4*n + n/2 + n/16, copyBW, []launchStep{
			{Kernel: "nvfp4_quantize", Grid: Grid1D(nb16, 256, 65535), Block: Dims{256, 1, 1},
				Args: []any{x, uint64(rows), uint64(cols), amax, float32(448), uint32(1), packed, scales, uint32(0), gout}},
		}},
		{"mxfp4_quantize", 4*n + n/2 + n/32, copyBW, []launchStep{
			{Kernel: "mxfp4_quantize", Grid: Grid1D(nb32, 256, 65535), Block: Dims{256, 1, 1},
				Args: []any{x, uint64(nb32), uint32(0), packed, scales}},
		}},
		// AWQ reads each group twice (max-abs, then quantize), the second
		// time from L2; the weights are counted once: fp16 in, 4-bit
		// qweight, fp16 scales and int32 qzeros (group 128) out.
		{"awq_forge_pack", 2*n + n/2 + n/64 + n/256, copyBW16, []launchStep{
			{Kernel: "awq_forge_pack", Grid: awqGrid(cols, rows/128), Block: Dims{awqThreads, 1, 1},
				Args: []any{wh, uint64(rows), uint64(cols), uint64(128), qw, qz, sc, bad}},
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				ms, err := d.timeSteps(ctx, 20, c.steps...)
				if err != nil {
					b.Fatal(err)
				}
				gbps := c.bytes / (ms * 1e6)
				b.ReportMetric(ms, "ms/op")
				b.ReportMetric(gbps, "GB/s")
				b.ReportMetric(gbps/c.copy, "x_copy")
			}
		})
	}
}

// BenchmarkSparse24 times 2:4 compress of an 8192x8192 matrix of E2M1
// codes (one per byte in, comp and meta out) in both layouts.
func BenchmarkSparse24(b *testing.B) {
	const n, k = 8192, 8192
	d := device(b)
	ctx := context.Background()
	bufs := d.Buffers(ctx)
	defer bufs.Free()
	codes, _ := bufs.Alloc(n * k)
	if err := d.Memset(ctx, codes, 0x03); err != nil {
		b.Fatal(err)
	}
	comp, _ := bufs.Alloc(n * k / 4)
	meta, _ := bufs.Alloc(n * k / 8)
	bad, _ := bufs.Zeros(4)
	table, _ := bufs.Alloc(sp24MetaTableBytes)
	copyBW := copyGBps(b, d, n*k)
	for _, tr := range []bool{false, true} {
		name := "rowmajor"
		if tr {
			name = "transposed"
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				// The table build is part of every compress call.
				ms, err := d.timeSteps(ctx, 20, sp24MetaTable(0, table), launchStep{Kernel: sp24CompressKernel(tr), Grid: sp24CompressGrid(tr, 1, n, k, d.sms),
					Block: sp24CompressBlock(tr), Args: []any{codes, uint64(1), uint64(n), uint64(k), table, comp, meta, bad}})
				if err != nil {
					b.Fatal(err)
				}
				gbps := float64(n*k+n*k/4+n*k/8) / (ms * 1e6)
				b.ReportMetric(ms, "ms/op")
				b.ReportMetric(gbps, "GB/s")
				b.ReportMetric(gbps/copyBW, "x_copy")
			}
		})
	}
}

// BenchmarkGEMV times the sparse FP4 GEMV (K=2048, N=512 per expert, 10
// active of 512 experts; and one 4096x11776 matrix) and the MXFP4 x Q8_1
// GEMV (K=4096, N=11776), counting the bytes the kernels read: weights,
// metadata, scales, activations, and for the sparse split-K the partials
// the reducing blocks read back once (their writes are not reads, so
// they are not counted). Each runs twice: l2warm launches on the same weights every
// time (4.5 to 26 MB: they stay in the 50 MB L2 between launches), dram
// cycles through rotation() copies of the weights (for the MoE case,
// through disjoint sets of 10 experts) so that they come from DRAM, as
// they do in inference. x_copy compares with a 256 MiB device-to-device
// copy, x_read with util_read streaming the same bytes the same way
// (readGBps).
func BenchmarkGEMV(b *testing.B) {
	d := device(b)
	ctx := context.Background()
	if err := d.setLUT(ctx, 0); err != nil {
		b.Fatal(err)
	}
	copyBW := copyGBps(b, d, 1<<28)
	// report times the steps b.N times and reports the median, as
	// readGBps does for its yardstick (the last of b.N, which
	// ReportMetric in a loop would keep, is no better than any other).
	report := func(b *testing.B, steps []launchStep, bytes, readBW float64) {
		ms := medianLaunchMS(b, d, b.N, steps)
		gbps := bytes / (ms * 1e6)
		b.ReportMetric(ms*1000, "us/op")
		b.ReportMetric(gbps, "GB/s")
		b.ReportMetric(gbps/copyBW, "x_copy")
		b.ReportMetric(gbps/readBW, "x_read")
	}
	type sparseCase struct {
		name       string
		e, a, k, n int
	}
	for _, c := range []sparseCase{{"sparse_fp4_moe_10of512_k2048_n512", 512, 10, 2048, 512}, {"sparse_fp4_k4096_n11776", 1, 1, 4096, 11776}} {
		for _, data := range []string{"const", "random"} {
			b.Run(c.name+"/"+data, func(b *testing.B) { benchSparseGEMV(b, d, c.e, c.a, c.k, c.n, data == "random", report) })
		}
	}
	b.Run("mxfp4_q8_1_k4096_n11776", func(b *testing.B) {
		const k, n = 4096, 11776
		nb := k / 32
		bufs := d.Buffers(ctx)
		defer bufs.Free()
		weights := func() Buffer {
			w, _ := bufs.Alloc(int64(n * nb * 17))
			if err := d.Memset(ctx, w, 0x7A); err != nil {
				b.Fatal(err)
			}
			return w
		}
		act, _ := bufs.Alloc(int64(nb * 36))
		y, _ := bufs.Alloc(4 * n)
		if err := d.Memset(ctx, act, 0x11); err != nil {
			b.Fatal(err)
		}
		read := float64(n*nb*17 + nb*36)
		rot := rotation(read)
		ws := make([]Buffer, rot)
		for r := range ws {
			ws[r] = weights()
		}
		for _, rows := range []int{2, 4} {
			steps := make([]launchStep, rot)
			for r := range steps {
				steps[r] = launchStep{Kernel: "gemv_mxfp4_q8_1", Grid: Dims{(n + rows - 1) / rows, 1, 1}, Block: Dims{mmvqThreads, 1, 1},
					Args: []any{ws[r], act, uint64(n), uint64(nb), uint32(1), uint32(rows), y}}
			}
			b.Run(fmt.Sprintf("rows=%d/l2warm", rows), func(b *testing.B) {
				report(b, steps[:1], read, readGBps(b, d, int64(read), 1))
			})
			b.Run(fmt.Sprintf("rows=%d/dram", rows), func(b *testing.B) {
				report(b, steps, read, readGBps(b, d, int64(read), rot))
			})
		}
	})
}

// sparseBenchBytes is the pattern BenchmarkGEMV's "random" sparse cases
// upload, drawn from the golden set's generator so that the 32 lanes of a
// warp look up different table entries as with real weights (the "const"
// cases memset every byte alike, so every lookup is a broadcast): for
// comp (part 0) any bytes, two E2M1 codes each; for meta (part 1) a valid
// 2:4 index pair i0 < i1 in each nibble, as compress writes; for scales
// (part 2) positive finite E4M3 codes 0x01-0x7E, as NVFP4 block scales
// are.
func sparseBenchBytes(part, n int, seed uint64) []byte {
	pairs := sparse24.MetaNibbles
	rng := catalog.NewRNG(seed)
	out := make([]byte, n)
	for i := range out {
		r := rng.Uint32()
		switch part {
		case 1:
			out[i] = pairs[r%uint32(len(pairs))] | pairs[(r>>8)%uint32(len(pairs))]<<4
		case 2:
			out[i] = byte(1 + r%0x7E)
		default:
			out[i] = byte(r)
		}
	}
	return out
}

// benchSparseGEMV times sp24_gemv_v7 on e experts of k x n, na active, in
// the l2warm and dram modes, with constant or random weight bytes.
func benchSparseGEMV(b *testing.B, d *Device, e, na, k, n int, random bool, report func(*testing.B, []launchStep, float64, float64)) {
	ctx := context.Background()
	bufs := d.Buffers(ctx)
	defer bufs.Free()
	// weights allocates one set of comp, meta and scales for all e experts,
	// memset or random (sparseBenchBytes, made once and uploaded to every
	// copy).
	sizes := [3]int{e * k / 4 * n, e * k / 8 * n, e * k / 16 * n}
	var randomBytes [3][]byte
	if random {
		for i, n := range sizes {
			randomBytes[i] = sparseBenchBytes(i, n, uint64(i+1)*0x9E3779B97F4A7C15)
		}
	}
	weights := func() (comp, meta, scales Buffer) {
		var out [3]Buffer
		for i, m := range []struct {
			n int
			v byte
		}{{sizes[0], 0x21}, {sizes[1], 0x44}, {sizes[2], 0x38}} {
			var err error
			if random {
				out[i], err = bufs.Upload(randomBytes[i])
			} else if out[i], err = bufs.Alloc(int64(m.n)); err == nil {
				err = d.Memset(ctx, out[i], m.v)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		return out[0], out[1], out[2]
	}
	global, _ := bufs.Zeros(int64(4 * e))
	act, _ := bufs.Alloc(int64(2 * na * k))
	if err := d.Memset(ctx, act, 0x3C); err != nil {
		b.Fatal(err)
	}
	// The active experts are spread over the e: i * (e/na). Their ids
	// stay in one buffer that every launch reads, as a router's output is
	// in L2 when the GEMV reads it. The dram sets rotate by moving the
	// weight and global-scale bases r experts on (id x then selects
	// expert x + r), so that sets 0 .. e/na - 1 are disjoint and their
	// weights come from DRAM. With one id buffer per set (before), a
	// launch's ids could have left L2 with the 160 MB of weights read
	// since their last use, a miss ahead of every weight load that an
	// inference step does not pay; the step took 8.00-8.06 us that way,
	// 7.88-7.95 this way.
	ids := make([]int32, na)
	for i := range ids {
		ids[i] = int32(i * (e / na))
	}
	ex, err := bufs.Upload(tensor.FromI32([]int{na}, ids).Data)
	if err != nil {
		b.Fatal(err)
	}
	kt := k / v7TileK
	part, _ := bufs.Alloc(int64(2 * na * kt * n))
	y, _ := bufs.Alloc(int64(2 * na * n))
	grid := v7Grid(n, k, na, v7Tiles(n, k, na, d.sms))
	counters, _ := bufs.Zeros(int64(4 * na * grid.X))
	step := func(comp, meta, scales, global Buffer) launchStep {
		return launchStep{Kernel: "sp24_gemv_v7", Grid: grid, Block: Dims{v7Threads, 1, 1},
			Args: []any{comp, meta, scales, global, act, uint64(k), ex, uint64(k), uint64(n), uint64(16), uint32(1),
				uint64(V7ReduceWidth), part, counters, y}}
	}
	read := float64(na * (k/4*n + k/8*n + k/16*n + 2*k))
	partials := float64(2 * na * kt * n) // fp16, read once by the reducing blocks
	comp, meta, scales := weights()
	b.Run("l2warm", func(b *testing.B) {
		report(b, []launchStep{step(comp, meta, scales, global)}, read+partials, readGBps(b, d, int64(read), 1))
	})
	b.Run("dram", func(b *testing.B) {
		rot := rotation(read)
		if e > 1 && rot > e/na {
			rot = e / na
		}
		steps := make([]launchStep, rot)
		for r := range steps {
			cm, mt, sc, gl := comp, meta, scales, global
			switch {
			case e > 1:
				cm, mt, sc, gl = at(comp, r*k/4*n), at(meta, r*k/8*n), at(scales, r*k/16*n), at(global, 4*r)
			case r > 0:
				cm, mt, sc = weights()
			}
			steps[r] = step(cm, mt, sc, gl)
		}
		report(b, steps, read+partials, readGBps(b, d, int64(read), rot))
	})
}

// at is the part of buffer b from byte off on.
func at(b Buffer, off int) Buffer {
	return Buffer{ptr: b.ptr + cu.DevicePtr(off), n: b.n - int64(off)}
}
