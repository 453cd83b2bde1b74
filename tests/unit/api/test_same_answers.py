"""Every production answer stays what it was: a guard for changes that should only make things faster.

The library's answers (single ``solve`` from the neutral posture and from a
random start, ``solve_batch``, ``solve_pose``, ``track_path``) on seeded
targets are stored in ``tests/unit/api/data/same_answers.npz``. The test
computes them again on whatever machine runs it and compares them within a
tolerance that holds on every BLAS kernel and CPU (OpenBLAS and numpy pick
their code by CPU, and theirs round differently; ``TOLERANCE``): the same
outcome on every row (reached, the reason, a path completed, NaN where NaN),
and each row's answer the stored one within its tolerance, or another one
only where rounding decides between them (``NUDGES``).

Bit for bit, for a refactor: ``make same-answers`` (``python -m
tests.unit.api.test_same_answers --exact`` on the kernels the file was
written with, ``KERNEL``, which that command selects) compares every stored
array with ``np.array_equal``: a change that only removes work, or moves it,
must leave every float where it was. A change that is meant to change answers
rewrites the file (``make same-answers-write``) and says why in its commit.

The targets: the benchmark's (hand positions of random in-limit
configurations, about 7 % of them reachable only through the body), points in
a box around the chest and the arm's side of the torso (near the body and
through it), and a few out of reach, for both arms.
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

import numpy as np
import pytest

import nao_ik
from nao_ik.api.position import DEFAULT_TOLERANCE
from nao_ik.evidence.protocol import sample_targets
from nao_ik.geometry.collision import clearance_batch
from nao_ik.kinematics.chain import forward_batch
from nao_ik.model.body import MARGIN
from nao_ik.recipes.track import random_lines, track_path

GOLDEN = Path(__file__).parent / "data" / "same_answers.npz"
#: The OpenBLAS kernels the file was written with (make same-answers-write): others round differently.
KERNEL = "Haswell"
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
    """The golden file's arrays."""
    with np.load(GOLDEN) as f:
        return dict(f)


def starts(arm: str, n: int, seed: int) -> np.ndarray:
    """Random in-limit start postures."""
    model = nao_ik.arm_model(arm)
    return np.random.default_rng(seed).uniform(model.lower, model.upper, (n, 5))


def nudged(x: np.ndarray, nudge: int) -> np.ndarray:
    """``x`` (targets, poses or a path) moved by about ``NUDGE`` along a direction seeded by ``nudge``; 0: as is."""
    x = np.asarray(x, dtype=float)
    return x + np.random.default_rng(nudge).normal(0.0, NUDGE, x.shape) if nudge else x


def picked(rows, *arrays: np.ndarray) -> tuple:
    """The ``rows`` of each array (all where ``rows`` is None)."""
    return arrays if rows is None else tuple(a[rows] for a in arrays)


def _solution(prefix: str, sols: list) -> dict:
    return {
        f"{prefix}/angles": np.array([s.angles for s in sols]),
        f"{prefix}/error": np.array([s.error for s in sols]),
        f"{prefix}/reached": np.array([s.reached for s in sols]),
        f"{prefix}/iterations": np.array([s.iterations for s in sols]),
        f"{prefix}/reason": np.array([s.reason for s in sols], dtype=str),
        f"{prefix}/refined": np.array([s.refined for s in sols]),
    }


def single_answers(arm: str, method: str, nudge: int = 0, rows=None) -> dict:
    """Single solves from the neutral posture (no ``initial``) and from random starts (the continuity rule)."""
    t, q0 = picked(rows, nudged(targets(arm, "single"), nudge), starts(arm, SINGLE, 2))
    out = _solution(f"single/{arm}/{method}/neutral", [nao_ik.solve(x, arm, method) for x in t])
    out.update(_solution(f"single/{arm}/{method}/start",
                         [nao_ik.solve(x, arm, method, initial=q) for x, q in zip(t, q0)]))  # fmt: skip
    return out


def batch_answers(arm: str, method: str, nudge: int = 0, rows=None) -> dict:
    """``solve_batch`` from the neutral posture and from a start per target."""
    t, q = picked(rows, nudged(targets(arm, "batch"), nudge), starts(arm, BATCH, 4))
    out = {}
    for name, q0 in (("neutral", None), ("start", q)):
        b = nao_ik.solve_batch(t, arm, method, initial=q0)
        p = f"batch/{arm}/{method}/{name}"
        out.update({f"{p}/angles": b.angles, f"{p}/error": b.error, f"{p}/reached": b.reached,
                    f"{p}/iterations": b.iterations, f"{p}/reason": np.asarray(b.reason, dtype=str),
                    f"{p}/refined": np.asarray(b.refined)})  # fmt: skip
    return out


