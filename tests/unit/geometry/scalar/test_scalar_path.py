"""The scalar path in plain floats (``geometry/scalar_*.py``, ``intervals.py``): the same answers as the
elementwise code, an extra constraint honoured, and the common subset of Python 2.7 and 3 (run under 2.7
where one is installed)."""

import ast
import glob
import json
import math
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from nao_ik.geometry.nearest import move_time, nearest
from nao_ik.geometry.scalar import nearest as scalar_nearest
from nao_ik.geometry.scalar import swivel as scalar_swivel
from nao_ik.geometry.scalar.intervals import all_intervals
from nao_ik.geometry.swivel import circle, margin_at
from nao_ik.kinematics import chain as kinematics
from nao_ik.kinematics.ops import ARRAY, SCALAR
from nao_ik.model.arm import arm_model

SCALAR_DIR = Path(__file__).resolve().parents[4] / "nao_ik" / "geometry" / "scalar"
#: The modules of the scalar path: no numpy, Python 2.7 and 3.
SCALAR_MODULES = ("swivel.py", "search.py", "nearest.py", "intervals.py")


def _pairs(arm: str, n: int, seed: int) -> tuple:
    """(model, targets, starts): random goal configurations' hands (some moved off), random starts, wrists turned."""
    model = arm_model(arm)
    rng = np.random.default_rng(seed)
    goal = rng.uniform(model.lower, model.upper, (n, 5))
    start = rng.uniform(model.lower, model.upper, (n, 5))
    goal[:, 4] = start[:, 4]
    t = kinematics.forward_batch(model, goal)
    t[::5] += rng.normal(scale=0.02, size=t[::5].shape)
    return model, t, start


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_float_configurations_equal_the_elementwise_ones(arm):
    model, t, start = _pairs(arm, 40, 1)
    model = model._replace(body=())  # the limits' margins alone (margin_at adds the body's where there is one)
    k = scalar_swivel.arm(model)
    for ti, q0 in zip(t.tolist(), start.tolist()):
        c = scalar_swivel.circle(k, ti, q0[4])
        ce = circle(model, ti, q0[4], SCALAR)
        assert np.allclose(c.hand, ce.hand, atol=1e-15) and c.reachable == ce.reachable
        ch = kinematics.chain(model, q0, SCALAR)
        assert np.allclose(scalar_swivel.hand_point(k, q0), ch.hand, atol=1e-15)
        assert np.allclose(scalar_swivel.elbow_point(k, q0[0], q0[1]), ch.origins[2], atol=1e-15)
        for phi in np.linspace(-math.pi, math.pi, 13).tolist():
            q1, q2, e0, r0, e1, r1, excess = scalar_swivel.configurations(k, c, phi)
            margins = scalar_swivel.margins(k, c, q1, q2, e0, r0, e1, r1, excess)
            for branch, (e, r) in enumerate(((e0, r0), (e1, r1))):
                q, m = margin_at(model, ce, phi, SCALAR, branch)
                wrap = math.remainder(e - q[2], 2 * math.pi)  # ElbowYaw at +-pi may land on either side
                assert abs(q1 - q[0]) < 1e-12 and abs(q2 - q[1]) < 1e-12 and abs(wrap) < 1e-9 and abs(r - q[3]) < 1e-9
                assert abs(margins[branch] - m) < 1e-9 or min(margins[branch], m) > 1.0


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_the_sampled_solutions_are_the_batch_ones(arm):
    """:func:`samples` (the robot runtime's other solutions) are :func:`swivel_samples`' allowed ones, in order:
    on targets reachable, moved off (some out of reach) and with the wrist turned; each puts the hand on the
    target."""
    from nao_ik.geometry.sampled import SWIVELS, swivel_samples

    model, t, start = _pairs(arm, 60, 4)
    k = scalar_swivel.arm(model)
    some = 0
    for ti, q0 in zip(t, start.tolist()):
        angles, inside = swivel_samples(model, ti[None], np.array([q0[4]]))
        theirs = angles.reshape(-1, 5)[inside.ravel()]
        mine = np.array(scalar_swivel.samples(k, ti.tolist(), q0[4], SWIVELS)).reshape(-1, 5)
        assert mine.shape == theirs.shape and np.allclose(mine, theirs, atol=1e-12, rtol=0.0)
        if mine.size:
            some += 1
            assert np.abs(kinematics.forward_batch(model, mine) - ti).max() < 1e-9
    assert some >= 20, some


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_the_scalar_and_the_batch_search_agree(arm):
    """One search, two backends (the scalar one adds the folds and the blocked start's intervals).

    They find the same targets; their move times agree to 1e-5 s (the precision to which either places a
    swivel on a limit) but where the ring, evaluated in different rounding, lands in another basin: the
    scalar answer may then be the farther on a few targets in a hundred at most.
    """
    model, t, start = _pairs(arm, 150, 2)
    batch = nearest(model, [t[:, i] for i in range(3)], [start[:, i] for i in range(5)], ARRAY)
    sec, found = np.broadcast_to(batch.seconds, (150,)), np.broadcast_to(batch.found, (150,))
    worse = 0
    for i in range(150):
        one = nearest(model, t[i].tolist(), start[i].tolist(), SCALAR)
        assert one.found == found[i], i
        if one.found:
            worse += one.seconds > sec[i] + 1e-5
            assert model.within_limits(one.q, 1e-9)
            assert np.linalg.norm(kinematics.forward(model, one.q) - t[i]) < 1e-9 or i % 5 == 0
    assert worse <= 2, worse


