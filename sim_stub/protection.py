"""The stub ALMotion's own arm collision protection, like ALMotion's ``setCollisionProtectionEnabled``.

ALMotion's protection does not stop a command: each cycle it takes the velocity
nearest the commanded one that does not close the gap to the body too fast, so
the arm slides along the body and ends elsewhere (NAO_ARM.md). The stub does
the same with its own shapes, each control cycle an arm moves (:func:`bend`):

- the gaps of the arm to each body part and to the other arm (:func:`gaps`);
- if the cycle's step would take the arm within :data:`MARGIN` of a part (or
  deeper into one it already overlaps), the step is bent: the nearest step (in
  joint space) whose linearised gap to every near part stays at least
  :data:`FLOOR` (or, already closer, grows by :data:`PUSH`), within the
  joints' limits; the linearisation is checked on the real gaps and the step
  halved until it holds (at worst: no step). What is left of the step slides
  the arm along the part.

Every shape is the stub's own, independent of nao-ik's body model: the body's
(:mod:`sim_stub.body_shapes`: torso, shoulder housings, the head at its
HeadYaw/HeadPitch, the pelvis and thighs at the legs' hip joints; the real
robot's measured surface) against the arm's (:data:`sim_stub.shapes.ARM_SHAPES`),
and both arms' shapes for the other arm (:func:`sim_stub.shapes.arms_gap`);
exact distances. The head and legs are where ``posture`` (joint name -> angle)
puts them, standing (:data:`sim_stub.body.STAND`) where it is not given.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np

from . import body_shapes
from .shapes import arms_gap

#: The clearance the protection keeps (metres): it never lets an arm move within it (nor deeper into it).
MARGIN = 0.005
#: Where a bent step aims: the linearised gap stays at least MARGIN + 1 mm, room for the linearisation's error.
FLOOR = MARGIN + 0.001
#: How much a bent step of an arm already within FLOOR of a part must move it away (linearised), metres.
PUSH = 0.0005
#: ``isCollision`` answers "near" for an arm within MARGIN + NEAR of a part.
NEAR = 0.030
#: No point of an arm's shapes moves more than REACH metres per radian of the joints' summed change.
REACH = 0.30
#: The part name of the other arm in the protection's records.
OTHER_ARM = "other arm"
#: The body's parts, then the other arm: the keys of :func:`gaps`.
BODY_PARTS = body_shapes.PARTS
PARTS = BODY_PARTS + (OTHER_ARM,)

Posture = Mapping[str, float]


def arm_clearance(arm: str, angles: Sequence[float], posture: Posture | None = None) -> tuple[float, str]:
    """(distance of the arm's shapes to the body, metres (negative: overlap); the nearest part).

    Args:
        arm: ``"LArm"`` or ``"RArm"``.
        angles: the arm's five joint angles.
        posture: the head's and legs' joints (joint name -> angle, radians; None: standing).
    """
    per_part = body_shapes.part_gaps(arm, angles, posture)
    k = min(range(len(per_part)), key=per_part.__getitem__)  # the first smallest, in the order of BODY_PARTS
    return per_part[k], BODY_PARTS[k]


def gaps(
    arm: str,
    angles: Sequence[float],
    other: Sequence[float] | None,
    exact: bool = True,
    posture: Posture | None = None,
) -> dict[str, float]:
    """The arm's gap to each body part and to the other arm (at ``other``; None: no other arm), metres.

    Every gap under :data:`sim_stub.body_shapes.CAP` is exact; a larger one may be a lower bound.
    ``exact=False``: where the boxes around the two arms are more than NEAR apart, the other arm's entry
    is the boxes' distance (never more than the gap), which is cheaper.
    """
    out = dict(zip(BODY_PARTS, body_shapes.part_gaps(arm, angles, posture)))
    out[OTHER_ARM] = math.inf
    if other is not None:
        left, right = (angles, other) if arm == "LArm" else (other, angles)
        out[OTHER_ARM] = arms_gap(left, right, math.inf if exact else NEAR)
    return out


def state(
    arm: str, angles: Sequence[float], other: Sequence[float] | None, posture: Posture | None = None
) -> tuple[str, float, str]:
    """(``isCollision``'s answer for the arm, its smallest gap, the part), from the gaps alone.

    "collision": within FLOOR (+ 0.1 mm) of a part, where the protection holds an arm it bends;
    "near": within MARGIN + NEAR; else "none".
    """
    g = gaps(arm, angles, other, posture=posture)
    part = min(g, key=g.__getitem__)
    gap = g[part]
    return ("collision" if gap < FLOOR + 1e-4 else "near" if gap < MARGIN + NEAR else "none"), gap, part


def _nearest(start: np.ndarray, rows: list, bounds: list) -> tuple[np.ndarray, list]:
    """The point nearest ``start`` with ``row . x >= bound`` for every row, and the multipliers (Hildreth's
    dual coordinate ascent: exact for one row, converging for several)."""
    x = start.copy()
    lam = [0.0] * len(rows)
    norms = [float(r @ r) for r in rows]
    for _ in range(300):
        moved = 0.0
        for k, (r, b, n) in enumerate(zip(rows, bounds, norms)):
            new = max(0.0, lam[k] + (b - float(r @ x)) / n)
            if new != lam[k]:
                x = x + (new - lam[k]) * r
                moved = max(moved, abs(new - lam[k]) * math.sqrt(n))
                lam[k] = new
        if moved < 1e-13:
            break
    return x, lam


def bend(
    arm: str,
    start: Sequence[float],
    step: Sequence[float],
    other: Sequence[float] | None,
    lower: Sequence[float],
    upper: Sequence[float],
    free: Sequence[bool] | None = None,
    posture: Posture | None = None,
) -> tuple[np.ndarray, str | None]:
    """One control cycle of the protection for one arm: (the step it lets the arm take, the part it bent it
    for, or None if it let the step through).

    Args:
        arm: ``"LArm"`` or ``"RArm"``.
        start: the arm's five joint angles before the cycle.
        step: the change of the five angles the motion wants this cycle.
        other: the other arm's five angles (None: no other arm).
        lower, upper: the five joints' limits (a bent step stays within them).
        free: which joints the protection may change (default all): the moving ones; a joint at rest
            stays at rest.
        posture: the head's and legs' joints (joint name -> angle, radians; None: standing).
    """
    q0 = np.asarray(start, dtype=float)
    dq = np.asarray(step, dtype=float)
    after = gaps(arm, q0 + dq, other, exact=False, posture=posture)
    if all(g >= MARGIN for g in after.values()):
        return dq, None
    g0 = gaps(arm, q0, other, posture=posture)
    after = gaps(arm, q0 + dq, other, posture=posture)
    if all(after[p] >= min(g0[p], MARGIN) for p in PARTS):  # out of an overlap, or not deeper into it
        return dq, None
    reach = REACH * math.sqrt(len(dq)) * float(np.linalg.norm(dq))
    near = [p for p in PARTS if g0[p] - reach < FLOOR]
    mask = np.ones(len(dq)) if free is None else np.array([1.0 if f else 0.0 for f in free])
    h = 1e-6
    probes = [gaps(arm, q0 + h * np.eye(len(dq))[i], other, posture=posture) if mask[i] else g0 for i in range(len(dq))]
    rows, bounds, names = [], [], []
    for p in near:
        n = np.array([(probe[p] - g0[p]) / h for probe in probes]) * mask
        if float(n @ n) < 1e-12:
            continue
        rows.append(n)
        bounds.append(min(g0[p] + PUSH, FLOOR) - g0[p])
        names.append(p)
    x, lam = _nearest(dq, rows, bounds)
    lo, hi = np.asarray(lower, dtype=float) - q0, np.asarray(upper, dtype=float) - q0
    if np.any(x < lo) or np.any(x > hi):  # keep the bent step within the joints' limits
        eye = np.eye(len(dq))
        for i in np.flatnonzero(mask):
            rows += [eye[i], -eye[i]]
            bounds += [min(lo[i], 0.0), min(-hi[i], 0.0)]
        x, lam = _nearest(dq, rows, bounds)
        x = np.clip(x, np.minimum(lo, 0.0), np.maximum(hi, 0.0))
    for _ in range(10):  # the linearisation checked on the real gaps
        got = gaps(arm, q0 + x, other, posture=posture)
        if all(got[p] >= min(g0[p], MARGIN) for p in PARTS):
            break
        x = x / 2.0
    else:
        x = np.zeros_like(dq)
    acting = [(lam[k], names[k]) for k in range(len(names)) if lam[k] > 0.0]
    part = max(acting)[1] if acting else min(after, key=after.__getitem__)
    return x, part
