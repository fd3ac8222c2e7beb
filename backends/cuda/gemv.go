//go:build cuda

package cuda

import (
	"context"
	"fmt"
	"github.com/bitexact/bitexact/gate"

	"github.com/bitexact/bitexact/refimpl/gemv"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
	"gorgonia.org/cu"
)

var sp24Ties = map[string]uint32{"lower-index": 0, "cutlass": 1, "signed": 2}

func runSparseCompress(ctx context.Context, d *Device, k gate.Kernel, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	rule, ok := sp24Ties[p.Get("tie", "lower-index")]
	if !ok {
		return nil, fmt.Errorf("cuda: kernel %s: unknown tie rule %q", k.Name, p["tie"])
	}
	transposed := p.Get("layout", "rowmajor") == "transposed"
	c, ok := in["codes"]
	if !ok {
		return nil, fmt.Errorf("cuda: kernel %s: missing input tensor %q", k.Name, "codes")
	}
	if err := c.Expect("codes", tensor.U8); err != nil {
		return nil, fmt.Errorf("cuda: kernel %s: %w", k.Name, err)
	}
	batched := len(c.Shape) == 3
	var e, n, kk int
	switch len(c.Shape) {
	case 2:
		e, n, kk = 1, c.Shape[0], c.Shape[1]
	case 3:
		e, n, kk = c.Shape[0], c.Shape[1], c.Shape[2]
	default:
		return nil, fmt.Errorf("cuda: kernel %s: tensor \"codes\": shape %v, want [E, N, K] or [N, K]", k.Name, c.Shape)
	}
	if e == 0 || n == 0 || kk == 0 || kk%8 != 0 {
		return nil, fmt.Errorf("cuda: kernel %s: tensor \"codes\": shape %v: need non-empty dimensions and K a multiple of 8", k.Name, c.Shape)
	}
	shape := func(dims ...int) []int {
		if batched {
			return append([]int{e}, dims...)
		}
		return dims
	}
	b := d.Buffers(ctx)
	defer b.Free()
	bc, err := b.Upload(c.Data)
	if err != nil {
		return nil, err
	}
	comp, err := b.Alloc(int64(e * n * kk / 4))
	if err != nil {
		return nil, err
	}
	meta, err := b.Alloc(int64(e * n * kk / 8))
	if err != nil {
		return nil, err
	}
	bad, err := b.Zeros(4)
	if err != nil {
		return nil, err
	}
	table, err := b.Alloc(sp24MetaTableBytes)
	if err != nil {
		return nil, err
	}
	mt := sp24MetaTable(rule, table)
	if err := d.Launch(ctx, mt.Kernel, mt.Grid, mt.Block, 0, mt.Args...); err != nil {
		return nil, err
	}
	if err := d.Launch(ctx, sp24CompressKernel(transposed), sp24CompressGrid(transposed, e, n, kk, d.sms), sp24CompressBlock(transposed), 0,
		bc, uint64(e), uint64(n), uint64(kk), table, comp, meta, bad); err != nil {
		return nil, err
	}
	flag, err := b.Download(bad, 4)
	if err != nil {
		return nil, err
	}
	if flag[0] != 0 {
		return nil, fmt.Errorf("cuda: kernel %s: tensor \"codes\": a code exceeds 0xF", k.Name)
	}
	cb, err := b.Download(comp, e*n*kk/4)
	if err != nil {
		return nil, err
	}
	mb, err := b.Download(meta, e*n*kk/8)
	if err != nil {
		return nil, err
	}
	compShape, metaShape := shape(n, kk/4), shape(n, kk/8)
	if transposed {
		compShape, metaShape = shape(kk/4, n), shape(kk/8, n)
	}
	ct := tensor.FromU8(compShape, cb)
	ct.Logical = "e2m1x2"
	out := ops.Tensors{"comp": ct, "meta": tensor.FromU8(metaShape, mb)}
	if s, ok := in["scales"]; ok {
		st := s
		if transposed {
			if len(s.Shape) != len(c.Shape) {
				return nil, fmt.Errorf("cuda: kernel %s: tensor \"scales\": shape %v does not match codes %v", k.Name, s.Shape, c.Shape)
			}
			ns := s.Shape[len(s.Shape)-1]
			bs, err := b.Upload(s.Data)
			if err != nil {
				return nil, err
			}
			bt, err := b.Alloc(int64(len(s.Data)))
			if err != nil {
				return nil, err
			}
			if err := d.Launch(ctx, "sp24_transpose_u8", Grid1D(int64(len(s.Data)), 256, 65535), Dims{256, 1, 1}, 0,
				bs, uint64(e), uint64(n), uint64(ns), bt); err != nil {
				return nil, err
			}
			tb, err := b.Download(bt, len(s.Data))
			if err != nil {
				return nil, err
			}
			st = tensor.FromU8(shape(ns, n), tb)
			st.Logical = s.Logical
		}
		out["scales"] = st
	}
	if g, ok := in["global"]; ok {
		out["global"] = g
	}
	return out, nil
}

