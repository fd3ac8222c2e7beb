//go:build cuda

package cuda

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/bitexact/bitexact/refimpl/gemv"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// Kernel describes one kernel under certification: what it claims to
// compute, in the reference's terms.
type Kernel struct {
	// Name is the CUDA entry point of the tensor form; a unary kernel's
	// exhaustive form is Name+"_range".
	Name string
	// Module is the kernels/ family it is compiled from.
	Module string
	// Conversion is the refimpl/unary conversion ("format/profile") a
	// unary kernel claims to implement; empty for tensor ops.
	Conversion string
	// Op and Params are the refimpl/ops operation (and the parameters that
	// select this kernel) that the kernel claims to implement.
	Op     string
	Params ops.Params
	// Optional lists the other parameters the kernel handles, with the
	// values it accepts (nil: any value it can parse).
	Optional map[string][]string
	// ThirdParty marks a kernel copied from elsewhere to be certified as
	// found, rather than written to a profile by bitexact.
	ThirdParty string
	// Doc says what the kernel is.
	Doc string
	// accepts, when set, further restricts the parameters the kernel
	// takes (a GEMV runs only the schedules it declares).
	accepts func(p ops.Params) bool
	// run executes the op on the device.
	run func(ctx context.Context, d *Device, k Kernel, p ops.Params, in ops.Tensors) (ops.Tensors, error)
}

