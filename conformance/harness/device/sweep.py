#!/usr/bin/env python3
"""Exhaustive sweep of the conversions that need torch, numpy or a GPU.

Every float32 bit pattern 0 .. 2^32-1 goes through each conversion below;
the codes (one byte for 8-bit and 4-bit formats, 16-bit codes
little-endian) are cut into 256 chunks of 2^24 inputs and each chunk is
hashed as golden/exhaustive does: leaf i = SHA-256(0x00 || codes of chunk
i). A chunk whose leaf differs from a candidate profile's committed leaf
(golden/exhaustive/digests) is also kept, zlib-compressed, so that
`bitexact record import` can count and list the differing inputs exactly.

    python3 conformance/harness/device/sweep.py --out DIR [--chunks 0,127]

run from the repository root on a machine with torch (CUDA), numpy and
nvcc. It writes DIR/sweep.json (leaves + provenance) and DIR/chunks.zip.
"""
import argparse
import ctypes
import datetime
import hashlib
import json
import os
import platform
import subprocess
import sys
import threading
import time
import zipfile
import zlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch

N = 1 << 24  # inputs per chunk (leaf)
CHUNKS = 256
HERE = os.path.dirname(os.path.abspath(__file__))
DIGESTS = os.path.join("golden", "exhaustive", "digests")

# PTX and CUDA-header ops: BX_OP in cvt.cu -> (id, function, format).
OPS = {
    1: ("ptx.cvt.rn.f16.f32", "cvt.rn.f16.f32", "fp16", ["fp16/rne", "fp16/canonical-nan"]),
    2: ("ptx.cvt.rn.satfinite.f16.f32", "cvt.rn.satfinite.f16.f32", "fp16", ["fp16/rne", "fp16/canonical-nan"]),
    3: ("ptx.cvt.rn.bf16.f32", "cvt.rn.bf16.f32", "bf16", ["bf16/rne", "bf16/canonical-nan"]),
    4: ("ptx.cvt.rn.satfinite.bf16.f32", "cvt.rn.satfinite.bf16.f32", "bf16", ["bf16/rne", "bf16/canonical-nan"]),
    5: ("ptx.cvt.rn.satfinite.e4m3x2.f32", "cvt.rn.satfinite.e4m3x2.f32", "e4m3", ["e4m3/satfinite"]),
    6: ("ptx.cvt.rn.satfinite.e5m2x2.f32", "cvt.rn.satfinite.e5m2x2.f32", "e5m2", ["e5m2/satfinite"]),
    7: ("cuda.__float2half_rn", "__float2half_rn (cuda_fp16.h)", "fp16", ["fp16/canonical-nan"]),
    8: ("cuda.__float2bfloat16_rn", "__float2bfloat16_rn (cuda_bf16.h)", "bf16", ["bf16/canonical-nan"]),
    9: ("cuda.__nv_cvt_float_to_fp4", "__nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest) (cuda_fp4.h)", "e2m1", ["e2m1/nvidia"]),
    10: ("cuda.__nv_cvt_float_to_e8m0.rz", "__nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cudaRoundZero) (cuda_fp8.h)", "e8m0", ["e8m0/rz"]),
    11: ("cuda.__nv_cvt_float_to_e8m0.rp", "__nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cudaRoundPosInf) (cuda_fp8.h)", "e8m0", ["e8m0/rp"]),
    12: ("cuda.__nv_cvt_float_to_fp8.e4m3", "__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3) (cuda_fp8.h)", "e4m3", ["e4m3/satfinite"]),
    13: ("cuda.__nv_cvt_float_to_fp8.e5m2", "__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2) (cuda_fp8.h)", "e5m2", ["e5m2/satfinite"]),
}
WIDTH = {"e2m1": 1, "e4m3": 1, "e5m2": 1, "e8m0": 1, "fp16": 2, "bf16": 2}

TORCH_DTYPES = [
    ("bf16", "bfloat16", ["bf16/rne", "bf16/canonical-nan"]),
    ("fp16", "float16", ["fp16/rne", "fp16/canonical-nan"]),
    ("e4m3", "float8_e4m3fn", ["e4m3/nosat"]),
    ("e5m2", "float8_e5m2", ["e5m2/nosat"]),
    ("e8m0", "float8_e8m0fnu", ["e8m0/torch"]),
]

MLD_DTYPES = [
    ("bf16", "bfloat16", ["bf16/rne", "bf16/canonical-nan"]),
    ("e2m1", "float4_e2m1fn", ["e2m1/ml_dtypes"]),
    ("e4m3", "float8_e4m3fn", ["e4m3/nosat"]),
    ("e5m2", "float8_e5m2", ["e5m2/nosat"]),
    ("e8m0", "float8_e8m0fnu", ["e8m0/ml_dtypes"]),
]


