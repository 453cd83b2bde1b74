"""The NAO arm as data: joints, offsets, axes and limits of both arms.

Every solver, the forward kinematics and the service read the arm from an
:class:`ArmModel`; nothing else in the package knows a link length.

Numbers: Aldebaran's NAO H25 V4/V5/V6 documentation and the ros-naoqi URDF
(``naoV50.urdf``). Units are metres and radians, FRAME_TORSO
(x forward, y to the robot's left, z up).
"""

from __future__ import annotations

import math
import numbers
from typing import Mapping, NamedTuple, Sequence

# The numbers live in the numpy-free nao_ik.model.arm_data (the robot runtime reads them too).
from .arm_data import (  # noqa: F401  (re-exported: the library's names for them)
    ARMS,
    ELBOW_OFFSET_Y,
    HAND_OFFSET,
    HAND_OFFSET_X,
    HAND_OFFSET_Z,
    JOINT_SUFFIXES,
    LOWER_ARM_LENGTH,
    SHOULDER_OFFSET_Y,
    SHOULDER_OFFSET_Z,
    UPPER_ARM_LENGTH,
    X,
    Y,
    Z,
    joint_rows,
)
from .arm_data import neutral as neutral_posture
from .body import BODY, Capsule

#: The right arm is the left arm mirrored through the torso's x-z plane: a
#: right-arm target is a left-arm target with y negated, and a right-arm
#: configuration a left-arm one with these signs (roll and yaw joints flip).
MIRROR_TARGET = (1.0, -1.0, 1.0)
MIRROR_ANGLES = (1.0, -1.0, -1.0, -1.0, -1.0)


class Joint(NamedTuple):
    """One revolute joint of the arm chain.

    Attributes:
        name: ALMotion joint name, e.g. ``"LShoulderPitch"``.
        axis: rotation axis in the joint's own frame (0 = x, 1 = y, 2 = z).
        offset: position of this joint's origin in the previous joint's frame
            (the torso frame for the first joint), metres.
        lower: lower limit, radians.
        upper: upper limit, radians.
        max_velocity: maximum speed, rad/s.
    """

    name: str
    axis: int
    offset: tuple[float, float, float]
    lower: float
    upper: float
    max_velocity: float