// sp24CompressKernel and its launch shape: both kernels stage the 32 KB
// meta table in shared memory once per block, so their grids are a few
// blocks per SM (an H100's shared memory holds 6 row-major or 4
// transposed blocks), looping over the work; any grid size is correct.
func sp24CompressKernel(transposed bool) string {
	if transposed {
		return "sp24_compress_t"
	}
	return "sp24_compress"
}

func sp24CompressGrid(transposed bool, e, n, k, sms int) Dims {
	if transposed {
		// As few rounds of 32-pair x 128-row units as 4 blocks per SM
		// allow, spread evenly: 2048 units run as 512 blocks of 4, not 528
		// blocks of 3 or 4. The kernel's tiles are 16 pairs x 128 rows, two
		// per unit; sizing the grid by units was measured (39.5 us for
		// 8192x8192 with the table build on an H100) and kept.
		tiles := e * ((k/8 + 31) / 32) * ((n + 127) / 128)
		rounds := (tiles + 4*sms - 1) / (4 * sms)
		return Dims{(tiles + rounds - 1) / rounds, 1, 1}
	}
	return Grid1D(int64(e*n*k/32+1), 256, 6*sms) // a thread per 4 pairs, and one for a remainder
}

func sp24CompressBlock(transposed bool) Dims {
	if transposed {
		return Dims{32, 8, 1}
	}
	return Dims{256, 1, 1}
}

// sp24MetaTableBytes is the size of sp24_meta_table's output.
const sp24MetaTableBytes = 32768

// sp24MetaTable is the launch that fills the meta table for a tie rule.
func sp24MetaTable(rule uint32, table Buffer) launchStep {
	// 256 blocks, where 64 made each thread loop over 2 entries: 4.65 us
	// against 7.06 us for 64 blocks on an H100 (the launch sits in front of
	// every compress). The table is the same for any grid.
	return launchStep{Kernel: "sp24_meta_table", Grid: Dims{256, 1, 1}, Block: Dims{256, 1, 1}, Args: []any{rule, table}}
}

// setLUT fills sparse24.cu's constant E4M3 table through sp24_fill_lut
// (the hardware decode) and a device-to-device copy into the symbol.
func (d *Device) setLUT(ctx context.Context, mode uint32) error {
	b := d.Buffers(ctx)
	defer b.Free()
	tmp, err := b.Alloc(1024)
	if err != nil {
		return err
	}
	if err := d.Launch(ctx, "sp24_fill_lut", Dims{1, 1, 1}, Dims{256, 1, 1}, 0, tmp, mode); err != nil {
		return err
	}
	return d.do(ctx, "copy c_fp8_lut", func() error {
		for _, l := range d.modules {
			if l.m.Name != "sparse24" {
				continue
			}
			sym, size, err := l.mod.Global("c_fp8_lut")
			if err != nil {
				return err
			}
			if size != 1024 {
				return fmt.Errorf("c_fp8_lut is %d bytes, want 1024", size)
			}
			return cu.MemcpyDtoD(sym, tmp.ptr, 1024)
		}
		return fmt.Errorf("module sparse24 not loaded")
	})
}