def pose_answers(arm: str, method: str, nudge: int = 0, rows=None) -> dict:
    """``solve_pose``: full poses of random configurations (all five joints), from the neutral posture and a start."""
    model = nao_ik.arm_model(arm)
    q = starts(arm, POSES, 5)
    poses = [nao_ik.forward_pose(x, arm) for x in q]
    # Half of them moved 3 cm and turned: poses the arm mostly cannot take, the least-squares compromise.
    poses = [p if i % 2 == 0 else np.asarray(p) + [0.03, -0.03, 0.03, 0.3, -0.2, 0.4] for i, p in enumerate(poses)]
    poses, q0 = picked(rows, nudged(np.array(poses, dtype=float), nudge), starts(arm, POSES, 6))
    out = {}
    for name, init in (("neutral", [None] * len(poses)), ("start", list(q0))):
        sols = [nao_ik.solve_pose(p, model, 63, i, method) for p, i in zip(poses, init)]
        p = f"pose/{arm}/{method}/{name}"
        out.update({f"{p}/angles": np.array([s.angles for s in sols]),
                    f"{p}/position_error": np.array([s.position_error for s in sols]),
                    f"{p}/rotation_error": np.array([s.rotation_error for s in sols]),
                    f"{p}/reached": np.array([s.reached for s in sols])})  # fmt: skip
    return out


def track_answers(arm: str, method: str, nudge: int = 0, rows=None) -> dict:
    """``track_path`` along random straight lines (whole: a path's points follow each other, whatever ``rows``)."""
    out = {}
    for k, line in enumerate(random_lines(arm, PATHS, points=15, seed=7)):
        tr = track_path(nudged(line, nudge), arm, method)
        p = f"track/{arm}/{method}/{k}"
        out.update({f"{p}/angles": tr.angles, f"{p}/errors": tr.errors, f"{p}/completed": np.array(tr.completed)})
    return out


CASES = [(kind, arm, m) for kind in ("single", "batch", "track") for arm in ARMS for m in nao_ik.METHODS] + [
    ("pose", arm, m) for arm in ARMS for m in nao_ik.POSE_METHODS
]
MAKERS = {"single": single_answers, "batch": batch_answers, "pose": pose_answers, "track": track_answers}


def write_golden() -> None:
    """Compute every case and store it with its targets (``--write``)."""
    for arm in ARMS:
        _WRITING[f"targets/{arm}/single"] = make_targets(arm, SINGLE, 1)
        _WRITING[f"targets/{arm}/batch"] = make_targets(arm, BATCH, 3)
    data = dict(_WRITING)
    for kind, arm, m in CASES:
        data.update(MAKERS[kind](arm, m))
    GOLDEN.parent.mkdir(exist_ok=True)
    np.savez_compressed(GOLDEN, **data)
    _WRITING.clear()


