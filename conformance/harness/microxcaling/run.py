#!/usr/bin/env python3
"""bitexact harness for microsoft/microxcaling's MX emulation (the OCP MX
reference library), run as it runs.

microxcaling quantizes in place ("fake quantization"): quantize_mx_op(A,
specs, "fp4_e2m1", block_size=32, axes=[-1], round=R) returns A's values
after MXFP4 quantization and dequantization, in A's dtype. For the
mxfp4.quantize suites (mxfp4, mxfp4-from-bf16, mxfp4-from-fp16) the harness
calls it on x as the suite gives it (float32, bfloat16 or float16, on the
device), with MxSpecs defaults (scale_bits 8, shared_exp_method "max", no
flush of float32 subnormals, custom_cuda off: the pure-torch path), once
per rounding mode R in nearest, even, floor, and writes codes:

  scales: the block's shared exponent as _quantize_mx computes it, from
      microxcaling's own _shared_exponents(A, "max", axes, ebits=0) minus
      emax 2, NaN above 127 and -127 below -127 (the two clamp lines of
      _quantize_mx, the only lines the harness repeats), biased by 127;
      a NaN exponent is code 0xFF;
  packed: the element values microxcaling chose, read where it computes
      them: _quantize_elemwise_core's return value inside _quantize_mx (the
      harness wraps mx_ops._quantize_elemwise_core, calls the original and
      keeps its output; nothing else changes). A finite value must be an
      E2M1 value (else the harness refuses the task) and is its code, the
      sign from the sign bit (-0 is 0x8). +-Inf (the library's value where
      x / 2**shared_exp overflowed, e.g. an fp16 scale 2**-25 that rounds
      to 0) is sign|0x7: E2M1 has no Inf, and 0x7 is the code OCP MX v1.0
      saturation gives an overflow. NaN, and every element of a block whose
      exponent is NaN (the scale 0xFF), is 0x7: microxcaling has no code
      for NaN, this is the harness's choice. The quantize_mx_op output
      itself (the element value times the library's 2**shared_exp, in x's
      dtype) is not decoded: on CUDA 2**shared_exp is not an exact power of
      two, and an element 4 times 2**126 overflows to Inf in bfloat16, so
      the product does not determine the code. The harness checks instead
      that its capture is the library's: element * 2**shared_exp computed
      by torch on the device equals the returned output bit for bit (NaN
      for NaN); a mismatch is logged per task in log.json.

For e8m0-scale it writes the code the same exponent computation gives for a
block [amax, 0 x 31] (float32). microxcaling has no dequantizer of codes.

    python3 run.py --src MX_TREE --commit SHA --export-root EXPORTS --out OUT [--devices cpu,cuda]

MX_TREE holds microxcaling's mx/ folder; its __init__ (which imports every
layer) is skipped: mx is registered as an empty package whose __path__ is
the tree, so mx.mx_ops, mx.specs, mx.formats and mx.elemwise_ops run from
the tree unmodified.
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
ROUNDS = ["nearest", "even", "floor"]
E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


def load_mx(src):
    m = types.ModuleType("mx")
    m.__path__ = [os.path.join(src, "mx")]
    sys.modules["mx"] = m
    import importlib
    return (importlib.import_module("mx.mx_ops"), importlib.import_module("mx.specs"),
            importlib.import_module("mx.formats"))


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
    mx_ops, specs, formats = load_mx(os.path.abspath(a.src))
    ebits, mbits, emax, max_norm, _ = formats._get_format_params(formats.ElemFormat.from_str("fp4_e2m1"))
    spec = specs.MxSpecs()
    spec["block_size"] = 32
    spec["scale_bits"] = 8
    ident = "microxcaling %s" % a.commit[:12]
    log = {"microxcaling": a.commit, "torch": torch.__version__, "runs": [], "skipped": [], "check": []}

    def shared_exp(blocks):
        # blocks: [..., nblk, 32]; the exponent _quantize_mx computes (see doc).
        se = mx_ops._shared_exponents(blocks, method=spec["shared_exp_method"], axes=[-1], ebits=0)
        se = se - emax
        scale_emax = 2 ** (spec["scale_bits"] - 1) - 1
        se[se > scale_emax] = float("NaN")
        se[se < -scale_emax] = -scale_emax
        return se

    def codes_of_exp(se):
        se32 = se.to(torch.float32)
        c = torch.where(torch.isnan(se32), torch.full_like(se32, 255.0), se32 + 127)
        return c.to(torch.int32).to(torch.uint8)

    captured = []
    core = mx_ops._quantize_elemwise_core

    def capture(*args, **kw):
        out = core(*args, **kw)
        captured.append(out)
        return out

    mx_ops._quantize_elemwise_core = capture

    def quant(task, dev, rnd):
        x = task.torch("x", device=dev)
        m, k = x.shape
        del captured[:]
        y = mx_ops.quantize_mx_op(x, spec, elem_format="fp4_e2m1", block_size=32, axes=[-1], round=rnd)
        if len(captured) != 1:
            raise ValueError("task %s: _quantize_elemwise_core ran %d times" % (task.name, len(captured)))
        e = captured[0].reshape(m, k // 32, 32)  # x's dtype, on the device
        se = shared_exp(x.reshape(m, k // 32, 32))  # [m, k/32, 1]
        sc = codes_of_exp(se).reshape(m, k // 32)
        back = (e * (2 ** se)).reshape(m, k)
        same = (back.view(torch.int16 if back.element_size() == 2 else torch.int32) ==
                y.view(torch.int16 if y.element_size() == 2 else torch.int32)) | (torch.isnan(back) & torch.isnan(y))
        if not bool(same.all()):
            log["check"].append({"task": task.name, "mode": rnd, "device": dev, "suite_dtype": str(x.dtype),
                                 "mismatch": int((~same).sum())})
        q = e.to(torch.float32).cpu()
        nanblk = torch.isnan(se.to(torch.float32)).expand(m, k // 32, 32).cpu()
        mag = q.abs()
        code = torch.full(q.shape, 255, dtype=torch.int32)
        for i, v in enumerate(E2M1):
            code = torch.where(mag == v, torch.full_like(code, i), code)
        code = torch.where(torch.isinf(q), torch.full_like(code, 7), code)
        neg = (q.view(torch.int32) < 0).to(torch.int32) * 8
        code = torch.where(code != 255, code | neg, code)
        nan = torch.isnan(q) | nanblk
        code = torch.where(nan, torch.full_like(code, 7), code)
        if (code == 255).any():
            bad = q[code == 255][:4].tolist()
            raise ValueError("task %s: element values not in E2M1, e.g. %s" % (task.name, bad))
        code = code.reshape(m, k).to(torch.uint8)
        packed = code[:, 0::2] | (code[:, 1::2] << 4)
        return {"packed": packed, "scales": sc}

    def shared(task, dev):
        amax = task.torch("amax", device=dev)
        blk = torch.zeros(amax.shape[0], 1, 32, dtype=torch.float32, device=dev)
        blk[:, 0, 0] = amax
        return {"scale": codes_of_exp(shared_exp(blk)).reshape(amax.shape)}

    def run(suite, mode, device, fn, what):
        exp = bxio.Export(os.path.join(a.export_root, suite))
        out = os.path.join(a.out, suite, mode, device)
        try:
            with bxio.Results(out, exp, implementation="%s %s" % (ident, what), platform=platform_of(torch, device)) as res:
                for task in exp.tasks:
                    res.write(task, fn(task, device))
            log["runs"].append(out)
            print("wrote", out, flush=True)
        except Exception as ex:  # noqa: BLE001
            msg = "".join(traceback.format_exception_only(type(ex), ex)).strip()
            log["skipped"].append({"suite": suite, "mode": mode, "device": device, "error": msg})
            print("SKIP", suite, mode, device, msg, flush=True)

    devices = [d for d in a.devices.split(",") if d and (d != "cuda" or torch.cuda.is_available())]
    for device in devices:
        for rnd in ROUNDS:
            for suite in QUANT_SUITES:
                run(suite, rnd, device, lambda t, d, r=rnd: quant(t, d, r),
                    "quantize_mx_op(x, fp4_e2m1, block 32, round=%s), element values captured from _quantize_elemwise_core" % rnd)
        run("e8m0-scale", "default", device, shared, "_shared_exponents scale of [amax, 0 x 31]")
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "log.json"), "w") as f:
        json.dump(log, f, indent=1)


if __name__ == "__main__":
    main()
