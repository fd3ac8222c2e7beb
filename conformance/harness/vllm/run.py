#!/usr/bin/env python3
"""bitexact harness for vLLM's triton AWQ dequantization, run from vLLM's
own source file.

Reads a suite exported by `bitexact export --suite awq-dequantize --out DIR`
and runs vLLM's awq_dequantize_triton (vllm/model_executor/layers/
quantization/awq_triton.py, whose awq_dequantize_kernel computes
(iweights - zeros) * scales) on every task's qweight, qzeros and scales,
writing a results directory for `bitexact certify --suite awq-dequantize`:

    python3 run.py --awq-triton FILE --export DIR --out OUT [--profile triton]

FILE is awq_triton.py from a vLLM checkout (the records were made at commit
1e8e860; set VLLM_COMMIT to record it). Only that file is loaded: its one
vLLM import, vllm.triton_utils (which re-exports triton and
triton.language), is provided from the installed triton, so the rest of
vLLM need not be installed. Needs a CUDA GPU and triton.
"""
import argparse
import importlib.util
import os
import sys
import types

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import bxio  # noqa: E402  conformance/harness/bxio.py


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--awq-triton", required=True, help="vllm/model_executor/layers/quantization/awq_triton.py of a vLLM checkout")
    ap.add_argument("--export", required=True, help="bitexact export directory (suite awq-dequantize)")
    ap.add_argument("--out", required=True, help="results directory to write (must not exist)")
    ap.add_argument("--profile", help="profile to claim in results.json")
    a = ap.parse_args()
    import torch
    import triton
    import triton.language as tl

    for name in ["vllm"]:
        sys.modules.setdefault(name, types.ModuleType(name))
    tu = types.ModuleType("vllm.triton_utils")
    tu.triton, tu.tl = triton, tl
    sys.modules["vllm.triton_utils"] = tu
    spec = importlib.util.spec_from_file_location("awq_triton", a.awq_triton)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)

    exp = bxio.Export(a.export)
    if exp.op != "awq.dequantize":
        sys.exit(f"{a.export}: suite {exp.suite} is op {exp.op}, want awq.dequantize")
    platform = f"{torch.cuda.get_device_name()}, triton {triton.__version__}, torch {torch.__version__}, CUDA {torch.version.cuda}"
    impl = f"vLLM {os.environ.get('VLLM_COMMIT', 'unknown')} awq_triton.py awq_dequantize_triton"
    with bxio.Results(a.out, exp, implementation=impl, platform=platform, profile=a.profile) as res:
        for t in exp.tasks:
            qw, qz, sc = (t.torch(k, device="cuda") for k in ("qweight", "qzeros", "scales"))
            w = mod.awq_dequantize_triton(qw, sc, qz)
            torch.cuda.synchronize()
            res.write(t, {"w": w})
            neg0 = int((w.view(torch.int16) == -32768).sum())
            print(f"{t.name}: w {tuple(w.shape)} {w.dtype}, {neg0} elements -0", flush=True)
    print("wrote", a.out, "-", platform)


if __name__ == "__main__":
    main()
