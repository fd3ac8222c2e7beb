"""bxio: read a `bitexact export` folder, write a `bitexact certify` results folder.

One small module for every Python harness and every vendor. The core needs
only the standard library (safetensors is read and written by hand: an
8-byte little-endian header length, a JSON header, the raw bytes); numpy
arrays and torch tensors are accepted and returned where those libraries
are installed, and neither is imported unless used.

    import bxio
    exp = bxio.Export("/tmp/nvfp4")                  # bitexact export --suite nvfp4 --out /tmp/nvfp4
    with bxio.Results("/tmp/out", exp, implementation="my kernel", platform="H100") as res:
        for task in exp.tasks:
            x = task.torch("x", device="cuda")       # or task.numpy("x"), task.tensor("x").data
            res.write(task, {"packed": p, "scales": s, "global": g})
    # then: bitexact certify --suite nvfp4 --results /tmp/out

Every output is checked against suite.json before it is written: the names
must be exactly the task's output tensors, and each tensor's dtype and shape
must be those of some profile's expected output (a 1-byte torch or numpy
dtype, float8 included, is written as U8; bfloat16 as BF16). A mismatch is a
ValueError naming the task and tensor. Results are written to a temporary
folder beside OUT and renamed into place on close, so a failed run leaves no
half-written results folder (and an existing OUT is never overwritten).
"""
import json
import os
import shutil
import struct
import tempfile

RESULTS_FORMAT = "bitexact-results/1"
EXPORT_FORMAT = "bitexact-export/1"

# safetensors dtype -> (bytes per element, struct code or None).
DTYPES = {
    "U8": (1, "B"), "I8": (1, "b"), "BOOL": (1, "?"),
    "U16": (2, "H"), "I16": (2, "h"), "F16": (2, "e"), "BF16": (2, None),
    "U32": (4, "I"), "I32": (4, "i"), "F32": (4, "f"),
    "U64": (8, "Q"), "I64": (8, "q"), "F64": (8, "d"),
}


