#!/usr/bin/env python3
"""bitexact harness for torchao's NVFP4 quantizer and dequantizer.

Runs, on the inputs of an exported nvfp4 suite, exactly what torchao's
inference workflow does for a weight with a dynamic per-tensor scale
(torchao/prototype/mx_formats/inference_workflow.py):

    tensor_amax = torch.max(torch.abs(weight))
    per_tensor_scale = per_tensor_amax_to_scale(tensor_amax)
    scales, packed = nvfp4_quantize(weight, 16, per_tensor_scale)

and, for the dequantize suite, NVFP4Tensor.dequantize(torch.float32) of a
tensor holding the given codes, E4M3 scales and per-tensor scale p
(linear scale layout). The functions are torchao's own, loaded from a
checkout's source files by conformance/harness/pysrc.py (the package
import needs triton kernels, torch.distributed and torchao's C++
extensions, and old releases do not import under new torch):

    python3 run.py --src AO_CHECKOUT --commit SHA --export DIR --out OUT --device cpu|cuda [--profile P]

nvfp4_quantize accepts float32 and bfloat16 only (it asserts so): the
fp16 suite is refused (exit 3).
"""
import math
import os
import sys
import types
from typing import Optional

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import blockrun  # noqa: E402
import pysrc  # noqa: E402


def load(src, torch):
    ns = {"torch": torch, "Tensor": torch.Tensor, "Optional": Optional, "math": math}
    mx = os.path.join(src, "torchao", "prototype", "mx_formats")
    rep = pysrc.load(os.path.join(src, "torchao", "prototype", "custom_fp_utils.py"),
                     ["_n_ones", "EBITS_F32", "MBITS_F32", "F32_EXP_BIAS", "_f32_to_floatx_unpacked", "_floatx_unpacked_to_f32"], ns)
    rep += pysrc.load(os.path.join(mx, "constants.py"), ["F8E4M3_MAX", "F4_E2M1_MAX"], ns)
    rep += pysrc.load(os.path.join(mx, "kernels.py"),
                      ["EBITS_F4_E2M1", "MBITS_F4_E2M1", "f32_to_f4_unpacked", "f4_unpacked_to_f32",
                       "down_size", "up_size", "unpack_uint4", "pack_uint4"], ns)
    rep += pysrc.load(os.path.join(mx, "nvfp4_tensor.py"),
                      ["E4M3_EPS", "per_tensor_amax_to_scale", "nvfp4_quantize",
                       "NVFP4Tensor.dequantize", "NVFP4Tensor.get_hp_scales"], ns)
    return ns, rep


def main():
    a = blockrun.args(__doc__, "pytorch/ao checkout (source files at the commit)")
    import torch
    ns, rep = load(a.src, torch)

    def quantize(w):
        tensor_amax = torch.max(torch.abs(w))
        per_tensor_scale = ns["per_tensor_amax_to_scale"](tensor_amax)
        scales, packed = ns["nvfp4_quantize"](w, 16, per_tensor_scale)
        return {"packed": packed, "scales": scales, "global": per_tensor_scale}

    def dequantize(packed, scales, glob):
        m, k = packed.shape[0], packed.shape[1] * 2
        t = types.SimpleNamespace(qdata=packed, scale=scales, block_size=16, per_tensor_scale=glob.reshape(()),
                                  is_swizzled_scales=False, orig_dtype=torch.float32, dtype=torch.float32,
                                  shape=torch.Size([m, k]))
        t.get_hp_scales = types.MethodType(ns["NVFP4Tensor.get_hp_scales"], t)
        return ns["NVFP4Tensor.dequantize"](t, torch.float32)

    impl = "torchao %s: per_tensor_amax_to_scale(max|w|) + nvfp4_quantize; NVFP4Tensor.dequantize" % a.commit
    blockrun.run_all(torch, a, impl, quantize, dequantize, inputs=("fp32", "bf16"), report=rep)


if __name__ == "__main__":
    main()
