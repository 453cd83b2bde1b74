"""The package's shape: its folders are its layers, a module imports only from its own layer or the ones below, and
no two modules import each other, however indirectly.

The import graph is read from every module's syntax tree, the imports inside functions (loaded on first use)
included: a lazy import is still an arrow between modules.
"""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "nao_ik"

#: Lowest first: a module may import from its own layer and the ones before it. ``data`` holds the shipped weights.
#: ``service`` (the computer's) and ``robot`` (the on-robot runtime) stand side by side; training, evidence and
#: tools use the core and the service; ``cli`` dispatches to all of them.
LAYERS = [
    ("model", "data"),
    ("kinematics",),
    ("geometry",),
    ("nn",),
    ("solvers",),
    ("api",),
    ("recipes", "__init__"),  # __init__: the flat public API re-exports api, model, solvers and plan_path
    ("motion",),  # the motion core (no qi, no I/O) both hosts' services decide by
    ("service", "robot"),
    ("training",),
    ("evidence",),
    ("tools",),
    ("cli",),
]
RANK = {name: i for i, names in enumerate(LAYERS) for name in names}
#: The only module files directly in nao_ik/.
TOP_FILES = {"__init__.py", "cli.py"}
#: What the core (model up to recipes) must load without: the optional extras and libqi.
OPTIONAL = ("torch", "viser", "ikpy", "qi", "matplotlib", "pinocchio", "pytracik")


def _name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _resolve(name: str) -> str:
    """The most specific module of the package that ``name`` (a module, or a module's attribute) names."""
    while name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def imports(module: str) -> list:
    """(imported module, line) for every import of the package in ``module``, at any depth of its code."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                depth = len(package.split("."))
                assert node.level <= depth, f"{path.relative_to(ROOT)}:{node.lineno}: a relative import above nao_ik"
                base = package.split(".")[: depth - node.level + 1]
                full = ".".join(base + ([node.module] if node.module else []))
            else:
                full = node.module or ""
            if full.split(".")[0] != "nao_ik":
                continue
            for alias in node.names:  # from a package import a module: the arrow goes to that module
                sub = f"{full}.{alias.name}"
                out.append((sub if sub in MODULES else _resolve(full), node.lineno))
        elif isinstance(node, ast.Import):
            out += [(_resolve(a.name), node.lineno) for a in node.names if a.name.split(".")[0] == "nao_ik"]
    return [(m, line) for m, line in out if m != module]


GRAPH = {m: imports(m) for m in MODULES}


def test_every_module_is_in_a_layer_and_only_the_api_and_the_command_sit_at_the_top():
    loose = sorted(p.name for p in PACKAGE.glob("*.py") if p.name not in TOP_FILES)
    assert not loose, f"modules directly in nao_ik/: {loose} (each belongs in a layer's folder)"
    unplaced = sorted(m for m in MODULES if _layer(m) not in RANK)
    assert not unplaced, f"{unplaced} in no layer: add the folder to LAYERS"


def test_no_module_imports_a_layer_above_its_own():
    upward = set()
    for module, found in GRAPH.items():
        own = RANK[_layer(module)]
        for other, line in found:
            if RANK[_layer(other)] > own:
                upward.add(f"{MODULES[module].relative_to(ROOT)}:{line} imports {other} ({_layer(other)} is above "
                              f"{_layer(module)})")  # fmt: skip
    assert not upward, "\n".join(sorted(upward))


def cycles(graph: dict) -> list:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index, low, stack, on, out, count = {}, {}, [], set(), [], 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted({m for m, _ in graph[root]})))]
        index[root] = low[root] = count
        count += 1
        stack.append(root)
        on.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = count
                    count += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted({m for m, _ in graph[nxt]}))))
                    break
                if nxt in on:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        m = stack.pop()
                        on.discard(m)
                        component.append(m)
                        if m == node:
                            break
                    if len(component) > 1:
                        out.append(sorted(component))
    return out


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a": [("b", 1)], "b": [("c", 1)], "c": [("a", 1), ("d", 1)], "d": []}
    assert cycles(graph) == [["a", "b", "c"]] and cycles({"a": [("b", 1)], "b": []}) == []


def test_no_import_cycle_between_modules():
    found = cycles(GRAPH)
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_core_loads_without_the_optional_extras_and_libqi():
    core = sorted(m for m in MODULES if RANK[_layer(m)] <= RANK["recipes"])
    code = (
        f"import importlib, sys\nfor m in {core!r}:\n    importlib.import_module(m)\nimport nao_ik.cli\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({OPTIONAL!r})))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]", f"the core loaded {run.stdout.strip()}"
