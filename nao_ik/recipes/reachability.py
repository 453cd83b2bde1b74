"""Is a point reachable, and what is the nearest one that is: answers from the exact solution set.

A hand target is reachable (WristYaw held) exactly when its distance from
the shoulder is one the rigid links allow and the joint limits leave some
elbow swivel on its circle: :func:`nao_ik.geometry.scalar.intervals.all_intervals`
gives those swivel intervals in closed form, so the answer is exact, not a
solver's success. The allowed swivel, summed over both ElbowRoll branches,
is the point's *dexterity* (degrees: how much the elbow can still turn with
the hand held there). The nearest reachable point of an unreachable target
is the closest attainable point of :func:`nao_ik.geometry.closest.closest`.

The body: ``clear`` is the one place a body check plugs in. It
is a function ``clear(model, q) -> bool array`` telling which of the (K, 5)
configurations ``q`` keep the arm outside the body; with it, a point is
reachable only if some allowed configuration is clear, and the dexterity
counts only the clear swivels (sampled every :data:`CLEAR_STEP_DEG`).
"""

from __future__ import annotations

import math
from typing import Callable, NamedTuple, Sequence

import numpy as np

from ..api.position import ArmLike, resolve_arm
from ..geometry.closest import closest
from ..geometry.scalar.intervals import all_intervals
from ..geometry.swivel import circle, point
from ..kinematics.chain import forward
from ..kinematics.ops import ARRAY, SCALAR
from ..model import validate
from ..model.arm import ArmModel

#: ``clear(model, q (K, 5)) -> (K,) bool``: True where the arm is outside the body.
ClearCheck = Callable[[ArmModel, np.ndarray], np.ndarray]

#: With a body check, the allowed swivels are sampled this finely (degrees).
CLEAR_STEP_DEG = 1.0


class Reachability(NamedTuple):
    """What :func:`is_reachable` and :func:`nearest_reachable` return.

    Attributes:
        reachable: True if some configuration inside the limits (and clear of the body, with a
            body check) puts the hand exactly on the target.
        target: the target, FRAME_TORSO metres.
        nearest: the nearest attainable hand point (the target itself when reachable); None
            from :func:`is_reachable` for an unreachable target (ask :func:`nearest_reachable`).
        distance: metres from the target to ``nearest`` (0 when reachable); None with ``nearest``.
        angles: a configuration with the hand at ``nearest`` (five angles, inside the limits), or None.
        dexterity: the allowed elbow swivel at the target, degrees, both branches (0 if unreachable).
        intervals: the allowed swivel intervals ``(branch, start, end)``, radians.
    """

    reachable: bool
    target: tuple
    nearest: tuple | None
    distance: float | None
    angles: tuple | None
    dexterity: float
    intervals: list


def is_reachable(
    target: Sequence[float], arm: ArmLike = "LArm", wrist: float = 0.0, clear: ClearCheck | None = None
) -> Reachability:
    """Whether the hand can be put exactly on a target, from the closed-form swivel intervals.

    Args:
        target: ``[x, y, z]``, FRAME_TORSO metres.
        arm: ``"LArm"``, ``"RArm"`` or an :class:`~nao_ik.model.arm.ArmModel` (the robot's limits).
        wrist: the held WristYaw (it turns the 12.31 mm hand offset), radians.
        clear: the body check (see the module docstring), or None for the limits alone.

    Returns:
        :class:`Reachability` (``nearest`` is the target when reachable, else None).

    Raises:
        ValueError: bad target, arm or wrist.
    """
    model = resolve_arm(arm)
    t = validate.target(target)
    validate.metres(t)
    wrist = validate.number(wrist, "wrist")
    intervals, dexterity, q = _allowed(model, t, wrist, clear)
    if q is None:
        return Reachability(False, t, None, None, None, 0.0, intervals)
    return Reachability(True, t, t, 0.0, q, dexterity, intervals)


