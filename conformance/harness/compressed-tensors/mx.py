#!/usr/bin/env python3
"""bitexact harness for compressed-tensors' MXFP4 weight path
(vllm-project/compressed-tensors), run as llm-compressor drives it.

For a weight w [M, K] (the task's x, in the dtype the suite gives:
float32, bfloat16 or float16, on the device) and the preset scheme
MXFP4A16 (4-bit float weights, group 32, uint8 E8M0 scales):

    args = preset_name_to_scheme("MXFP4A16", ["Linear"]).weights
    g = w.reshape(M, K // 32, 32)
    mn, mx = torch.amin(g, dim=-1), torch.amax(g, dim=-1)   # the min-max observer's reduction
    scale, zp = calculate_qparams(mn, mx, args)
    sd = MXFP4PackedCompressor.compress({"weight": w, "weight_scale": scale,
                                         "weight_zero_point": zp}, scheme)
    packed, scales = sd["weight_packed"], sd["weight_scale"]

(mxfp4, mxfp4-from-bf16, mxfp4-from-fp16). For e8m0-scale the scale of a
float32 block [amax, 0 x 31] through the same calls. The observer's
reduction (per-group amin and amax, as llm-compressor's MinMax observer
computes for strategy "group") is the only line not taken from
compressed-tensors.

    python3 mx.py --src CT_TREE --commit SHA --export-root EXPORTS --out OUT [--devices cpu,cuda]

CT_TREE is compressed-tensors' src/ folder. The package is imported whole
(it needs pydantic and transformers); where loguru is missing a module
with a no-op logger stands in (logging only). If the import fails the
harness writes the error to OUT/log.json and nothing else.
"""
import argparse
import json
import os
import sys
import traceback
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import bxio  # noqa: E402

QUANT_SUITES = ["mxfp4", "mxfp4-from-bf16", "mxfp4-from-fp16"]


class _NoLog:
    def __getattr__(self, name):
        return lambda *a, **k: self


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", required=True)
    ap.add_argument("--commit", required=True)
    ap.add_argument("--export-root", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--devices", default="cpu,cuda")
    a = ap.parse_args()
    import torch
    os.makedirs(a.out, exist_ok=True)
    log = {"compressed-tensors": a.commit, "torch": torch.__version__, "runs": [], "skipped": []}
    sys.path.insert(0, os.path.abspath(a.src))
    try:
        import loguru  # noqa: F401
    except ImportError:
        m = types.ModuleType("loguru")
        m.logger = _NoLog()
        sys.modules["loguru"] = m
        log["loguru"] = "stand-in (no-op logger)"
    try:
        from compressed_tensors.compressors.mxfp4.base import MXFP4PackedCompressor
        from compressed_tensors.quantization import preset_name_to_scheme
        from compressed_tensors.quantization.utils.helpers import calculate_qparams
    except Exception as ex:  # noqa: BLE001
        log["import_error"] = "".join(traceback.format_exception_only(type(ex), ex)).strip()
        print("compressed-tensors import failed:", log["import_error"], flush=True)
        with open(os.path.join(a.out, "log.json"), "w") as f:
            json.dump(log, f, indent=1)
        return
    scheme = preset_name_to_scheme("MXFP4A16", ["Linear"])
    args = scheme.weights
    ident = "compressed-tensors %s" % a.commit[:12]

    def compress(w):
        m, k = w.shape
        g = w.reshape(m, k // 32, 32)
        mn, mx = torch.amin(g, dim=-1), torch.amax(g, dim=-1)
        scale, zp = calculate_qparams(mn, mx, args)
        sd = MXFP4PackedCompressor.compress({"weight": w, "weight_scale": scale, "weight_zero_point": zp}, scheme)
        return sd["weight_packed"], sd["weight_scale"]

    def quant(task, dev):
        x = task.torch("x", device=dev)
        m, k = x.shape
        p, s = compress(x)
        return {"packed": p.view(torch.uint8).reshape(m, k // 2), "scales": s.view(torch.uint8).reshape(m, k // 32)}

    def shared(task, dev):
        amax = task.torch("amax", device=dev)
        blk = torch.zeros(amax.shape[0], 32, dtype=torch.float32, device=dev)
        blk[:, 0] = amax
        _, s = compress(blk)
        return {"scale": s.view(torch.uint8).reshape(amax.shape)}

    def platform_of(device):
        import platform
        if device == "cuda":
            return "%s, torch %s, CUDA %s" % (torch.cuda.get_device_name(), torch.__version__, torch.version.cuda)
        return "CPU %s, torch %s" % (platform.machine(), torch.__version__)

    def run(suite, device, fn, what):
        exp = bxio.Export(os.path.join(a.export_root, suite))
        out = os.path.join(a.out, suite, device)
        try:
            with bxio.Results(out, exp, implementation="%s %s" % (ident, what), platform=platform_of(device)) as res:
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
            run(suite, device, quant, "MXFP4A16: calculate_qparams + MXFP4PackedCompressor.compress")
        run("e8m0-scale", device, shared, "MXFP4A16 scale of [amax, 0 x 31]")
    with open(os.path.join(a.out, "log.json"), "w") as f:
        json.dump(log, f, indent=1)


if __name__ == "__main__":
    main()