// Kernels lists every kernel with its claim.
var Kernels = []Kernel{
	{Name: "e2m1_nvidia", Module: "e2m1", Conversion: "e2m1/nvidia",
		Op: "e2m1.encode", Params: ops.Params{"profile": "nvidia"}, run: runUnaryOp,
		Doc: "software E2M1 encode, nvidia profile (branchless thresholds, NaN -> +0x7)"},
	{Name: "e2m1_sw_sm121", Module: "e2m1", Conversion: "e2m1/sw-sm121",
		Op: "e2m1.encode", Params: ops.Params{"profile": "sw-sm121"}, run: runUnaryOp,
		ThirdParty: "Avarok-Cybersecurity/dgx-vllm: patch_nvfp4_utils_sw_e2m1.py _sw_float_to_e2m1 (function body unchanged)",
		Doc:        "dgx-vllm SM121 software E2M1, as published"},
	{Name: "fp8_e4m3_satfinite", Module: "fp8", Conversion: "e4m3/satfinite",
		Op: "fp8.encode", Params: ops.Params{"format": "e4m3", "profile": "satfinite"}, run: runUnaryOp,
		Doc: "hardware cvt.rn.satfinite.e4m3x2.f32"},
	{Name: "fp8_e5m2_satfinite", Module: "fp8", Conversion: "e5m2/satfinite",
		Op: "fp8.encode", Params: ops.Params{"format": "e5m2", "profile": "satfinite"}, run: runUnaryOp,
		Doc: "hardware cvt.rn.satfinite.e5m2x2.f32"},
	{Name: "fp8_e4m3_decode", Module: "fp8",
		Op: "fp8.decode", Params: ops.Params{"format": "e4m3"}, run: runDecode,
		Doc: "hardware cvt.rn.f16x2.e4m3x2 then cvt.f32.f16"},
	{Name: "fp8_e5m2_decode", Module: "fp8",
		Op: "fp8.decode", Params: ops.Params{"format": "e5m2"}, run: runDecode,
		Doc: "hardware cvt.rn.f16x2.e5m2x2 then cvt.f32.f16"},
	{Name: "nvfp4_quantize", Module: "nvfp4",
		Op: "nvfp4.quantize", Params: ops.Params{"recipe": "canonical"},
		Optional: map[string][]string{"swizzle": {"0", "1"}, "global": nil}, run: runNVFP4,
		Doc: "NVFP4 canonical recipe (nvfp4_amax, then nvfp4_quantize), correctly rounded _rn operations"},
	{Name: "mxfp4_quantize", Module: "mxfp4",
		Op: "mxfp4.quantize", Params: ops.Params{"profile": "nvidia"},
		Optional: map[string][]string{"mode": {"floor", "ceil", "even", "rceil"}}, run: runMXFP4,
		Doc: "MXFP4 (OCP MX v1.0) with E8M0 scale modes, E2M1 nvidia elements"},
	{Name: "awq_forge_pack", Module: "awq",
		Op: "awq.quantize", Params: ops.Params{"quantizer": "forge"},
		Optional: map[string][]string{"group": nil}, run: runAWQ,
		Doc: "FORGE AWQ quantize+pack: warp per (group, 256-column tile), 16-byte loads, RNE, AWQ nibble order in registers"},
	{Name: "sp24_compress", Module: "sparse24",
		Op: "sparse24.compress", Params: ops.Params{},
		Optional: map[string][]string{"tie": {"lower-index", "cutlass", "signed"}, "layout": {"rowmajor", "transposed"}}, run: runSparseCompress,
		Doc: "2:4 compress of E2M1 codes (batched over experts), row-major or transposed (comp_T/meta_T/scales_T)"},
	{Name: "sp24_gemv_v7", Module: "sparse24",
		Op: "gemv.sparse_fp4", Params: ops.Params{},
		Optional: map[string][]string{"schedule": nil, "scale_decode": {"e4m3fn", "dgx_lut"}}, accepts: acceptsV7, run: runSparseGEMV,
		Doc: "dgx-vllm v7 sparse FP4 GEMV (blockIdx.z experts, TILE_K 64, THREAD_N 4, uint32 loads, E4M3 scales) + fp16 partial reduction; 1 to 3 K tiles per block"},
	{Name: "gemv_mxfp4_q8_1", Module: "gemv_mxfp4",
		Op: "gemv.mxfp4_q8_1", Params: ops.Params{},
		Optional: map[string][]string{"schedule": nil}, accepts: acceptsMMVQ, run: runMXFP4GEMV,
		Doc: "llama.cpp MXFP4 x Q8_1 mmvq GEMV with __dp4a and the int8 E2M1 table"},
	{Name: "q8_1_quantize", Module: "gemv_mxfp4",
		Op: "ggml.q8_1.quantize", Params: ops.Params{"s": "cuda"}, run: runGGMLQuantize(gemv.Q81BlockBytes, "block_q8_1"),
		Doc: "llama.cpp CUDA quantize_q8_1: warp per 32-block, shuffle max and xor-tree sum, round half away"},
	{Name: "ggml_mxfp4_quantize", Module: "gemv_mxfp4",
		Op: "ggml.mxfp4.quantize", Params: ops.Params{"log2": "exact", "cast": "x86-64"}, run: runGGMLQuantize(gemv.MXFP4BlockBytes, "block_mxfp4"),
		Doc: "llama.cpp quantize_row_mxfp4_ref on the GPU: warp per 32-block, exponent from the bits (log2 exact), x86-64 cast of out-of-range exponents"},
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// opDefaults are the parameter defaults of the refimpl/ops operations
// (refimpl/ops: e2m1.encode's profile defaults to nvidia), so that a case
// that leaves a parameter out selects the kernel of the default.
var opDefaults = map[string]map[string]string{
	"e2m1.encode":    {"profile": "nvidia"},
	"nvfp4.quantize": {"recipe": "canonical"},
	"mxfp4.quantize": {"profile": "nvidia"},
	"awq.quantize":   {"quantizer": "forge"},
}

func acceptsV7(p ops.Params) bool {
	_, _, err := v7Config(p)
	return err == nil
}

func acceptsMMVQ(p ops.Params) bool {
	_, err := mmvqConfig(p)
	return err == nil
}

// LookupKernel finds a kernel by entry-point name.
func LookupKernel(name string) (Kernel, error) {
	for _, k := range Kernels {
		if k.Name == name {
			return k, nil
		}
	}
	return Kernel{}, fmt.Errorf("cuda: unknown kernel %q", name)
}

// matches reports whether p selects k for k.Op: every parameter k names
// must be present with its value, and every other parameter must be one
// the kernel handles (none, for now).
func (k Kernel) matches(op string, p ops.Params) bool {
	if op != k.Op {
		return false
	}
	for key, v := range k.Params {
		got, ok := p[key]
		if !ok {
			got = opDefaults[op][key]
		}
		if got != v {
			return false
		}
	}
	for key, v := range p {
		if _, ok := k.Params[key]; ok {
			continue
		}
		allowed, ok := k.Optional[key]
		if !ok {
			return false
		}
		if allowed != nil && !contains(allowed, v) {
			return false
		}
	}
	return k.accepts == nil || k.accepts(p)
}

// Engine runs reference operations on the GPU with the kernels that claim
// them. It satisfies golden.Engine, so golden.Check certifies it case by
// case, and exhaustive.Unary for the 2^32 sweeps.
type Engine struct{ Dev *Device }

// KernelFor returns the kernel that implements op under p, if any.
func KernelFor(op string, p ops.Params) (Kernel, bool) {
	for _, k := range Kernels {
		if k.matches(op, p) {
			return k, true
		}
	}
	return Kernel{}, false
}

// Supports reports whether the engine has a kernel for op under p.
func (e Engine) Supports(op string, p ops.Params) bool {
	k, ok := KernelFor(op, p)
	return ok && e.Dev.Loaded(k.Module)
}

// Run runs op on the GPU.
func (e Engine) Run(ctx context.Context, op string, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	k, ok := KernelFor(op, p)
	if !ok {
		return nil, fmt.Errorf("cuda: no kernel implements %s with %s", op, paramString(p))
	}
	return e.RunKernel(ctx, k, p, in)
}

// RunKernel runs a given kernel on op inputs, whatever its claim: the
// conformance tests use it to hold a kernel against a profile it does not
// claim (the third-party E2M1 against nvidia).
func (e Engine) RunKernel(ctx context.Context, k Kernel, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	if !e.Dev.Loaded(k.Module) {
		return nil, fmt.Errorf("cuda: kernel %s: module %s is not loadable on this GPU (sm_%d)", k.Name, k.Module, e.Dev.CC())
	}
	return k.run(ctx, e.Dev, k, p, in)
}

// Unary computes the codes of conversion conv for the inputs start,
// start+1, ... (exhaustive.Unary).
func (e Engine) Unary(ctx context.Context, conv string, start uint32, out []byte) error {
	for _, k := range Kernels {
		if k.Conversion == conv {
			return e.Dev.RangeInto(ctx, k.Name+"_range", start, out)
		}
	}
	return fmt.Errorf("cuda: no kernel implements conversion %s", conv)
}

// KernelUnary is an exhaustive.Unary that runs one kernel's range form
// whatever conversion it is asked for, to hold a kernel against a profile
// it does not claim.
type KernelUnary struct {
	Dev    *Device
	Kernel string
}

// Unary ignores conv and runs the kernel.
func (u KernelUnary) Unary(ctx context.Context, conv string, start uint32, out []byte) error {
	return u.Dev.RangeInto(ctx, u.Kernel+"_range", start, out)
}

func paramString(p ops.Params) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := make([]string, len(keys))
	for i, k := range keys {
		s[i] = k + "=" + p[k]
	}
	return "{" + strings.Join(s, ", ") + "}"
}