#: What may differ between the stored answers and those computed on another machine, by what a row's answer
#: is: (radians, metres), for the angles and rotation errors, and for the distances. Measured between
#: OpenBLAS's kernels (Haswell's, the file's, against SkylakeX's, Sandybridge's, Nehalem's, Prescott's) and
#: numpy's loops (AVX-512, AVX2, AVX without FMA), most rows move by nothing or a few ulps; the largest moves
#: of the rows that keep their answer:
#: - "root", a float64 method's reached target or tracked point: the reach's root, which rounding moves by
#:   ulps: 8e-12 rad, 6e-15 m; 3e-10 rad, 5e-12 m where jacobian-transpose's slow steps stopped. The hand
#:   moves at most 0.22 m x the angle.
#: - "minimum", a float64 method's target out of reach or pose the arm cannot take: the least distance's
#:   minimum, flat to second order, which rounding moves by ~sqrt(ulp): 1.1e-6 rad (a pose; a position
#:   1.8e-8 rad), 3.8e-10 m, the rotation errors 6.9e-7 rad.
#: - "float32", the networks' methods (nn-refined refines their guess), whose float32 matrix products round
#:   per kernel: 1.1e-5 rad, 8e-7 m.
TOLERANCE = {"root": (1e-9, 1e-10), "minimum": (1e-5, 1e-8), "float32": (1e-4, 1e-5)}
NETWORKS = ("nn", "nn-paper", "nn-modular", "nn-refined")
#: The answers compared within a tolerance, and its unit (0: radians, 1: metres).
FLOATS = {"angles": 0, "rotation_error": 0, "error": 1, "errors": 1, "position_error": 1}
#: The outcome, the same on every machine: reached or not, the reason, a path completed (and NaN where NaN).
OUTCOME = ("reached", "reason", "completed")
#: Some rows' answers rounding decides: the iterative methods' near a singularity or at their iteration cap
#: (jacobian-pinv, sdls, jacobian-transpose), a target at the shoulder (every direction as far), a pose
#: between two compromises: there the kernels above land on other answers (up to 2.9 rad apart, another
#: ``refined``), always with the stored outcome. A row whose answer is not the stored one counts as decided by
#: rounding if computed again with its inputs moved by NUDGE (m or rad: ~1e4 ulps of a target, which moves a
#: settled answer far less than its tolerance) it lands elsewhere in one of NUDGES tries; any other row that
#: moved is a changed answer. (The iterations an answer took are not compared: rounding moves them by a few
#: where a stall rule decides. ``--exact`` compares them.)
NUDGE = 1e-12
NUDGES = 16


def tolerances(want: dict, name: str, method: str) -> np.ndarray:
    """Per row of the answers ``name`` (``single/LArm/dls/neutral``): its ``TOLERANCE`` (angle, distance)."""
    n = len(want[f"{name}/angles"])
    if method in NETWORKS:
        return np.tile(TOLERANCE["float32"], (n, 1))
    reached = want[f"{name}/reached"] if f"{name}/reached" in want else want[f"{name}/errors"] <= DEFAULT_TOLERANCE
    return np.where(reached[:, None], TOLERANCE["root"], TOLERANCE["minimum"])


def moved(got: dict, want: dict, name: str, tol: np.ndarray, loose: np.ndarray) -> np.ndarray:
    """Per row of the answers ``name``: whether ``got``'s is not ``want``'s (a float beyond its tolerance, or
    ``refined`` otherwise); the angles and error of the rows ``loose`` are not compared."""
    n = len(tol)
    if got[f"{name}/angles"].shape != want[f"{name}/angles"].shape:
        return np.ones(n, dtype=bool)
    out = np.zeros(n, dtype=bool)
    for key, unit in FLOATS.items():
        if f"{name}/{key}" in want:
            a, b = got[f"{name}/{key}"].reshape(n, -1), want[f"{name}/{key}"].reshape(n, -1)
            far = ~(np.abs(a - b) <= tol[:, unit : unit + 1]) & ~(np.isnan(a) & np.isnan(b))
            if key in ("angles", "error"):
                far[loose] = False
            out |= far.any(axis=1)
    if f"{name}/refined" in want:
        out |= got[f"{name}/refined"] != want[f"{name}/refined"]
    return out


def changed_answers(kind: str, arm: str, method: str, got: dict, want: dict) -> list:
    """The rows whose answer moved from the stored one where rounding does not decide it."""
    names = sorted({k.rsplit("/", 1)[0] for k in want})
    tol = {name: tolerances(want, name, method) for name in names}
    # The batch's answers for the targets only configurations through the body reach come from its own search
    # for the nearest clear pose (nao_ik.geometry.blocked): as good as the single solve's, not the same floats.
    # tests/unit/api/test_batch_body.py holds them to that rule; here their outcome.
    loose = {
        name: np.char.startswith(want[f"{name}/reason"], "collision") if kind == "batch" else np.zeros(len(t), bool)
        for name, t in tol.items()
    }
    rows = {name: moved(got, want, name, tol[name], loose[name]) for name in names}
    if not any(r.any() for r in rows.values()):
        return []
    # The moved rows computed again, as they are and nudged (a path whole).
    pick = None if kind == "track" else np.nonzero(np.any([rows[name] for name in names], axis=0))[0]
    # Nudged until every moved row has landed elsewhere once (then rounding decides it) or NUDGES tries are spent.
    base = MAKERS[kind](arm, method, 0, pick)
    rounding = {name: np.zeros(len(r), dtype=bool) for name, r in rows.items()}
    for nudge in range(1, NUDGES + 1):
        if all((rounding[name] | ~r).all() for name, r in rows.items()):
            break
        run = MAKERS[kind](arm, method, nudge, pick)
        for name, r in rows.items():
            at = np.arange(len(r)) if pick is None else pick
            rounding[name][at] |= moved(run, base, name, tol[name][at], loose[name][at])
    return [f"{name}[{i}]" for name, r in rows.items() for i in np.nonzero(r & ~rounding[name])[0]]


