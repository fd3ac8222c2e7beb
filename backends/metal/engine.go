package metal

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/bitexact/bitexact/gate"
	"github.com/bitexact/bitexact/refimpl/gemv"
	"github.com/bitexact/bitexact/refimpl/nvfp4"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// Dims is a Metal grid or threadgroup size.
type Dims struct{ X, Y, Z int }

// Backend runs one compute dispatch. Two exist: Device (Metal on macOS,
// build tags darwin and metal) and Emulator (the same sources compiled as
// C++ and run on the CPU, for the Linux check).
type Backend interface {
	// Dispatch runs kernel over grid threadgroups of group threads each.
	// bufs are bound to [[buffer(0)]], [[buffer(1)]], ... in order;
	// when Dispatch returns without error every buffer holds the bytes
	// the kernel left in it.
	Dispatch(ctx context.Context, kernel string, grid, group Dims, bufs ...[]byte) error
	// Describe says what executes the kernels, for certificates.
	Describe() BackendInfo
}

// BackendInfo describes a backend for certificates.
type BackendInfo struct {
	// Kind is "metal-gpu" or "cpu-emulation".
	Kind string `json:"kind"`
	// Name is the GPU name, or the compiler and host for the emulation.
	Name string `json:"name"`
	// Verifies says in one sentence what a pass on this backend shows.
	Verifies string `json:"verifies"`
	// Details holds backend-specific facts (compile options, OS version).
	Details map[string]string `json:"details,omitempty"`
}

// scheduleIs accepts p when its (required) schedule parameter names or
// spells s.
func scheduleIs(s gemv.Schedule) func(p ops.Params) bool {
	return func(p ops.Params) bool {
		v, ok := p["schedule"]
		if !ok {
			return false
		}
		got, err := gemv.Lookup(v)
		return err == nil && got == s
	}
}

// kernels lists every kernel with its claim and its launch code. A
// parameter in Optional may be left out, selecting the op's default.
var kernels = gate.Table[Backend]{
	{Kernel: gate.Kernel{Name: "e2m1_nvidia", Module: "e2m1", Conversion: "e2m1/nvidia", Op: "e2m1.encode",
		Optional: map[string][]string{"profile": {"nvidia"}},
		Doc:      "software E2M1 encode, nvidia profile (branchless thresholds, NaN -> +0x7)"}, Launch: runUnary},
	{Kernel: gate.Kernel{Name: "e4m3_satfinite", Module: "fp8", Conversion: "e4m3/satfinite", Op: "fp8.encode",
		Params: ops.Params{"format": "e4m3", "profile": "satfinite"},
		Doc:    "software E4M3 encode with cvt.rn.satfinite semantics (the NVFP4 block-scale cast)"}, Launch: runUnary},
	{Kernel: gate.Kernel{Name: "nvfp4_quantize", Module: "nvfp4", Op: "nvfp4.quantize",
		Optional: map[string][]string{"recipe": {"canonical"}, "swizzle": {"0", "1"}, "global": nil},
		Doc:      "NVFP4 canonical recipe: nvfp4_amax (integer simd_max and atomic max) then one thread per 16-element block"}, Launch: runNVFP4},
	{Kernel: gate.Kernel{Name: "mxfp4_quantize", Module: "mxfp4", Op: "mxfp4.quantize",
		Optional: map[string][]string{"mode": {"floor", "ceil", "even", "rceil"}, "profile": {"nvidia"}},
		Doc:      "MXFP4 quantize, one thread per 32-element block"}, Launch: runMXFP4},
	{Kernel: gate.Kernel{Name: "awq_pack", Module: "awq", Op: "awq.pack",
		Optional: map[string][]string{"layout": {"awq"}},
		Doc:      "AWQ packing of weight nibbles and zero points, order 0,2,4,6,1,3,5,7"}, Launch: runAWQPack},
	{Kernel: gate.Kernel{Name: "sparse24_compress", Module: "sparse24", Op: "sparse24.compress",
		Optional: map[string][]string{"tie": {"lower-index", "cutlass", "signed"}, "layout": {"rowmajor", "transposed"}},
		Doc:      "2:4 compression, one thread per 8 codes; transposed scales through transpose_u8"}, Launch: runSparse24},
	{Kernel: gate.Kernel{Name: "sparse_fp4_gemv", Module: "gemv_sparse_fp4", Op: "gemv.sparse_fp4",
		Optional: map[string][]string{"schedule": nil, "scale_decode": {"e4m3fn", "dgx_lut"}},
		Accepts:  scheduleIs(SparseFP4Schedule), Schedule: &SparseFP4Schedule,
		Doc: "2:4-sparse NVFP4 MoE GEMV, SIMD K-split (32 lanes over 16-element blocks, threadgroup LUT, simd_sum)"}, Launch: runSparseGEMV},
	{Kernel: gate.Kernel{Name: "mxfp4_q8_1_gemv", Module: "gemv_mxfp4", Op: "gemv.mxfp4_q8_1",
		Optional: map[string][]string{"schedule": nil},
		Accepts:  scheduleIs(MXFP4Schedule), Schedule: &MXFP4Schedule,
		Doc: "MXFP4 x Q8_1 GEMV, SIMD K-split (lane = block/half, threadgroup LUT, deferred E8M0 scale, simd_sum)"}, Launch: runMXFP4GEMV},
}