// v7Config maps a requested schedule to the v7 launch that implements it.
func v7Config(p ops.Params) (fused bool, width int, err error) {
	want, err := gemv.Lookup(p.Get("schedule", "sparse-v7"))
	if err != nil {
		return false, 0, err
	}
	for _, f := range []bool{true, false} {
		for _, w := range []int{V7ReduceWidth, 1} {
			if V7Schedule(f, w) == want {
				return f, w, nil
			}
		}
	}
	return false, 0, fmt.Errorf("schedule %s is not one the v7 kernel runs (it runs %s, %s, %s, %s)", want,
		V7Schedule(true, V7ReduceWidth), V7Schedule(false, V7ReduceWidth), V7Schedule(true, 1), V7Schedule(false, 1))
}

func mmvqConfig(p ops.Params) (bool, error) {
	want, err := gemv.Lookup(p.Get("schedule", "mmvq"))
	if err != nil {
		return false, err
	}
	for _, f := range []bool{true, false} {
		if MMVQSchedule(f) == want {
			return f, nil
		}
	}
	return false, fmt.Errorf("schedule %s is not one the mmvq kernel runs (it runs %s, %s)", want, MMVQSchedule(true), MMVQSchedule(false))
}

// v7Tiles is the tiles per block of sp24_gemv_v7's grid for n columns, K
// = k and a active experts on sms multiprocessors: of 1 to v7MaxTiles,
// the fewest whose grid needs the fewest waves of v7BlocksPerSM blocks per
// SM. A wave that is not full runs at low occupancy while the DRAM
// stream it could have overlapped has ended (4096 x 11776 on an H100: 2
// tiles make 736 blocks, 1.39 waves; 3 tiles 506, one wave), and fewer
// tiles per block mean more blocks to spread over the SMs (the MoE step,
// 10 experts x 2048 x 512: 320 blocks at 1 tile, 160 at 2).
func v7Tiles(n, k, a, sms int) int {
	kt, cols, slots := k/v7TileK, (n+511)/512, max(sms, 1)*v7BlocksPerSM
	best, bestWaves := 1, 0
	for t := 1; t <= v7MaxTiles; t++ {
		waves := (cols*((kt+t-1)/t)*a + slots - 1) / slots
		if t == 1 || waves < bestWaves {
			best, bestWaves = t, waves
		}
	}
	return best
}

// v7Grid is sp24_gemv_v7's launch grid for n columns, K = k and a active
// experts at tiles tiles per block: 512 columns (v7Threads x 4) by tiles
// consecutive 64-K tiles per block; the partials stay one per tile
// ([A][K/64][N]). The kernel reads its tiles per block back from the
// grid as ceil(K/64 / grid.Y).
func v7Grid(n, k, a, tiles int) Dims {
	kt := k / v7TileK
	return Dims{(n + 511) / 512, (kt + tiles - 1) / tiles, a}
}

func runSparseGEMV(ctx context.Context, d *Device, k gate.Kernel, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	return runSparseGEMVTiles(ctx, d, k, p, in, 0)
}

