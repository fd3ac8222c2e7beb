"""pysrc: run a library's own Python definitions without importing its package.

Quantization libraries import far more than their arithmetic needs (triton
kernels, pydantic configs, distributed tensors, C++ extensions), and an old
release often fails to import under today's torch. A harness therefore
loads only the definitions it calls, from the library's source files at a
pinned commit, and executes their text unchanged:

    ns = {"torch": torch}
    pysrc.load("ao/torchao/prototype/custom_fp_utils.py", ["_f32_to_floatx_unpacked"], ns)
    pysrc.load("ao/.../nvfp4_tensor.py", ["nvfp4_quantize", "NVFP4Tensor.dequantize"], ns)
    ns["nvfp4_quantize"](x, 16, scale)

A name is a top-level function, class or assigned variable ("E4M3_EPS"; an
assignment of several names runs whole), or
"Class.method" for one method of a class (bound to nothing: the caller
passes self or cls). Decorators of functions and methods are dropped and
listed in the returned report: the libraries' decorators here are
torch.no_grad, classmethod/staticmethod and backend-dispatch wrappers that
fall back to the decorated body when no accelerated backend is registered,
so the body is what runs either way; a harness must say where that is not
so. Classes keep their method decorators. Nothing else of the file runs.
"""
import ast


def _targets(targets):
    """The names an assignment binds (a = ..., a, b = ...)."""
    out = set()
    for t in targets:
        for n in ast.walk(t):
            if isinstance(n, ast.Name):
                out.add(n.id)
    return out


def _find(tree, name):
    cls, _, meth = name.partition(".")
    for node in tree.body:
        if meth:
            if isinstance(node, ast.ClassDef) and node.name == cls:
                for f in node.body:
                    if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name == meth:
                        return f
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return node
        elif isinstance(node, ast.Assign) and name in _targets(node.targets):
            return node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            return node
    return None


def load(path, names, ns):
    """Executes the named definitions of the Python file at path into the
    dict ns (which must already hold what they refer to at call time), in
    the order given. Returns a list of report lines: one per definition
    whose decorators were dropped. Raises KeyError for a name not found."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    tree = ast.parse(text, filename=path)
    # The file's __future__ imports (annotations, mostly) govern how its
    # definitions compile.
    future = [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == "__future__"]
    report = []
    for name in names:
        node = _find(tree, name)
        if node is None:
            raise KeyError("%s: no top-level definition %r" % (path, name))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.decorator_list:
            report.append("%s: dropped decorators %s" % (name, ", ".join(ast.get_source_segment(text, d) or "?" for d in node.decorator_list)))
            node.decorator_list = []
        code = compile(ast.Module(body=future + [node], type_ignores=[]), path, "exec")
        if "." in name:
            local = {}
            exec(code, ns, local)
            ns[name] = local[node.name]
        else:
            exec(code, ns)
    return report