class Tensor:
    """One safetensors tensor: dtype (safetensors name), shape, raw
    little-endian bytes, and the logical format bitexact recorded for it
    (e2m1x2, e4m3, ...) or None."""

    def __init__(self, name, dtype, shape, data, logical=None):
        self.name, self.dtype, self.shape, self.data, self.logical = name, dtype, list(shape), bytes(data), logical

    def numel(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    def bits(self):
        """The elements as unsigned integers of the dtype's width (a list)."""
        size = DTYPES[self.dtype][0]
        code = {1: "B", 2: "H", 4: "I", 8: "Q"}[size]
        return list(struct.unpack("<%d%s" % (self.numel(), code), self.data))

    def numpy(self):
        """A numpy array of the tensor (BF16 as uint16 bits: numpy has no bfloat16)."""
        import numpy as np
        dt = {"U8": np.uint8, "I8": np.int8, "BOOL": np.bool_, "U16": np.uint16, "I16": np.int16,
              "F16": np.float16, "BF16": np.uint16, "U32": np.uint32, "I32": np.int32,
              "F32": np.float32, "U64": np.uint64, "I64": np.int64, "F64": np.float64}[self.dtype]
        return np.frombuffer(self.data, dtype=np.dtype(dt).newbyteorder("<")).reshape(self.shape).copy()

    def torch(self, device="cpu"):
        """A torch tensor of the tensor (BF16 as torch.bfloat16, built from its bits)."""
        import torch
        if self.dtype == "BF16":
            t = torch.frombuffer(bytearray(self.data), dtype=torch.int16).view(torch.bfloat16)
        else:
            dt = {"U8": torch.uint8, "I8": torch.int8, "BOOL": torch.bool, "I16": torch.int16,
                  "F16": torch.float16, "I32": torch.int32, "F32": torch.float32,
                  "I64": torch.int64, "F64": torch.float64}[self.dtype]
            t = torch.frombuffer(bytearray(self.data), dtype=dt) if self.data else torch.empty(0, dtype=dt)
        return t.reshape(self.shape).to(device)


def read_safetensors(path):
    """Reads a safetensors file into {name: Tensor}, with bitexact's
    `logical.<name>` metadata attached."""
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 8:
        raise ValueError("%s: truncated (no header length)" % path)
    (n,) = struct.unpack("<Q", raw[:8])
    if n > len(raw) - 8:
        raise ValueError("%s: header length %d exceeds the file" % (path, n))
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    meta = header.pop("__metadata__", {}) or {}
    body = raw[8 + n:]
    out = {}
    for name, h in header.items():
        lo, hi = h["data_offsets"]
        t = Tensor(name, h["dtype"], h["shape"], body[lo:hi], meta.get("logical." + name))
        if len(t.data) != t.numel() * DTYPES[t.dtype][0]:
            raise ValueError("%s: tensor %s has %d bytes, want %d" % (path, name, len(t.data), t.numel() * DTYPES[t.dtype][0]))
        out[name] = t
    return out


def write_safetensors(path, tensors):
    """Writes {name: Tensor} as a safetensors file (tensors in name order)."""
    header, off, blobs = {}, 0, []
    for name in sorted(tensors):
        t = tensors[name]
        header[name] = {"dtype": t.dtype, "shape": t.shape, "data_offsets": [off, off + len(t.data)]}
        off += len(t.data)
        blobs.append(t.data)
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * (-len(h) % 8)
    with open(path, "xb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


class Task:
    """One task of an export: name, params (the op parameters fixed for the
    task), inputs ({name: Tensor}, read on first use) and expected (the
    suite.json entries: per profile, its params and output descriptions)."""

    def __init__(self, root, desc):
        self.root, self.desc = root, desc
        self.name = desc["name"]
        self.params = dict(desc.get("params") or {})
        self.expected = desc.get("expected") or []
        self.result_file = desc["result_file"]
        self._inputs = None

    @property
    def inputs(self):
        if self._inputs is None:
            self._inputs = read_safetensors(os.path.join(self.root, self.desc["input_file"]))
        return self._inputs

    def tensor(self, name):
        return self.inputs[name]

    def numpy(self, name):
        return self.inputs[name].numpy()

    def torch(self, name, device="cpu"):
        return self.inputs[name].torch(device)

    def outputs(self):
        """{name: [(dtype, shape), ...]}: the output tensors some profile expects."""
        out = {}
        for e in self.expected:
            for o in e.get("outputs", []):
                k = (o["dtype"], list(o["shape"]))
                if k not in out.setdefault(o["name"], []):
                    out[o["name"]].append(k)
        return out


class Export:
    """A folder written by `bitexact export --suite SUITE --out DIR`."""

    def __init__(self, root):
        self.root = root
        with open(os.path.join(root, "suite.json"), encoding="utf-8") as f:
            self.suite_json = json.load(f)
        if self.suite_json.get("format") != EXPORT_FORMAT:
            raise ValueError("%s: suite.json format %r, want %r" % (root, self.suite_json.get("format"), EXPORT_FORMAT))
        self.suite = self.suite_json["suite"]
        self.suite_version = self.suite_json["suite_version"]
        self.op = self.suite_json["op"]
        self.tasks = [Task(root, t) for t in self.suite_json["tasks"]]

    def task(self, name):
        for t in self.tasks:
            if t.name == name:
                return t
        raise KeyError("suite %s has no task %r" % (self.suite, name))


def _as_tensor(name, value, want):
    """Converts a numpy array, torch tensor or Tensor to a Tensor whose dtype
    is one of the wanted [(dtype, shape)]."""
    if isinstance(value, Tensor):
        t = value
    else:
        mod = type(value).__module__.split(".")[0]
        if mod == "torch":
            import torch
            v = value.detach().to("cpu").contiguous()
            if v.dtype == torch.bfloat16:
                dtype, data = "BF16", v.view(torch.int16).numpy().tobytes()
            elif v.element_size() == 1 and v.dtype not in (torch.int8, torch.bool):
                dtype, data = "U8", v.view(torch.uint8).numpy().tobytes()
            else:
                dtype = {torch.int8: "I8", torch.bool: "BOOL", torch.int16: "I16", torch.float16: "F16",
                         torch.int32: "I32", torch.float32: "F32", torch.int64: "I64",
                         torch.float64: "F64"}[v.dtype]
                data = v.numpy().tobytes()
            t = Tensor(name, dtype, list(v.shape), data)
        elif mod == "numpy":
            import numpy as np
            v = np.ascontiguousarray(value)
            kind = {("u", 1): "U8", ("i", 1): "I8", ("b", 1): "BOOL", ("u", 2): "U16", ("i", 2): "I16",
                    ("f", 2): "F16", ("u", 4): "U32", ("i", 4): "I32", ("f", 4): "F32",
                    ("u", 8): "U64", ("i", 8): "I64", ("f", 8): "F64"}[(v.dtype.kind, v.dtype.itemsize)]
            t = Tensor(name, kind, list(v.shape), v.astype(v.dtype.newbyteorder("<")).tobytes())
        else:
            raise TypeError("output %s: %s is not a numpy array, torch tensor or bxio.Tensor" % (name, type(value)))
    for dtype, shape in want:
        if t.shape != shape:
            continue
        if t.dtype == dtype:
            return Tensor(name, dtype, shape, t.data)
        if dtype == "BF16" and t.dtype in ("U16", "I16"):  # bits of a bfloat16 tensor
            return Tensor(name, dtype, shape, t.data)
        if dtype == "U8" and DTYPES[t.dtype][0] == 1:
            return Tensor(name, dtype, shape, t.data)
    raise ValueError("output %s: %s %s, want one of %s" % (name, t.dtype, t.shape, want))


class Results:
    """A results folder for `bitexact certify --suite SUITE --results OUT`.

    implementation: what ran (required); platform: where (optional);
    profile: the claim (optional; without it certify holds the results to
    the profile they match). Use as a context manager, or call close()."""

    def __init__(self, out, export, implementation, platform=None, profile=None):
        if os.path.lexists(out):
            raise FileExistsError("results folder %s exists; bxio never overwrites one" % out)
        self.out, self.export = out, export
        self.meta = {"format": RESULTS_FORMAT, "suite": export.suite, "suite_version": export.suite_version,
                     "implementation": implementation}
        if platform:
            self.meta["platform"] = platform
        if profile:
            self.meta["profile"] = profile
        parent = os.path.dirname(os.path.abspath(out))
        os.makedirs(parent, exist_ok=True)
        self.tmp = tempfile.mkdtemp(prefix=".bxio-", dir=parent)
        self.written = []

    def write(self, task, outputs):
        """Writes one task's outputs ({name: array or tensor})."""
        if isinstance(task, str):
            task = self.export.task(task)
        if task.name in self.written:
            raise ValueError("task %s written twice" % task.name)
        want = task.outputs()
        if set(outputs) != set(want):
            raise ValueError("task %s: outputs %s, want exactly %s" % (task.name, sorted(outputs), sorted(want)))
        tensors = {n: _as_tensor(n, v, want[n]) for n, v in outputs.items()}
        write_safetensors(os.path.join(self.tmp, task.result_file), tensors)
        self.written.append(task.name)

    def close(self):
        """Writes results.json for the tasks written and moves the folder into place."""
        meta = dict(self.meta, tasks=list(self.written))
        with open(os.path.join(self.tmp, "results.json"), "x", encoding="utf-8") as f:
            json.dump(meta, f, indent=1)
            f.write("\n")
        os.rename(self.tmp, self.out)

    def abort(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        else:
            self.abort()
        return False