@pytest.fixture(scope="module")
def golden():
    return stored()


@pytest.mark.parametrize("kind,arm,method", CASES)
def test_same_answers(golden, kind, arm, method):
    """Each stored case computed again: the same outcome, and each row the stored answer within its tolerance,
    or another one where rounding decides."""
    got = MAKERS[kind](arm, method)
    want = {k: v for k, v in golden.items() if k.startswith(f"{kind}/{arm}/{method}/")}
    assert want, f"no stored answers for {kind}/{arm}/{method}: rewrite the file (see the module docstring)"
    assert sorted(got) == sorted(want)
    outcome = [k for k in want if k.rsplit("/", 1)[1] in OUTCOME and not np.array_equal(got[k], want[k])]
    nan = [k for k in want if k.rsplit("/", 1)[1] in FLOATS and not np.array_equal(np.isnan(got[k]), np.isnan(want[k]))]
    assert not outcome + nan, f"outcomes changed: {outcome + nan}"
    changed = changed_answers(kind, arm, method, got, want)
    assert not changed, f"answers changed on {len(changed)} rows: {changed[:6]}{' ...' if len(changed) > 6 else ''}"


def exact_differences() -> list:
    """The stored arrays that differ from those computed now, bit for bit (NaN where NaN), but the batch's
    angles and error for the targets only configurations through the body reach (see ``changed_answers``)."""
    golden = stored()
    out = []
    for kind, arm, method in CASES:
        got = MAKERS[kind](arm, method)
        want = {k: v for k, v in golden.items() if k.startswith(f"{kind}/{arm}/{method}/")}
        if kind == "batch":
            for name in {k.rsplit("/", 1)[0] for k in want}:
                other = ~np.char.startswith(want[f"{name}/reason"], "collision")
                for key in (f"{name}/angles", f"{name}/error"):
                    got[key], want[key] = got[key][other], want[key][other]
        out += sorted(set(got) ^ set(want))
        out += [k for k in sorted(set(got) & set(want))
                if not np.array_equal(got[k], want[k], equal_nan=want[k].dtype.kind == "f")]  # fmt: skip
    return out


def blas_kernel() -> str | None:
    """The kernels numpy's OpenBLAS runs (None: numpy runs another BLAS)."""
    from threadpoolctl import threadpool_info

    found = [i.get("architecture") for i in threadpool_info() if i.get("internal_api") == "openblas"]
    return found[0] if found else None


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.unit.api.test_same_answers",
        description=f"The golden answers ({GOLDEN.name}) bit for bit, for a change that should only make things "
        "faster (--exact), or rewritten from the code, for one meant to change answers (--write). Both on "
        f"OpenBLAS's {KERNEL} kernels, the file's: OpenBLAS picks its kernels by CPU and theirs round "
        "differently, so the tests compare within a tolerance instead. make same-answers and make "
        "same-answers-write select the kernels for that command alone. Bit for bit also needs numpy's loops for "
        "the CPU that wrote the file (AVX-512): on another, write the file from the code before the change, "
        "compare after, then git checkout the file.",
    )
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--exact", action="store_true", help="compare every stored array bit for bit")
    what.add_argument("--write", action="store_true", help="rewrite the file (say why in the commit)")
    args = parser.parse_args(argv)
    kernel = blas_kernel()
    if kernel != KERNEL:
        parser.error(f"numpy's BLAS runs {kernel or 'other'} kernels, the file's are OpenBLAS's {KERNEL}: run "
                     f"make same-answers{'-write' if args.write else ''}, which selects them")  # fmt: skip
    if args.write:
        write_golden()
        print(f"wrote {GOLDEN}")
        return 0
    differ = exact_differences()
    for key in differ:
        print(f"differs: {key}")
    print(f"{len(differ)} of the stored arrays differ" if differ else "every stored answer bit for bit")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
