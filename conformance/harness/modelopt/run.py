#!/usr/bin/env python3
"""bitexact harness for NVIDIA Model Optimizer's NVFP4QTensor.

Runs, on the inputs of an exported nvfp4 suite, ModelOpt's real-quantization
entry point for a weight with no precomputed scales:

    qtensor, weights_scaling_factor, weights_scaling_factor_2 = NVFP4QTensor.quantize(w, 16)

and writes qtensor's packed codes, the float8_e4m3fn block scales and the
float32 per-tensor scale p = amax/2688 (weights_scaling_factor_2). For the
dequantize suite it calls

    NVFP4QTensor(shape, torch.float32, packed).dequantize(torch.float32,
        scale=scales, double_scale=p, block_sizes={-1: 16})

(the default, non-triton path). The class and the helpers it calls
(reduce_amax, reduce_block_amax, reduce_block_padding, fp4_compatible,
BaseQuantizedTensor) are ModelOpt's own, loaded from a checkout's source
files by conformance/harness/pysrc.py (the package import pulls in
modelopt.torch's plugin system and torch.distributed FSDP internals):

    python3 run.py --src MODELOPT_CHECKOUT --commit SHA --export DIR --out OUT --device cpu|cuda [--profile P]

quantize() calls fp4_compatible(), which asks CUDA device 0 for its
capability, so even the CPU run needs a visible GPU; on the H100 (sm_90) it
is False and the TensorRT-LLM path is never taken.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import blockrun  # noqa: E402
import pysrc  # noqa: E402


def load(src, torch):
    import torch.nn.functional as F
    ns = {"torch": torch, "F": F, "nn": torch.nn}
    q = os.path.join(src, "modelopt", "torch", "quantization")
    rep = pysrc.load(os.path.join(q, "utils.py"), ["reduce_block_amax", "reduce_block_padding", "reduce_amax"], ns)
    rep += pysrc.load(os.path.join(q, "backends", "utils.py"), ["fp4_compatible"], ns)
    rep += pysrc.load(os.path.join(q, "qtensor", "base_qtensor.py"), ["BaseQuantizedTensor"], ns)
    rep += pysrc.load(os.path.join(q, "qtensor", "nvfp4_tensor.py"), ["e2m1_bounds", "e2m1_values", "NVFP4QTensor"], ns)
    return ns, rep


def main():
    a = blockrun.args(__doc__, "NVIDIA/Model-Optimizer checkout (source files at the commit)")
    import torch
    ns, rep = load(a.src, torch)
    Q = ns["NVFP4QTensor"]

    def quantize(w):
        qt, wsf, wsf2 = Q.quantize(w, 16)
        return {"packed": qt._quantized_data, "scales": wsf, "global": wsf2}

    def dequantize(packed, scales, glob):
        m, k = packed.shape[0], packed.shape[1] * 2
        qt = Q(torch.Size([m, k]), torch.float32, packed)
        return qt.dequantize(torch.float32, scale=scales, double_scale=glob.reshape(()), block_sizes={-1: 16})

    impl = "ModelOpt %s: NVFP4QTensor.quantize(w, 16); NVFP4QTensor.dequantize" % a.commit
    blockrun.run_all(torch, a, impl, quantize, dequantize, report=rep)


if __name__ == "__main__":
    main()
