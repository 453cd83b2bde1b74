"""``analytic``: the exact configuration nearest to the start posture, in closed form.

The start rule is :func:`nao_ik.geometry.nearest.nearest`: among the exact
solutions of the target (the elbow's swivel circle, within the limits) the one
whose move from the start takes least time. That answer is exact (FK round
trip to rounding) and inside the limits by construction; the loop that
follows it only measures its error (with the float forward kinematics of
:mod:`nao_ik.geometry.scalar.swivel` for one target). Only where no swivel is
allowed (the target out of the arm's reach, or cut off by the limits) does
the loop go on, with damped least squares, from the least-violating
configuration toward the closest point it can reach.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from ..geometry.nearest import nearest
from ..geometry.scalar.swivel import arm, hand_point
from ..kinematics.ops import SCALAR, Ops
from ..model.arm import ArmModel
from .base import Run
from .jacobian import dls_loop


def analytic_start(model: ArmModel, t: Sequence[Any], q0: Sequence[Any], ops: Ops) -> tuple:
    """The nearest exact configuration (clamped, which only removes rounding)."""
    q = nearest(model, t, q0, ops).q
    return [ops.clip(x, lo, hi) for x, lo, hi in zip(q, model.lower, model.upper)], None


def analytic_loop(model: ArmModel, t: Sequence[Any], q: Sequence[Any], tol: float, max_iter: int, ops: Ops) -> Run:
    """The start's error where it reaches (no iteration), else damped least squares from it."""
    if ops is SCALAR:
        h = hand_point(arm(model), q)
        err = math.sqrt((t[0] - h[0]) ** 2 + (t[1] - h[1]) ** 2 + (t[2] - h[2]) ** 2)
        if err <= tol:
            return Run(list(q), err, 0)
    return dls_loop(model, t, q, tol, max_iter, ops)
