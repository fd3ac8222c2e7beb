"""Run the FP8 block quantizers of vLLM, sglang, DeepGEMM and
TransformerEngine on the fp8block harness inputs and write their outputs.

Reads inputs.safetensors (written by `go run
./conformance/harness/fp8block/tool inputs DIR`: F32 tensors "edges" and
"shape", [rows, cols], cols a multiple of 128) and, for every stack,
variant and device, writes OUT/<stack>.<variant>.<device>.safetensors
holding "<case>.q" (U8 FP8 codes, [rows, cols]) and "<case>.s" (F32
scales, row-major [rows/g, cols/128], whatever layout the stack stored
them in), with metadata recipe (a refimpl/fp8block recipe name),
granularity (1x128 or 128x128), device, versions. A stack that fails
writes a file with metadata "error" instead. Layout outputs (the packed
UE8M0 int32 of DeepGEMM's use_packed_ue8m0, the TMA-aligned storage of
sglang's column-major scales) are written as "<case>.packed" /
"<case>.storage" beside them.

Third-party code is loaded from the files beside this script, not
imported as packages:
  vllm_fp8_utils_excerpt.py, sglang_fp8_kernel_excerpt.py: the Triton
    kernels, extracted by name (ast) and compiled with `triton` and `tl`
    provided; a full fp8_utils.py / fp8_kernel.py works the same way
    (--vllm-file, --sglang-file). Nothing is stubbed: only the kernels
    are taken, and the launch (grid, BLOCK, num_warps, scale tensor
    strides) is the wrappers' own, restated here.
  deepgemm_math.py: deep_gemm/utils/math.py, imported as a module (it
    needs only torch).
  te_reference_excerpt.py: TransformerEngine's blockwise reference
    quantizer functions (pure torch).
"""
import argparse
import ast
import importlib.util
import json
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bxio  # noqa: E402


def load_kernels(path, names):
    import triton
    import triton.language as tl
    src = open(path).read()
    tree = ast.parse(src)
    keep = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in names]
    missing = set(names) - {n.name for n in keep}
    if missing:
        raise ValueError("%s: no function %s" % (path, ", ".join(sorted(missing))))
    # get_source_segment starts at the def line, after the decorator:
    # every kernel taken is a @triton.jit function, so add it back.
    mod_src = "\n\n".join("@triton.jit\n" + ast.get_source_segment(src, n) for n in keep)
    # Triton reads the kernel source from a file: write it beside OUT.
    tmp = os.path.join(os.environ.get("TMPDIR", "/tmp"), "fp8block_" + os.path.basename(path))
    with open(tmp, "w") as f:
        f.write("import triton\nimport triton.language as tl\n\n" + mod_src + "\n")
    spec = importlib.util.spec_from_file_location(os.path.basename(tmp)[:-3], tmp)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def next_pow2(n):
    p = 1
    while p < n:
        p *= 2
    return p