def test_an_extra_constraint_gives_the_nearest_configuration_it_allows():
    """A per-configuration margin (negative = forbidden), as the body's clearance will plug in."""
    model, t, start = _pairs("LArm", 60, 3)
    k = scalar_swivel.arm(model)

    def extra(q):  # ShoulderRoll kept below 0.5 rad: a wall the closed-form boundaries do not know
        return 0.5 - q[1]

    phis = np.linspace(-math.pi, math.pi, 7201).tolist()
    checked = 0
    for ti, q0 in zip(t.tolist(), start.tolist()):
        q0[1] = min(q0[1], 0.5)
        q, _, sec, found, c, _ = scalar_nearest.nearest(model, ti, q0, extra)
        best = math.inf
        for phi in phis:  # dense samples of both branches, both margins
            q1, q2, e0, r0, e1, r1, ex = scalar_swivel.configurations(k, c, phi)
            for m, qs in zip(scalar_swivel.margins(k, c, q1, q2, e0, r0, e1, r1, ex), ((e0, r0), (e1, r1))):
                cand = [q1, q2, qs[0], qs[1], q0[4]]
                if m >= -1e-9 and extra(cand) >= -1e-9:
                    best = min(best, move_time(model, cand, q0, SCALAR))
        if found:
            assert extra(q) >= -1e-9 and model.within_limits(q, 1e-9)
            assert sec <= best + 1e-5, (ti, sec, best)
            checked += 1
        else:
            assert best == math.inf or not c.reachable
    assert checked > 30


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_the_searchs_fused_evaluations_are_the_swivel_modules_numbers(arm):
    """Search.both / point / angles / margin: configurations, margins and the move time, the same floats exactly."""
    model, t, start = _pairs(arm, 40, 5)
    k = scalar_swivel.arm(model)
    slack = scalar_swivel.SLACK

    calls = []

    def wall(q):
        calls.append(1)
        return 0.3 - q[1]

    for ti, q0 in zip(t.tolist(), start.tolist()):
        c = scalar_swivel.circle(k, ti, q0[4])
        for extra in (None, wall):
            search = scalar_nearest.Search(k, c, q0, extra)
            for phi in np.linspace(-4.0, 4.0, 29).tolist():
                q1, q2, e0, r0, e1, r1, excess = scalar_swivel.configurations(k, c, phi)
                m0, m1 = scalar_swivel.margins(k, c, q1, q2, e0, r0, e1, r1, excess)
                qa, qb = [q1, q2, e0, r0, c.wrist], [q1, q2, e1, r1, c.wrist]
                if extra is not None:
                    m0, m1 = min(m0, extra(qa)), min(m1, extra(qb))
                w = k.w
                shared = max(abs(q1 - q0[0]) * w[0], abs(q2 - q0[1]) * w[1], abs(c.wrist - q0[4]) * w[4])
                t0 = max(shared, abs(e0 - q0[2]) * w[2], abs(r0 - q0[3]) * w[3]) if m0 >= -slack else math.inf
                t1 = max(shared, abs(e1 - q0[2]) * w[2], abs(r1 - q0[3]) * w[3]) if m1 >= -slack else math.inf
                want = ((qa, t0, -m0), (qb, t1, -m1))
                assert repr(search.both(phi)) == repr(want)
                for b in (0, 1):
                    assert repr(search.point(phi, b)) == repr(want[b])
                    assert repr(search.margin(phi, b)) == repr(-want[b][2])
                    n = len(calls)
                    assert repr(search.angles(phi, b)) == repr(tuple(want[b][0][:4]))
                    assert len(calls) == n  # a derivative's angles: no extra constraint
            assert search.evaluations == 29 * 5


