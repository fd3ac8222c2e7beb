#!/usr/bin/env python3
"""bitexact harness for compressed-tensors' MXFP4 weight path
(vllm-project/compressed-tensors), run as llm-compressor drives it.

For a weight w [M, K] (the task's x, in the dtype the suite gives:
float32, bfloat16 or float16, on the device) and the preset scheme
MXFP4A16 (4-bit float weights, group 32, uint8 E8M0 scales):

    args = MXFP4A16["weights"]                       # quant_scheme.py's preset
    g = w.reshape(M, K // 32, 32)
    mn, mx = torch.amin(g, dim=-1), torch.amax(g, dim=-1)   # the min-max observer's reduction
    scale, zp = calculate_qparams(mn, mx, args)
    sd = MXFP4PackedCompressor.compress({"weight": w, "weight_scale": scale,
                                         "weight_zero_point": zp}, scheme)
    packed, scales = sd["weight_packed"], sd["weight_scale"]

(mxfp4, mxfp4-from-bf16, mxfp4-from-fp16). For e8m0-scale the scale of a
float32 block [amax, 0 x 31] through the same calls. The observer's
reduction (per-group amin and amax, as llm-compressor's MinMax observer
computes for strategy "group") is the only line not taken from
compressed-tensors.

    python3 mx.py --src CT_TREE --commit SHA --export-root EXPORTS --out OUT [--devices cpu,cuda]

CT_TREE is compressed-tensors' src/ folder. The package needs pydantic
(QuantizationArgs and the schemes are pydantic models), which the device
does not have, so the harness does not import it: it compiles the code it
runs from the files' text, each file's top-level statements verbatim, with
these changes only (see LOADS below):

  - `from compressed_tensors... import`, `from pydantic import`,
    `from loguru import` and `from transformers import` lines are dropped; the names they bound are the
    definitions compiled here (one namespace for all files), or, where
    nothing here defines them (names used only in annotations or in code
    this path never runs), a placeholder that raises if used;
  - loguru's logger is a no-op object (logging only);
  - of utils/helpers.py only the class Aliasable (ActivationOrdering's
    base); quant_args.py without the class QuantizationArgs (a pydantic model);
    QuantizationArgs is a plain object: its field defaults as
    quant_args.py declares them, the preset's keyword arguments
    (quant_scheme.py's MXFP4A16 assignment, compiled from the text),
    pydantic's use_enum_values (enum fields hold their .value), and then
    quant_args.py's own validate_model_after (compiled from the class's
    text) run on it, as pydantic runs it after construction;
  - of quantization/utils/helpers.py only calculate_qparams,
    calculate_range, _get_dtype_eps, calculate_block_padding,
    maybe_pad_tensor_for_block_quant; of lifecycle/forward.py only
    quantize and _process_quantization;
  - MXFP4PackedCompressor is a plain class holding the methods this path
    calls, compiled from their text: compress (compressors/nvfp4/base.py,
    inherited), _compress_scale (compressors/mxfp4/base.py) and
    _remove_symmetric_zp (compressors/base.py); the scheme is a plain
    object with weights = args and no activations;
  - the module compressed_tensors.quantization.utils.fp4_utils, which
    FP4_E2M1_DATA.cast_to_fp4 imports when called, is the compiled
    fp4_utils.py.

Every Triton backend on this path (cast_to_fp4_triton, _quantize_triton,
pack_fp4_to_uint8_triton) is registered with priority "disable", which
ImplBackend.register skips, so the torch fallbacks run on CPU and CUDA
alike; the harness compiles the Triton definitions too (triton.jit reads
them from the source files) and records whether triton imported.
"""
import argparse
import ast
import json
import os
import sys
import traceback
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import bxio  # noqa: E402

QUANT_SUITES = ["mxfp4", "mxfp4-from-bf16", "mxfp4-from-fp16"]
STUBBED_IMPORTS = ("compressed_tensors", "pydantic", "loguru", "transformers")

# (file under compressed_tensors/, names to keep or None for every top-level
# statement, classes to drop)
LOADS = [
    ("utils/helpers.py", ("Aliasable",), ()),
    ("utils/triton.py", None, ()),
    ("utils/impl_backend.py", None, ()),
    ("quantization/quant_args.py", None, ("QuantizationArgs",)),
    ("quantization/utils/fp4_utils.py", None, ()),
    ("quantization/utils/mxfp_utils.py", None, ()),
    ("quantization/utils/helpers.py", ("calculate_qparams", "calculate_range", "_get_dtype_eps",
                                       "calculate_block_padding", "maybe_pad_tensor_for_block_quant"), ()),
    ("quantization/lifecycle/forward_helpers.py", None, ()),
    ("quantization/lifecycle/forward.py", ("quantize", "_process_quantization"), ()),
    ("compressors/nvfp4/helpers.py", None, ()),
    ("compressors/mx_utils.py", None, ()),
]


