#!/usr/bin/env python3
"""Example bitexact vendor harness in PyTorch, built on bxio.

Reads a suite exported by `bitexact export --suite SUITE --out DIR`, runs a
plain torch implementation of the suite's op on every task's inputs, and
writes a results folder that `bitexact certify --suite SUITE --results OUT`
reads (bxio checks every output's dtype and shape against suite.json).

    python3 run.py --export DIR --out OUT [--device cuda|cpu] [--profile NAME]

Implementations (what a torch user would write; none is tuned to pass):
  e4m3, e5m2, fp8  x.to(torch.float8_e4m3fn / float8_e5m2), bits viewed as uint8
  e8m0             x.to(torch.float8_e8m0fnu)
  bf16, fp16       x.to(torch.bfloat16 / torch.float16)
  e2m1             plain torch: compare |x| with the E2M1 midpoints, ties to even
  nvfp4            plain torch NVFP4 quantize: g = 2688/amax, block scale
                   ((amax_b/6)*g).to(float8_e4m3fn), q = x / (s/g), E2M1 as above,
                   two codes per byte with element 2i in the low nibble
  *-decode         codes.view(torch.float8_e4m3fn / float8_e5m2 / float8_e8m0fnu).to(torch.float32);
                   e2m1: a 16-entry value table indexed by the code
  nvfp4-dequantize e2m1(c) * (scales.view(float8_e4m3fn).float() / global)
  mxfp4-dequantize e2m1(c) * scales.view(float8_e8m0fnu).float()
  q8_1-dequantize  qs.float() * d.view(float16).float()      (block_q8_1: d, s, qs[32])
  ggml-mxfp4-dequantize  kvalues[c] * 2^(e-128), the scale built from bits (block_mxfp4: e, qs[16])

NaN codes reach the float32 outputs of the decoders and dequantizers through
torch's own conversions and multiplies, so their bits are those of the
device: certify them under the op's `nan` convention (see docs/vendor.md).
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import bxio  # noqa: E402  conformance/harness/bxio.py

# E2M1 magnitude midpoints between codes m and m+1, and whether an exact tie
# goes up (to the even code m+1) or stays (m is even).
E2M1_MID = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0]
E2M1_TIE_UP = [False, True, False, True, False, True, False]
E2M1_VALUES = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]
KVALUES_MXFP4 = [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12]


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


def e2m1_values(packed):
    """[M, K/2] uint8, element 2i in the low nibble -> [M, K] float32."""
    table = torch.tensor(E2M1_VALUES, dtype=torch.float32, device=packed.device)
    codes = torch.stack([packed & 0xF, packed >> 4], dim=-1).reshape(packed.shape[0], -1)
    return table[codes.long()]


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


def nvfp4_dequantize(packed, scales, glob):
    """y = e2m1(c) * float32(s / g), s the decoded E4M3 block scale."""
    v = e2m1_values(packed)
    m, k = v.shape
    d = scales.view(torch.float8_e4m3fn).to(torch.float32) / glob
    return (v.reshape(m, k // 16, 16) * d.unsqueeze(-1)).reshape(m, k)


def mxfp4_dequantize(packed, scales):
    """y = e2m1(c) * 2^(e-127), the scale decoded by torch's float8_e8m0fnu."""
    v = e2m1_values(packed)
    m, k = v.shape
    s = scales.view(torch.float8_e8m0fnu).to(torch.float32)
    return (v.reshape(m, k // 32, 32) * s.unsqueeze(-1)).reshape(m, k)


def q8_1_dequantize(blocks):
    """block_q8_1 [N, 36] (fp16 d, fp16 s, int8 qs[32]) -> y = qs * d."""
    d = blocks[:, 0:2].contiguous().view(torch.float16).to(torch.float32)
    qs = blocks[:, 4:36].contiguous().view(torch.int8).to(torch.float32)
    return (qs * d).reshape(-1)


def ggml_mxfp4_dequantize(blocks):
    """block_mxfp4 [N, 17] (E8M0 e, qs[16]: element j in the low nibble of
    qs[j], element j+16 in its high nibble) -> y = kvalues[c] * 2^(e-128),
    the half scale built from bits as ggml's GGML_E8M0_TO_FP32_HALF does."""
    e = blocks[:, 0].to(torch.int32)
    bits = torch.where(e < 2, torch.full_like(e, 0x00200000) << e, (e - 1) << 23)
    d = bits.view(torch.float32)
    qs = blocks[:, 1:17].to(torch.int64)
    codes = torch.cat([qs & 0xF, qs >> 4], dim=1)
    kv = torch.tensor(KVALUES_MXFP4, dtype=torch.float32, device=blocks.device)
    return (kv[codes] * d.unsqueeze(-1)).reshape(-1)


FP8 = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}


def run_task(op, task, device):
    params = task.params
    if op == "fp8.encode":
        return {"codes": fp8(task.torch("x", device), FP8[params.get("format", "e4m3")])}
    if op == "e8m0.encode":
        return {"codes": fp8(task.torch("x", device), torch.float8_e8m0fnu)}
    if op == "bf16.encode":
        return {"y": task.torch("x", device).to(torch.bfloat16)}
    if op == "fp16.encode":
        return {"y": task.torch("x", device).to(torch.float16)}
    if op == "e2m1.encode":
        return {"codes": e2m1_codes(task.torch("x", device))}
    if op == "nvfp4.quantize":
        return nvfp4_quantize(task.torch("x", device))
    if op == "fp8.decode":
        return {"x": task.torch("codes", device).view(FP8[params["format"]]).to(torch.float32)}
    if op == "e8m0.decode":
        return {"x": task.torch("codes", device).view(torch.float8_e8m0fnu).to(torch.float32)}
    if op == "e2m1.decode":
        table = torch.tensor(E2M1_VALUES, dtype=torch.float32, device=device)
        return {"x": table[task.torch("codes", device).long()]}
    if op == "nvfp4.dequantize":
        return {"y": nvfp4_dequantize(task.torch("packed", device), task.torch("scales", device), task.torch("global", device))}
    if op == "mxfp4.dequantize":
        return {"y": mxfp4_dequantize(task.torch("packed", device), task.torch("scales", device))}
    if op == "ggml.q8_1.dequantize":
        return {"y": q8_1_dequantize(task.torch("blocks", device))}
    if op == "ggml.mxfp4.dequantize":
        return {"y": ggml_mxfp4_dequantize(task.torch("blocks", device))}
    raise SystemExit(f"run.py: op {op!r} has no torch implementation in this harness")


IMPL = {
    "fp8.encode": "x.to(torch.float8_e4m3fn / float8_e5m2)",
    "e8m0.encode": "x.to(torch.float8_e8m0fnu)",
    "bf16.encode": "x.to(torch.bfloat16)",
    "fp16.encode": "x.to(torch.float16)",
    "e2m1.encode": "plain E2M1 thresholds",
    "nvfp4.quantize": "plain NVFP4 quantize",
    "fp8.decode": "codes.view(torch.float8_e4m3fn / float8_e5m2).to(torch.float32)",
    "e8m0.decode": "codes.view(torch.float8_e8m0fnu).to(torch.float32)",
    "e2m1.decode": "E2M1 value table indexed by code",
    "nvfp4.dequantize": "plain NVFP4 dequantize e2m1 * (scale.float() / global)",
    "mxfp4.dequantize": "plain MXFP4 dequantize e2m1 * scale.view(float8_e8m0fnu).float()",
    "ggml.q8_1.dequantize": "plain block_q8_1 dequantize qs * d",
    "ggml.mxfp4.dequantize": "plain block_mxfp4 dequantize kvalues * 2^(e-128)",
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--export", required=True, help="directory written by bitexact export")
    ap.add_argument("--out", required=True, help="results directory to write (must not exist)")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--profile", default="", help="profile the implementation claims (optional)")
    a = ap.parse_args()
    exp = bxio.Export(a.export)
    platform = f"torch {torch.__version__}, device {a.device}"
    if a.device.startswith("cuda"):
        platform += f" ({torch.cuda.get_device_name()}, CUDA {torch.version.cuda})"
    impl = f"torch {torch.__version__} {IMPL.get(exp.op, exp.op)} (conformance/harness/torch/run.py) on {a.device}"
    with bxio.Results(a.out, exp, implementation=impl, platform=platform, profile=a.profile or None) as res:
        for task in exp.tasks:
            res.write(task, run_task(exp.op, task, a.device))
    print(f"{exp.suite}: wrote {len(exp.tasks)} task(s) to {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