// kernelList lists every kernel with its claim.
var kernelList = kernels.Kernels()

// NewEngine returns the gate engine of the Metal kernels on b: it runs
// each reference operation on the kernel that claims it, and each
// conversion's range on the kernel's tensor form (the inputs generated on
// the host). It is a golden.Engine and an exhaustive.Unary.
func NewEngine(b Backend) gate.Engine { return gate.Engine{Backend: launcher{b}} }

// KernelFor returns the kernel that claims op under p, if any.
func KernelFor(op string, p ops.Params) (gate.Kernel, bool) { return NewEngine(nil).KernelFor(op, p) }

// launcher is the gate.Backend of the Metal kernels on a Backend.
type launcher struct{ b Backend }

func (launcher) Name() string           { return "metal" }
func (launcher) Kernels() []gate.Kernel { return kernelList }

func (l launcher) Launch(ctx context.Context, k gate.Kernel, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	return kernels.Run(ctx, l.b, k, p, in)
}

// Range runs a unary kernel's tensor form on the float32 inputs with bits
// start, start+1, ...
func (l launcher) Range(ctx context.Context, k gate.Kernel, start uint32, out []byte) error {
	x := make([]byte, 4*len(out))
	for i := range out {
		binary.LittleEndian.PutUint32(x[4*i:], start+uint32(i))
	}
	codes, err := dispatchUnary(ctx, l.b, k.Name, x, len(out))
	if err != nil {
		return err
	}
	copy(out, codes)
	return nil
}

// ---- argument plumbing ----

// u32s encodes a constant-buffer struct of 32-bit fields.
func u32s(v ...uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return b
}