// Tensor plumbing shared by the op runners.

func upload(ctx context.Context, d *Device, t tensor.Tensor) (Buffer, error) {
	return d.Upload(ctx, t.Data)
}

// runUnaryOp runs a float32 -> one-code-per-byte conversion kernel on
// input "x", producing "codes" shaped like x.
func runUnaryOp(ctx context.Context, d *Device, k Kernel, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	x, ok := in["x"]
	if !ok {
		return nil, fmt.Errorf("cuda: kernel %s: missing input tensor %q", k.Name, "x")
	}
	if err := x.Expect("x", tensor.F32); err != nil {
		return nil, fmt.Errorf("cuda: kernel %s: %w", k.Name, err)
	}
	n := x.Len()
	codes := make([]byte, n)
	if n > 0 {
		bx, err := upload(ctx, d, x)
		if err != nil {
			return nil, err
		}
		defer d.Free(ctx, bx)
		bo, err := d.Alloc(ctx, int64(n))
		if err != nil {
			return nil, err
		}
		defer d.Free(ctx, bo)
		if err := d.Launch(ctx, k.Name, UnaryGrid(int64(n)), Dims{256, 1, 1}, 0, bx, bo, uint64(n)); err != nil {
			return nil, err
		}
		if err := d.Download(ctx, codes, bo); err != nil {
			return nil, err
		}
	}
	out := tensor.FromU8(x.Shape, codes)
	out.Logical = logicalOf(k)
	return ops.Tensors{"codes": out}, nil
}

func logicalOf(k Kernel) string {
	f, _, _ := strings.Cut(k.Conversion, "/")
	return f
}

// runDecode runs an FP8 decode kernel on "codes", producing float32 "x".
func runDecode(ctx context.Context, d *Device, k Kernel, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	c, ok := in["codes"]
	if !ok {
		return nil, fmt.Errorf("cuda: kernel %s: missing input tensor %q", k.Name, "codes")
	}
	if err := c.Expect("codes", tensor.U8); err != nil {
		return nil, fmt.Errorf("cuda: kernel %s: %w", k.Name, err)
	}
	n := c.Len()
	x := make([]byte, 4*n)
	if n > 0 {
		bc, err := upload(ctx, d, c)
		if err != nil {
			return nil, err
		}
		defer d.Free(ctx, bc)
		bo, err := d.Alloc(ctx, int64(4*n))
		if err != nil {
			return nil, err
		}
		defer d.Free(ctx, bo)
		if err := d.Launch(ctx, k.Name, Grid1D(int64(n), 256, 65535), Dims{256, 1, 1}, 0, bc, bo, uint64(n)); err != nil {
			return nil, err
		}
		if err := d.Download(ctx, x, bo); err != nil {
			return nil, err
		}
	}
	return ops.Tensors{"x": tensor.Tensor{DType: tensor.F32, Shape: append([]int(nil), c.Shape...), Data: x}}, nil
}
