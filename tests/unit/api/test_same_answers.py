"""Every production answer stays bit for bit what it was: a guard for changes that should only make things faster.

The library's answers (single ``solve`` from the neutral posture and from a
random start, ``solve_batch``, ``solve_pose``, ``track_path``) on seeded
targets are stored in ``tests/data/same_answers.npz`` and compared with
``np.array_equal``. A change that only removes work, or moves it, must leave
every float where it was; a change that is meant to change answers rewrites
the file (``NAO_IK_WRITE_GOLDEN=1 python -m pytest tests/unit/api/test_same_answers.py``)
and says why in its commit. Bit for bit on one set of OpenBLAS kernels (``KERNEL``, which
``tests/conftest.py`` selects): OpenBLAS picks its kernels by CPU, and theirs round differently.

The targets: the benchmark's (hand positions of random in-limit
configurations, about 7 % of them reachable only through the body), points in
a box around the chest and the arm's side of the torso (near the body and
through it), and a few out of reach, for both arms.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import numpy as np
import pytest

import nao_ik
from nao_ik.evidence.protocol import sample_targets
from nao_ik.geometry.collision import clearance_batch
from nao_ik.kinematics.chain import forward_batch
from nao_ik.model.body import MARGIN
from nao_ik.recipes.track import random_lines, track_path

GOLDEN = Path(__file__).parent / "data" / "same_answers.npz"
ARMS = ("LArm", "RArm")
#: Targets per arm for the single solves (the slow case: the searches of the targets behind the body run
#: one at a time) and for the batches.
SINGLE = 24
BATCH = 80
#: Pose targets per arm, paths per arm and method.
POSES = 30
PATHS = 2


def make_targets(arm: str, n: int, seed: int) -> np.ndarray:
    """``n`` targets: half the benchmark's, a third of the rest reachable only through the body, the others
    near it (hand positions of random configurations within 2 cm of the margin), and four out of reach."""
    model = nao_ik.arm_model(arm)
    side = 1.0 if arm == "LArm" else -1.0
    bench = sample_targets(arm, n // 2, seed)
    q = starts(arm, 20 * n, seed)
    gap = clearance_batch(model, q, model.body)[0] - MARGIN
    through = forward_batch(model, q[gap < 0.0])
    # Through the body: the hands of configurations inside the margin whose target has no clear solution.
    blocked = through[~nao_ik.solve_batch(through, arm, "analytic").reached]
    near = forward_batch(model, q[(gap >= 0.0) & (gap < 0.02)])
    k = (n - n // 2 - 4) // 3
    far = np.array([[0.4, 0.3, 0.2], [-0.2, 0.05, 0.0], [0.0, 0.098, 0.1], [0.05, -0.2, 0.0]]) * [1.0, side, 1.0]
    return np.concatenate([bench, blocked[:k], near[: n - n // 2 - 4 - k], far])


def targets(arm: str, kind: str) -> np.ndarray:
    """The stored targets of a kind of case (``single`` or ``batch``): fixed, whatever the solvers do now."""
    key = f"targets/{arm}/{kind}"
    return _WRITING[key] if key in _WRITING else stored()[key]


#: The targets of a golden file being written.
_WRITING: dict = {}


@functools.lru_cache(maxsize=1)
def stored() -> dict:
    """The golden file's arrays (written first where ``NAO_IK_WRITE_GOLDEN`` is set)."""
    if os.environ.get("NAO_IK_WRITE_GOLDEN"):
        write_golden()
    with np.load(GOLDEN) as f:
        return dict(f)


def starts(arm: str, n: int, seed: int) -> np.ndarray:
    """Random in-limit start postures."""
    model = nao_ik.arm_model(arm)
    return np.random.default_rng(seed).uniform(model.lower, model.upper, (n, 5))


def _solution(prefix: str, sols: list) -> dict:
    return {
        f"{prefix}/angles": np.array([s.angles for s in sols]),
        f"{prefix}/error": np.array([s.error for s in sols]),
        f"{prefix}/reached": np.array([s.reached for s in sols]),
        f"{prefix}/iterations": np.array([s.iterations for s in sols]),
        f"{prefix}/reason": np.array([s.reason for s in sols], dtype=str),
        f"{prefix}/refined": np.array([s.refined for s in sols]),
    }


def single_answers(arm: str, method: str) -> dict:
    """Single solves from the neutral posture (no ``initial``) and from random starts (the continuity rule)."""
    t = targets(arm, "single")
    q0 = starts(arm, SINGLE, 2)
    out = _solution(f"single/{arm}/{method}/neutral", [nao_ik.solve(x, arm, method) for x in t])
    out.update(_solution(f"single/{arm}/{method}/start",
                         [nao_ik.solve(x, arm, method, initial=q) for x, q in zip(t, q0)]))  # fmt: skip
    return out


