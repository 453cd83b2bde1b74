"""The body check of every method's final answer: clear of the body, or replaced, or reported.

After the driver's own rules (continuity, closest attainable), each answer is
checked against the arm model's body (:attr:`~nao_ik.model.arm.ArmModel.body`,
:func:`nao_ik.geometry.collision.clearance`):

- clear by the margin: kept; an answer that does not reach gets its
  ``reason`` (:func:`nao_ik.geometry.clear.unreachable_reason`);
- within the margin: replaced by the nearest clear exact solution
  (:func:`nao_ik.geometry.nearest.nearest`, the body a limit), as the driver
  does for continuity; where there is none, by the closest clear pose
  (:func:`nao_ik.geometry.closest.closest`: for a target only the body keeps
  the hand from, :func:`nao_ik.geometry.clear.closest_clear` toward it; out of
  reach or behind the limits, :func:`nao_ik.geometry.clear_search.clear_search`),
  ``refined`` and with its ``reason``; a batch searches for all of its blocked targets together
  (:func:`nao_ik.geometry.blocked.clear_toward`, the same rays, with what cannot
  change the answer left out), and only the targets whose closest attainable
  pose without the body goes through it (out of reach, or behind the joint
  limits) still take the one-target search (``searched``);
- the papers' approximations (``own_answer``) keep their answers: one within
  the margin is reported (``reason`` ``"collision: <part>"``; not reached).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..geometry.blocked import clear_toward
from ..geometry.clear import closest_clear, unreachable_reason, unreachable_reasons
from ..geometry.closest import closest
from ..geometry.collision import clearance, clearance_batch
from ..geometry.nearest import nearest
from ..kinematics.chain import forward, forward_batch
from ..kinematics.ops import ARRAY, SCALAR
from ..model.arm import ArmModel
from ..model.body import MARGIN, NAMES
from .base import Run, SolverSpec

#: Clearance short of the margin still counted clear (metres): the root finders' rounding at the boundary.
EPS = 1e-9


def check_single(spec: SolverSpec, model: ArmModel, target: Sequence[float], q0: Sequence[float], run: Run,
                 tol: float) -> Run:  # fmt: skip
    """One answer through the body check (see the module docstring)."""
    if not model.body:
        if run.error <= tol or spec.own_answer:
            return run
        return run._replace(reason=unreachable_reason(model, target, q0))
    q = model.clamp(run.q)
    # Capped at the margin: only whether the links keep it decides (and below it, the part), so the pairs
    # farther than the margin need no distance.
    clr = clearance(model, q, model.body, MARGIN)
    if clr.distance >= MARGIN - EPS:
        if run.error <= tol or spec.own_answer:
            return run
        return run._replace(reason=unreachable_reason(model, target, q0))
    if spec.own_answer:
        return run._replace(reason=f"collision: {clr.part}")
    near = nearest(model, list(target), list(q0), SCALAR)
    if near.found:
        nq = model.clamp(near.q)
        err = float(np.linalg.norm(forward(model, nq) - np.asarray(target)))
        if err <= tol:
            return Run(list(nq), err, run.iterations, run.clamped, 0.0, True)
    reason = unreachable_reason(model, target, q0)
    best = _clear_toward(model, target, q0, reason, run.closest)
    return Run(list(best[0]), best[1], run.iterations, run.clamped, 0.0, True, reason)


def _clear_toward(model: ArmModel, target: Sequence[float], q0: Sequence[float], reason: str, known: Any) -> tuple:
    """(angles, distance): the closest clear pose; where the body alone is in the way, the search toward the target
    (the start posture where it finds nothing clear, as :func:`~nao_ik.geometry.closest.closest` answers); else the
    closest pose, ``known`` where the driver computed it already."""
    if reason.startswith("collision"):
        got = closest_clear(model, target, q0)
        return got.angles, got.distance
    best = closest(model, target, q0) if known is None else known
    return best.angles, best.distance


def check_batch(spec: SolverSpec, model: ArmModel, targets: np.ndarray, q0: np.ndarray, run: Run, tol: float) -> Run:
    """Many answers through the body check; ``run`` holds arrays (q (N, 5), error (N,), ...)."""
    n = targets.shape[0]
    reason = np.full(n, "", dtype=object)
    searched = np.zeros(n, dtype=bool)
    q = np.clip(np.array(run.q, dtype=float), model.lower, model.upper)
    err = np.array(run.error, dtype=float)
    shortfall = None if run.shortfall is None else np.array(run.shortfall, dtype=float)
    refined = None if run.refined is None else np.array(run.refined, dtype=bool)
    clamped = None if run.clamped is None else np.array(run.clamped)
    if model.body:
        dist, part = clearance_batch(model, q, model.body, MARGIN)  # whether it keeps the margin, and the part
        hit = dist < MARGIN - EPS
    else:
        part, hit = np.zeros(n, dtype=int), np.zeros(n, dtype=bool)
    if spec.own_answer:
        for i in np.flatnonzero(hit):
            reason[i] = f"collision: {NAMES[part[i]]}"
        return Run(q, err, run.iterations, clamped, shortfall, refined, reason, searched)
    rows = np.flatnonzero(hit)
    if rows.size:
        near = nearest(model, [targets[rows, k] for k in range(3)], [q0[rows, i] for i in range(5)], ARRAY)
        nq = np.clip(np.stack(np.broadcast_arrays(*near.q), axis=1), model.lower, model.upper)
        nerr = np.linalg.norm(forward_batch(model, nq) - targets[rows], axis=1)
        ok = np.broadcast_to(near.found, rows.shape) & (nerr <= tol)
        q[rows[ok]], err[rows[ok]] = nq[ok], nerr[ok]
        if refined is not None:
            refined[rows] = True
        if shortfall is not None:
            shortfall[rows] = 0.0
        rest = rows[~ok]
        reason[rest] = unreachable_reasons(model, targets[rest], q0[rest])
        body = np.array([r.startswith("collision") for r in reason[rest]], dtype=bool)
        if body.any():  # the body alone is in the way: one search for all of them
            # Where no ray finds a clear point, the start posture: the single solve's search goes on to the
            # closest pose without the body, which for these targets (reachable without it) is the target
            # itself, and searches the same rays from there.
            q[rest[body]], err[rest[body]] = clear_toward(model, targets[rest[body]], q0[rest[body]])[:2]
        searched[rest[~body]] = True
        known = run.closest or {}
        for i in rest[~body]:
            q[i], err[i] = (known[i] if i in known else closest(model, targets[i], q0[i]))[:2]
    short = np.flatnonzero((err > tol) & (reason == ""))
    reason[short] = unreachable_reasons(model, targets[short], q0[short])
    return Run(q, err, run.iterations, clamped, shortfall, refined, reason, searched)
