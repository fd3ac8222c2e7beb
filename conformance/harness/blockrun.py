"""blockrun: the loop every NVFP4 library harness shares.

A harness supplies the library's own quantize and/or dequantize, called on
torch tensors on the chosen device; blockrun reads the export folder
(bxio), hands each task's inputs over, and writes the outputs as a results
folder. It adds no arithmetic: outputs are written as the library returned
them (float8 scales as their bytes, per-tensor values as float32), after a
shape check.

    quantize(x)                      -> {"packed": u8 [M, K/2], "scales": e4m3 [M, K/16], "global": f32 [1]}
    dequantize(packed, scales, glob) -> f32 [M, K]     (scales: torch.float8_e4m3fn, glob: f32 [1])

A suite whose op or input type the library does not implement is refused
with a message and skipped, so a driver can hand every library every
suite (--export and --out repeat, in pairs, to run several suites in one
process) and keep what exists; run.py exits 3 when every suite was refused.
"""
import argparse
import os
import platform as _platform
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bxio  # noqa: E402

INPUT_DTYPES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}


class Unsupported(Exception):
    """The library does not implement this suite."""


def describe(torch, device):
    """The platform line: device name, torch and CUDA versions."""
    if device == "cuda":
        return "%s, torch %s, CUDA %s" % (torch.cuda.get_device_name(), torch.__version__, torch.version.cuda)
    return "CPU %s (%s), torch %s" % (_platform.machine(), _platform.processor() or "unknown", torch.__version__)


def run(torch, export_dir, out, implementation, device, profile=None, quantize=None, dequantize=None,
        inputs=("fp32", "bf16", "fp16")):
    exp = bxio.Export(export_dir)
    dev = torch.device(device)
    if exp.op == "nvfp4.quantize":
        if quantize is None:
            raise Unsupported("%s quantizes nothing here (suite %s)" % (implementation, exp.suite))
        kinds = {t.params.get("input", "fp32") for t in exp.tasks}
        bad = kinds - set(inputs)
        if bad:
            raise Unsupported("%s does not quantize %s inputs (suite %s)" % (implementation, ",".join(sorted(bad)), exp.suite))
    elif exp.op == "nvfp4.dequantize":
        if dequantize is None:
            raise Unsupported("%s has no NVFP4 dequantizer here (suite %s)" % (implementation, exp.suite))
    else:
        raise Unsupported("suite %s is op %s, not an NVFP4 op" % (exp.suite, exp.op))
    with bxio.Results(out, exp, implementation=implementation, platform=describe(torch, device), profile=profile) as res:
        for task in exp.tasks:
            if exp.op == "nvfp4.quantize":
                x = task.torch("x", device=dev)
                want = getattr(torch, INPUT_DTYPES[task.params.get("input", "fp32")])
                if x.dtype != want:
                    raise ValueError("task %s: x is %s, want %s" % (task.name, x.dtype, want))
                o = quantize(x)
                m, k = x.shape
                if o["global"].dtype != torch.float32:
                    raise ValueError("task %s: per-tensor value is %s, want float32" % (task.name, o["global"].dtype))
                outs = {"packed": o["packed"].reshape(m, k // 2), "scales": o["scales"].reshape(m, k // 16),
                        "global": o["global"].reshape(1)}
            else:
                packed = task.torch("packed", device=dev)
                scales = task.torch("scales", device=dev).view(torch.float8_e4m3fn)
                glob = task.torch("global", device=dev)
                y = dequantize(packed, scales, glob)
                if y.dtype != torch.float32:
                    raise ValueError("task %s: dequantize returned %s, want float32" % (task.name, y.dtype))
                outs = {"y": y}
            res.write(task, outs)
            print("%s: %s" % (exp.suite, task.name), flush=True)


def args(doc, src_help, extra=None):
    """The command line every run.py takes; extra(ap) adds its own flags."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--src", required=True, help=src_help)
    ap.add_argument("--commit", required=True, help="the checkout's commit, written into results.json")
    ap.add_argument("--export", action="append", required=True, help="bitexact export folder (repeatable)")
    ap.add_argument("--out", action="append", required=True, help="results folder to write, one per --export")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cuda")
    ap.add_argument("--profile", help="profile to claim in results.json")
    if extra:
        extra(ap)
    a = ap.parse_args()
    if len(a.export) != len(a.out):
        ap.error("give one --out per --export")
    return a


def run_all(torch, a, implementation, quantize=None, dequantize=None, inputs=("fp32", "bf16", "fp16"), report=()):
    """Runs every (--export, --out) pair, going on past a failed one; exits
    1 when one failed, 3 when every one was refused."""
    import traceback
    for line in report:
        print("pysrc:", line)
    done = failed = 0
    for export_dir, out in zip(a.export, a.out):
        try:
            run(torch, export_dir, out, implementation, a.device, a.profile, quantize, dequantize, inputs)
            done += 1
        except Unsupported as e:
            print("unsupported:", e, flush=True)
        except Exception:  # noqa: BLE001 - report it and run the other suites
            failed += 1
            print("FAILED: %s -> %s" % (export_dir, out), flush=True)
            traceback.print_exc()
    if failed:
        sys.exit(1)
    if done == 0:
        sys.exit(3)
