"""Run torchao's to_mx (MXFP8 E4M3/E5M2, MXFP6 E2M3/E3M2; dim0 and dim1)
and microxcaling's _quantize_mx (MXFP8, MXFP6, MXINT8) on the refimpl/mx
harness inputs, on the CPU and on CUDA, and write their outputs.

Reads inputs.safetensors (written by `BITEXACT_MX_WRITE=dir go test
./refimpl/mx -run WriteHarnessInputs`: F32 tensors, one per case,
[rows, cols], rows and cols multiples of 32). For every implementation,
element, mode and device it writes OUT/<impl>.<elem>.<mode>.<device>.safetensors
holding per case "<case>.dim0.codes"/"<case>.dim0.scales" and
"<case>.dim1.codes"/"<case>.dim1.scales" (torchao: U8 codes, U8 E8M0
scales, dim1 being to_mx of x.t().contiguous()), or "<case>.y" (F32, the
quantize-dequantize values microxcaling returns), with metadata (a
JSON beside it) naming the device and versions, and per case and dim any
error ("errors") or call torchao does not accept ("skipped"): one failing
case no longer empties the file.

Third-party code is loaded from the folders beside this script (copies
at pinned commits, see README.md): ao/ (pytorch/ao v0.18.0, the torchao
package, its C extension not built) and microxcaling/ (mx/ package).
"""
import argparse
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bxio  # noqa: E402


def tensor_u8(t):
    import torch
    t = t.detach().to("cpu").contiguous()
    if t.element_size() != 1:
        raise ValueError("want a 1-byte tensor, got %s" % t.dtype)
    return bxio.Tensor("", "U8", list(t.shape), t.view(torch.uint8).numpy().tobytes())


def tensor_f32(t):
    import torch
    t = t.detach().to("cpu", torch.float32).contiguous()
    return bxio.Tensor("", "F32", list(t.shape), t.numpy().tobytes())


def write(path, tensors, meta):
    # bxio.write_safetensors writes no metadata: metadata goes in a JSON beside it.
    import json
    for k, v in tensors.items():
        v.name = k
    bxio.write_safetensors(path, tensors)
    with open(path + ".json", "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)


def run_torchao(inputs, out, device, versions):
    import torch
    sys.path.insert(0, os.path.join(HERE, "ao"))
    from torchao.prototype.mx_formats.mx_tensor import to_mx
    from torchao.prototype.mx_formats.config import ScaleCalculationMode
    from torchao.prototype.mx_formats.constants import DTYPE_FP6_E2M3, DTYPE_FP6_E3M2
    elems = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2, "e2m3": DTYPE_FP6_E2M3, "e3m2": DTYPE_FP6_E3M2}
    modes = {"floor": ScaleCalculationMode.FLOOR, "ceil": ScaleCalculationMode.CEIL,
             "even": ScaleCalculationMode.EVEN, "rceil": ScaleCalculationMode.RCEIL}
    for en, ed in elems.items():
        for mn, md in modes.items():
            path = os.path.join(out, "torchao.%s.%s.%s.safetensors" % (en, mn, device))
            tensors, meta = {}, {"impl": "torchao to_mx", "element": en, "mode": mn, "device": device, **versions}
            errors, skipped = {}, {}
            for case, t in inputs.items():
                x = t.torch(device)
                for dim, xx in (("dim0", x), ("dim1", x.t().contiguous())):
                    key = "%s.%s" % (case, dim)
                    # to_mx asserts that the last dimension is a multiple
                    # of the block size (v0.18.0 mx_tensor.py line 230): a
                    # dim1 cast of a matrix whose rows are not is not a
                    # call torchao accepts.
                    if xx.shape[-1] % 32 != 0:
                        skipped[key] = "to_mx needs the last dimension %d to be a multiple of 32" % xx.shape[-1]
                        continue
                    try:
                        scale, data = to_mx(xx, ed, 32, md)
                        tensors[key + ".codes"] = tensor_u8(data)
                        tensors[key + ".scales"] = tensor_u8(scale)
                    except Exception:
                        errors[key] = traceback.format_exc()[-1500:]
            if errors:
                meta["errors"] = errors
            if skipped:
                meta["skipped"] = skipped
            write(path, tensors, meta)
            print(path, "%d tensors, %d errors, %d skipped" % (len(tensors), len(errors), len(skipped)), flush=True)
            for k, v in errors.items():
                print("  ", k, v.strip().splitlines()[-1][:200], flush=True)


def run_microxcaling(inputs, out, device, versions):
    import torch
    sys.path.insert(0, os.path.join(HERE, "microxcaling"))
    from mx.mx_ops import _quantize_mx
    for en in ("fp8_e4m3", "fp8_e5m2", "fp6_e2m3", "fp6_e3m2", "int8"):
        for rnd in ("even", "nearest"):
            path = os.path.join(out, "microxcaling.%s.%s.%s.safetensors" % (en, rnd, device))
            tensors, meta = {}, {"impl": "microxcaling _quantize_mx", "element": en, "round": rnd, "device": device, **versions}
            errors = {}
            for case, t in inputs.items():
                x = t.torch(device)
                for dim, axis in (("dim0", -1), ("dim1", 0)):
                    key = "%s.%s" % (case, dim)
                    try:
                        y = _quantize_mx(x, 8, en, shared_exp_method="max", axes=[axis], block_size=32,
                                         round=rnd, flush_fp32_subnorms=False, custom_cuda=False)
                        tensors[key + ".y"] = tensor_f32(y)
                    except Exception:
                        errors[key] = traceback.format_exc()[-1500:]
            if errors:
                meta["errors"] = errors
            write(path, tensors, meta)
            print(path, "%d tensors, %d errors" % (len(tensors), len(errors)), flush=True)
            for k, v in errors.items():
                print("  ", k, v.strip().splitlines()[-1][:200], flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--inputs", default=os.path.join(HERE, "inputs.safetensors"))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    import torch
    inputs = bxio.read_safetensors(a.inputs)
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    versions = {"torch": torch.__version__,
                "gpu": torch.cuda.get_device_name() if torch.cuda.is_available() else ""}
    for dev in devices:
        for fn in (run_torchao, run_microxcaling):
            try:
                fn(inputs, a.out, dev, versions)
            except Exception:
                print(fn.__name__, dev, "failed:", traceback.format_exc()[-1500:], flush=True)


if __name__ == "__main__":
    main()