// runSparseGEMVTiles is runSparseGEMV at tiles tiles per block, 1 to
// v7MaxTiles, or at v7Tiles's choice for the shape when tiles is 0:
// TestSparseGEMVTiles runs every value on the same inputs.
func runSparseGEMVTiles(ctx context.Context, d *Device, k gate.Kernel, p ops.Params, in ops.Tensors, tiles int) (ops.Tensors, error) {
	if tiles < 0 || tiles > v7MaxTiles {
		return nil, fmt.Errorf("cuda: kernel %s: %d tiles per block, want 1 to %d", k.Name, tiles, v7MaxTiles)
	}
	fused, width, err := v7Config(p)
	if err != nil {
		return nil, fmt.Errorf("cuda: kernel %s: %w", k.Name, err)
	}
	lutMode := uint32(0)
	switch v := p.Get("scale_decode", "e4m3fn"); v {
	case "e4m3fn":
	case "dgx_lut":
		lutMode = 1
	default:
		return nil, fmt.Errorf("cuda: kernel %s: scale_decode=%q: want e4m3fn or dgx_lut", k.Name, v)
	}
	for _, name := range []string{"comp", "meta", "scales", "global", "act", "experts"} {
		if _, ok := in[name]; !ok {
			return nil, fmt.Errorf("cuda: kernel %s: missing input tensor %q", k.Name, name)
		}
	}
	comp := in["comp"]
	if err := comp.Expect("comp", tensor.U8, -1, -1, -1); err != nil {
		return nil, fmt.Errorf("cuda: kernel %s: %w", k.Name, err)
	}
	e, kk, n := comp.Shape[0], 4*comp.Shape[1], comp.Shape[2]
	if kk == 0 || kk%v7TileK != 0 || n%4 != 0 {
		return nil, fmt.Errorf("cuda: kernel %s: K=%d must be a positive multiple of %d and N=%d of 4", k.Name, kk, v7TileK, n)
	}
	if err := in["meta"].Expect("meta", tensor.U8, e, kk/8, n); err != nil {
		return nil, fmt.Errorf("cuda: kernel %s: %w", k.Name, err)
	}
	scales := in["scales"]
	if err := scales.Expect("scales", tensor.U8, e, -1, n); err != nil {
		return nil, fmt.Errorf("cuda: kernel %s: %w", k.Name, err)
	}
	ns := scales.Shape[1]
	if ns == 0 || kk%ns != 0 || (kk/ns)%v7GroupK != 0 {
		return nil, fmt.Errorf("cuda: kernel %s: %d scale blocks do not divide K=%d into multiples of %d", k.Name, ns, kk, v7GroupK)
	}
	if n >= 1<<28 || int64(ns)*int64(n) >= 1<<32 {
		// the kernel's offsets within one expert's matrices are 32-bit
		return nil, fmt.Errorf("cuda: kernel %s: N=%d with %d scale rows is too large for one launch (N < 2^28, scale rows x N < 2^32)", k.Name, n, ns)
	}
	if err := in["global"].Expect("global", tensor.F32, e); err != nil {
		return nil, fmt.Errorf("cuda: kernel %s: %w", k.Name, err)
	}
	experts := in["experts"]
	if err := experts.Expect("experts", tensor.I32, -1); err != nil {
		return nil, fmt.Errorf("cuda: kernel %s: %w", k.Name, err)
	}
	a := experts.Shape[0]
	for i, x := range experts.I32() {
		if x < 0 || int(x) >= e {
			return nil, fmt.Errorf("cuda: kernel %s: experts[%d]=%d out of range [0, %d)", k.Name, i, x, e)
		}
	}
	act := in["act"]
	actStride := uint64(kk)
	switch {
	case act.DType == tensor.F16 && len(act.Shape) == 1 && act.Shape[0] == kk:
		actStride = 0
	case act.DType == tensor.F16 && len(act.Shape) == 2 && act.Shape[0] == a && act.Shape[1] == kk:
	default:
		return nil, fmt.Errorf("cuda: kernel %s: tensor \"act\": %s %v, want F16 [%d] or [%d %d]", k.Name, act.DType, act.Shape, kk, a, kk)
	}
	if a == 0 {
		return ops.Tensors{"y": {DType: tensor.F16, Shape: []int{0, n}, Data: nil}}, nil
	}
	if err := d.setLUT(ctx, lutMode); err != nil {
		return nil, fmt.Errorf("cuda: kernel %s: %w", k.Name, err)
	}
	b := d.Buffers(ctx)
	defer b.Free()
	up := func(name string) (Buffer, error) { return b.Upload(in[name].Data) }
	bComp, err := up("comp")
	if err != nil {
		return nil, err
	}
	bMeta, err := up("meta")
	if err != nil {
		return nil, err
	}
	bScales, err := up("scales")
	if err != nil {
		return nil, err
	}
	bGlobal, err := up("global")
	if err != nil {
		return nil, err
	}
	bAct, err := up("act")
	if err != nil {
		return nil, err
	}
	bExp, err := up("experts")
	if err != nil {
		return nil, err
	}
	kt := kk / v7TileK
	part, err := b.Alloc(int64(2 * a * kt * n))
	if err != nil {
		return nil, err
	}
	y, err := b.Alloc(int64(2 * a * n))
	if err != nil {
		return nil, err
	}
	if tiles == 0 {
		tiles = v7Tiles(n, kk, a, d.sms)
	}
	grid := v7Grid(n, kk, a, tiles)
	counters, err := b.Zeros(int64(4 * a * grid.X))
	if err != nil {
		return nil, err
	}
	if err := d.Launch(ctx, "sp24_gemv_v7", grid, Dims{v7Threads, 1, 1}, 0, bComp, bMeta, bScales, bGlobal, bAct, actStride,
		bExp, uint64(kk), uint64(n), uint64(kk/ns), boolU32(fused), uint64(width), part, counters, y); err != nil {
		return nil, err
	}
	yb, err := b.Download(y, 2*a*n)
	if err != nil {
		return nil, err
	}
	return ops.Tensors{"y": {DType: tensor.F16, Shape: []int{a, n}, Data: yb}}, nil
}

