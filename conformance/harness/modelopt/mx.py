#!/usr/bin/env python3
"""bitexact harness for NVIDIA Model-Optimizer's MXFP4 tensor (MXFP4QTensor
in modelopt/torch/quantization/qtensor/mxfp4_tensor.py), run as ModelOpt
runs it.

  mxfp4, mxfp4-from-bf16, mxfp4-from-fp16 (op mxfp4.quantize):
      qt, scale = MXFP4QTensor.quantize(x, 32) on x as the suite gives it
      (float32, bfloat16 or float16, on the device); packed is
      qt._quantized_data, scales the returned uint8 E8M0 codes;
  e8m0-scale: the scale MXFP4QTensor.quantize returns for a float32 block
      [amax, 0 x 31];
  mxfp4-dequantize: MXFP4QTensor([M, K], float32, packed).dequantize(
      dtype=float32, scale=scales, block_sizes={-1: 32}).

    python3 mx.py --src MODELOPT_TREE --commit SHA --export-root EXPORTS --out OUT [--devices cpu,cuda]

MODELOPT_TREE holds modelopt/torch/quantization/qtensor/mxfp4_tensor.py and
base_qtensor.py from NVIDIA/Model-Optimizer. ModelOpt's package imports
need its whole dependency set; mxfp4_tensor.py needs only its base class,
whose import (base_qtensor.py) pulls in FSDP and ModelOpt's quantization
utilities. The harness registers the modelopt packages as empty ones with
the tree as __path__, and a module base_qtensor holding a class
BaseQuantizedTensor built from base_qtensor.py's own __init__ (its source
text, compiled on its own: it stores shape and dtype in metadata and the
data in _quantized_data), then imports mxfp4_tensor.py unmodified.
"""
import argparse
import ast
import json
import os
import sys
import textwrap
import traceback
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import bxio  # noqa: E402

QUANT_SUITES = ["mxfp4", "mxfp4-from-bf16", "mxfp4-from-fp16"]


def load_modelopt(src, torch):
    pkgs = ["modelopt", "modelopt.torch", "modelopt.torch.quantization", "modelopt.torch.quantization.qtensor"]
    for name in pkgs:
        m = types.ModuleType(name)
        m.__path__ = [os.path.join(src, *name.split("."))]
        sys.modules[name] = m
    path = os.path.join(src, "modelopt", "torch", "quantization", "qtensor", "base_qtensor.py")
    text = open(path).read()
    init = None
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ClassDef) and node.name == "BaseQuantizedTensor":
            for f in node.body:
                if isinstance(f, ast.FunctionDef) and f.name == "__init__":
                    ns = {"torch": torch}
                    exec(compile(textwrap.dedent(ast.get_source_segment(text, f)), path, "exec"), ns)
                    init = ns["__init__"]
    if init is None:
        sys.exit("%s: BaseQuantizedTensor.__init__ not found" % path)
    base = types.ModuleType("modelopt.torch.quantization.qtensor.base_qtensor")
    base.BaseQuantizedTensor = type("BaseQuantizedTensor", (), {"__init__": init})
    sys.modules[base.__name__] = base
    import importlib
    return importlib.import_module("modelopt.torch.quantization.qtensor.mxfp4_tensor").MXFP4QTensor


def platform_of(torch, device):
    import platform
    if device == "cuda":
        return "%s, torch %s, CUDA %s" % (torch.cuda.get_device_name(), torch.__version__, torch.version.cuda)
    cpu = platform.machine()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu += " (%s)" % line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return "CPU %s, torch %s" % (cpu, torch.__version__)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", required=True)
    ap.add_argument("--commit", required=True)
    ap.add_argument("--export-root", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--devices", default="cpu,cuda")
    a = ap.parse_args()
    import torch
    Q = load_modelopt(os.path.abspath(a.src), torch)
    ident = "ModelOpt %s" % a.commit[:12]
    log = {"modelopt": a.commit, "torch": torch.__version__, "runs": [], "skipped": []}

    def quant(task, dev):
        x = task.torch("x", device=dev)
        qt, scale = Q.quantize(x, 32)
        m, k = x.shape
        return {"packed": qt._quantized_data.reshape(m, k // 2), "scales": scale.reshape(m, k // 32)}

    def shared(task, dev):
        amax = task.torch("amax", device=dev)
        blk = torch.zeros(amax.shape[0], 32, dtype=torch.float32, device=dev)
        blk[:, 0] = amax
        _, scale = Q.quantize(blk, 32)
        return {"scale": scale.reshape(amax.shape)}

    def deq(task, dev):
        packed = task.torch("packed", device=dev)
        scales = task.torch("scales", device=dev)
        m, k = packed.shape[0], packed.shape[1] * 2
        qt = Q(torch.Size([m, k]), torch.float32, packed)
        return {"y": qt.dequantize(dtype=torch.float32, scale=scales, block_sizes={-1: 32})}

    def run(suite, device, fn, what):
        exp = bxio.Export(os.path.join(a.export_root, suite))
        out = os.path.join(a.out, suite, device)
        try:
            with bxio.Results(out, exp, implementation="%s %s" % (ident, what), platform=platform_of(torch, device)) as res:
                for task in exp.tasks:
                    res.write(task, fn(task, device))
            log["runs"].append(out)
            print("wrote", out, flush=True)
        except Exception as ex:  # noqa: BLE001
            msg = "".join(traceback.format_exception_only(type(ex), ex)).strip()
            log["skipped"].append({"suite": suite, "device": device, "error": msg})
            print("SKIP", suite, device, msg, flush=True)

    devices = [d for d in a.devices.split(",") if d and (d != "cuda" or torch.cuda.is_available())]
    for device in devices:
        for suite in QUANT_SUITES:
            run(suite, device, quant, "MXFP4QTensor.quantize(x, 32)")
        run("e8m0-scale", device, shared, "MXFP4QTensor.quantize scale of [amax, 0 x 31]")
        run("mxfp4-dequantize", device, deq, "MXFP4QTensor.dequantize(float32, scale, block_sizes={-1: 32})")
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "log.json"), "w") as f:
        json.dump(log, f, indent=1)


if __name__ == "__main__":
    main()
