"""The package's layers import only downward: a module never imports one from a layer above it."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "nao_ik"

#: Lowest first. A module may import from its own layer and the ones before it.
LAYERS = [
    ("data", "arm_data", "body_data", "ops", "model", "validate", "body"),
    ("kinematics",),
    ("geometry", "collision"),  # collision: the scalar clearance is geometry.scalar_clearance
    ("nn", "cells"),  # learned models the network solvers evaluate
    ("solvers",),
    ("api", "all_solutions", "continuity", "pose", "sweep", "frames", "reachability", "pointing", "both_arms", "grasp"),
    (
        "track",
        "path_plan",
        "path_bench",
        "bench",
        "workspace",
        "pose_bench",
        "interval_bench",
        "nearest_bench",
        "report",
        "report_alone",
        "report_stats",
        "report_fig3",
        "report_sec53",
        "report_peers",
        "report_ot",
        "report_ot_track",
        "report_ot_fm",
        "report_planar",
        "report_kt",
        "report_kt_net",
        "report_kt_pose",
        "body_bench",
    ),
    # the services: the computer's (its surface, engine, answers, decoder, serving and supervisor) and the robot's
    ("service", "robot"),
    # view: the optional live 3-D view (extra "view"); body_report: `nao-ik bench --body`, which times reachTo over qi
    ("loadtest", "latency", "demo", "view", "body_report"),
    ("cli", "robot_pkg"),
]
RANK = {name: i for i, names in enumerate(LAYERS) for name in names}
#: The training tools of nn/ use the public API and the benchmark; they are commands, not the core's path.
COMMANDS = {"nn/cli.py", "nn/train.py", "nn/modular_learning.py"}


def _top(module: str) -> str:
    return module.split(".")[0]


def _imports(path: Path) -> list:
    """(imported top-level nao_ik module, line) for every relative or nao_ik import in the file."""
    rel = path.relative_to(PACKAGE)
    depth = len(rel.parts) - 1
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(rel.parts[: depth - (node.level - 1)]) if node.level <= depth + 1 else []
                parts = base + (node.module.split(".") if node.module else [])
                names = [parts[0]] if parts else [a.name for a in node.names]
            elif node.module and node.module.startswith("nao_ik."):
                names = [node.module.split(".")[1]]
            else:
                continue
            out += [(n, node.lineno) for n in names]
    return out


def test_no_module_imports_a_layer_above_its_own():
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if str(rel) in COMMANDS or rel.name == "__init__.py" and len(rel.parts) == 1:
            continue
        own = RANK.get(rel.parts[0].removesuffix(".py"))
        assert own is not None, f"{rel} is in no layer: add it to LAYERS"
        for name, line in _imports(path):
            other = RANK.get(_top(name))
            if other is not None and other > own:
                upward.append(f"{rel}:{line} imports {name} (layer {other} > {own})")
    assert not upward, "\n".join(upward)
