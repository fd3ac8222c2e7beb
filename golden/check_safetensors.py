#!/usr/bin/env python3
"""Load every file of the golden set with Python's safetensors, independently
of the Go code that wrote it.

    python3 golden/check_safetensors.py [golden/data]

For each input set and expected-output file named in manifest.json it checks
the SHA-256 and size the manifest records, loads the file with
safetensors' PyTorch loader (the reference Python reader; PyTorch because
numpy has no bfloat16), and compares each tensor's
name, dtype and shape with the manifest. Exit status 0 when every file
agrees, 1 otherwise; each problem is printed with the file it concerns.
Needs the safetensors and torch packages (the GPU machine's Python has both).
"""
import hashlib
import json
import os
import sys

from safetensors import safe_open

# safetensors dtype names as torch reports them.
TORCH = {
    "U8": "torch.uint8", "I8": "torch.int8", "U16": "torch.uint16", "I16": "torch.int16",
    "U32": "torch.uint32", "I32": "torch.int32", "U64": "torch.uint64", "I64": "torch.int64",
    "F16": "torch.float16", "BF16": "torch.bfloat16", "F32": "torch.float32", "F64": "torch.float64",
}


def check(root, entry, problems):
    path = os.path.join(root, entry["file"])
    try:
        data = open(path, "rb").read()
    except OSError as e:
        problems.append(f"{entry['file']}: {e}")
        return 0
    if len(data) != entry["bytes"]:
        problems.append(f"{entry['file']}: {len(data)} bytes, manifest says {entry['bytes']}")
    if hashlib.sha256(data).hexdigest() != entry["sha256"]:
        problems.append(f"{entry['file']}: SHA-256 differs from the manifest")
    want = {t["name"]: t for t in entry.get("tensors", entry.get("outputs", []))}
    n = 0
    try:
        with safe_open(path, framework="pt") as f:
            names = set(f.keys())
            if names != set(want):
                problems.append(f"{entry['file']}: tensors {sorted(names)}, manifest says {sorted(want)}")
            for name in sorted(names & set(want)):
                t = f.get_tensor(name)
                w = want[name]
                if str(t.dtype) != TORCH.get(w["dtype"], "?"):
                    problems.append(f"{entry['file']}: tensor {name!r}: dtype {t.dtype}, manifest says {w['dtype']}")
                if list(t.shape) != list(w["shape"]):
                    problems.append(f"{entry['file']}: tensor {name!r}: shape {list(t.shape)}, manifest says {w['shape']}")
                n += 1
    except Exception as e:  # a file safetensors cannot parse
        problems.append(f"{entry['file']}: safetensors could not load it: {e}")
    return n


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "data")
    manifest = json.load(open(os.path.join(root, "manifest.json")))
    problems, files, tensors = [], 0, 0
    for entry in manifest["inputs"] + manifest["cases"]:
        tensors += check(root, entry, problems)
        files += 1
    import safetensors
    print(f"suite {manifest['suite']}: {files} files, {tensors} tensors loaded with "
          f"safetensors {safetensors.__version__}; {len(problems)} problems")
    for p in problems:
        print("  " + p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