func boolU32(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

func runMXFP4GEMV(ctx context.Context, d *Device, k gate.Kernel, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	fused, err := mmvqConfig(p)
	if err != nil {
		return nil, fmt.Errorf("cuda: kernel %s: %w", k.Name, err)
	}
	w, ok := in["w"]
	if !ok {
		return nil, fmt.Errorf("cuda: kernel %s: missing input tensor %q", k.Name, "w")
	}
	if err := w.Expect("w", tensor.U8, -1, -1, gemv.MXFP4BlockBytes); err != nil {
		return nil, fmt.Errorf("cuda: kernel %s: %w", k.Name, err)
	}
	n, nb := w.Shape[0], w.Shape[1]
	act, ok := in["act"]
	if !ok {
		return nil, fmt.Errorf("cuda: kernel %s: missing input tensor %q", k.Name, "act")
	}
	if err := act.Expect("act", tensor.U8, nb, gemv.Q81BlockBytes); err != nil {
		return nil, fmt.Errorf("cuda: kernel %s: %w", k.Name, err)
	}
	if n == 0 {
		return ops.Tensors{"y": tensor.FromF32([]int{0}, nil)}, nil
	}
	b := d.Buffers(ctx)
	defer b.Free()
	bw, err := b.Upload(w.Data)
	if err != nil {
		return nil, err
	}
	ba, err := b.Upload(act.Data)
	if err != nil {
		return nil, err
	}
	y, err := b.Alloc(int64(4 * n))
	if err != nil {
		return nil, err
	}
	if err := d.Launch(ctx, "gemv_mxfp4_q8_1", Dims{(n + mmvqRows - 1) / mmvqRows, 1, 1}, Dims{mmvqThreads, 1, 1}, 0,
		bw, ba, uint64(n), uint64(nb), boolU32(fused), uint32(mmvqRows), y); err != nil {
		return nil, err
	}
	yb, err := b.Download(y, 4*n)
	if err != nil {
		return nil, err
	}
	return ops.Tensors{"y": {DType: tensor.F32, Shape: []int{n}, Data: yb}}, nil
}

// runGGMLQuantize runs a llama.cpp quantizer (q8_1_quantize or
// ggml_mxfp4_quantize): float32 x [n*32] in, one warp per 32-element block,
// blockBytes-byte blocks of the given logical type out.
func runGGMLQuantize(blockBytes int, logical string) func(ctx context.Context, d *Device, k gate.Kernel, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	return func(ctx context.Context, d *Device, k gate.Kernel, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
		x, ok := in["x"]
		if !ok {
			return nil, fmt.Errorf("cuda: kernel %s: missing input tensor %q", k.Name, "x")
		}
		if err := x.Expect("x", tensor.F32, -1); err != nil {
			return nil, fmt.Errorf("cuda: kernel %s: %w", k.Name, err)
		}
		if x.Shape[0]%gemv.QK != 0 {
			return nil, fmt.Errorf("cuda: kernel %s: tensor \"x\": length %d is not a multiple of %d", k.Name, x.Shape[0], gemv.QK)
		}
		nb := x.Shape[0] / gemv.QK
		out := make([]byte, nb*blockBytes)
		if nb > 0 {
			b := d.Buffers(ctx)
			defer b.Free()
			bx, err := b.Upload(x.Data)
			if err != nil {
				return nil, err
			}
			bo, err := b.Alloc(int64(len(out)))
			if err != nil {
				return nil, err
			}
			if err := d.Launch(ctx, k.Name, Grid1D(int64(nb), 8, 65535), Dims{256, 1, 1}, 0, bx, uint64(nb), bo); err != nil {
				return nil, err
			}
			if out, err = b.Download(bo, len(out)); err != nil {
				return nil, err
			}
		}
		t := tensor.FromU8([]int{nb, blockBytes}, out)
		t.Logical = logical
		return ops.Tensors{"blocks": t}, nil
	}
}
