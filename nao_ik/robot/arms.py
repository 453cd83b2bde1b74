# -*- coding: utf-8 -*-
# ruff: noqa: UP004, UP009, UP010  (the common subset of Python 2.7 and 3)
"""The arm models of the robot runtime: the numbers of :mod:`nao_ik.model.arm_data` in plain tuples.

The scalar path (:mod:`nao_ik.geometry.scalar.swivel`) reads ``joints[i].offset / lower /
upper / max_velocity`` and ``hand_offset``, the same fields as the library's
:class:`~nao_ik.model.arm.ArmModel`. The body is not part of the model here: the runtime passes
NAO's standing body (:data:`nao_ik.robot.solve.STANDING`) to the search and the motion check.
"""

from __future__ import division

import collections

from ..model.arm_data import ARMS, HAND_OFFSET, joint_rows, neutral

Joint = collections.namedtuple("Joint", "name axis offset lower upper max_velocity")


class Arm(collections.namedtuple("Arm", "arm joints hand_offset neutral names lower upper")):
    """One arm: ``arm`` (``"LArm"``/``"RArm"``), its five joints, the hand effector, the neutral posture."""

    __slots__ = ()

    def clamp(self, q):
        # type: (list) -> list
        """The angles clamped into the limits."""
        return [min(max(float(x), lo), hi) for x, lo, hi in zip(q, self.lower, self.upper)]

    def within_limits(self, q, slack=0.0):
        # type: (list, float) -> bool
        """True if every angle is a finite number inside the limits (+- slack)."""
        return len(q) == 5 and all(lo - slack <= x <= hi + slack for x, lo, hi in zip(q, self.lower, self.upper))


def _make(arm):
    # type: (str) -> Arm
    joints = tuple(Joint(*row) for row in joint_rows(arm[0]))
    return Arm(arm, joints, HAND_OFFSET, neutral(arm[0]), tuple(j.name for j in joints),
               tuple(j.lower for j in joints), tuple(j.upper for j in joints))  # fmt: skip


MODELS = dict((a, _make(a)) for a in ARMS)