def codes(t, fmt):
    """A torch tensor of a 16-, 8- or sub-byte dtype -> numpy codes."""
    if WIDTH[fmt] == 2:
        return t.view(torch.int16).numpy()
    return t.view(torch.uint8).numpy()


def np_codes(a, fmt):
    if WIDTH[fmt] == 2:
        return a.view(np.uint16)
    # ml_dtypes' sub-byte float4 occupies one byte per element.
    return a.view(np.uint8)


def cpu_input(chunk):
    """The float32 inputs of a chunk as a numpy array (no wrap: a chunk
    never crosses 2^32)."""
    return (np.arange(N, dtype=np.uint32) + np.uint32(chunk * N)).view(np.float32)


def gpu_input(chunk):
    start = chunk * N
    base = start if start < 1 << 31 else start - (1 << 32)  # int32 view
    # arange(N) + base stays in int32: chunks never cross 2^31.
    return (torch.arange(N, dtype=torch.int32, device="cuda") + base).view(torch.float32)


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=60).stdout.strip()
    except Exception as e:  # provenance only
        return "unavailable: %s" % e


def build_ops(workdir):
    """Compile cvt.cu once per op in parallel; return {op: CDLL} and errors."""
    os.makedirs(workdir, exist_ok=True)
    procs = {}
    for op in OPS:
        so = os.path.join(workdir, "op%d.so" % op)
        cmd = ["nvcc", "-O3", "-arch=sm_90", "-shared", "-Xcompiler", "-fPIC",
               "-DBX_OP=%d" % op, "-o", so, os.path.join(HERE, "cvt.cu")]
        procs[op] = (so, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    libs, errors = {}, {}
    for op, (so, p) in procs.items():
        out = p.communicate()[0]
        if p.returncode != 0:
            errors[OPS[op][0]] = out[-2000:]
            continue
        lib = ctypes.CDLL(so)
        lib.bx_run.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
        lib.bx_run.restype = ctypes.c_int
        libs[op] = lib
    return libs, errors


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="output folder")
    ap.add_argument("--chunks", default="", help="comma-separated chunk indices (default: all 256)")
    ap.add_argument("--threads", type=int, default=max(2, (os.cpu_count() or 4) - 1))
    ap.add_argument("--max-stored", type=int, default=14 << 20, help="byte cap of chunks.zip contents")
    ap.add_argument("--deadline", type=float, default=480, help="seconds before stopping early")
    args = ap.parse_args()
    t0 = time.time()
    chunks = [int(c) for c in args.chunks.split(",")] if args.chunks else list(range(CHUNKS))
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)  # parallelism comes from the chunk pool

    libs, build_errors = build_ops("/tmp/bx-ops")
    nvcc = sh("nvcc --version | tail -2 | tr '\\n' ' '")

    # The conversions: id -> dict; fn(chunk input) -> numpy codes.
    convs = []

    def add(cid, harness, impl, function, fmt, where, fn, cands):
        convs.append(dict(id=cid, harness=harness, implementation=impl, function=function,
                          format=fmt, where=where, fn=fn, candidates=cands))

    tv = torch.__version__
    for fmt, name, cands in TORCH_DTYPES:
        dt = getattr(torch, name)
        add("torch-cpu." + fmt, "torch", "torch %s (CPU)" % tv, "x.to(torch.%s)" % name, fmt, "cpu",
            (lambda dt, fmt: lambda x: codes(torch.from_numpy(x).to(dt), fmt))(dt, fmt), cands)
        add("torch-cuda." + fmt, "torch", "torch %s (CUDA)" % tv, "x.to(torch.%s)" % name, fmt, "gpu",
            (lambda dt, fmt: lambda x: codes(x.to(dt).cpu(), fmt))(dt, fmt), cands)

    def np_fp16(x):
        with np.errstate(all="ignore"):
            return x.astype(np.float16).view(np.uint16)
    add("numpy.fp16", "numpy", "numpy %s" % np.__version__, "x.astype(numpy.float16)", "fp16", "cpu",
        np_fp16, ["fp16/rne"])

    try:
        import ml_dtypes
        for fmt, name, cands in MLD_DTYPES:
            dt = getattr(ml_dtypes, name)
            add("ml_dtypes-py." + fmt, "mldtypes", "ml_dtypes %s (Python)" % ml_dtypes.__version__,
                "x.astype(ml_dtypes.%s)" % name, fmt, "cpu",
                (lambda dt, fmt: lambda x: np_codes(x.astype(dt), fmt))(dt, fmt), cands)
    except ImportError:
        pass

    def lib_fn(lib, fmt):
        def f(x):
            out = torch.empty(N * WIDTH[fmt], dtype=torch.uint8, device="cuda")
            torch.cuda.synchronize()
            err = lib.bx_run(ctypes.c_void_p(x.data_ptr()), ctypes.c_void_p(out.data_ptr()), N)
            if err != 0:
                raise RuntimeError("CUDA error %d" % err)
            a = out.cpu().numpy()
            return a.view(np.uint16) if WIDTH[fmt] == 2 else a
        return f
    for op, lib in sorted(libs.items()):
        cid, function, fmt, cands = OPS[op]
        harness = "ptx" if cid.startswith("ptx.") else "cuda"
        add(cid, harness, "NVIDIA H100, %s" % nvcc, function, fmt, "gpu", lib_fn(lib, fmt), cands)

    # Candidate leaves, to decide which chunks to keep.
    cand_leaves = {}
    for c in convs:
        for p in c["candidates"]:
            if p not in cand_leaves:
                with open(os.path.join(DIGESTS, p.replace("/", ".") + ".json")) as f:
                    cand_leaves[p] = json.load(f)["leaves"]

    leaves = {c["id"]: [None] * CHUNKS for c in convs}
    stored = {c["id"]: [] for c in convs}
    errors = {}
    lock = threading.Lock()
    zbuf = {}
    budget = [args.max_stored]
    skipped = {}

    def finish(c, chunk, out):
        out = np.ascontiguousarray(out)
        h = hashlib.sha256(b"\x00")
        h.update(out)
        d = h.hexdigest()
        leaves[c["id"]][chunk] = d
        if any(cand_leaves[p][chunk] != d for p in c["candidates"]):
            z = zlib.compress(out.tobytes(), 6)
            with lock:
                if len(z) <= budget[0]:
                    budget[0] -= len(z)
                    zbuf["%s/%03d.zlib" % (c["id"], chunk)] = z
                    stored[c["id"]].append(chunk)
                else:
                    skipped.setdefault(c["id"], []).append(chunk)

    def cpu_task(c, chunk):
        try:
            finish(c, chunk, c["fn"](cpu_input(chunk)))
        except Exception as e:
            with lock:
                errors.setdefault(c["id"], repr(e))

    def hash_task(c, chunk, out):
        try:
            finish(c, chunk, out)
        except Exception as e:
            with lock:
                errors.setdefault(c["id"], repr(e))

    pool = ThreadPoolExecutor(args.threads)
    pending = []
    done_chunks = []
    for k, chunk in enumerate(chunks):
        if time.time() - t0 > args.deadline:
            print("deadline reached after %d chunks" % k, flush=True)
            break
        for c in convs:
            if c["where"] == "cpu":
                pending.append(pool.submit(cpu_task, c, chunk))
        x = gpu_input(chunk)
        for c in convs:
            if c["where"] != "gpu" or c["id"] in errors:
                continue
            try:
                out = c["fn"](x)
            except Exception as e:
                errors.setdefault(c["id"], repr(e))
                continue
            pending.append(pool.submit(hash_task, c, chunk, out))
        del x
        while len(pending) > 4 * args.threads:
            pending.pop(0).result()
        done_chunks.append(chunk)
        if k % 16 == 15:
            print("%d/%d chunks, %.0f s" % (k + 1, len(chunks), time.time() - t0), flush=True)
    for f in pending:
        f.result()
    pool.shutdown()

    with zipfile.ZipFile(os.path.join(args.out, "chunks.zip"), "w", zipfile.ZIP_STORED) as z:
        for name in sorted(zbuf):
            z.writestr(name, zbuf[name])

    prov = dict(
        date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        command="python3 conformance/harness/device/sweep.py " + " ".join(sys.argv[1:]),
        torch=torch.__version__, torch_cuda=torch.version.cuda, numpy=np.__version__,
        python=platform.python_version(), gpu=torch.cuda.get_device_name(0),
        driver=sh("nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1"),
        nvcc=nvcc, nvcc_flags="-O3 -arch=sm_90 -shared -Xcompiler -fPIC -DBX_OP=n",
        cpu=sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"),
        build_errors=build_errors, errors=errors, skipped_chunks=skipped,
        chunks=done_chunks, seconds=round(time.time() - t0, 1),
    )
    result = dict(provenance=prov, conversions=[
        dict(id=c["id"], harness=c["harness"], implementation=c["implementation"],
             function=c["function"], format=c["format"], width=WIDTH[c["format"]],
             candidates=c["candidates"], leaves=leaves[c["id"]], stored_chunks=sorted(stored[c["id"]]))
        for c in convs])
    with open(os.path.join(args.out, "sweep.json"), "w") as f:
        json.dump(result, f, indent=1)
    print("wrote %d conversions, %d chunks each, %d stored chunks (%d bytes) in %.0f s; errors: %s; build errors: %s"
          % (len(convs), len(done_chunks), len(zbuf), args.max_stored - budget[0], time.time() - t0,
             errors, list(build_errors)))


if __name__ == "__main__":
    main()
