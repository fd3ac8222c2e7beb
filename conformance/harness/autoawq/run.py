#!/usr/bin/env python3
"""bitexact harness for AutoAWQ's quantizer and GEMM packer, run as AutoAWQ
itself runs them.

Reads a suite exported by `bitexact export --suite awq-quantize --out DIR`,
and for every task runs, on the task's fp16 weight (W [IC, OC], the
transpose of nn.Linear.weight), exactly what AutoAWQ's AwqQuantizer._apply_quant
does for version "gemm":

    linear.weight.data, scales, zeros = quantizer.pseudo_quantize_tensor(linear.weight.data)
    q = WQLinear_GEMM.from_linear(linear, 4, G, scales=scales.t().contiguous(),
                                  zeros=zeros.t().contiguous())

and writes q.qweight, q.qzeros and q.scales as a results directory that
`bitexact certify --suite awq-quantize --results OUT` reads:

    python3 run.py --autoawq CHECKOUT --export DIR --out OUT --device cpu|cuda [--profile P]

CHECKOUT is a checkout of casper-hansen/AutoAWQ (the records were made at
commit 88e4c76). Its code is loaded from the checkout, never copied: the
package is imported if it can be; where its import fails (AutoAWQ 0.2.9
imports its model zoo, which needs the transformers 4.x it was written
for), awq/modules/linear/gemm.py is imported as a module with the awq
package's __init__ files skipped, and AwqQuantizer.pseudo_quantize_tensor
is taken from awq/quantize/quantizer.py as written (its source text,
compiled on its own). results.json's platform field says which was used.

--device cpu hides the GPUs before torch is imported, so that AutoAWQ's
get_best_device() (where from_linear packs the zero points) is the CPU too.
"""
import argparse
import ast
import importlib
import os
import subprocess
import sys
import textwrap
import types

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import bxio  # noqa: E402  conformance/harness/bxio.py


def load_autoawq(src):
    sys.path.insert(0, src)
    try:
        from awq.quantize.quantizer import AwqQuantizer
        from awq.modules.linear.gemm import WQLinear_GEMM
        return AwqQuantizer.pseudo_quantize_tensor, WQLinear_GEMM, "package import"
    except Exception as ex:  # noqa: BLE001 - any import failure falls back
        why = f"{type(ex).__name__}: {ex}".splitlines()[0][:160]
    for k in list(sys.modules):
        if k == "awq" or k.startswith("awq."):
            del sys.modules[k]
    for name in ["awq", "awq.modules", "awq.modules.linear", "awq.utils", "awq.quantize"]:
        m = types.ModuleType(name)
        m.__path__ = [os.path.join(src, *name.split("."))]
        sys.modules[name] = m
    gemm = importlib.import_module("awq.modules.linear.gemm")
    path = os.path.join(src, "awq", "quantize", "quantizer.py")
    text = open(path).read()
    fn = None
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ClassDef) and node.name == "AwqQuantizer":
            for f in node.body:
                if isinstance(f, ast.FunctionDef) and f.name == "pseudo_quantize_tensor":
                    ns = {"torch": torch}
                    exec(compile(textwrap.dedent(ast.get_source_segment(text, f)), path, "exec"), ns)
                    fn = ns["pseudo_quantize_tensor"]
    if fn is None:
        sys.exit(f"{path}: AwqQuantizer.pseudo_quantize_tensor not found")
    return fn, gemm.WQLinear_GEMM, f"source files (package import failed: {why})"


def git_commit(src):
    """The checkout's commit: AUTOAWQ_COMMIT if set (for a copy without
    .git), else git's HEAD of src when src is the top of its own work tree
    (not a folder inside some other repository)."""
    if os.environ.get("AUTOAWQ_COMMIT"):
        return os.environ["AUTOAWQ_COMMIT"]
    try:
        git = lambda *a: subprocess.run(["git", "-C", src, *a], capture_output=True, text=True, check=True).stdout.strip()
        if os.path.realpath(git("rev-parse", "--show-toplevel")) == os.path.realpath(src):
            return git("rev-parse", "HEAD")
    except Exception:  # noqa: BLE001
        pass
    return "unknown commit"


class Quantizer:
    """The attributes pseudo_quantize_tensor reads (AwqQuantizer.__init__
    needs a model and calibration data, which quantizing one weight does not)."""

    def __init__(self, group):
        self.w_bit, self.group_size, self.zero_point = 4, group, True


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--autoawq", required=True, help="AutoAWQ checkout")
    ap.add_argument("--export", required=True, help="bitexact export directory (suite awq-quantize)")
    ap.add_argument("--out", required=True, help="results directory to write (must not exist)")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cuda")
    ap.add_argument("--profile", help="profile to claim in results.json")
    a = ap.parse_args()
    if a.device == "cpu":
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
    global torch
    import torch

    pseudo_quantize, WQLinear_GEMM, mode = load_autoawq(os.path.abspath(a.autoawq))
    exp = bxio.Export(a.export)
    if exp.op != "awq.quantize":
        sys.exit(f"{a.export}: suite {exp.suite} is op {exp.op}, want awq.quantize")
    dev = torch.device(a.device)
    if a.device == "cuda":
        plat = f"{torch.cuda.get_device_name()}, torch {torch.__version__}, CUDA {torch.version.cuda}"
    else:
        import platform
        plat = f"CPU {platform.machine()}, torch {torch.__version__}"
    impl = f"AutoAWQ {git_commit(a.autoawq)} pseudo_quantize_tensor + WQLinear_GEMM.from_linear"
    with bxio.Results(a.out, exp, implementation=impl, platform=f"{plat}; AutoAWQ loaded by {mode}", profile=a.profile) as res:
        for t in exp.tasks:
            g = int(t.params.get("group", "128"))
            w = t.torch("w")  # [IC, OC] fp16
            ic, oc = w.shape
            lin = torch.nn.Linear(ic, oc, bias=False, dtype=torch.float16, device=dev)
            lin.weight.data = w.t().contiguous().to(dev)
            qz = Quantizer(g)
            lin.weight.data, scales, zeros = pseudo_quantize(qz, lin.weight.data)
            q = WQLinear_GEMM.from_linear(linear=lin, w_bit=4, group_size=g, init_only=False,
                                          scales=scales.t().contiguous(), zeros=zeros.t().contiguous())
            res.write(t, {"qweight": q.qweight, "qzeros": q.qzeros, "scales": q.scales})
            print(f"{t.name}: IC={ic} OC={oc} G={g} qweight {tuple(q.qweight.shape)}", flush=True)
    print("wrote", a.out, "-", plat)


if __name__ == "__main__":
    main()
