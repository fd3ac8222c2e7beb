#!/usr/bin/env python3
"""bitexact harness for torchao's MX (MXFP4) quantizer and dequantizer, run
as torchao runs them.

For each suite exported by `bitexact export --suite S --out DIR` it calls
torchao's own functions from a source tree you point at (pytorch/ao at a
pinned tag or commit; nothing of torchao is in this repository):

  mxfp4, mxfp4-from-bf16, mxfp4-from-fp16 (op mxfp4.quantize):
      scale, packed = to_mx(x, torch.float4_e2m1fn_x2, 32, mode)
      (torchao/prototype/mx_formats/mx_tensor.py), once per
      ScaleCalculationMode FLOOR, CEIL, EVEN, RCEIL, on x as the suite gives
      it (float32, bfloat16 or float16: to_mx asserts float32 or bfloat16,
      so the float16 suite is recorded as not implemented);
  e8m0-scale (op e8m0.shared_scale): the scale to_mx computes for a block
      whose first element is the task's amax and whose other 31 are +0
      (the block's max(|x|) is then |amax|, NaN for a NaN amax);
  mxfp4-dequantize: to_dtype(packed, scales.view(float8_e8m0fnu),
      torch.float4_e2m1fn_x2, 32, torch.float32), the function
      MXTensor.dequantize calls.

    python3 mx.py --src TORCHAO_TREE --version v0.17.0 --commit SHA \
        --export-root EXPORTS --out OUT [--devices cpu,cuda] [--suites ...]

EXPORTS holds one export folder per suite (EXPORTS/mxfp4, ...); OUT gets
OUT/<suite>/<mode>/<device>/ (a results folder, see bxio.py) per run, and
OUT/log.json with what did not run and why.

torchao's package __init__ files import its whole quantization API (and
its C++ extension); the harness registers torchao, torchao.prototype,
torchao.prototype.mx_formats and torchao.quantization as empty packages
whose __path__ is the source tree, so that importing
torchao.prototype.mx_formats.mx_tensor runs that module and the modules it
imports (config, constants, kernels, utils, torchao/utils.py,
custom_fp_utils, quantize_.common) from the tree, unmodified, and nothing
else.
"""
import argparse
import json
import os
import platform
import sys
import traceback
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
import bxio  # noqa: E402

QUANT_SUITES = ["mxfp4", "mxfp4-from-bf16", "mxfp4-from-fp16"]
MODES = ["FLOOR", "CEIL", "EVEN", "RCEIL"]


def load_torchao(src):
    """Imports mx_tensor from the tree src with the heavy package __init__
    files skipped (see the module doc)."""
    sys.path.insert(0, src)
    for name in ["torchao", "torchao.prototype", "torchao.prototype.mx_formats", "torchao.quantization"]:
        m = types.ModuleType(name)
        m.__path__ = [os.path.join(src, *name.split("."))]
        sys.modules[name] = m
    import importlib
    try:
        mx = importlib.import_module("torchao.prototype.mx_formats.mx_tensor")
        how = "module files (package __init__ files skipped)"
    except Exception as ex:  # noqa: BLE001 - fall back to the whole package
        why = ("%s: %s" % (type(ex).__name__, ex)).splitlines()[0][:160]
        for k in list(sys.modules):
            if k == "torchao" or k.startswith("torchao."):
                del sys.modules[k]
        mx = importlib.import_module("torchao.prototype.mx_formats.mx_tensor")
        how = "package import (module files failed: %s)" % why
    cfg = importlib.import_module("torchao.prototype.mx_formats.config")
    return mx, cfg, how


def platform_of(torch, device):
    if device == "cuda":
        return "%s, torch %s, CUDA %s" % (torch.cuda.get_device_name(), torch.__version__, torch.version.cuda)
    cpu = platform.processor() or platform.machine()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return "CPU %s (%s), torch %s" % (platform.machine(), cpu, torch.__version__)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", required=True, help="torchao source tree (the folder holding torchao/)")
    ap.add_argument("--version", required=True, help="tag or branch the tree is, e.g. v0.17.0 or main")
    ap.add_argument("--commit", required=True, help="the tree's commit")
    ap.add_argument("--export-root", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--devices", default="cpu,cuda")
    ap.add_argument("--suites", default=",".join(QUANT_SUITES + ["e8m0-scale", "mxfp4-dequantize"]))
    a = ap.parse_args()
    import torch
    mx, cfg, how = load_torchao(os.path.abspath(a.src))
    devices = [d for d in a.devices.split(",") if d and (d != "cuda" or torch.cuda.is_available())]
    log = {"torchao": a.version, "commit": a.commit, "torch": torch.__version__, "runs": [], "skipped": [], "loaded_by": how}
    ident = "torchao %s (pytorch/ao %s)" % (a.version, a.commit[:12])

    def run(suite, mode, device, fn, what):
        exp = bxio.Export(os.path.join(a.export_root, suite))
        out = os.path.join(a.out, suite, mode.lower(), device)
        try:
            with bxio.Results(out, exp, implementation="%s %s" % (ident, what),
                              platform=platform_of(torch, device)) as res:
                for task in exp.tasks:
                    res.write(task, fn(task, device))
            log["runs"].append(out)
            print("wrote", out, flush=True)
        except Exception as ex:  # noqa: BLE001 - record and go on
            msg = "".join(traceback.format_exception_only(type(ex), ex)).strip()
            log["skipped"].append({"suite": suite, "mode": mode, "device": device, "error": msg})
            print("SKIP", suite, mode, device, msg, flush=True)

    suites = a.suites.split(",")
    for device in devices:
        for mode in MODES:
            m = getattr(cfg.ScaleCalculationMode, mode)

            def quant(task, dev, m=m):
                x = task.torch("x", device=dev)
                scale, packed = mx.to_mx(x, torch.float4_e2m1fn_x2, 32, m)
                return {"packed": packed.view(torch.uint8), "scales": scale.view(torch.uint8)}

            def shared(task, dev, m=m):
                amax = task.torch("amax", device=dev)
                blk = torch.zeros(amax.shape[0], 32, dtype=torch.float32, device=dev)
                blk[:, 0] = amax
                scale, _ = mx.to_mx(blk, torch.float4_e2m1fn_x2, 32, m)
                return {"scale": scale.view(torch.uint8).reshape(amax.shape)}

            for suite in suites:
                if suite in QUANT_SUITES:
                    run(suite, mode, device, quant, "to_mx(x, float4_e2m1fn_x2, 32, ScaleCalculationMode.%s)" % mode)
                elif suite == "e8m0-scale":
                    run(suite, mode, device, shared, "to_mx scale of [amax, 0 x 31], ScaleCalculationMode.%s" % mode)

        def deq(task, dev):
            packed = task.torch("packed", device=dev)
            scales = task.torch("scales", device=dev).view(torch.float8_e8m0fnu)
            y = mx.to_dtype(packed, scales, torch.float4_e2m1fn_x2, 32, torch.float32)
            return {"y": y.reshape(packed.shape[0], packed.shape[1] * 2)}

        if "mxfp4-dequantize" in suites:
            run("mxfp4-dequantize", "default", device, deq, "to_dtype(packed, scales, float4_e2m1fn_x2, 32, float32)")
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "log.json"), "w") as f:
        json.dump(log, f, indent=1)


if __name__ == "__main__":
    main()
