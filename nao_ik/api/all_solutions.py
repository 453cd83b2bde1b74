"""Every way the arm can put its hand on a point: ``solve_all``.

A hand position leaves one degree of freedom of the arm free, the elbow's
swivel about the shoulder-to-hand line (see :mod:`nao_ik.geometry.swivel`); at each
swivel ElbowRoll has two roots, the branches (only near a stretched arm with
a turned wrist do both fit the limits). The joint limits cut the swivel
circle of each branch into intervals. ``solve_all`` finds those intervals
in closed form (:mod:`nao_ik.geometry.scalar.intervals`) and gives exact
configurations across them.
"""

from __future__ import annotations

import math
from typing import NamedTuple, Sequence

import numpy as np

from ..geometry.scalar.intervals import SLACK, all_intervals
from ..geometry.swivel import point
from ..kinematics.chain import forward_batch
from ..kinematics.ops import ARRAY
from ..model import validate
from .position import ArmLike, resolve_arm


class Branch(NamedTuple):
    """One configuration that reaches the target.

    Attributes:
        branch: the ElbowRoll root, 0 or 1.
        swivel: the elbow's swivel angle, radians (0: elbow lowest).
        angles: the five joint angles, inside the limits.
        error: distance from the hand to the target, metres (rounding only).
    """

    branch: int
    swivel: float
    angles: tuple[float, ...]
    error: float


class AllSolutions(NamedTuple):
    """What :func:`solve_all` returns.

    Attributes:
        arm: the arm.
        target: the target, metres.
        intervals: per branch, the allowed swivel intervals ``(branch, start, end)``,
            radians, start < end (an interval through +-pi is split in two).
        solutions: configurations at sampled swivels (or at the one asked).
        reachable: True if any configuration reaches the target.
    """

    arm: str
    target: tuple[float, float, float]
    intervals: list
    solutions: list
    reachable: bool


def _violations(model, t: np.ndarray, wrist: float, phi: np.ndarray, branch: int) -> tuple[np.ndarray, np.ndarray]:
    n = phi.size
    cols = [np.full(n, t[k]) for k in range(3)]
    q, vio = point(model, cols, np.full(n, wrist), phi, ARRAY, branch)
    return np.stack(np.broadcast_arrays(*q), axis=1), np.broadcast_to(vio, (n,))


#: Most configurations ``solve_all`` returns (a finer ``step_deg`` is refused beyond it).
MAX_SOLUTIONS = 10_000


def solve_all(
    target: Sequence[float],
    arm: ArmLike = "LArm",
    swivel: float | None = None,
    wrist: float = 0.0,
    step_deg: float = 10.0,
) -> AllSolutions:
    """Every solution for a target: the allowed swivel intervals and configurations across them.

    Args:
        target: ``[x, y, z]`` in FRAME_TORSO, metres.
        arm: ``"LArm"``, ``"RArm"`` or an :class:`~nao_ik.model.arm.ArmModel`.
        swivel: if given, only the configurations at this swivel angle (every
            branch the limits allow there).
        wrist: the WristYaw held (it turns the hand offset).
        step_deg: without ``swivel``, sample each interval every ``step_deg``
            degrees, plus its two ends.

    Returns:
        :class:`AllSolutions`.

    Raises:
        ValueError: bad target, arm, swivel, wrist or step.
    """
    model = resolve_arm(arm)
    t = np.asarray(validate.target(target))
    validate.metres(t)
    wrist = validate.number(wrist, "wrist")
    step = math.radians(validate.positive(step_deg, "step_deg"))
    intervals, samples = [], []
    exact = all_intervals(model, t, wrist) if swivel is None else ([], [])
    if swivel is None and sum(int((hi - lo) / step) + 1 for ivs in exact for lo, hi in ivs) > MAX_SOLUTIONS:
        raise ValueError(f"step_deg {step_deg!r} would give more than {MAX_SOLUTIONS} solutions: use a larger step")
    for branch in (0, 1):
        if swivel is not None:
            phi = validate.number(swivel, "swivel")
            samples += [(branch, phi)]
            continue
        for lo, hi in exact[branch]:
            intervals.append((branch, lo, hi))
            count = max(1, int((hi - lo) / step))
            samples += [(branch, float(p)) for p in np.linspace(lo, hi, count + 1)]
    solutions = []
    for branch in (0, 1):
        phis = np.array([p for b, p in samples if b == branch])
        if phis.size == 0:
            continue
        q, vio = _violations(model, t, wrist, phis, branch)
        keep = vio <= SLACK
        q = np.clip(q[keep], model.lower, model.upper)  # only rounding at interval ends
        err = np.linalg.norm(forward_batch(model, q) - t, axis=1)
        solutions += [Branch(branch, float(p), tuple(map(float, a)), float(e)) for p, a, e in zip(phis[keep], q, err)]
    solutions.sort(key=lambda s: (s.branch, s.swivel))
    return AllSolutions(model.arm, tuple(map(float, t)), intervals, solutions, bool(solutions))
