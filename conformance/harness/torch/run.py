#!/usr/bin/env python3
"""Example bitexact vendor harness in PyTorch.

Reads a suite exported by `bitexact export --suite SUITE --out DIR`, runs a
torch implementation of the suite's op on every task's inputs, and writes a
results directory that `bitexact certify --suite SUITE --results OUT` reads.

    python3 run.py --export DIR --out OUT [--device cuda|cpu] [--profile NAME]

Implementations (what a torch user would write; none is tuned to pass):
  e4m3, e5m2, fp8  x.to(torch.float8_e4m3fn / float8_e5m2), bits viewed as uint8
  e8m0             x.to(torch.float8_e8m0fnu)
  bf16, fp16       x.to(torch.bfloat16 / torch.float16)
  e2m1             plain torch: compare |x| with the E2M1 midpoints, ties to even
  nvfp4            plain torch NVFP4 quantize: g = 2688/amax, block scale
                   ((amax_b/6)*g).to(float8_e4m3fn), q = x / (s/g), E2M1 as above,
                   two codes per byte with element 2i in the low nibble

The results directory holds results.json and one <task>.safetensors per task
(see docs/vendor.md). Tensors are written with safetensors.torch.save_file.
"""
import argparse
import json
import os
import sys

import torch
from safetensors.torch import load_file, save_file

# E2M1 magnitude midpoints between codes m and m+1, and whether an exact tie
# goes up (to the even code m+1) or stays (m is even).
E2M1_MID = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0]
E2M1_TIE_UP = [False, True, False, True, False, True, False]


def e2m1_codes(q):
    """float32 tensor -> E2M1 codes (uint8, one per element), ties to even,
    saturating at 6, sign from the sign bit. NaN compares false everywhere
    and so gets magnitude 0 with its sign (an implementation choice this
    harness does not special-case)."""
    a = q.abs()
    mag = torch.zeros_like(q, dtype=torch.uint8)
    for m, up in zip(E2M1_MID, E2M1_TIE_UP):
        mag += (a >= m if up else a > m).to(torch.uint8)
    sign = (torch.signbit(q)).to(torch.uint8) << 3
    return mag | sign


def fp8(x, dtype):
    return x.to(dtype).view(torch.uint8)


def nvfp4_quantize(x):
    """Plain torch NVFP4 quantize of x [M, K] (canonical formula order)."""
    fin = torch.isfinite(x)
    amax = torch.where(fin, x.abs(), torch.zeros_like(x)).max()
    g = torch.tensor(2688.0, dtype=torch.float32, device=x.device) / amax
    g = torch.where(torch.isinf(g), torch.tensor(torch.finfo(torch.float32).max, device=x.device), g)
    m, k = x.shape
    xb = x.reshape(m, k // 16, 16)
    b = torch.nan_to_num(xb.abs(), nan=0.0, posinf=float("inf")).amax(dim=-1)
    t = (b / 6.0) * g
    sc = t.to(torch.float8_e4m3fn)
    s = sc.to(torch.float32)
    d = (s / g).unsqueeze(-1)
    q = torch.where(d == 0, xb * 0, xb / d).reshape(m, k)
    c = e2m1_codes(q).reshape(m, k // 2, 2)
    packed = c[..., 0] | (c[..., 1] << 4)
    return {"packed": packed.contiguous(), "scales": sc.view(torch.uint8).contiguous(), "global": g.reshape(1).to(torch.float32)}


def run_task(suite, task, inputs, device):
    x = inputs["x"].to(device)
    params = task.get("params", {})
    if suite in ("e4m3", "e5m2", "fp8"):
        fmt = params.get("format", suite)
        dt = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}[fmt]
        return {"codes": fp8(x, dt)}
    if suite == "e8m0":
        return {"codes": fp8(x, torch.float8_e8m0fnu)}
    if suite == "bf16":
        return {"y": x.to(torch.bfloat16)}
    if suite == "fp16":
        return {"y": x.to(torch.float16)}
    if suite == "e2m1":
        return {"codes": e2m1_codes(x)}
    if suite == "nvfp4":
        return nvfp4_quantize(x)
    raise SystemExit(f"run.py: suite {suite!r} has no torch implementation in this harness")


IMPL = {
    "e4m3": "torch {v} x.to(torch.float8_e4m3fn)",
    "e5m2": "torch {v} x.to(torch.float8_e5m2)",
    "fp8": "torch {v} x.to(torch.float8_e4m3fn / float8_e5m2)",
    "e8m0": "torch {v} x.to(torch.float8_e8m0fnu)",
    "bf16": "torch {v} x.to(torch.bfloat16)",
    "fp16": "torch {v} x.to(torch.float16)",
    "e2m1": "torch {v} plain E2M1 thresholds (conformance/harness/torch/run.py)",
    "nvfp4": "torch {v} plain NVFP4 quantize (conformance/harness/torch/run.py)",
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--export", required=True, help="directory written by bitexact export")
    ap.add_argument("--out", required=True, help="results directory to write")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--profile", default="", help="profile the implementation claims (optional)")
    a = ap.parse_args()
    with open(os.path.join(a.export, "suite.json")) as f:
        desc = json.load(f)
    if desc.get("format") != "bitexact-export/1":
        raise SystemExit(f"run.py: {a.export}/suite.json: format {desc.get('format')!r}, want bitexact-export/1")
    suite = desc["suite"]
    os.makedirs(a.out, exist_ok=True)
    tasks = []
    for task in desc["tasks"]:
        inputs = load_file(os.path.join(a.export, task["input_file"]))
        out = run_task(suite, task, inputs, a.device)
        save_file({k: v.cpu().contiguous() for k, v in out.items()}, os.path.join(a.out, task["result_file"]))
        tasks.append(task["name"])
    platform = f"torch {torch.__version__}, device {a.device}"
    if a.device.startswith("cuda"):
        platform += f" ({torch.cuda.get_device_name()}, CUDA {torch.version.cuda})"
    res = {"format": desc["results_format"], "suite": suite, "suite_version": desc["suite_version"],
           "implementation": IMPL[suite].format(v=torch.__version__) + f" on {a.device}",
           "platform": platform, "tasks": tasks}
    if a.profile:
        res["profile"] = a.profile
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(res, f, indent=2)
    print(f"{suite}: wrote {len(tasks)} task(s) to {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
