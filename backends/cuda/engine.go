//go:build cuda

package cuda

import (
	"context"
	"fmt"
	"strings"

	"github.com/bitexact/bitexact/gate"
	"github.com/bitexact/bitexact/refimpl/gemv"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// kernels lists every kernel with its claim and its launch code.
var kernels = gate.Table[*Device]{
	{Kernel: gate.Kernel{Name: "e2m1_nvidia", Module: "e2m1", Conversion: "e2m1/nvidia",
		Op: "e2m1.encode", Params: ops.Params{"profile": "nvidia"},
		Doc: "software E2M1 encode, nvidia profile (branchless thresholds, NaN -> +0x7)"}, Launch: runUnaryOp},
	{Kernel: gate.Kernel{Name: "e2m1_sw_sm121", Module: "e2m1", Conversion: "e2m1/sw-sm121",
		Op: "e2m1.encode", Params: ops.Params{"profile": "sw-sm121"},
		ThirdParty: "Avarok-Cybersecurity/dgx-vllm: patch_nvfp4_utils_sw_e2m1.py _sw_float_to_e2m1 (function body unchanged)",
		Doc:        "dgx-vllm SM121 software E2M1, as published"}, Launch: runUnaryOp},
	{Kernel: gate.Kernel{Name: "fp8_e4m3_satfinite", Module: "fp8", Conversion: "e4m3/satfinite",
		Op: "fp8.encode", Params: ops.Params{"format": "e4m3", "profile": "satfinite"},
		Doc: "hardware cvt.rn.satfinite.e4m3x2.f32"}, Launch: runUnaryOp},
	{Kernel: gate.Kernel{Name: "fp8_e5m2_satfinite", Module: "fp8", Conversion: "e5m2/satfinite",
		Op: "fp8.encode", Params: ops.Params{"format": "e5m2", "profile": "satfinite"},
		Doc: "hardware cvt.rn.satfinite.e5m2x2.f32"}, Launch: runUnaryOp},
	{Kernel: gate.Kernel{Name: "fp8_e4m3_decode", Module: "fp8",
		Op: "fp8.decode", Params: ops.Params{"format": "e4m3"},
		Doc: "hardware cvt.rn.f16x2.e4m3x2 then cvt.f32.f16"}, Launch: runDecode},
	{Kernel: gate.Kernel{Name: "fp8_e5m2_decode", Module: "fp8",
		Op: "fp8.decode", Params: ops.Params{"format": "e5m2"},
		Doc: "hardware cvt.rn.f16x2.e5m2x2 then cvt.f32.f16"}, Launch: runDecode},
	{Kernel: gate.Kernel{Name: "nvfp4_quantize", Module: "nvfp4",
		Op: "nvfp4.quantize", Params: ops.Params{"recipe": "canonical"},
		Optional: map[string][]string{"swizzle": {"0", "1"}, "global": nil},
		Doc:      "NVFP4 canonical recipe (nvfp4_amax, then nvfp4_quantize), correctly rounded _rn operations"}, Launch: runNVFP4},
	{Kernel: gate.Kernel{Name: "mxfp4_quantize", Module: "mxfp4",
		Op: "mxfp4.quantize", Params: ops.Params{"profile": "nvidia"},
		Optional: map[string][]string{"mode": {"floor", "ceil", "even", "rceil"}},
		Doc:      "MXFP4 (OCP MX v1.0) with E8M0 scale modes, E2M1 nvidia elements"}, Launch: runMXFP4},
	{Kernel: gate.Kernel{Name: "awq_forge_pack", Module: "awq",
		Op: "awq.quantize", Params: ops.Params{"quantizer": "forge"},
		Optional: map[string][]string{"group": nil},
		Doc:      "FORGE AWQ quantize+pack: warp per (group, 256-column tile), 16-byte loads, RNE, AWQ nibble order in registers"}, Launch: runAWQ},
	{Kernel: gate.Kernel{Name: "sp24_compress", Module: "sparse24",
		Op: "sparse24.compress", Params: ops.Params{},
		Optional: map[string][]string{"tie": {"lower-index", "cutlass", "signed"}, "layout": {"rowmajor", "transposed"}},
		Doc:      "2:4 compress of E2M1 codes (batched over experts), row-major or transposed (comp_T/meta_T/scales_T)"}, Launch: runSparseCompress},
	{Kernel: gate.Kernel{Name: "sp24_gemv_v7", Module: "sparse24",
		Op: "gemv.sparse_fp4", Params: ops.Params{},
		Optional: map[string][]string{"schedule": nil, "scale_decode": {"e4m3fn", "dgx_lut"}}, Accepts: acceptsV7,
		Doc: "dgx-vllm v7 sparse FP4 GEMV (blockIdx.z experts, TILE_K 64, THREAD_N 4, uint32 loads, E4M3 scales) + fp16 partial reduction; 1 to 3 K tiles per block"}, Launch: runSparseGEMV},
	{Kernel: gate.Kernel{Name: "gemv_mxfp4_q8_1", Module: "gemv_mxfp4",
		Op: "gemv.mxfp4_q8_1", Params: ops.Params{},
		Optional: map[string][]string{"schedule": nil}, Accepts: acceptsMMVQ,
		Doc: "llama.cpp MXFP4 x Q8_1 mmvq GEMV with __dp4a and the int8 E2M1 table"}, Launch: runMXFP4GEMV},
	{Kernel: gate.Kernel{Name: "q8_1_quantize", Module: "gemv_mxfp4",
		Op: "ggml.q8_1.quantize", Params: ops.Params{"s": "cuda"},
		Doc: "llama.cpp CUDA quantize_q8_1: warp per 32-block, shuffle max and xor-tree sum, round half away"}, Launch: runGGMLQuantize(gemv.Q81BlockBytes, "block_q8_1")},
	{Kernel: gate.Kernel{Name: "ggml_mxfp4_quantize", Module: "gemv_mxfp4",
		Op: "ggml.mxfp4.quantize", Params: ops.Params{"log2": "exact", "cast": "x86-64"},
		Doc: "llama.cpp quantize_row_mxfp4_ref on the GPU: warp per 32-block, exponent from the bits (log2 exact), x86-64 cast of out-of-range exponents"}, Launch: runGGMLQuantize(gemv.MXFP4BlockBytes, "block_mxfp4")},
}

// Kernels lists every kernel with its claim.
var Kernels = kernels.Kernels()

func acceptsV7(p ops.Params) bool {
	_, _, err := v7Config(p)
	return err == nil
}

func acceptsMMVQ(p ops.Params) bool {
	_, err := mmvqConfig(p)
	return err == nil
}

// NewEngine returns the gate engine of the CUDA kernels on d: it runs each
// reference operation on the kernel that claims it (a golden.Engine) and
// each conversion on its kernel's _range form, computed on the GPU (an
// exhaustive.Unary).
func NewEngine(d *Device) gate.Engine {
	return gate.Engine{Backend: launcher{d}}
}

// launcher is the gate.Backend of the CUDA kernels on a Device.
type launcher struct{ d *Device }

func (launcher) Name() string           { return "cuda" }
func (launcher) Kernels() []gate.Kernel { return Kernels }

// Loaded says why k cannot run on this GPU, if it cannot.
func (l launcher) Loaded(k gate.Kernel) error {
	if !l.d.Loaded(k.Module) {
		return fmt.Errorf("cuda: kernel %s: module %s is not loadable on this GPU (sm_%d)", k.Name, k.Module, l.d.CC())
	}
	return nil
}

func (l launcher) Launch(ctx context.Context, k gate.Kernel, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	return kernels.Run(ctx, l.d, k, p, in)
}

// Range runs the unary kernel's range form: the inputs are generated on
// the GPU.
func (l launcher) Range(ctx context.Context, k gate.Kernel, start uint32, out []byte) error {
	return l.d.rangeInto(ctx, k.Name+"_range", start, out)
}

// Tensor plumbing shared by the op runners.

func upload(ctx context.Context, d *Device, t tensor.Tensor) (Buffer, error) {
	return d.Upload(ctx, t.Data)
}

// runUnaryOp runs a float32 -> one-code-per-byte conversion kernel on
// input "x", producing "codes" shaped like x.
func runUnaryOp(ctx context.Context, d *Device, k gate.Kernel, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
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
		if err := d.Launch(ctx, k.Name, unaryGrid(int64(n)), Dims{256, 1, 1}, 0, bx, bo, uint64(n)); err != nil {
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

func logicalOf(k gate.Kernel) string {
	f, _, _ := strings.Cut(k.Conversion, "/")
	return f
}

// runDecode runs an FP8 decode kernel on "codes", producing float32 "x".
func runDecode(ctx context.Context, d *Device, k gate.Kernel, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
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
