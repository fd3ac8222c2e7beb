#!/usr/bin/env python3
"""Run a ggml block quantizer on the inputs of a `bitexact export` suite.

    python3 blocks.py --export DIR --out OUT --op q8_1|mxfp4 \
        --implementation TEXT --platform TEXT -- RUNNER...

RUNNER (e.g. `./sweep` or `qemu-aarch64 -L /usr/aarch64-linux-gnu ./sweep`)
reads float32 values on stdin and writes the blocks on stdout (see
sweep.c). OUT gets results.json and one <task>.safetensors per task, the
results format of docs/vendor.md, for `bitexact certify --results OUT`.
Standard library only: safetensors is an 8-byte header length, a JSON
header and the raw little-endian tensor bytes.
"""
import argparse
import json
import os
import struct
import subprocess

BLOCK = {"q8_1": 36, "mxfp4": 17}


def read_tensor(path, name):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    t = header[name]
    if t["dtype"] != "F32":
        raise SystemExit("%s: tensor %s is %s, want F32" % (path, name, t["dtype"]))
    lo, hi = t["data_offsets"]
    return data[lo:hi]


def write_tensor(path, name, shape, data):
    header = {name: {"dtype": "U8", "shape": shape, "data_offsets": [0, len(data)]}}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--export", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--op", required=True, choices=sorted(BLOCK))
    ap.add_argument("--implementation", required=True)
    ap.add_argument("--platform", required=True)
    ap.add_argument("runner", nargs="+")
    a = ap.parse_args()
    with open(os.path.join(a.export, "suite.json")) as f:
        suite = json.load(f)
    os.makedirs(a.out, exist_ok=True)
    tasks = []
    for t in suite["tasks"]:
        x = read_tensor(os.path.join(a.export, t["input_file"]), "x")
        blocks = subprocess.run(a.runner + [a.op], input=x, capture_output=True, check=True).stdout
        n = len(x) // 4 // 32
        if len(blocks) != n * BLOCK[a.op]:
            raise SystemExit("%s: %d bytes of blocks, want %d" % (t["name"], len(blocks), n * BLOCK[a.op]))
        write_tensor(os.path.join(a.out, t["result_file"]), "blocks", [n, BLOCK[a.op]], blocks)
        tasks.append(t["name"])
    res = {"format": suite["results_format"], "suite": suite["suite"], "suite_version": suite["suite_version"],
           "implementation": a.implementation, "platform": a.platform, "tasks": tasks}
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(res, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