class _NoLog:
    def __getattr__(self, name):
        return lambda *a, **k: self


class _Missing:
    """A name a dropped import bound that nothing compiled here defines."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        raise NameError("compressed-tensors name %r is not compiled by this harness" % self._name)

    def __call__(self, *a, **k):
        raise NameError("compressed-tensors name %r is not compiled by this harness" % self._name)


def _strip_imports(nodes, ns):
    out = []
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in STUBBED_IMPORTS:
            for al in node.names:
                n = al.asname or al.name
                if n not in ns:
                    ns[n] = _Missing(n)
            continue
        out.append(node)
    return out


def _defined(node):
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    return []


def compile_file(root, rel, keep, drop, ns):
    path = os.path.join(root, "compressed_tensors", rel)
    tree = ast.parse(open(path).read(), path)
    body = []
    for node in _strip_imports(tree.body, ns):
        names = _defined(node)
        if isinstance(node, ast.ClassDef) and node.name in drop:
            ns.setdefault(node.name, _Missing(node.name))  # annotations name it
            continue
        if keep is not None and not isinstance(node, (ast.Import, ast.ImportFrom)) and not (set(names) & set(keep)):
            continue
        body.append(node)
    # Names the compiled code defines replace placeholders from earlier files.
    exec(compile(ast.Module(body=body, type_ignores=[]), path, "exec"), ns)
    return tree


def load_ct(root, torch):
    ns = {"__name__": "compressed_tensors_harness", "__builtins__": __builtins__}
    lg = types.ModuleType("loguru")
    lg.logger = _NoLog()
    sys.modules.setdefault("loguru", lg)
    ns["logger"] = _NoLog()
    trees = {}
    for rel, keep, drop in LOADS:
        trees[rel] = compile_file(root, rel, keep, drop, ns)
    # FP4_E2M1_DATA.cast_to_fp4 imports fp4_utils at call time.
    for pkg in ("compressed_tensors", "compressed_tensors.quantization", "compressed_tensors.quantization.utils"):
        if pkg not in sys.modules:
            m = types.ModuleType(pkg)
            m.__path__ = []
            sys.modules[pkg] = m
    fu = types.ModuleType("compressed_tensors.quantization.utils.fp4_utils")
    fu.cast_to_fp4 = ns["cast_to_fp4"]
    sys.modules[fu.__name__] = fu

    # QuantizationArgs: field defaults from the class's annotated
    # assignments, validate_model_after from its text.
    qa_tree = ast.parse(open(os.path.join(root, "compressed_tensors/quantization/quant_args.py")).read())
    qa = [n for n in qa_tree.body if isinstance(n, ast.ClassDef) and n.name == "QuantizationArgs"][0]
    defaults = {}
    for n in qa.body:
        if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name) and n.value is not None:
            v = n.value
            if isinstance(v, ast.Call) and getattr(v.func, "id", "") == "Field":
                kw = {k.arg: k.value for k in v.keywords}
                defaults[n.target.id] = ("factory", kw["default_factory"]) if "default_factory" in kw else ("value", kw["default"])
            else:
                defaults[n.target.id] = ("value", v)
    vma = [n for n in qa.body if isinstance(n, ast.FunctionDef) and n.name == "validate_model_after"][0]
    vma.decorator_list = []  # @model_validator(mode="after"): called below as pydantic calls it
    exec(compile(ast.Module(body=[vma], type_ignores=[]),
                 os.path.join(root, "compressed_tensors/quantization/quant_args.py"), "exec"), ns)

    class QuantizationArgs:
        def __init__(self, **kw):
            for name, (how, expr) in defaults.items():
                v = eval(compile(ast.Expression(expr), "<default>", "eval"), ns)
                setattr(self, name, v() if how == "factory" else v)
            for k, v in kw.items():
                setattr(self, k, v)
            ns["validate_model_after"](self)
            for k in ("type", "strategy", "dynamic", "actorder"):  # use_enum_values
                v = getattr(self, k)
                if isinstance(v, ns["Enum"] if "Enum" in ns else ()):
                    setattr(self, k, v.value)

        def pytorch_dtype(self):  # only reached for zp_dtype None; the preset sets it
            raise NotImplementedError

    ns["QuantizationArgs"] = QuantizationArgs
    sc_path = os.path.join(root, "compressed_tensors/quantization/quant_scheme.py")
    sc_tree = ast.parse(open(sc_path).read(), sc_path)
    pre = [n for n in sc_tree.body if isinstance(n, ast.Assign) and _defined(n) == ["MXFP4A16"]]
    exec(compile(ast.Module(body=pre, type_ignores=[]), sc_path, "exec"), ns)

    # MXFP4PackedCompressor: the methods this path calls.
    meths = []
    for rel, cls, names in (("compressors/nvfp4/base.py", "NVFP4PackedCompressor", ("compress",)),
                            ("compressors/mxfp4/base.py", "MXFP4PackedCompressor", ("_compress_scale",)),
                            ("compressors/base.py", "BaseCompressor", ("_remove_symmetric_zp",))):
        p = os.path.join(root, "compressed_tensors", rel)
        t = ast.parse(open(p).read(), p)
        _strip_imports(t.body, ns)
        c = [n for n in t.body if isinstance(n, ast.ClassDef) and n.name == cls][0]
        fs = [n for n in c.body if isinstance(n, ast.FunctionDef) and n.name in names]
        # The class without its bases and registry decorator, holding only
        # the methods this path calls.
        c.name, c.bases, c.keywords, c.decorator_list, c.body = "_C", [], [], [], fs
        exec(compile(ast.Module(body=[c], type_ignores=[]), p, "exec"), ns)
        meths += [(f.name, ns["_C"].__dict__[f.name]) for f in fs]
    comp = type("MXFP4PackedCompressor", (), dict(meths))
    return ns, comp


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", required=True)
    ap.add_argument("--commit", required=True)
    ap.add_argument("--export-root", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--devices", default="cpu,cuda")
    a = ap.parse_args()
    import torch
    os.makedirs(a.out, exist_ok=True)
    log = {"compressed-tensors": a.commit, "torch": torch.__version__, "runs": [], "skipped": [],
           "loaded": "compiled from source text, see the harness doc"}
    try:
        ns, comp = load_ct(os.path.abspath(a.src), torch)
        args = ns["MXFP4A16"]["weights"]
        log["args"] = {k: str(v) for k, v in sorted(vars(args).items())}
        log["has_triton"] = bool(ns.get("HAS_TRITON"))
    except Exception as ex:  # noqa: BLE001
        log["load_error"] = "".join(traceback.format_exception(type(ex), ex, ex.__traceback__))[-3000:]
        print("compressed-tensors load failed:", log["load_error"], flush=True)
        with open(os.path.join(a.out, "log.json"), "w") as f:
            json.dump(log, f, indent=1)
        return
    scheme = types.SimpleNamespace(weights=args, input_activations=None, output_activations=None)
    calculate_qparams = ns["calculate_qparams"]
    ident = "compressed-tensors %s" % a.commit[:12]

    def compress(w):
        m, k = w.shape
        g = w.reshape(m, k // 32, 32)
        mn, mx = torch.amin(g, dim=-1), torch.amax(g, dim=-1)
        scale, zp = calculate_qparams(mn, mx, args)
        sd = comp.compress({"weight": w, "weight_scale": scale, "weight_zero_point": zp}, scheme)
        return sd["weight_packed"], sd["weight_scale"]

    def quant(task, dev):
        x = task.torch("x", device=dev)
        m, k = x.shape
        p, s = compress(x)
        return {"packed": p.view(torch.uint8).reshape(m, k // 2), "scales": s.view(torch.uint8).reshape(m, k // 32)}

    def shared(task, dev):
        amax = task.torch("amax", device=dev)
        blk = torch.zeros(amax.shape[0], 32, dtype=torch.float32, device=dev)
        blk[:, 0] = amax
        _, s = compress(blk)
        return {"scale": s.view(torch.uint8).reshape(amax.shape)}

    def platform_of(device):
        import platform
        if device == "cuda":
            return "%s, torch %s, CUDA %s" % (torch.cuda.get_device_name(), torch.__version__, torch.version.cuda)
        return "CPU %s, torch %s" % (platform.machine(), torch.__version__)

    def run(suite, device, fn, what):
        exp = bxio.Export(os.path.join(a.export_root, suite))
        out = os.path.join(a.out, suite, device)
        try:
            with bxio.Results(out, exp, implementation="%s %s" % (ident, what), platform=platform_of(device)) as res:
                for task in exp.tasks:
                    res.write(task, fn(task, device))
            log["runs"].append(out)
            print("wrote", out, flush=True)
        except Exception as ex:  # noqa: BLE001
            msg = "".join(traceback.format_exception(type(ex), ex, ex.__traceback__))[-1500:]
            log["skipped"].append({"suite": suite, "device": device, "error": msg})
            print("SKIP", suite, device, msg, flush=True)

    devices = [d for d in a.devices.split(",") if d and (d != "cuda" or torch.cuda.is_available())]
    for device in devices:
        for suite in QUANT_SUITES:
            run(suite, device, quant, "MXFP4A16: calculate_qparams + MXFP4PackedCompressor.compress (compiled from source)")
        run("e8m0-scale", device, shared, "MXFP4A16 scale of [amax, 0 x 31]")
    with open(os.path.join(a.out, "log.json"), "w") as f:
        json.dump(log, f, indent=1)


if __name__ == "__main__":
    main()
