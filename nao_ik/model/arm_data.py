# -*- coding: utf-8 -*-
# ruff: noqa: UP004, UP009, UP010, UP031  (the common subset of Python 2.7 and 3, see the docstring)
"""The NAO arm's numbers as plain data: offsets, limits, speeds, the hand effector, the neutral posture.

One source for both sides: :mod:`nao_ik.model.arm` builds its :class:`~nao_ik.model.arm.ArmModel`
(the library, numpy batch paths included) from these tuples, and the robot runtime
(:mod:`nao_ik.robot`) builds its numpy-free model from the same tuples.

Numbers: Aldebaran's NAO H25 V4/V5/V6 documentation and the ros-naoqi URDF
(``naoV50.urdf``). Units are metres and radians, FRAME_TORSO (x forward,
y to the robot's left, z up).

Written in the common subset of Python 2.7 and 3 with no numpy (it runs on the robot).
"""

from __future__ import division

import math

ARMS = ("LArm", "RArm")
JOINT_SUFFIXES = ("ShoulderPitch", "ShoulderRoll", "ElbowYaw", "ElbowRoll", "WristYaw")

# Axis indices: 0 = x, 1 = y, 2 = z.
X, Y, Z = 0, 1, 2

SHOULDER_OFFSET_Y = 0.098
SHOULDER_OFFSET_Z = 0.100
UPPER_ARM_LENGTH = 0.105
ELBOW_OFFSET_Y = 0.015
LOWER_ARM_LENGTH = 0.05595
HAND_OFFSET_X = 0.05775
HAND_OFFSET_Z = 0.01231


def joint_rows(side):
    # type: (str) -> tuple
    """The five joints of one arm as rows (name, axis, offset, lower, upper, max_velocity), chain order.

    Args:
        side: ``"L"`` or ``"R"``.

    Returns:
        A tuple of five rows; offset is the joint's origin in the previous joint's frame (metres).
    """
    s = 1.0 if side == "L" else -1.0
    # Roll limits mirror between the arms; pitch and yaw limits do not.
    # Values as in the URDF: -18..76 deg and -88.5..-2 deg for the left arm.
    roll_sh = (-0.314159, 1.32645) if s > 0 else (-1.32645, 0.314159)
    roll_el = (-1.54462, -0.0349066) if s > 0 else (0.0349066, 1.54462)
    return (
        (side + "ShoulderPitch", Y, (0.0, s * SHOULDER_OFFSET_Y, SHOULDER_OFFSET_Z), -2.08567, 2.08567, 8.26797),
        (side + "ShoulderRoll", Z, (0.0, 0.0, 0.0), roll_sh[0], roll_sh[1], 7.19407),
        (side + "ElbowYaw", X, (UPPER_ARM_LENGTH, s * ELBOW_OFFSET_Y, 0.0), -2.08567, 2.08567, 8.26797),
        (side + "ElbowRoll", Z, (0.0, 0.0, 0.0), roll_el[0], roll_el[1], 7.19407),
        (side + "WristYaw", X, (LOWER_ARM_LENGTH, 0.0, 0.0), -1.82387, 1.82387, 24.6229),
    )


#: The ALMotion hand effector in the WristYaw frame, metres.
HAND_OFFSET = (HAND_OFFSET_X, 0.0, -HAND_OFFSET_Z)

#: No hand gets farther from its shoulder than this (the links' lengths added up), metres.
LONGEST_REACH = UPPER_ARM_LENGTH + ELBOW_OFFSET_Y + math.hypot(LOWER_ARM_LENGTH + HAND_OFFSET_X, HAND_OFFSET_Z)
#: A target farther than any arm reaches by more than this (metres) is a slip of units: millimetres sent for
#: metres put a target 0.15 m away at 150 m.
UNIT_SLIP = 1.0


def shoulder_distance(x, y, z):
    # type: (float, float, float) -> float
    """How far a FRAME_TORSO point is from the nearer shoulder, metres (numbers, or numpy arrays element-wise)."""
    return (x * x + (abs(y) - SHOULDER_OFFSET_Y) ** 2 + (z - SHOULDER_OFFSET_Z) ** 2) ** 0.5


def slipped(x, y, z):
    # type: (float, float, float) -> bool
    """Whether a FRAME_TORSO point lies farther from the nearer shoulder than LONGEST_REACH + UNIT_SLIP: no
    arm reaches it by over UNIT_SLIP, so it cannot be meant in metres (numbers, or numpy arrays element-wise)."""
    return shoulder_distance(x, y, z) > LONGEST_REACH + UNIT_SLIP


def unit_slip(x, y, z, label):
    # type: (float, float, float, str) -> str
    """Why a FRAME_TORSO point cannot be meant in metres ("" if it can: not :func:`slipped`)."""
    if not slipped(x, y, z):
        return ""
    d = shoulder_distance(x, y, z)
    return (
        "%s (%g, %g, %g) is %.4g m from the shoulder, %.4g m beyond any arm's reach: coordinates are metres "
        "(FRAME_TORSO), not millimetres" % (label, x, y, z, d, d - LONGEST_REACH)
    )


def neutral(side):
    # type: (str) -> tuple
    """The documented default start posture: upper arm forward and slightly out, elbow half bent."""
    s = 1.0 if side == "L" else -1.0
    return (0.0, s * 0.3, 0.0, -s * 0.9, 0.0)
