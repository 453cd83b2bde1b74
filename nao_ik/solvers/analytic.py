"""``analytic``: the exact configuration nearest to the start posture, in closed form.

The start rule is :func:`nao_ik.geometry.nearest.nearest`: among the exact
solutions of the target (the elbow's swivel circle, within the limits) the one
whose move from the start takes least time. That answer is exact (FK round
trip to rounding) and inside the limits by construction; the loop that
follows it (damped least squares) runs no iteration then. Only where no
swivel is allowed (the target out of the arm's reach, or cut off by the
limits) does the loop move on from the least-violating configuration toward
the closest point it can reach.
"""

from __future__ import annotations

from typing import Any, Sequence

from ..geometry.nearest import nearest
from ..model import ArmModel
from ..ops import Ops


def analytic_start(model: ArmModel, t: Sequence[Any], q0: Sequence[Any], ops: Ops) -> tuple:
    """The nearest exact configuration (clamped, which only removes rounding)."""
    q = nearest(model, t, q0, ops).q
    return [ops.clip(x, lo, hi) for x, lo, hi in zip(q, model.lower, model.upper)], None
