"""A grasp as a plan of checked steps: pre-grasp, open, approach, close, lift.

The hand comes in along the approach direction: it first goes to the
pre-grasp point :data:`APPROACH_DISTANCE` before the target along that
direction, opens, moves in to the target, closes, and lifts by
:data:`LIFT` (up, FRAME_TORSO z). Every arm step is solved from the
previous step's posture and must be reached like a reach (within the
solver's tolerance); the first that is not names the failed step, and
nothing after it is planned. The service sends nothing unless the whole plan
holds (:meth:`GraspPlan.failed` is empty).
"""

from __future__ import annotations

import math
from typing import NamedTuple, Sequence

from ..api.position import ArmLike, resolve_arm, solve
from ..model import validate

#: Metres before the target along the approach direction, and the lift after closing.
APPROACH_DISTANCE = 0.04
LIFT = 0.03
#: The hand's opening (ALMotion's LHand/RHand: 0 closed .. 1 open).
OPEN, CLOSED = 1.0, 0.0
#: The steps in order; "open" and "close" move the hand, the others the arm.
STEPS = ("preGrasp", "open", "approach", "close", "lift")


class GraspStep(NamedTuple):
    """One step of :class:`GraspPlan`.

    Attributes:
        name: one of :data:`STEPS`.
        target: the hand's target (FRAME_TORSO metres) for an arm step, None for a hand step.
        angles: the arm's five angles for an arm step, None for a hand step.
        hand: the hand's opening for a hand step, None for an arm step.
        reached: the arm step reached its target (hand steps: True).
        error: metres (0 for a hand step).
    """

    name: str
    target: tuple | None
    angles: tuple | None
    hand: float | None
    reached: bool
    error: float


class GraspPlan(NamedTuple):
    """The steps planned, in order, and the first that failed ("" if none).

    Attributes:
        steps: the :class:`GraspStep` planned (up to and including the failed one).
        failed: the name of the first arm step that cannot be reached, or "".
        reason: why it failed ("" if it did not).
    """

    steps: list
    failed: str
    reason: str


#: The shortest approach vector taken as a direction: below it (a nanometre, as
#: metres) a vector is what the difference of two equal points leaves, not a
#: direction anyone chose.
MIN_APPROACH_LENGTH = 1e-9


def approach_direction(value: Sequence[float]) -> tuple[float, float, float]:
    """A unit approach direction from three finite numbers, of length at least :data:`MIN_APPROACH_LENGTH`.

    Any larger length is a direction: the vector is divided by its largest
    component first, so squaring cannot overflow (``[1e200, 1e200, 0]`` is
    ``(1/sqrt 2, 1/sqrt 2, 0)``) nor underflow, and the result is a unit
    vector, never zero. The service decodes its ``approach`` argument with
    this and :func:`plan_grasp` checks its own with it.

    Raises:
        ValueError: naming ``approach`` and the problem.
    """
    v = validate.vector(value, 3, "approach", ("approach x", "approach y", "approach z"))
    largest = max(abs(x) for x in v)
    if largest == 0.0:
        raise ValueError(f"approach must be a direction (not all zero), got {list(v)}")
    scaled = [x / largest for x in v]  # the largest is +-1: the squares below are in [0, 1]
    norm = math.sqrt(sum(x * x for x in scaled))  # in [1, sqrt 3]
    if not largest * norm >= MIN_APPROACH_LENGTH:
        raise ValueError(
            f"approach must be a direction (not all zero; length at least {MIN_APPROACH_LENGTH:g}), got {list(v)}"
        )
    u = (scaled[0] / norm, scaled[1] / norm, scaled[2] / norm)
    if not all(math.isfinite(x) for x in u) or not abs(math.sqrt(sum(x * x for x in u)) - 1.0) < 1e-9:
        raise ValueError(f"approach must be a direction, got {list(v)}")  # not reached: a last guard
    return u


def plan_grasp(
    target: Sequence[float],
    approach: Sequence[float],
    arm: ArmLike = "LArm",
    initial: Sequence[float] | None = None,
    method: str = "analytic",
) -> GraspPlan:
    """The grasp's steps, each arm step solved from the previous one.

    Args:
        target: where the hand closes, FRAME_TORSO metres.
        approach: the direction the hand moves in along (three finite numbers, any length from
            :data:`MIN_APPROACH_LENGTH`; normalised by :func:`approach_direction`).
        arm: ``"LArm"``, ``"RArm"`` or a model with the robot's limits.
        initial: the arm's current posture; default neutral.
        method: the IK method of the arm steps.

    Returns:
        :class:`GraspPlan`.

    Raises:
        ValueError: bad target, approach, arm, posture or method.
    """
    model = resolve_arm(arm)
    t = validate.target(target)
    validate.metres(t)
    a = approach_direction(approach)
    q = model.neutral if initial is None else model.clamp(validate.vector(initial, 5, "initial"))
    points = {
        "preGrasp": tuple(t[k] - APPROACH_DISTANCE * a[k] for k in range(3)),
        "approach": t,
        "lift": (t[0], t[1], t[2] + LIFT),
    }
    steps = []
    for name in STEPS:
        if name in ("open", "close"):
            steps.append(GraspStep(name, None, None, OPEN if name == "open" else CLOSED, True, 0.0))
            continue
        sol = solve(points[name], model, method, initial=q)
        steps.append(GraspStep(name, points[name], tuple(sol.angles), None, bool(sol.reached), float(sol.error)))
        if not sol.reached:
            where = ", ".join(f"{v:.3f}" for v in points[name])
            why = f"{name}: the hand cannot reach [{where}] (it stays {sol.error * 1e3:.1f} mm away)"
            return GraspPlan(steps, name, why)
        q = sol.angles
    return GraspPlan(steps, "", "")
