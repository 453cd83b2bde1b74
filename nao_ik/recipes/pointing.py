"""Point the arm at a target: the forearm's line through the target, in closed form.

The forearm's line starts at the elbow E (the ElbowYaw/ElbowRoll centre) and
runs along the hand's x axis, through the wrist. In the ShoulderRoll frame
(after ShoulderPitch q1 and ShoulderRoll q2) it is

    P(s) = u + s d,   d = Rx(q3) Rz(q4) e_x = (cos q4, sin q4 cos q3, sin q4 sin q3),

with u the upper arm's offset (105 mm, +-15 mm). Pointing at a target T
asks Ry(q1) Rz(q2) P(s) = D = T - S (S the shoulder) for some s beyond the
hand, two equations in q1, q2 once q3, q4 are chosen:

1. |P(s)| = |D| fixes s: s^2 + 2 s (u . d) + |u|^2 - |D|^2 = 0, the larger
   root (the target ahead of the elbow); it must lie beyond the hand tip.
2. Rz(q2) P(s) has D's y component (Ry(q1) keeps y):
   P_y cos q2 + P_x sin q2 = D_y, two roots in closed form.
3. Ry(q1) turns the x-z part onto D's: q1 = atan2(W_z D_x - W_x D_z, W_x D_x + W_z D_z), W = Rz(q2) P(s).

A 5-DOF arm points with two joints to spare (and WristYaw, held): the arm
is stretched toward the target (ElbowRoll as straight as its limit allows,
then bending in steps if the shoulder limits refuse every ElbowYaw), and
among the ElbowYaws (a grid of :data:`YAWS` and the current one) whose
shoulder angles are inside the limits, the one nearest to the current
posture in move time is taken. The line then passes through the target to
rounding; the tests check it within 1 mm.
"""

from __future__ import annotations

import math
from typing import NamedTuple, Sequence

import numpy as np

from ..api.position import ArmLike, resolve_arm
from ..geometry.nearest import move_time
from ..kinematics.chain import chain
from ..kinematics.ops import SCALAR
from ..model import validate
from ..model.arm import ArmModel

#: ElbowYaw candidates across its range, and ElbowRoll steps from straight to bent.
YAWS = 61
ROLLS = 8


class Pointing(NamedTuple):
    """What :func:`point_at` returns.

    Attributes:
        found: True if some posture inside the limits points the forearm at the target.
        angles: the five joint angles (the start posture when not found), inside the limits.
        miss: distance from the target to the forearm's line, metres.
        reason: why not found ("" when found).
    """

    found: bool
    angles: tuple
    miss: float
    reason: str


def point_at(target: Sequence[float], arm: ArmLike = "LArm", initial: Sequence[float] | None = None) -> Pointing:
    """Joint angles that put the forearm's line (elbow -> wrist -> beyond the hand) through a target.

    Args:
        target: ``[x, y, z]``, FRAME_TORSO metres, beyond the hand's reach along the line.
        arm: ``"LArm"``, ``"RArm"`` or an :class:`~nao_ik.model.arm.ArmModel`.
        initial: the current posture (five angles; WristYaw is held); default neutral.

    Returns:
        :class:`Pointing`.

    Raises:
        ValueError: bad target, arm or posture.
    """
    model = resolve_arm(arm)
    t = validate.target(target)
    q0 = model.neutral if initial is None else model.clamp(validate.vector(initial, 5, "initial"))
    d = [t[k] - model.shoulder[k] for k in range(3)]
    tip = model.joints[4].offset[0] + model.hand_offset[0]  # elbow -> hand tip along the forearm
    lo4, hi4 = model.lower[3], model.upper[3]
    straight = hi4 if abs(hi4) < abs(lo4) else lo4
    bent = lo4 if straight == hi4 else hi4
    yaws = list(np.linspace(model.lower[2], model.upper[2], YAWS)) + [q0[2]]
    too_near = True
    for q4 in np.linspace(straight, bent, ROLLS):
        best = None
        for q3 in yaws:
            for q in _candidates(model, d, float(q3), float(q4), tip):
                too_near = False
                q = (*q, q0[4])
                if model.within_limits(q, 1e-12):
                    cost = move_time(model, q, q0, SCALAR)
                    if best is None or cost < best[0]:
                        best = (cost, model.clamp(q))
        if best is not None:
            return Pointing(True, best[1], miss(model, best[1], t), "")
    reason = "the target is within the hand's reach: nothing to point at" if too_near else (
        "the joint limits allow no posture pointing there")  # fmt: skip
    return Pointing(False, tuple(q0), miss(model, q0, t), reason)


def _candidates(model: ArmModel, d: Sequence[float], q3: float, q4: float, tip: float) -> list:
    """(q1, q2, q3, q4) whose forearm line passes through the shoulder-relative target d (0, 1 or 2 of them)."""
    ux, uy, uz = model.joints[2].offset
    dv = (math.cos(q4), math.sin(q4) * math.cos(q3), math.sin(q4) * math.sin(q3))
    ud = ux * dv[0] + uy * dv[1] + uz * dv[2]
    dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
    disc = ud * ud - (ux * ux + uy * uy + uz * uz) + dd
    if disc < 0:
        return []
    s = -ud + math.sqrt(disc)
    if s <= tip:
        return []
    p = (ux + s * dv[0], uy + s * dv[1], uz + s * dv[2])
    out = []
    r = math.hypot(p[0], p[1])
    if r < 1e-12 or abs(d[1]) > r:
        return []
    phase, h = math.atan2(p[0], p[1]), math.acos(max(-1.0, min(1.0, d[1] / r)))
    for q2 in (phase - h, phase + h):  # p_y cos q2 + p_x sin q2 = d_y
        q2 = math.atan2(math.sin(q2), math.cos(q2))
        c2, s2 = math.cos(q2), math.sin(q2)
        wx, wz = p[0] * c2 - p[1] * s2, p[2]
        q1 = math.atan2(wz * d[0] - wx * d[2], wx * d[0] + wz * d[2])
        out.append((q1, q2, q3, q4))
    return out


def miss(model: ArmModel, q: Sequence[float], target: Sequence[float]) -> float:
    """Distance from ``target`` to the forearm's line (elbow along the hand's x axis) of posture ``q``, metres."""
    ch = chain(model, [float(v) for v in q], SCALAR)
    e = np.array(ch.origins[3], dtype=float)
    x = np.array(ch.rotation[0], dtype=float)
    w = np.asarray(target, dtype=float) - e
    return float(np.linalg.norm(w - (w @ x) * x))


def ahead(model: ArmModel, q: Sequence[float], target: Sequence[float]) -> float:
    """How far along the forearm's line the target lies beyond the elbow, metres (negative: behind)."""
    ch = chain(model, [float(v) for v in q], SCALAR)
    return float((np.asarray(target, dtype=float) - np.array(ch.origins[3])) @ np.array(ch.rotation[0]))
