#!/usr/bin/env python3
"""Run a ggml block quantizer on the inputs of a `bitexact export` suite.

    python3 blocks.py --export DIR --out OUT --op q8_1|mxfp4 \
        --implementation TEXT --platform TEXT -- RUNNER...

RUNNER (e.g. `./sweep` or `qemu-aarch64 -L /usr/aarch64-linux-gnu ./sweep`)
reads float32 values on stdin and writes the blocks on stdout (see
sweep.c). OUT (which must not exist) gets results.json and one
<task>.safetensors per task, the results format of docs/vendor.md, for
`bitexact certify --results OUT`, written through bxio (standard library
only), which checks each tensor against suite.json.
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import bxio  # noqa: E402  conformance/harness/bxio.py

BLOCK = {"q8_1": 36, "mxfp4": 17}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--export", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--op", required=True, choices=sorted(BLOCK))
    ap.add_argument("--implementation", required=True)
    ap.add_argument("--platform", required=True)
    ap.add_argument("runner", nargs="+")
    a = ap.parse_args()
    exp = bxio.Export(a.export)
    with bxio.Results(a.out, exp, implementation=a.implementation, platform=a.platform) as res:
        for t in exp.tasks:
            x = t.tensor("x")
            if x.dtype != "F32":
                raise SystemExit("%s: tensor x is %s, want F32" % (t.name, x.dtype))
            blocks = subprocess.run(a.runner + [a.op], input=x.data, capture_output=True, check=True).stdout
            n = len(x.data) // 4 // 32
            if len(blocks) != n * BLOCK[a.op]:
                raise SystemExit("%s: %d bytes of blocks, want %d" % (t.name, len(blocks), n * BLOCK[a.op]))
            res.write(t, {"blocks": bxio.Tensor("blocks", "U8", [n, BLOCK[a.op]], blocks)})


if __name__ == "__main__":
    main()
