//go:build cuda

package cuda

import (
	"context"
	"fmt"
	"github.com/bitexact/bitexact/gate"
	"strconv"

	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// matrixInput checks that in[name] is a float32 [rows, cols] matrix with
// cols a multiple of block.
func matrixInput(k gate.Kernel, in ops.Tensors, name string, block int) (tensor.Tensor, int, int, error) {
	x, ok := in[name]
	if !ok {
		return x, 0, 0, fmt.Errorf("cuda: kernel %s: missing input tensor %q", k.Name, name)
	}
	if err := x.Expect(name, tensor.F32, -1, -1); err != nil {
		return x, 0, 0, fmt.Errorf("cuda: kernel %s: %w", k.Name, err)
	}
	rows, cols := x.Shape[0], x.Shape[1]
	if cols%block != 0 {
		return x, 0, 0, fmt.Errorf("cuda: kernel %s: tensor %q: K = %d is not a multiple of %d", k.Name, name, cols, block)
	}
	return x, rows, cols, nil
}

// Buffers allocates the device buffers of one call and frees them
// together: the op runners here and backends/ptxabi's third-party
// kernels use it.
type Buffers struct {
	d    *Device
	ctx  context.Context
	bufs []Buffer
}

// Buffers returns an empty set of buffers on d; Free releases them.
func (d *Device) Buffers(ctx context.Context) *Buffers { return &Buffers{d: d, ctx: ctx} }

// Alloc allocates n bytes (at least 1), uninitialised.
func (b *Buffers) Alloc(n int64) (Buffer, error) {
	buf, err := b.d.Alloc(b.ctx, max(n, 1))
	if err == nil {
		b.bufs = append(b.bufs, buf)
	}
	return buf, err
}

// Upload copies data into a new buffer.
func (b *Buffers) Upload(data []byte) (Buffer, error) {
	buf, err := b.d.Upload(b.ctx, data)
	if err == nil {
		b.bufs = append(b.bufs, buf)
	}
	return buf, err
}

// Zeros allocates n bytes (at least 1) filled with zero.
func (b *Buffers) Zeros(n int64) (Buffer, error) {
	buf, err := b.Alloc(n)
	if err != nil {
		return buf, err
	}
	return buf, b.d.Memset(b.ctx, buf, 0)
}

// Free releases every buffer, even after the call's context ended.
func (b *Buffers) Free() {
	ctx := context.WithoutCancel(b.ctx)
	for _, buf := range b.bufs {
		b.d.Free(ctx, buf)
	}
	b.bufs = nil
}

// Download copies the first n bytes of buf to the host.
func (b *Buffers) Download(buf Buffer, n int) ([]byte, error) {
	out := make([]byte, n)
	return out, b.d.Download(b.ctx, out, buf)
}

// SwizzledLen is refimpl/nvfp4.SwizzledLen: rows rounded up to 128 times
// scale columns rounded up to 4.
func swizzledLen(rows, sfCols int) int {
	return (rows + 127) / 128 * 128 * ((sfCols + 3) / 4 * 4)
}

func runNVFP4(ctx context.Context, d *Device, k gate.Kernel, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	x, rows, cols, err := matrixInput(k, in, "x", 16)
	if err != nil {
		return nil, err
	}
	swizzle := p.Get("swizzle", "0") == "1"
	var global float32
	globalMode := uint32(0)
	if g, ok := p["global"]; ok {
		f, err := strconv.ParseFloat(g, 32)
		if err != nil {
			return nil, fmt.Errorf("cuda: kernel %s: parameter global=%q is not a float", k.Name, g)
		}
		global, globalMode = float32(f), 1
	}
	n := rows * cols
	sfCols := cols / 16
	scaleLen := rows * sfCols
	if swizzle {
		scaleLen = swizzledLen(rows, sfCols)
	}
	b := d.Buffers(ctx)
	defer b.Free()
	bx, err := b.Upload(x.Data)
	if err != nil {
		return nil, err
	}
	amax, err := b.Zeros(4)
	if err != nil {
		return nil, err
	}
	packed, err := b.Alloc(int64(n / 2))
	if err != nil {
		return nil, err
	}
	scales, err := b.Zeros(int64(scaleLen))
	if err != nil {
		return nil, err
	}
	gout, err := b.Alloc(4)
	if err != nil {
		return nil, err
	}
	if n > 0 && globalMode == 0 {
		n4 := int64(n / 4)
		if err := d.Launch(ctx, "nvfp4_amax", Grid1D(n4, 256, 4096), Dims{256, 1, 1}, 0, bx, uint64(n4), amax); err != nil {
			return nil, err
		}
	}
	sw := uint32(0)
	if swizzle {
		sw = 1
	}
	nb := int64(rows * sfCols)
	if err := d.Launch(ctx, "nvfp4_quantize", Grid1D(nb, 256, 65535), Dims{256, 1, 1}, 0,
		bx, uint64(rows), uint64(cols), amax, global, globalMode, packed, scales, sw, gout); err != nil {
		return nil, err
	}
	pb, err := b.Download(packed, n/2)
	if err != nil {
		return nil, err
	}
	sb, err := b.Download(scales, scaleLen)
	if err != nil {
		return nil, err
	}
	gb, err := b.Download(gout, 4)
	if err != nil {
		return nil, err
	}
	pt := tensor.FromU8([]int{rows, cols / 2}, pb)
	pt.Logical = "e2m1x2"
	st := tensor.FromU8([]int{rows, sfCols}, sb)
	if swizzle {
		st = tensor.FromU8([]int{scaleLen}, sb)
	}
	st.Logical = "e4m3"
	gt := tensor.Tensor{DType: tensor.F32, Shape: []int{1}, Data: gb}
	return ops.Tensors{"packed": pt, "scales": st, "global": gt}, nil
}

var mxfp4Modes = map[string]uint32{"floor": 0, "ceil": 1, "even": 2, "rceil": 3}

func runMXFP4(ctx context.Context, d *Device, k gate.Kernel, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	x, rows, cols, err := matrixInput(k, in, "x", 32)
	if err != nil {
		return nil, err
	}
	mode, ok := mxfp4Modes[p.Get("mode", "floor")]
	if !ok {
		return nil, fmt.Errorf("cuda: kernel %s: unknown mode %q", k.Name, p["mode"])
	}
	n := rows * cols
	b := d.Buffers(ctx)
	defer b.Free()
	bx, err := b.Upload(x.Data)
	if err != nil {
		return nil, err
	}
	packed, err := b.Alloc(int64(n / 2))
	if err != nil {
		return nil, err
	}
	scales, err := b.Alloc(int64(n / 32))
	if err != nil {
		return nil, err
	}
	nb := int64(n / 32)
	if nb > 0 {
		if err := d.Launch(ctx, "mxfp4_quantize", Grid1D(nb, 256, 65535), Dims{256, 1, 1}, 0, bx, uint64(nb), mode, packed, scales); err != nil {
			return nil, err
		}
	}
	pb, err := b.Download(packed, n/2)
	if err != nil {
		return nil, err
	}
	sb, err := b.Download(scales, n/32)
	if err != nil {
		return nil, err
	}
	pt := tensor.FromU8([]int{rows, cols / 2}, pb)
	pt.Logical = "e2m1x2"
	st := tensor.FromU8([]int{rows, cols / 32}, sb)
	st.Logical = "e8m0"
	return ops.Tensors{"packed": pt, "scales": st}, nil
}

// awqThreads is the block size of awq_forge_pack: 8 warps, each a
// 32-column slice of one group.
const awqThreads = 256

func awqGrid(oc, groups int) Dims { return Dims{(oc/8 + 31) / 32, groups, 1} }

func runAWQ(ctx context.Context, d *Device, k gate.Kernel, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	w, ok := in["w"]
	if !ok {
		return nil, fmt.Errorf("cuda: kernel %s: missing input tensor %q", k.Name, "w")
	}
	if err := w.Expect("w", tensor.F16, -1, -1); err != nil {
		return nil, fmt.Errorf("cuda: kernel %s: %w", k.Name, err)
	}
	ic, oc := w.Shape[0], w.Shape[1]
	g, err := p.Int("group", 128)
	if err != nil {
		return nil, fmt.Errorf("cuda: kernel %s: %w", k.Name, err)
	}
	if g == -1 {
		g = ic
	}
	if ic == 0 || oc == 0 || g <= 0 || ic%g != 0 || oc%8 != 0 {
		return nil, fmt.Errorf("cuda: kernel %s: shape [%d, %d] with group %d: need IC a positive multiple of the group and OC a positive multiple of 8", k.Name, ic, oc, g)
	}
	b := d.Buffers(ctx)
	defer b.Free()
	bw, err := b.Upload(w.Data)
	if err != nil {
		return nil, err
	}
	ng, words := ic/g, oc/8
	qw, err := b.Alloc(int64(4 * ic * words))
	if err != nil {
		return nil, err
	}
	qz, err := b.Alloc(int64(4 * ng * words))
	if err != nil {
		return nil, err
	}
	sc, err := b.Alloc(int64(2 * ng * oc))
	if err != nil {
		return nil, err
	}
	bad, err := b.Zeros(4)
	if err != nil {
		return nil, err
	}
	if err := d.Launch(ctx, "awq_forge_pack", awqGrid(oc, ng), Dims{awqThreads, 1, 1}, 0, bw, uint64(ic), uint64(oc), uint64(g), qw, qz, sc, bad); err != nil {
		return nil, err
	}
	flag, err := b.Download(bad, 4)
	if err != nil {
		return nil, err
	}
	if flag[0] != 0 {
		return nil, fmt.Errorf("cuda: kernel %s: a weight is not finite (the forge quantizer rejects Inf and NaN)", k.Name)
	}
	qwb, err := b.Download(qw, 4*ic*words)
	if err != nil {
		return nil, err
	}
	qzb, err := b.Download(qz, 4*ng*words)
	if err != nil {
		return nil, err
	}
	scb, err := b.Download(sc, 2*ng*oc)
	if err != nil {
		return nil, err
	}
	return ops.Tensors{
		"qweight": {DType: tensor.I32, Shape: []int{ic, words}, Data: qwb},
		"qzeros":  {DType: tensor.I32, Shape: []int{ng, words}, Data: qzb},
		"scales":  {DType: tensor.F16, Shape: []int{ng, oc}, Data: scb},
	}, nil
}