def _python2() -> str | None:
    pyenv = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/2.7*/bin/python2.7")))
    for path in [shutil.which("python2.7")] + pyenv:
        if path and subprocess.run([path, "-c", "pass"], capture_output=True).returncode == 0:
            return path
    return None


def test_the_scalar_modules_keep_to_the_common_subset_of_python_2_and_3():
    for name in SCALAR_MODULES:
        source = (SCALAR_DIR / name).read_text()
        tree = ast.parse(source)
        assert "from __future__ import division" in source, name
        for node in ast.walk(tree):
            where = f"{name}:{getattr(node, 'lineno', '?')}"
            assert not isinstance(node, (ast.JoinedStr, ast.NamedExpr, ast.Nonlocal, ast.YieldFrom, ast.AnnAssign))
            if isinstance(node, (ast.FunctionDef, ast.Lambda)):
                a = node.args
                assert not a.kwonlyargs and not a.posonlyargs, where
                assert all(x.annotation is None for x in a.args + [a.vararg, a.kwarg] if x is not None), where
                assert not isinstance(node, ast.FunctionDef) or node.returns is None, where
            if isinstance(node, ast.Import):
                assert all(alias.name in ("math",) for alias in node.names), where
            if isinstance(node, ast.ImportFrom):  # typing only for the type comments, inside a try
                assert node.level == 1 or node.module in ("__future__", "typing"), where
                assert node.module in (None, "__future__", "typing", *(m[:-3] for m in SCALAR_MODULES)), where


_PY2_SCRIPT = """
import collections, json, sys
sys.path.insert(0, sys.argv[1])
from pkg import intervals, nearest as scalar_nearest
Joint = collections.namedtuple("Joint", "offset lower upper max_velocity")
Model = collections.namedtuple("Model", "joints hand_offset")
data = json.load(sys.stdin)
model = Model(tuple(Joint(tuple(j[0]), j[1], j[2], j[3]) for j in data["joints"]), tuple(data["hand"]))
out = []
for t, q0 in zip(data["targets"], data["starts"]):
    q, phi, sec, found, c, _ = scalar_nearest.nearest(model, t, q0)
    out.append([q, sec, found, intervals.all_intervals(model, t, q0[4])])
print(json.dumps(out))
"""


@pytest.mark.skipif(_python2() is None, reason="no Python 2.7 on this machine")
@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_python_2_gives_the_same_answers(arm, tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name in SCALAR_MODULES:
        shutil.copy(SCALAR_DIR / name, pkg / name)
    (tmp_path / "run.py").write_text(_PY2_SCRIPT)
    model, t, start = _pairs(arm, 40, 4)
    data = {
        "joints": [[list(j.offset), j.lower, j.upper, j.max_velocity] for j in model.joints],
        "hand": list(model.hand_offset),
        "targets": t.tolist(),
        "starts": start.tolist(),
    }
    run = subprocess.run([_python2(), str(tmp_path / "run.py"), str(tmp_path)], input=json.dumps(data),
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert run.returncode == 0, run.stderr
    for (q, sec, found, ivs), ti, q0 in zip(json.loads(run.stdout), t.tolist(), start.tolist()):
        mine = scalar_nearest.nearest(model, ti, q0)
        assert found == mine[3]
        assert sec == mine[2] or abs(sec - mine[2]) < 1e-9
        assert np.allclose(q, mine[0], atol=1e-9)
        exact = all_intervals(model, ti, q0[4])
        assert [len(b) for b in ivs] == [len(b) for b in exact]
        assert all(np.allclose(a, b, atol=1e-9) for x, y in zip(ivs, exact) for a, b in zip(x, y))