def batch_answers(arm: str, method: str) -> dict:
    """``solve_batch`` from the neutral posture and from a start per target."""
    t = targets(arm, "batch")
    out = {}
    for name, q0 in (("neutral", None), ("start", starts(arm, BATCH, 4))):
        b = nao_ik.solve_batch(t, arm, method, initial=q0)
        p = f"batch/{arm}/{method}/{name}"
        out.update({f"{p}/angles": b.angles, f"{p}/error": b.error, f"{p}/reached": b.reached,
                    f"{p}/iterations": b.iterations, f"{p}/reason": np.asarray(b.reason, dtype=str),
                    f"{p}/refined": np.asarray(b.refined)})  # fmt: skip
    return out


def pose_answers(arm: str, method: str) -> dict:
    """``solve_pose``: full poses of random configurations (all five joints), from the neutral posture and a start."""
    model = nao_ik.arm_model(arm)
    q = starts(arm, POSES, 5)
    poses = [nao_ik.forward_pose(x, arm) for x in q]
    # Half of them moved 3 cm and turned: poses the arm mostly cannot take, the least-squares compromise.
    poses = [p if i % 2 == 0 else np.asarray(p) + [0.03, -0.03, 0.03, 0.3, -0.2, 0.4] for i, p in enumerate(poses)]
    q0 = starts(arm, POSES, 6)
    out = {}
    for name, init in (("neutral", [None] * POSES), ("start", list(q0))):
        sols = [nao_ik.solve_pose(p, model, 63, i, method) for p, i in zip(poses, init)]
        p = f"pose/{arm}/{method}/{name}"
        out.update({f"{p}/angles": np.array([s.angles for s in sols]),
                    f"{p}/position_error": np.array([s.position_error for s in sols]),
                    f"{p}/rotation_error": np.array([s.rotation_error for s in sols]),
                    f"{p}/reached": np.array([s.reached for s in sols])})  # fmt: skip
    return out


def track_answers(arm: str, method: str) -> dict:
    """``track_path`` along random straight lines."""
    out = {}
    for k, line in enumerate(random_lines(arm, PATHS, points=15, seed=7)):
        tr = track_path(line, arm, method)
        p = f"track/{arm}/{method}/{k}"
        out.update({f"{p}/angles": tr.angles, f"{p}/errors": tr.errors, f"{p}/completed": np.array(tr.completed)})
    return out


CASES = [(kind, arm, m) for kind in ("single", "batch", "track") for arm in ARMS for m in nao_ik.METHODS] + [
    ("pose", arm, m) for arm in ARMS for m in nao_ik.POSE_METHODS
]
MAKERS = {"single": single_answers, "batch": batch_answers, "pose": pose_answers, "track": track_answers}


def write_golden() -> None:
    """Compute every case and store it with its targets (``NAO_IK_WRITE_GOLDEN=1``)."""
    for arm in ARMS:
        _WRITING[f"targets/{arm}/single"] = make_targets(arm, SINGLE, 1)
        _WRITING[f"targets/{arm}/batch"] = make_targets(arm, BATCH, 3)
    data = dict(_WRITING)
    for kind, arm, m in CASES:
        data.update(MAKERS[kind](arm, m))
    GOLDEN.parent.mkdir(exist_ok=True)
    np.savez_compressed(GOLDEN, **data)
    _WRITING.clear()


#: The OpenBLAS kernels the answers were computed with (tests/conftest.py sets them): others round differently.
KERNEL = "Haswell"


@pytest.fixture(scope="module")
def golden():
    from threadpoolctl import threadpool_info

    numpy_blas = [i.get("architecture") for i in threadpool_info() if i.get("internal_api") == "openblas"]
    assert numpy_blas in ([], [KERNEL]), f"OpenBLAS runs its {numpy_blas} kernels: set OPENBLAS_CORETYPE={KERNEL}"
    return stored()


@pytest.mark.parametrize("kind,arm,method", CASES)
def test_same_answers(golden, kind, arm, method):
    """Each stored array equals the one computed now, bit for bit (NaN where NaN)."""
    got = MAKERS[kind](arm, method)
    want = {k: v for k, v in golden.items() if k.startswith(f"{kind}/{arm}/{method}/")}
    assert want, f"no stored answers for {kind}/{arm}/{method}: rewrite the file (see the module docstring)"
    assert sorted(got) == sorted(want)
    if kind == "batch":
        # The batch's answers for the targets only configurations through the body reach come from its own
        # search for the nearest clear pose (nao_ik.geometry.blocked): as good as the single solve's, not the
        # same floats. tests/unit/api/test_batch_body.py holds them to that rule; here the other targets stay bit for
        # bit.
        for name in {k.rsplit("/", 1)[0] for k in want}:
            other = ~np.char.startswith(want[f"{name}/reason"], "collision")
            for key in (f"{name}/angles", f"{name}/error"):
                got[key], want[key] = got[key][other], want[key][other]
    differ = [k for k in want if not np.array_equal(got[k], want[k], equal_nan=got[k].dtype.kind == "f")]
    assert not differ, f"answers changed: {differ}"
