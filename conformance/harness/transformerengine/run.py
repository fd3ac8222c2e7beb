#!/usr/bin/env python3
"""bitexact harness for TransformerEngine's NVFP4 reference quantizer.

Runs NVFP4QuantizerRef (transformer_engine/pytorch/custom_recipes/reference_nvfp4.py,
the Python reference TransformerEngine's own tests hold its CUDA quantizer to)
on the inputs of an exported nvfp4 suite, rowwise only, without the random
Hadamard transform, with 1x16 blocks (activations, gradients) or 16x16
blocks (the 2D weight mode):

    q = NVFP4QuantizerRef(dtype=Fp4Formats.E2M1, rowwise=True, columnwise=False,
                          quant_tile_shape=(1, 16) or (16, 16))
    qx, sx, _, _, global_amax_row, _ = q._quantize(x)

and writes qx (codes, element 2i in the low nibble), sx (float8_e4m3fn
block scales; in 16x16 mode every row of a 16-row tile repeats the tile's
scale) and the per-tensor value TransformerEngine stores, the float32
tensor amax (its encode scale 2688/amax is recomputed from it wherever it is
used). In 16x16 mode the quantizer pads the rows to a multiple of 16 and
returns the scales of the padded tensor; the rows beyond x's are dropped
here. TransformerEngine's reference has no NVFP4 dequantizer: the
dequantize suite is refused (exit 3).

The class is TransformerEngine's own, loaded from a checkout's source file
by conformance/harness/pysrc.py, with reference_utils.py loaded whole-name
too; its base class Quantizer (transformer_engine/pytorch/quantized_tensor.py,
backed by TransformerEngine's C++ extension) is stood in for by a class
whose __init__ sets the two usage flags the real one sets.

    python3 run.py --src TE_CHECKOUT --commit SHA --export DIR --out OUT --device cpu|cuda --tile 1x16|16x16 [--profile P]
"""
import dataclasses
import os
import sys
import types
from typing import Optional, Tuple, Union

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import blockrun  # noqa: E402
import pysrc  # noqa: E402


class Quantizer:
    """Stand-in for transformer_engine.pytorch.quantized_tensor.Quantizer:
    its __init__ (same commit) sets exactly these attributes."""

    def __init__(self, *, rowwise, columnwise):
        self.rowwise_usage = rowwise
        self.columnwise_usage = columnwise
        self.internal = False
        self.optimize_for_gemm = False


def load(src, torch):
    import enum
    cr = os.path.join(src, "transformer_engine", "pytorch", "custom_recipes")
    ru = {"torch": torch, "enum": enum}
    rep = pysrc.load(os.path.join(cr, "reference_utils.py"), ["HIGH_PRECISION_FLOAT_DTYPES", "Fp4Formats"], ru)
    reference_utils = types.SimpleNamespace(HIGH_PRECISION_FLOAT_DTYPES=ru["HIGH_PRECISION_FLOAT_DTYPES"],
                                            Fp4Formats=ru["Fp4Formats"])
    ns = {"torch": torch, "dataclasses": dataclasses, "Optional": Optional, "Tuple": Tuple, "Union": Union,
          "reference_utils": reference_utils, "Quantizer": Quantizer,
          # named only in annotations and defaults of methods not called here (quantize, qgemm, ...)
          "QuantizedTensorStorage": object, "NVFP4TensorRef": object, "gemm": types.SimpleNamespace(MMParams=object, GEMMType=types.SimpleNamespace(FPROP="fprop", WGRAD="wgrad"))}
    rep += pysrc.load(os.path.join(cr, "reference_nvfp4.py"), ["cast_to_fp4x2", "cast_to_e8", "NVFP4QuantizerRef"], ns)
    return ns, rep


def main():
    a = blockrun.args(__doc__, "NVIDIA/TransformerEngine checkout (source files at the commit)", lambda ap: ap.add_argument("--tile", choices=["1x16", "16x16"], default="1x16"))
    import torch
    ns, rep = load(a.src, torch)
    tile = (1, 16) if a.tile == "1x16" else (16, 16)
    q = ns["NVFP4QuantizerRef"](dtype=ns["reference_utils"].Fp4Formats.E2M1, rowwise=True, columnwise=False,
                                quant_tile_shape=tile, with_rht=False)

    def quantize(x):
        qx, sx, _, _, amax, _ = q._quantize(x)
        return {"packed": qx, "scales": sx[: x.shape[0]], "global": amax}

    impl = "TransformerEngine %s: NVFP4QuantizerRef %s rowwise, no RHT; per-tensor value = stored amax" % (a.commit, a.tile)
    blockrun.run_all(torch, a, impl, quantize, None, report=rep)


if __name__ == "__main__":
    main()