def nearest_reachable(
    target: Sequence[float],
    arm: ArmLike = "LArm",
    initial: Sequence[float] | None = None,
    clear: ClearCheck | None = None,
) -> Reachability:
    """The reachable point nearest to a target (the target itself when it is reachable).

    Args:
        target: ``[x, y, z]``, FRAME_TORSO metres.
        arm: as in :func:`is_reachable`.
        initial: the arm's posture (five angles; its WristYaw is held, and among equally near
            configurations the one nearest to it is given); default the neutral posture.
        clear: the body check, or None.

    Returns:
        :class:`Reachability` with ``nearest``, ``distance`` and ``angles`` set.

    Raises:
        ValueError: bad target, arm or initial posture.
    """
    model = resolve_arm(arm)
    t = validate.target(target)
    validate.metres(t)
    q0 = model.neutral if initial is None else model.clamp(validate.vector(initial, 5, "initial"))
    found = is_reachable(t, model, q0[4], clear)
    if found.reachable:
        return found
    best = _closest(model, t, q0, clear)
    hand = tuple(float(v) for v in forward(model, best.angles))
    return found._replace(nearest=hand, distance=float(best.distance), angles=tuple(best.angles))


def _closest(model: ArmModel, t: Sequence[float], q0: Sequence[float], clear: ClearCheck | None):
    """The closest attainable configuration. The body check plugs in here (the lead's closest-clear search)."""
    return closest(model, t, q0)


def dexterity_batch(targets: np.ndarray, arm: ArmLike = "LArm", wrist: float = 0.0,
                    clear: ClearCheck | None = None) -> np.ndarray:  # fmt: skip
    """The dexterity (allowed swivel, degrees) of each of (N, 3) targets; 0 where unreachable.

    Args:
        targets: (N, 3) FRAME_TORSO metres.
        arm: as in :func:`is_reachable`.
        wrist: the held WristYaw.
        clear: the body check, or None.

    Returns:
        (N,) degrees; ``> 0`` (or a single allowed swivel) means reachable: see :func:`reachable_batch`.
    """
    return reachable_batch(targets, arm, wrist, clear)[1]


def reachable_batch(targets: np.ndarray, arm: ArmLike = "LArm", wrist: float = 0.0,
                    clear: ClearCheck | None = None) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """:func:`is_reachable` for (N, 3) targets: (reachable (N,) bool, dexterity (N,) degrees).

    Targets outside the links' distance range are settled at once (vectorised); the rest get
    their intervals one by one.
    """
    model = resolve_arm(arm)
    t = validate.array(targets, "targets", 3)
    wrist = validate.number(wrist, "wrist")
    c = circle(model, [t[:, k] for k in range(3)], np.full(len(t), wrist), ARRAY)
    ok = np.zeros(len(t), dtype=bool)
    dex = np.zeros(len(t))
    for i in np.flatnonzero(np.broadcast_to(c.reachable, (len(t),))):
        _, d, q = _allowed(model, tuple(t[i]), wrist, clear)
        ok[i], dex[i] = q is not None, d
    return ok, dex


def _allowed(model: ArmModel, t: Sequence[float], wrist: float, clear: ClearCheck | None) -> tuple:
    """(intervals, dexterity in degrees, one allowed configuration or None)."""
    if not circle(model, t, wrist, SCALAR).reachable:  # nearer or farther than the links allow
        return [], 0.0, None
    per_branch = all_intervals(model, t, wrist)
    intervals = [(b, lo, hi) for b in (0, 1) for lo, hi in per_branch[b]]
    if not intervals:
        return intervals, 0.0, None
    if clear is None:
        b, lo, hi = max(intervals, key=lambda iv: iv[2] - iv[1])
        q = _config(model, t, wrist, np.array([0.5 * (lo + hi)]), b)[0]
        return intervals, math.degrees(sum(hi - lo for _, lo, hi in intervals)), tuple(float(v) for v in q)
    step = math.radians(CLEAR_STEP_DEG)
    free, first = 0.0, None
    for b, lo, hi in intervals:
        phis = np.linspace(lo, hi, max(2, int((hi - lo) / step) + 2))
        q = _config(model, t, wrist, phis, b)
        ok = np.asarray(clear(model, q), dtype=bool)
        free += ok.mean() * (hi - lo)
        if first is None and ok.any():
            first = tuple(float(v) for v in q[int(np.argmax(ok))])
    return intervals, math.degrees(free), first


def _config(model: ArmModel, t: Sequence[float], wrist: float, phis: np.ndarray, branch: int) -> np.ndarray:
    """(K, 5) configurations at the swivels ``phis`` (allowed ones), clamped (rounding at interval ends)."""
    n = phis.size
    q, _ = point(model, [np.full(n, x) for x in t], np.full(n, wrist), phis, ARRAY, branch)
    q = np.stack(np.broadcast_arrays(*q), axis=1)
    return np.clip(q, model.lower, model.upper)