// dim32 checks that a size fits the kernels' 32-bit indices.
func dim32(what string, n int) (uint32, error) {
	if n < 0 || n > math.MaxUint32/2 {
		return 0, fmt.Errorf("metal: %s = %d does not fit the kernels' 32-bit indexing", what, n)
	}
	return uint32(n), nil
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// grid1D covers n threads with threadgroups of 256.
func grid1D(n int) (Dims, Dims) { return Dims{max(ceilDiv(n, 256), 1), 1, 1}, Dims{256, 1, 1} }

func dispatchUnary(ctx context.Context, b Backend, kernel string, x []byte, n int) ([]byte, error) {
	nn, err := dim32("element count", n)
	if err != nil {
		return nil, err
	}
	codes := make([]byte, n)
	if n == 0 {
		return codes, nil
	}
	grid, group := grid1D(n)
	if err := b.Dispatch(ctx, kernel, grid, group, x, codes, u32s(nn)); err != nil {
		return nil, err
	}
	return codes, nil
}

func input(in ops.Tensors, name string) (tensor.Tensor, error) {
	t, ok := in[name]
	if !ok {
		return tensor.Tensor{}, fmt.Errorf("missing input tensor %q", name)
	}
	if err := t.Validate(); err != nil {
		return tensor.Tensor{}, fmt.Errorf("tensor %q: %w", name, err)
	}
	return t, nil
}

func kernelErr(k gate.Kernel, err error) error {
	return fmt.Errorf("metal: kernel %s: %w", k.Name, err)
}

// ---- op runners ----

// runUnary: float32 "x" -> one code per byte "codes" shaped like x.
func runUnary(ctx context.Context, b Backend, k gate.Kernel, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	x, err := input(in, "x")
	if err != nil {
		return nil, kernelErr(k, err)
	}
	if err := x.Expect("x", tensor.F32); err != nil {
		return nil, kernelErr(k, err)
	}
	codes, err := dispatchUnary(ctx, b, k.Name, append([]byte(nil), x.Data...), x.Len())
	if err != nil {
		return nil, kernelErr(k, err)
	}
	out := tensor.FromU8(x.Shape, codes)
	out.Logical, _, _ = strings.Cut(k.Conversion, "/")
	return ops.Tensors{"codes": out}, nil
}

func runNVFP4(ctx context.Context, b Backend, k gate.Kernel, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	x, err := input(in, "x")
	if err != nil {
		return nil, kernelErr(k, err)
	}
	if err := x.Expect("x", tensor.F32, -1, -1); err != nil {
		return nil, kernelErr(k, err)
	}
	m, kk := x.Shape[0], x.Shape[1]
	if kk%nvfp4.BlockSize != 0 {
		return nil, kernelErr(k, fmt.Errorf("tensor \"x\": K = %d is not a multiple of %d", kk, nvfp4.BlockSize))
	}
	n, err := dim32("element count", m*kk)
	if err != nil {
		return nil, kernelErr(k, err)
	}
	rows, cols := uint32(m), uint32(kk)
	mode, gbits := uint32(0), uint32(0)
	if g, ok := p["global"]; ok {
		f, perr := strconv.ParseFloat(g, 32)
		if perr != nil {
			return nil, kernelErr(k, fmt.Errorf("parameter global=%q is not a float", g))
		}
		if gf := float32(f); !(gf >= 0 && gf <= math.MaxFloat32) {
			return nil, kernelErr(k, fmt.Errorf("parameter global=%q: per-tensor scale must be finite and >= 0", g))
		}
		mode, gbits = 1, math.Float32bits(float32(f))
	}
	xb := append([]byte(nil), x.Data...)
	amax := make([]byte, 4)
	if mode == 0 && n > 0 {
		// At most 64 threadgroups of 256: the kernel loops over the rest.
		grid, group := Dims{min(max(ceilDiv(int(n), 256), 1), 64), 1, 1}, Dims{256, 1, 1}
		if err := b.Dispatch(ctx, "nvfp4_amax", grid, group, xb, amax, u32s(n)); err != nil {
			return nil, kernelErr(k, err)
		}
	}
	swz := p.Get("swizzle", "0") == "1"
	nblk := m * kk / nvfp4.BlockSize
	packed := make([]byte, m*kk/2)
	scaleLen := nblk
	if swz {
		scaleLen = nvfp4.SwizzledLen(m, kk/nvfp4.BlockSize)
	}
	scales := make([]byte, scaleLen)
	glob := make([]byte, 4)
	sw := uint32(0)
	if swz {
		sw = 1
	}
	grid, group := grid1D(max(nblk, 1))
	if err := b.Dispatch(ctx, "nvfp4_quantize", grid, group, xb, amax, packed, scales, glob,
		u32s(rows, cols, mode, gbits, sw)); err != nil {
		return nil, kernelErr(k, err)
	}
	st := tensor.FromU8([]int{m, kk / nvfp4.BlockSize}, scales)
	if swz {
		st = tensor.FromU8([]int{len(scales)}, scales)
	}
	st.Logical = "e4m3"
	pt := tensor.FromU8([]int{m, kk / 2}, packed)
	pt.Logical = "e2m1x2"
	gt := tensor.Tensor{DType: tensor.F32, Shape: []int{1}, Data: glob}
	return ops.Tensors{"packed": pt, "scales": st, "global": gt}, nil
}

func runMXFP4(ctx context.Context, b Backend, k gate.Kernel, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	x, err := input(in, "x")
	if err != nil {
		return nil, kernelErr(k, err)
	}
	if err := x.Expect("x", tensor.F32, -1, -1); err != nil {
		return nil, kernelErr(k, err)
	}
	m, kk := x.Shape[0], x.Shape[1]
	if kk%32 != 0 {
		return nil, kernelErr(k, fmt.Errorf("tensor \"x\": K = %d is not a multiple of 32", kk))
	}
	nb, err := dim32("block count", m*kk/32)
	if err != nil {
		return nil, kernelErr(k, err)
	}
	mode := map[string]uint32{"floor": 0, "ceil": 1, "even": 2, "rceil": 3}[p.Get("mode", "floor")]
	packed := make([]byte, m*kk/2)
	scales := make([]byte, m*kk/32)
	if nb > 0 {
		grid, group := grid1D(int(nb))
		if err := b.Dispatch(ctx, k.Name, grid, group, append([]byte(nil), x.Data...), packed, scales, u32s(nb, mode)); err != nil {
			return nil, kernelErr(k, err)
		}
	}
	pt := tensor.FromU8([]int{m, kk / 2}, packed)
	pt.Logical = "e2m1x2"
	st := tensor.FromU8([]int{m, kk / 32}, scales)
	st.Logical = "e8m0"
	return ops.Tensors{"packed": pt, "scales": st}, nil
}

// nibbleMatrix checks a non-empty U8 [rows, cols] matrix of 4-bit values
// with cols a multiple of 8.
func nibbleMatrix(in ops.Tensors, name string) (tensor.Tensor, error) {
	t, err := input(in, name)
	if err != nil {
		return t, err
	}
	if err := t.Expect(name, tensor.U8, -1, -1); err != nil {
		return t, err
	}
	if t.Shape[0] == 0 || t.Shape[1] == 0 || t.Shape[1]%8 != 0 {
		return t, fmt.Errorf("tensor %q: shape %v, want a non-empty matrix with a multiple of 8 columns", name, t.Shape)
	}
	for i, v := range t.Data {
		if v > 15 {
			return t, fmt.Errorf("tensor %q: element %d is %d, not a 4-bit value", name, i, v)
		}
	}
	return t, nil
}

func packAWQ(ctx context.Context, b Backend, t tensor.Tensor) (tensor.Tensor, error) {
	rows, cols := t.Shape[0], t.Shape[1]
	nw, err := dim32("word count", rows*cols/8)
	if err != nil {
		return tensor.Tensor{}, err
	}
	words := make([]byte, 4*int(nw))
	grid, group := grid1D(int(nw))
	if err := b.Dispatch(ctx, "awq_pack", grid, group, append([]byte(nil), t.Data...), words, u32s(uint32(rows), uint32(cols))); err != nil {
		return tensor.Tensor{}, err
	}
	return tensor.Tensor{DType: tensor.I32, Shape: []int{rows, cols / 8}, Data: words}, nil
}

func runAWQPack(ctx context.Context, b Backend, k gate.Kernel, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	q, err := nibbleMatrix(in, "q")
	if err != nil {
		return nil, kernelErr(k, err)
	}
	var z tensor.Tensor
	_, hasZ := in["zeros"]
	if hasZ {
		if z, err = nibbleMatrix(in, "zeros"); err != nil {
			return nil, kernelErr(k, err)
		}
		if z.Shape[1] != q.Shape[1] || q.Shape[0]%z.Shape[0] != 0 {
			return nil, kernelErr(k, fmt.Errorf("tensor \"zeros\": shape %v, want [IC/G, %d] with G dividing IC=%d", z.Shape, q.Shape[1], q.Shape[0]))
		}
	}
	qw, err := packAWQ(ctx, b, q)
	if err != nil {
		return nil, kernelErr(k, err)
	}
	out := ops.Tensors{"qweight": qw}
	if hasZ {
		if out["qzeros"], err = packAWQ(ctx, b, z); err != nil {
			return nil, kernelErr(k, err)
		}
	}
	return out, nil
}

func runSparse24(ctx context.Context, b Backend, k gate.Kernel, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	c, err := input(in, "codes")
	if err != nil {
		return nil, kernelErr(k, err)
	}
	if err := c.Expect("codes", tensor.U8); err != nil {
		return nil, kernelErr(k, err)
	}
	if c.Logical != "" && c.Logical != "e2m1" {
		return nil, kernelErr(k, fmt.Errorf("tensor \"codes\": logical format %q, want \"e2m1\" (one code per byte)", c.Logical))
	}
	e, n, kk, batched, err := c.SplitBatch("codes")
	if err != nil {
		return nil, kernelErr(k, err)
	}
	if kk%8 != 0 {
		return nil, kernelErr(k, fmt.Errorf("tensor \"codes\": K=%d is not a multiple of 8", kk))
	}
	for i, v := range c.Data {
		if v > 15 {
			return nil, kernelErr(k, fmt.Errorf("tensor \"codes\": element %d is %#x, not a 4-bit E2M1 code", i, v))
		}
	}
	threads, err := dim32("thread count", e*n*kk/8)
	if err != nil {
		return nil, kernelErr(k, err)
	}
	tie := p.Get("tie", "lower-index")
	tr := p.Get("layout", "rowmajor") == "transposed"
	signed, cutlass, trans := uint32(0), uint32(0), uint32(0)
	if tie == "signed" {
		signed = 1
	}
	if tie == "cutlass" {
		cutlass = 1
	}
	if tr {
		trans = 1
	}
	// Validate the optional inputs before any dispatch.
	s, hasS := in["scales"]
	ns := 0
	if hasS {
		if err := s.Expect("scales", tensor.U8); err != nil {
			return nil, kernelErr(k, err)
		}
		se, sn, sns, sb, err := s.SplitBatch("scales")
		if err != nil {
			return nil, kernelErr(k, err)
		}
		if sb != batched || se != e || sn != n || kk%sns != 0 {
			return nil, kernelErr(k, fmt.Errorf("tensor \"scales\": shape %v, want %v with S dividing K=%d", s.Shape, tensor.BatchShape(batched, e, n, -1), kk))
		}
		ns = sns
	}
	g, hasG := in["global"]
	if hasG {
		if err := g.Expect("global", tensor.F32, e); err != nil {
			return nil, kernelErr(k, err)
		}
	}
	comp := make([]byte, e*n*kk/4)
	meta := make([]byte, e*n*kk/8)
	grid, group := grid1D(int(threads))
	if err := b.Dispatch(ctx, k.Name, grid, group, append([]byte(nil), c.Data...), comp, meta,
		u32s(uint32(e), uint32(n), uint32(kk), signed, cutlass, trans)); err != nil {
		return nil, kernelErr(k, err)
	}
	cs, ms := tensor.BatchShape(batched, e, n, kk/4), tensor.BatchShape(batched, e, n, kk/8)
	if tr {
		cs, ms = tensor.BatchShape(batched, e, kk/4, n), tensor.BatchShape(batched, e, kk/8, n)
	}
	ct := tensor.FromU8(cs, comp)
	ct.Logical = "e2m1x2"
	out := ops.Tensors{"comp": ct, "meta": tensor.FromU8(ms, meta)}
	if hasS {
		st := s
		if tr {
			data := make([]byte, len(s.Data))
			grid, group := grid1D(len(s.Data))
			if err := b.Dispatch(ctx, "transpose_u8", grid, group, append([]byte(nil), s.Data...), data,
				u32s(uint32(e), uint32(n), uint32(ns))); err != nil {
				return nil, kernelErr(k, err)
			}
			st = tensor.FromU8(tensor.BatchShape(batched, e, ns, n), data)
			st.Logical = s.Logical
		}
		out["scales"] = st
	}
	if hasG {
		out["global"] = g
	}
	return out, nil
}

// Threadgroup shapes of the GEMVs (SP_NSG/SP_NR0 and MX_NSG/MX_NR0 in the
// .metal sources): SIMD groups per threadgroup and rows per SIMD group.
const (
	gemvSIMDGroups = 2
	gemvRowsPerSG  = 2
)

func runSparseGEMV(ctx context.Context, b Backend, k gate.Kernel, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	ts := map[string]tensor.Tensor{}
	for _, name := range []string{"comp", "meta", "scales", "global", "act", "experts"} {
		t, err := input(in, name)
		if err != nil {
			return nil, kernelErr(k, err)
		}
		ts[name] = t
	}
	comp := ts["comp"]
	if err := comp.Expect("comp", tensor.U8, -1, -1, -1); err != nil {
		return nil, kernelErr(k, err)
	}
	e, kk, n := comp.Shape[0], 4*comp.Shape[1], comp.Shape[2]
	if kk%16 != 0 {
		return nil, kernelErr(k, fmt.Errorf("tensor \"comp\": shape %v: K=%d must be a multiple of 16 (the kernel's block)", comp.Shape, kk))
	}
	if err := ts["meta"].Expect("meta", tensor.U8, e, kk/8, n); err != nil {
		return nil, kernelErr(k, err)
	}
	sc := ts["scales"]
	if err := sc.Expect("scales", tensor.U8, e, -1, n); err != nil {
		return nil, kernelErr(k, err)
	}
	ns := sc.Shape[1]
	if ns == 0 || kk%ns != 0 || (kk/ns)%16 != 0 {
		return nil, kernelErr(k, fmt.Errorf("tensor \"scales\": shape %v: the scale block K/%d must be a multiple of 16 dividing K=%d", sc.Shape, ns, kk))
	}
	if err := ts["global"].Expect("global", tensor.F32, e); err != nil {
		return nil, kernelErr(k, err)
	}
	ex := ts["experts"]
	if err := ex.Expect("experts", tensor.I32, -1); err != nil {
		return nil, kernelErr(k, err)
	}
	a := ex.Shape[0]
	for i, v := range ex.I32() {
		if v < 0 || int(v) >= e {
			return nil, kernelErr(k, fmt.Errorf("tensor \"experts\": element %d is %d, out of range [0, %d)", i, v, e))
		}
	}
	act := ts["act"]
	if err := act.Expect("act", tensor.F16); err != nil {
		return nil, kernelErr(k, err)
	}
	stride := 0
	switch {
	case len(act.Shape) == 1 && act.Shape[0] == kk:
	case len(act.Shape) == 2 && act.Shape[0] == a && act.Shape[1] == kk:
		stride = kk
	default:
		return nil, kernelErr(k, fmt.Errorf("tensor \"act\": shape %v, want [%d] or [%d %d]", act.Shape, kk, a, kk))
	}
	if _, err := dim32("comp size", len(comp.Data)); err != nil {
		return nil, kernelErr(k, err)
	}
	dgx := uint32(0)
	if p.Get("scale_decode", "e4m3fn") == "dgx_lut" {
		dgx = 1
	}
	y := make([]byte, 4*a*n)
	if a > 0 && n > 0 {
		grid := Dims{ceilDiv(n, gemvSIMDGroups*gemvRowsPerSG), a, 1}
		group := Dims{32, gemvSIMDGroups, 1}
		if err := b.Dispatch(ctx, k.Name, grid, group,
			append([]byte(nil), comp.Data...), append([]byte(nil), ts["meta"].Data...), append([]byte(nil), sc.Data...),
			append([]byte(nil), ts["global"].Data...), append([]byte(nil), act.Data...), append([]byte(nil), ex.Data...),
			y, u32s(uint32(kk), uint32(n), uint32(kk/ns), uint32(stride), dgx)); err != nil {
			return nil, kernelErr(k, err)
		}
	}
	return ops.Tensors{"y": {DType: tensor.F32, Shape: []int{a, n}, Data: y}}, nil
}

func runMXFP4GEMV(ctx context.Context, b Backend, k gate.Kernel, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	w, err := input(in, "w")
	if err != nil {
		return nil, kernelErr(k, err)
	}
	act, err := input(in, "act")
	if err != nil {
		return nil, kernelErr(k, err)
	}
	if err := w.Expect("w", tensor.U8, -1, -1, gemv.MXFP4BlockBytes); err != nil {
		return nil, kernelErr(k, err)
	}
	n, nb := w.Shape[0], w.Shape[1]
	if err := act.Expect("act", tensor.U8, nb, gemv.Q81BlockBytes); err != nil {
		return nil, kernelErr(k, err)
	}
	if _, err := dim32("weight size", len(w.Data)); err != nil {
		return nil, kernelErr(k, err)
	}
	y := make([]byte, 4*n)
	if n > 0 {
		grid := Dims{ceilDiv(n, gemvSIMDGroups*gemvRowsPerSG), 1, 1}
		group := Dims{32, gemvSIMDGroups, 1}
		if err := b.Dispatch(ctx, k.Name, grid, group, append([]byte(nil), w.Data...), append([]byte(nil), act.Data...), y,
			u32s(uint32(n), uint32(nb))); err != nil {
			return nil, kernelErr(k, err)
		}
	}
	return ops.Tensors{"y": {DType: tensor.F32, Shape: []int{n}, Data: y}}, nil
}