def vllm_run(k, x, g, colmajor, ue8m0):
    import torch
    fp8 = torch.float8_e4m3fn
    fmin, fmax = torch.finfo(fp8).min, torch.finfo(fp8).max
    x_q = torch.empty(x.shape, device=x.device, dtype=fp8)
    if colmajor:
        x_s = torch.empty((x.shape[-1] // g,) + x.shape[:-1], device=x.device, dtype=torch.float32).permute(-1, -2)
    else:
        x_s = torch.empty(x.shape[:-1] + (x.shape[-1] // g,), device=x.device, dtype=torch.float32)
    M = x.numel() // g
    BLOCK = next_pow2(g)
    num_warps = min(max(BLOCK // 256, 1), 8)
    if colmajor:
        k._per_token_group_quant_fp8_colmajor[(M,)](
            x, x_q, x_s, g, x.shape[1], x.stride(0), x_s.stride(1), 1e-10,
            fp8_min=fmin, fp8_max=fmax, use_ue8m0=ue8m0, BLOCK=BLOCK, num_warps=num_warps, num_stages=1)
    else:
        k._per_token_group_quant_fp8[(M,)](
            x, x_q, x_s, g, x.shape[1], x.stride(0), 1e-10,
            fp8_min=fmin, fp8_max=fmax, use_ue8m0=ue8m0, BLOCK=BLOCK, num_warps=num_warps, num_stages=1)
    return x_q, x_s.contiguous(), {}


def sglang_run(k, x, g, colmajor, ue8m0, tma):
    import torch
    fp8 = torch.float8_e4m3fn
    fmax = torch.finfo(fp8).max
    fmin = -fmax
    x_q = torch.empty_like(x, device=x.device, dtype=fp8)
    extra = {}
    if colmajor:
        if tma:
            aligned = (x.shape[-2] + 3) // 4 * 4
            base = torch.zeros(x.shape[:-2] + (x.shape[-1] // g, aligned), device=x.device, dtype=torch.float32)
            x_s = base.permute(-1, -2)[: x.shape[-2], :]
        else:
            base = None
            x_s = torch.empty((x.shape[-1] // g,) + x.shape[:-1], device=x.device, dtype=torch.float32).permute(-1, -2)
    else:
        x_s = torch.empty(x.shape[:-1] + (x.shape[-1] // g,), device=x.device, dtype=torch.float32)
    M = x.numel() // g
    BLOCK = next_pow2(g)
    num_warps = min(max(BLOCK // 256, 1), 8)
    if colmajor:
        k._per_token_group_quant_8bit_colmajor[(M,)](
            x, x_q, x_s, g, x.shape[1], x_s.stride(1), 1e-10,
            bit8_min=fmin, bit8_max=fmax, BLOCK=BLOCK, num_warps=num_warps, num_stages=1, SCALE_UE8M0=ue8m0)
        if tma:
            extra["storage"] = base.contiguous()
    else:
        k._per_token_group_quant_8bit[(M,)](
            x, x_q, x_s, g, g, 1e-10,
            bit8_min=fmin, bit8_max=fmax, BLOCK=BLOCK, num_warps=num_warps, num_stages=1)
    return x_q, x_s.contiguous(), extra


def deepgemm_run(dg, x, blocks, ue8m0):
    if blocks:
        q, s = dg.per_block_cast_to_fp8(x, use_ue8m0=ue8m0)
        return q, s, {}
    q, s = dg.per_token_cast_to_fp8(x, use_ue8m0=ue8m0)
    extra = {}
    if ue8m0 and (x.shape[1] // 128) % 4 == 0:  # pack_ue8m0_to_int needs groups % 4 == 0
        _, p = dg.per_token_cast_to_fp8(x, use_ue8m0=True, use_packed_ue8m0=True)
        extra["packed"] = p
    return q, s, extra


def te_run(te, x, blocks, pow2):
    import torch
    if blocks:
        return te._quantize_square_block_tiling(x, torch.float8_e4m3fn, 128, return_transpose=False, pow_2_scales=pow2, eps=0.0) + ({},)
    return te._quantize_vectorwise_reference(x, torch.float8_e4m3fn, 128, pow_2_scales=pow2, eps=0.0) + ({},)


def to_bx(name, t):
    import torch
    t = t.detach().contiguous().cpu()
    if t.dtype in (torch.float8_e4m3fn, torch.float8_e5m2, torch.uint8):
        return bxio.Tensor(name, "U8", list(t.shape), t.view(torch.uint8).numpy().tobytes())
    if t.dtype == torch.int32:
        return bxio.Tensor(name, "I32", list(t.shape), t.numpy().tobytes())
    return bxio.Tensor(name, "F32", list(t.shape), t.float().numpy().tobytes())


def write(out, fname, tensors, meta):
    path = os.path.join(out, fname + ".safetensors")
    bxio.write_safetensors(path, tensors)
    # bxio writes no metadata: add it by rewriting the header.
    raw = open(path, "rb").read()
    import struct
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    header["__metadata__"] = {k: str(v) for k, v in meta.items()}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + raw[8 + n:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--inputs", default=os.path.join(HERE, "inputs.safetensors"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--vllm-file", default=os.path.join(HERE, "vllm_fp8_utils_excerpt.py"))
    ap.add_argument("--sglang-file", default=os.path.join(HERE, "sglang_fp8_kernel_excerpt.py"))
    ap.add_argument("--deepgemm-file", default=os.path.join(HERE, "deepgemm_math.py"))
    ap.add_argument("--te-file", default=os.path.join(HERE, "te_reference_excerpt.py"))
    a = ap.parse_args()
    import torch
    os.makedirs(a.out, exist_ok=True)
    inputs = bxio.read_safetensors(a.inputs)
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    versions = {"torch": torch.__version__}
    try:
        import triton
        versions["triton"] = triton.__version__
    except Exception as e:  # noqa: BLE001
        versions["triton"] = "unavailable: %s" % e
    if torch.cuda.is_available():
        versions["gpu"] = torch.cuda.get_device_name()
    mods = {}
    for key, loader in [
        ("vllm", lambda: load_kernels(a.vllm_file, ["_per_token_group_quant_fp8", "_per_token_group_quant_fp8_colmajor"])),
        ("sglang", lambda: load_kernels(a.sglang_file, ["_per_token_group_quant_8bit", "_per_token_group_quant_8bit_colmajor"])),
        ("deepgemm", lambda: load_module(a.deepgemm_file, "deepgemm_math")),
        ("te", lambda: load_module(a.te_file, "te_reference_excerpt")),
    ]:
        try:
            mods[key] = loader()
        except Exception:  # noqa: BLE001
            mods[key] = traceback.format_exc()
    # (file stem, module key, recipe, granularity, triton-only, runner)
    jobs = [
        ("vllm-triton.row", "vllm", "vllm-triton", "1x128", True, lambda m, x: vllm_run(m, x, 128, False, False)),
        ("vllm-triton.col", "vllm", "vllm-triton", "1x128", True, lambda m, x: vllm_run(m, x, 128, True, False)),
        ("vllm-triton-ue8m0.row", "vllm", "vllm-triton-ue8m0", "1x128", True, lambda m, x: vllm_run(m, x, 128, False, True)),
        ("vllm-triton-ue8m0.col", "vllm", "vllm-triton-ue8m0", "1x128", True, lambda m, x: vllm_run(m, x, 128, True, True)),
        ("sglang-triton.row", "sglang", "sglang-triton", "1x128", True, lambda m, x: sglang_run(m, x, 128, False, False, False)),
        ("sglang-triton-colmajor.col", "sglang", "sglang-triton-colmajor", "1x128", True, lambda m, x: sglang_run(m, x, 128, True, False, False)),
        ("sglang-triton-colmajor.tma", "sglang", "sglang-triton-colmajor", "1x128", True, lambda m, x: sglang_run(m, x, 128, True, False, True)),
        ("sglang-triton-ue8m0.tma", "sglang", "sglang-triton-ue8m0", "1x128", True, lambda m, x: sglang_run(m, x, 128, True, True, True)),
        ("deepgemm.token", "deepgemm", "deepgemm", "1x128", False, lambda m, x: deepgemm_run(m, x, False, False)),
        ("deepgemm-ue8m0.token", "deepgemm", "deepgemm-ue8m0", "1x128", False, lambda m, x: deepgemm_run(m, x, False, True)),
        ("deepgemm.block", "deepgemm", "deepgemm", "128x128", False, lambda m, x: deepgemm_run(m, x, True, False)),
        ("deepgemm-ue8m0.block", "deepgemm", "deepgemm-ue8m0", "128x128", False, lambda m, x: deepgemm_run(m, x, True, True)),
        ("te.vector", "te", "te", "1x128", False, lambda m, x: te_run(m, x, False, False)),
        ("te-pow2.vector", "te", "te-pow2", "1x128", False, lambda m, x: te_run(m, x, False, True)),
        ("te.block", "te", "te", "128x128", False, lambda m, x: te_run(m, x, True, False)),
        ("te-pow2.block", "te", "te-pow2", "128x128", False, lambda m, x: te_run(m, x, True, True)),
    ]
    for stem, key, recipe, gran, gpu_only, fn in jobs:
        for dev in devices:
            if gpu_only and dev != "cuda":
                continue
            meta = dict(versions, recipe=recipe, granularity=gran, device=dev, job=stem)
            mod = mods[key]
            tensors = {}
            try:
                if isinstance(mod, str):
                    raise RuntimeError("loading %s failed:\n%s" % (key, mod))
                for case, t in sorted(inputs.items()):
                    x = t.torch(dev)
                    q, s, extra = fn(mod, x)
                    if dev == "cuda":
                        torch.cuda.synchronize()
                    tensors[case + ".q"] = to_bx(case + ".q", q)
                    tensors[case + ".s"] = to_bx(case + ".s", s)
                    for k2, v in extra.items():
                        tensors[case + "." + k2] = to_bx(case + "." + k2, v)
            except Exception:  # noqa: BLE001
                meta["error"] = traceback.format_exc()[-2000:]
                tensors = {}
                print("FAILED %s on %s:\n%s" % (stem, dev, meta["error"]), flush=True)
            write(a.out, "%s.%s" % (stem, dev), tensors, meta)
            print("wrote %s.%s%s" % (stem, dev, " (error)" if "error" in meta else ""), flush=True)


if __name__ == "__main__":
    main()
