# -*- coding: utf-8 -*-
# ruff: noqa: UP004, UP009, UP010  (the common subset of Python 2.7 and 3)
"""The ``analytic`` method on the robot: the exact configuration nearest to the start posture.

The library's own scalar path (:func:`nao_ik.geometry.scalar_nearest.nearest`, the rule of
:mod:`nao_ik.geometry.nearest`): among the exact solutions of the target (the elbow's swivel
circle, inside the joint limits) the one whose move from the start takes least time; WristYaw
is held. A target beyond the arm's reach gets the configuration whose hand is toward it at
the nearest distance the links allow (``reached`` False). Where no swivel is allowed the answer
is ``found`` False: the library then searches the closest attainable pose by least squares
(numpy), which the runtime does not have; its service sends nothing then.
"""

from __future__ import division

import collections
import math

from ..geometry.scalar_nearest import nearest
from ..geometry.scalar_swivel import arm as scalar_arm
from ..geometry.scalar_swivel import hand_point

#: Success distance, metres (the library's default tolerance).
TOLERANCE = 1e-4


class Answer(collections.namedtuple("Answer", "angles reached error seconds found reason")):
    """What :func:`solve` returns.

    Attributes:
        angles: five floats, inside the limits (the start where nothing was found).
        reached: the hand is within TOLERANCE of the target.
        error: the hand's distance to the target, metres.
        seconds: the move time from the start at full speed (0 where nothing was found).
        found: an allowed configuration was found.
        reason: why the target is not reached ("" when it is): "out of reach" or "joint limits".
    """

    __slots__ = ()


def forward(model, q):
    # type: (object, list) -> tuple
    """The hand position (FRAME_TORSO, metres) of configuration q (five floats)."""
    return hand_point(scalar_arm(model), q)


def _distance(a, b):
    return math.sqrt((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2 + (a[2] - b[2]) ** 2)


def solve(model, target, start):
    # type: (object, tuple, list) -> Answer
    """The nearest exact configuration for ``target`` from posture ``start``.

    Args:
        model: the arm (:data:`nao_ik.robot.arms.MODELS`).
        target: the hand target (three floats, FRAME_TORSO metres).
        start: the start posture (five floats, inside the limits).

    Returns:
        :class:`Answer`.
    """
    start = model.clamp(start)
    q, _, seconds, found, circle, _ = nearest(model, target, start)
    if not found:
        err = _distance(forward(model, start), target)
        return Answer(list(start), False, err, 0.0, False, "joint limits" if circle.reachable else "out of reach")
    q = model.clamp(q)  # removes rounding only: the answer is inside the limits by construction
    err = _distance(forward(model, q), target)
    reached = err <= TOLERANCE
    reason = "" if reached else ("out of reach" if not circle.reachable else "joint limits")
    return Answer(q, reached, err, seconds, True, reason)
