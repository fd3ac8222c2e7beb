#!/usr/bin/env python3
"""Run gguf-py's numpy quantizers (llama.cpp gguf-py/gguf/quants.py) on the
GGUF corpus of conformance/harness/ggml-gguf and write their outputs in the
layout that `tool record` digests (q.<type>, dq.<type>).

    python3 run.py --quants PATH/TO/gguf-py/gguf/quants.py --corpus DIR --out DIR

quants.py is loaded as it is, as the module `quants` of a package whose
`constants` and `lazy` modules are the two names it imports from them
(GGML_QUANT_SIZES, GGMLQuantizationType, QK_K; LazyNumpyTensor, unused on
numpy arrays), defined below from ggml's block sizes, so that the one file
runs without the rest of gguf-py. Every type quants.py implements that the
corpus has is run: quantize where it has quantize_blocks, dequantize always.
Each quantize call gets the whole corpus as one 2-D array of rows of 256, as
gguf-py's convert scripts hand it a tensor.
"""
import argparse
import enum
import importlib.util
import os
import sys
import types

import numpy as np

QK_K = 256

# ggml's block sizes (elements, bytes) of the types the corpus has
SIZES = {
    "Q4_0": (32, 18), "Q4_1": (32, 20), "Q5_0": (32, 22), "Q5_1": (32, 24), "Q8_0": (32, 34),
    "Q2_K": (256, 84), "Q3_K": (256, 110), "Q4_K": (256, 144), "Q5_K": (256, 176), "Q6_K": (256, 210),
    "Q8_K": (256, 292), "IQ4_NL": (32, 18), "IQ4_XS": (256, 136), "TQ1_0": (256, 54), "TQ2_0": (256, 66),
    "NVFP4": (64, 36), "Q1_0": (128, 18), "Q2_0": (64, 18),
}


def shim_package():
    """The package `gguf` with the two modules quants.py imports."""
    pkg = types.ModuleType("gguf")
    pkg.__path__ = []
    constants = types.ModuleType("gguf.constants")
    names = ["F32", "F16"] + list(SIZES) + ["BF16", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S",
                                           "IQ1_S", "IQ1_M", "MXFP4"]
    qt = enum.IntEnum("GGMLQuantizationType", names)
    constants.GGMLQuantizationType = qt
    sizes = {qt[n]: s for n, s in SIZES.items()}
    sizes[qt["F32"]] = (1, 4)
    sizes[qt["F16"]] = (1, 2)
    sizes[qt["BF16"]] = (1, 2)
    # types quants.py may define that the corpus does not have: sizes from
    # ggml-common.h, needed only so that their classes can be declared
    for n, s in {"IQ2_XXS": (256, 66), "IQ2_XS": (256, 74), "IQ2_S": (256, 82), "IQ3_XXS": (256, 98),
                 "IQ3_S": (256, 110), "IQ1_S": (256, 50), "IQ1_M": (256, 56), "MXFP4": (32, 17)}.items():
        sizes[qt[n]] = s
    constants.GGML_QUANT_SIZES = sizes
    constants.QK_K = QK_K
    lazy = types.ModuleType("gguf.lazy")

    class LazyNumpyTensor:
        @staticmethod
        def _wrap_fn(fn, meta_noop=None):
            return fn

    lazy.LazyNumpyTensor = LazyNumpyTensor
    sys.modules["gguf"] = pkg
    sys.modules["gguf.constants"] = constants
    sys.modules["gguf.lazy"] = lazy
    return qt


def load(path):
    qt = shim_package()
    spec = importlib.util.spec_from_file_location("gguf.quants", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["gguf.quants"] = mod
    spec.loader.exec_module(mod)
    return qt, mod


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quants", required=True, help="gguf-py/gguf/quants.py")
    ap.add_argument("--corpus", required=True, help="the directory `tool corpus` wrote")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    qt, q = load(a.quants)
    os.makedirs(a.out, exist_ok=True)
    x = np.fromfile(os.path.join(a.corpus, "floats.f32"), dtype="<f4").reshape((-1, 256))
    ran = []
    for name in SIZES:
        cls = q._type_traits.get(qt[name])
        if cls is None:
            continue
        ggml_name = name.lower().replace("_k", "_K")
        if "quantize_blocks" in cls.__dict__:
            with np.errstate(all="ignore"):
                b = q.quantize(x, qt[name])
            b.tofile(os.path.join(a.out, "q." + ggml_name))
            ran.append("quantize " + ggml_name)
        blocks = np.fromfile(os.path.join(a.corpus, "blocks." + ggml_name), dtype=np.uint8)
        blocks = blocks.reshape((-1, SIZES[name][1]))
        with np.errstate(all="ignore"):
            y = q.dequantize(blocks, qt[name])
        y.astype("<f4").tofile(os.path.join(a.out, "dq." + ggml_name))
        ran.append("dequantize " + ggml_name)
    print("run.py: " + ", ".join(ran))


if __name__ == "__main__":
    main()
