"""Both arms at once: one answer of ten joints, and the one place the pair's collision check plugs in.

Each arm's target is a position ``[x, y, z]`` or a full pose ``[x, y, z, wx,
wy, wz]`` (FRAME_TORSO); each is solved from that arm's current posture
(:func:`nao_ik.api.position.solve` or :func:`nao_ik.api.pose.solve_pose` with axisMask
63). The pair is then checked by ``check(left_model, q_left, right_model,
q_right, start_left, start_right) -> str`` (the empty string when the pair
is fine): the place where the body model plugs in, "collision-free
against the body and each other's final and swept postures". Without a
check, every pair passes.
"""

from __future__ import annotations

from typing import Callable, NamedTuple, Sequence

from ..api.pose import FULL_MASK, solve_pose
from ..api.position import solve
from ..model.arm import ArmModel

#: ``check(left, q_left, right, q_right, start_left, start_right) -> reason`` ("" = fine).
PairCheck = Callable[[ArmModel, Sequence[float], ArmModel, Sequence[float], Sequence[float], Sequence[float]], str]


class ArmAnswer(NamedTuple):
    """One arm's part of :class:`BothArms`.

    Attributes:
        angles: five joint angles, inside the limits.
        reached: every constrained component within tolerance.
        error: position error, metres.
        orientation_error: radians (0 for a position target).
        method: the method that answered.
        reason: why it is not reached ("" when it is): the solver's (:attr:`nao_ik.Solution.reason`,
            :attr:`nao_ik.PoseSolution.reason`).
    """

    angles: tuple
    reached: bool
    error: float
    orientation_error: float
    method: str
    reason: str = ""


class BothArms(NamedTuple):
    """What :func:`solve_both` returns.

    Attributes:
        left, right: :class:`ArmAnswer` of each arm.
        collision: why the pair may not move ("" when the check passed or there is none).
    """

    left: ArmAnswer
    right: ArmAnswer
    collision: str


def solve_one(target: Sequence[float], model: ArmModel, method: str, initial: Sequence[float]) -> ArmAnswer:
    """One arm's answer for a position (3 values) or a full pose (6 values)."""
    if len(target) == 3:
        s = solve(target, model, method, initial=initial)
        return ArmAnswer(tuple(s.angles), bool(s.reached), float(s.error), 0.0, s.method, s.reason)
    p = solve_pose(target, model, FULL_MASK, initial=initial, method=method)
    return ArmAnswer(tuple(p.angles), bool(p.reached), float(p.position_error), float(p.rotation_error), p.method,
                     p.reason)  # fmt: skip


def solve_both(
    left_target: Sequence[float],
    right_target: Sequence[float],
    models: tuple[ArmModel, ArmModel],
    methods: tuple[str, str],
    initial: tuple[Sequence[float], Sequence[float]],
    check: PairCheck | None = None,
) -> BothArms:
    """Both arms' answers and the pair's check.

    Args:
        left_target, right_target: 3 (position) or 6 (pose) FRAME_TORSO values each, already validated.
        models: the LArm and RArm models (the robot's limits).
        methods: the method of each (a position method for 3 values, a pose method for 6).
        initial: each arm's current posture.
        check: the pair's collision check, or None.

    Returns:
        :class:`BothArms`.
    """
    left = solve_one(left_target, models[0], methods[0], initial[0])
    right = solve_one(right_target, models[1], methods[1], initial[1])
    reason = "" if check is None else check(models[0], left.angles, models[1], right.angles, initial[0], initial[1])
    return BothArms(left, right, reason)
