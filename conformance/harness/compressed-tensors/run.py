#!/usr/bin/env python3
"""bitexact harness for compressed-tensors' NVFP4 (nvfp4-pack-quantized) path.

Runs, on the inputs of an exported nvfp4 suite, what llm-compressor's
MinMaxObserver and compressed-tensors do to a weight under the NVFP4 preset
scheme (4-bit float, TENSOR_GROUP, group 16, symmetric, float8_e4m3fn
scales), with compressed-tensors' own functions:

    gmin, gmax = torch.aminmax(w)                       # MinMaxObserver.calculate_updated_min_max, whole tensor
    global_scale = generate_gparam(gmin, gmax)          # MinMaxObserver.calculate_gparam
    mn, mx = amin/amax of each 16-element group         # calculate_updated_min_max, reduce over the group
    scale, _ = calculate_qparams(mn, mx, args, global_scale=global_scale)
    weight_scale = scale stored in w's dtype            # the observer's scale tensor has the weight's dtype
    q = quantize(x=w, scale=weight_scale, global_scale=global_scale, zero_point=None, args=args)
    packed = pack_fp4_to_uint8(q); scales = NVFP4PackedCompressor._compress_scale(weight_scale, args)

(NVFP4PackedCompressor.compress; the symmetric scheme has no zero point).
The per-tensor value written is weight_global_scale, g = 2688/amax. For
the dequantize suite, NVFP4PackedCompressor.decompress's calls with a
float32 dense dtype (decompress itself unpacks to bfloat16):

    unpacked = unpack_fp4_from_uint8(packed, m, k, dtype=torch.float32)
    dequantize(x_q=unpacked, scale=_decompress_scale(scales, torch.float32), global_scale=g,
               args=args, dtype=torch.float32)

Every function named is compressed-tensors' own (vllm-project/compressed-tensors,
records at ac8e2ba8 = 0.18.0), loaded by conformance/harness/pysrc.py from
the source files; QuantizationArgs (a pydantic model) is stood in for by
an object with the NVFP4 preset's field values, and the observer's two
reductions (llm-compressor src/llmcompressor/observers/min_max.py) are
written out here, as they are one torch call each. The backend-dispatch
decorators pysrc drops register no backend for these functions in this
release (every triton backend is registered with priority "disable"), so
the eager bodies run either way.

    python3 run.py --src CT_CHECKOUT --commit SHA --export DIR --out OUT --device cpu|cuda [--profile P]
"""
import enum
import math
import os
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import blockrun  # noqa: E402
import pysrc  # noqa: E402


def load(src, torch):
    ns = {"torch": torch, "Enum": enum.Enum, "math": math, "ceil": math.ceil,
          "Tensor": torch.Tensor, "FloatTensor": torch.Tensor, "IntTensor": torch.Tensor}
    ct = os.path.join(src, "src", "compressed_tensors")
    qa = os.path.join(ct, "quantization", "quant_args.py")
    rep = pysrc.load(qa, ["FloatArgs", "FP4_E2M1_DATA", "FP8_E4M3_DATA", "QuantizationType", "QuantizationStrategy",
                          "round_to_quantized_type_dtype"], ns)
    ns["QuantizationArgs"] = object  # only named in annotations of the functions loaded
    rep += pysrc.load(qa, ["round_to_quantized_type_args"], ns)
    rep += pysrc.load(os.path.join(ct, "quantization", "utils", "fp4_utils.py"), ["cast_to_fp4"], ns)
    # FP4_E2M1_DATA.cast_to_fp4 imports cast_to_fp4 from this module at call time.
    for name in ["compressed_tensors", "compressed_tensors.quantization", "compressed_tensors.quantization.utils"]:
        sys.modules.setdefault(name, types.ModuleType(name))
    fp4 = types.ModuleType("compressed_tensors.quantization.utils.fp4_utils")
    fp4.cast_to_fp4 = ns["cast_to_fp4"]
    sys.modules[fp4.__name__] = fp4
    rep += pysrc.load(os.path.join(ct, "quantization", "utils", "mxfp_utils.py"),
                      ["should_generate_mx_scales", "maybe_convert_from_mx_exp"], ns)
    rep += pysrc.load(os.path.join(ct, "quantization", "utils", "helpers.py"),
                      ["calculate_qparams", "calculate_range", "generate_gparam", "_get_dtype_eps"], ns)
    rep += pysrc.load(os.path.join(ct, "quantization", "lifecycle", "forward_helpers.py"),
                      ["_apply_quantize_op", "_process_group", "_quantize_dequantize", "_quantize", "_dequantize"], ns)
    rep += pysrc.load(os.path.join(ct, "quantization", "lifecycle", "forward.py"),
                      ["quantize", "dequantize", "_process_quantization"], ns)
    rep += pysrc.load(os.path.join(ct, "compressors", "nvfp4", "helpers.py"),
                      ["kE2M1ToFloat", "pack_fp4_to_uint8", "unpack_fp4_from_uint8"], ns)
    rep += pysrc.load(os.path.join(ct, "compressors", "nvfp4", "base.py"),
                      ["NVFP4PackedCompressor._compress_scale", "NVFP4PackedCompressor._decompress_scale"], ns)
    return ns, rep


def main():
    a = blockrun.args(__doc__, "vllm-project/compressed-tensors checkout (source files at the commit)")
    import torch
    ns, rep = load(a.src, torch)
    QT, QS = ns["QuantizationType"], ns["QuantizationStrategy"]
    # The NVFP4 preset (compressed_tensors/quantization/quant_scheme.py NVFP4A16/NVFP4 weights).
    args = types.SimpleNamespace(num_bits=4, type=QT.FLOAT, strategy=QS.TENSOR_GROUP, symmetric=True, dynamic=False,
                                 group_size=16, scale_dtype=torch.float8_e4m3fn, zp_dtype=torch.float8_e4m3fn,
                                 block_structure=None, actorder=None)

    def quantize(w):
        m, k = w.shape
        gmin, gmax = torch.aminmax(w)
        global_scale = ns["generate_gparam"](updated_min_val=gmin, updated_max_val=gmax)
        wg = w.unflatten(-1, (k // 16, 16))
        mn = torch.amin(wg, dim=(2,), keepdims=True)
        mx = torch.amax(wg, dim=(2,), keepdims=True)
        scale, _ = ns["calculate_qparams"](min_vals=mn, max_vals=mx, quantization_args=args, global_scale=global_scale)
        weight_scale = torch.empty((m, k // 16), dtype=w.dtype, device=w.device)
        weight_scale[:, :] = scale.squeeze(-1)
        q = ns["quantize"](x=w, scale=weight_scale, global_scale=global_scale, zero_point=None, args=args)
        packed = ns["pack_fp4_to_uint8"](q)
        scales = ns["NVFP4PackedCompressor._compress_scale"](None, weight_scale, args)
        return {"packed": packed, "scales": scales, "global": global_scale}

    def dequantize(packed, scales, glob):
        m, n = packed.shape
        unpacked = ns["unpack_fp4_from_uint8"](packed, m, n * 2, dtype=torch.float32)
        scale_float = ns["NVFP4PackedCompressor._decompress_scale"](None, scales, unpacked.dtype)
        return ns["dequantize"](x_q=unpacked, scale=scale_float, global_scale=glob, args=args, dtype=torch.float32)

    impl = "compressed-tensors %s: MinMaxObserver path (generate_gparam, calculate_qparams) + quantize + pack_fp4_to_uint8; dequantize" % a.commit
    blockrun.run_all(torch, a, impl, quantize, dequantize, report=rep)


if __name__ == "__main__":
    main()