class ArmModel(NamedTuple):
    """A five-joint NAO arm: ShoulderPitch, ShoulderRoll, ElbowYaw, ElbowRoll, WristYaw.

    Attributes:
        arm: ``"LArm"`` or ``"RArm"``.
        joints: the five joints in chain order.
        hand_offset: the ALMotion hand effector in the WristYaw frame, metres.
        neutral: the documented default start posture (radians, chain order).
        active: indices of the joints the position solvers move; WristYaw (4)
            is held at its start value because it only turns the 12.31 mm
            hand offset about the forearm.
        lower, upper: the joints' limits as tuples (kept equal to ``joints``
            by :func:`make_model`, the only constructor; read in every
            solver iteration).
        body: the capsules the arm's links keep clear of (:mod:`nao_ik.model.body`;
            default NAO's body standing, ``()`` for none): the solvers answer
            only configurations clear of them by :data:`nao_ik.model.body.MARGIN`.
    """

    arm: str
    joints: tuple[Joint, ...]
    hand_offset: tuple[float, float, float]
    neutral: tuple[float, ...]
    active: tuple[int, ...]
    lower: tuple[float, ...]
    upper: tuple[float, ...]
    body: tuple[Capsule, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """ALMotion joint names in chain order."""
        return tuple(j.name for j in self.joints)

    @property
    def is_right(self) -> bool:
        """True for the right arm (the left arm's mirror image)."""
        return self.arm == "RArm"

    @property
    def shoulder(self) -> tuple[float, float, float]:
        """The shoulder centre in FRAME_TORSO, metres."""
        return self.joints[0].offset

    def with_limits(self, limits: Mapping[str, Sequence[float]]) -> ArmModel:
        """A copy with joint limits replaced, e.g. those ``ALMotion.getLimits`` reports.

        Args:
            limits: joint name -> ``[minAngle, maxAngle, maxVelocity, ...]``;
                joints not named keep their limits.

        Returns:
            The new model; its neutral posture is clamped into the new limits.

        Raises:
            ValueError: a name that is not one of this arm's joints (a typo
                would otherwise keep the default limits silently), or a
                limit that is not a finite number, or min > max; the message
                names the joint.
        """
        unknown = [n for n in limits if n not in self.names]
        if unknown:
            raise ValueError(f"unknown joint {unknown[0]!r} for {self.arm}: expected one of {', '.join(self.names)}")
        joints = []
        for j in self.joints:
            if j.name not in limits:
                joints.append(j)
                continue
            values = _limit_values(j.name, limits[j.name])
            lo, hi = values[0], values[1]
            if lo > hi:
                raise ValueError(f"limits of {j.name}: min {lo} > max {hi}")
            vel = values[2] if len(values) > 2 and values[2] > 0 else j.max_velocity
            joints.append(j._replace(lower=lo, upper=hi, max_velocity=vel))
        neutral = tuple(min(max(q, j.lower), j.upper) for q, j in zip(self.neutral, joints))
        return make_model(self.arm, tuple(joints), self.hand_offset, neutral, self.active, self.body)

    def bodiless(self) -> ArmModel:
        """This arm with no body (the limits alone), the same object on every call (solvers cache per model)."""
        if not self.body:
            return self
        hit = _BODILESS.get(id(self))
        if hit is None or hit[0] is not self:
            if len(_BODILESS) > 64:
                _BODILESS.clear()
            hit = _BODILESS[id(self)] = (self, self._replace(body=()))
        return hit[1]

    def clamp(self, angles: Sequence[float]) -> tuple[float, ...]:
        """Clamp joint angles (chain order) into the limits."""
        return tuple([min(max(float(q), lo), hi) for q, lo, hi in zip(angles, self.lower, self.upper)])

    def within_limits(self, angles: Sequence[float], slack: float = 0.0) -> bool:
        """True if every angle is finite and inside the limits (+- slack)."""
        return all(math.isfinite(q) and j.lower - slack <= q <= j.upper + slack for q, j in zip(angles, self.joints))


def _limit_values(name: str, value: object) -> list[float]:
    """``[min, max, maxVelocity?, ...]`` of one joint as floats; the first three must be finite numbers."""
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    if not isinstance(value, (list, tuple)) and not hasattr(value, "tolist"):
        raise ValueError(f"limits of {name} must be a list [min, max, ...] of finite numbers, got {shown}")
    items = list(value)
    head = items[:3]
    if len(items) < 2 or not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in head):
        raise ValueError(f"limits of {name} must be a list [min, max, ...] of finite numbers, got {shown}")
    try:
        values = [float(v) for v in head]
    except OverflowError:
        raise ValueError(f"limits of {name} must be finite numbers, got {shown}") from None
    if not all(math.isfinite(v) for v in values):
        raise ValueError(f"limits of {name} must be finite [min, max, ...], got {shown}")
    return values


_BODILESS: dict = {}


def make_model(
    arm: str,
    joints: tuple[Joint, ...],
    hand_offset: tuple[float, float, float],
    neutral: tuple[float, ...],
    active: tuple[int, ...] = (0, 1, 2, 3),
    body: tuple[Capsule, ...] = BODY,
) -> ArmModel:
    """Build an :class:`ArmModel` (the limit tuples are derived from ``joints``)."""
    lower = tuple(j.lower for j in joints)
    upper = tuple(j.upper for j in joints)
    return ArmModel(arm, joints, hand_offset, neutral, active, lower, upper, tuple(body))


def _arm(side: str) -> ArmModel:
    joints = tuple(Joint(*row) for row in joint_rows(side))
    return make_model(side + "Arm", joints, HAND_OFFSET, neutral_posture(side))


_MODELS = {"LArm": _arm("L"), "RArm": _arm("R")}


def arm_model(arm: str = "LArm") -> ArmModel:
    """The model of one arm with the documented limits.

    Args:
        arm: ``"LArm"`` or ``"RArm"``.

    Returns:
        The arm's :class:`ArmModel`.

    Raises:
        ValueError: unknown arm.
    """
    try:
        return _MODELS[arm]
    except (KeyError, TypeError):
        raise ValueError(f"unknown arm {arm!r}: expected one of {', '.join(ARMS)}") from None
