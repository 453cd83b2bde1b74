# -*- coding: utf-8 -*-
# ruff: noqa: UP004, UP009, UP010, UP031  (the common subset of Python 2.7 and 3)
"""The ``analytic`` method on the robot: the exact configuration nearest to the start posture, clear of the body.

The library's own scalar path (:func:`nao_ik.geometry.scalar.nearest.nearest_clear`, which
:func:`nao_ik.geometry.nearest.nearest` runs for one target with a body): among the exact
solutions of the target (the elbow's swivel circle, inside the joint limits) the one whose move
from the start takes least time; WristYaw is held. The nearest on the joint limits alone, and
where that answer comes within the body's :data:`~nao_ik.model.body_data.MARGIN`, the search again
with the body's clearance as one more limit (its ``extra``:
:func:`nao_ik.geometry.scalar.clearance.body_margin`, the library's own per-configuration check).
A target beyond the arm's reach gets the configuration whose hand is toward it at the nearest
distance the links allow (``reached`` False). Where no allowed swivel exists the answer is
``found`` False (reason "joint limits", or "collision: <part>" where only configurations through
the body reach the target): the library then searches the closest attainable pose by least
squares (numpy), which the runtime does not have; its service sends nothing then.

:func:`motion` checks a command's motion as the library does (:func:`nao_ik.geometry.sweep.sweep`); where the
motion to the answer is not certified, :func:`other_direct` finds another exact solution whose motion is, as
the library's service does (:func:`nao_ik.geometry.sweep.first_direct`).
"""

from __future__ import division

import collections
import math

from ..geometry.scalar.clearance import body_margin, clearance
from ..geometry.scalar.nearest import nearest_clear
from ..geometry.scalar.sweep import BOX_BUDGET, SWEEP_MARGIN, certify_from, first_certified, hull
from ..geometry.scalar.swivel import SWIVELS, hand_point, samples
from ..geometry.scalar.swivel import arm as scalar_arm
from ..model.body_data import MARGIN, body_rows

#: Success distance, metres (the library's default tolerance).
TOLERANCE = 1e-4
#: NAO's body standing: the shapes every answer keeps MARGIN from where no reading of the head and legs is given.
STANDING = body_rows()
#: Clearance short of the margin still counted clear (metres): the root finders' rounding at the boundary.
EPS = 1e-9


class Answer(collections.namedtuple("Answer", "angles reached error seconds found reason")):
    """What :func:`solve` returns.

    Attributes:
        angles: five floats, inside the limits (the start where nothing was found).
        reached: the hand is within TOLERANCE of the target.
        error: the hand's distance to the target, metres.
        seconds: the move time from the start at full speed (0 where nothing was found).
        found: an allowed configuration was found (inside the limits, MARGIN from the body).
        reason: why the target is not reached ("" when it is): "out of reach", "joint limits" or
            "collision: <part>".
    """

    __slots__ = ()


def forward(model, q):
    # type: (object, list) -> tuple
    """The hand position (FRAME_TORSO, metres) of configuration q (five floats)."""
    return hand_point(scalar_arm(model), q)


def distance(a, b):
    return math.sqrt((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2 + (a[2] - b[2]) ** 2)


def solve(model, target, start, body=STANDING):
    # type: (object, tuple, list, tuple) -> Answer
    """The nearest exact configuration for ``target`` from posture ``start``, MARGIN clear of ``body``.

    Args:
        model: the arm (:data:`nao_ik.robot.arms.MODELS`).
        target: the hand target (three floats, FRAME_TORSO metres).
        start: the start posture (five floats, inside the limits).
        body: the shapes (rows: :func:`nao_ik.model.body_data.body_rows`); ``()``: the limits alone.

    Returns:
        :class:`Answer`.
    """
    start = model.clamp(start)
    extra = (lambda x: body_margin(model, x, body)) if body else None
    (q, _, seconds, found, circle, _), free = nearest_clear(model, target, start, extra)
    reason = "joint limits" if circle.reachable else "out of reach"
    if not found and circle.reachable and free is not None:  # only configurations through the body reach it
        reason = "collision: %s" % clearance(model, model.clamp(free), body).part
    if found:
        q = model.clamp(q)  # removes rounding only: the answer is inside the limits by construction
        near = clearance(model, q, body) if body else None
        if near is not None and near.distance < MARGIN - EPS:  # the last check (the search keeps it by construction)
            found, reason = False, "collision: %s" % near.part
    if not found:
        err = distance(forward(model, start), target)
        return Answer(list(start), False, err, 0.0, False, reason)
    err = distance(forward(model, q), target)
    reached = err <= TOLERANCE
    return Answer(q, reached, err, seconds, True, "" if reached else reason)


def motion(model, start, goal, body=STANDING, budget=BOX_BUDGET, way=None):
    # type: (object, list, list, tuple, int, tuple) -> tuple
    """Whether every motion setAngles may make from ``start`` to ``goal`` keeps SWEEP_MARGIN from ``body``.

    The library's check of a command (:func:`nao_ik.geometry.sweep.sweep`): the joint-space box between the two
    postures (each joint anywhere between its start and its goal, whatever setAngles' speed profile and
    however its joints keep pace), inside the limits, certified by
    :func:`nao_ik.geometry.scalar.sweep.certify_from`. A start already closer than the margin to a body part
    (the robot put there by someone else) may move as long as no posture of the box comes more than STEP / 2
    nearer to that part than it is; every other part keeps the margin.
    ``way``: (lower, upper) bounds of the postures the arm may be in when the command takes it (an arm still on
    its way to an earlier command, its overshoot included: :meth:`nao_ik.robot.record.Record.box`); the box
    then spans them too, as the library's :func:`nao_ik.geometry.sweep.sweep_moving` checks from the whole way.

    Returns:
        (clear, the clearance (bound) where it failed (the need where it did not), the part there, postures
        checked).
    """
    lo, hi = hull([[float(x) for x in start], [float(x) for x in goal]] + ([] if way is None else list(way)))
    lo = [max(a, m) for a, m in zip(lo, model.lower)]
    hi = [min(b, m) for b, m in zip(hi, model.upper)]
    return certify_from(model, body, [float(x) for x in start], lo, hi, SWEEP_MARGIN, budget)


def other_direct(model, target, start, body=STANDING, way=None):
    # type: (object, tuple, list, tuple, tuple) -> object
    """Another exact solution of ``target`` whose motion from ``start`` (and ``way``) is certified (:func:`motion`),
    or None.

    The target's configurations at SWIVELS swivels on both ElbowRoll branches, WristYaw held at the start's
    (:func:`nao_ik.geometry.scalar.swivel.samples`), inside the limits and MARGIN clear of ``body``, by move time
    from ``start`` (the largest joint change over its maximum velocity), nearest first: the first of at most
    ALTERNATIVES whose motion is certified, their checks within one BOX_BUDGET in all
    (:func:`nao_ik.geometry.scalar.sweep.first_certified`; the library: :func:`nao_ik.geometry.sampled.clear_by_move`,
    :func:`nao_ik.geometry.sweep.first_direct`).
    """
    # Clamped (the samples are inside the limits within SLACK: rounding at a limit), as the library's first_direct.
    found = [q for q in (model.clamp(x) for x in samples(scalar_arm(model), target, start[4], SWIVELS))
             if clearance(model, q, body).distance >= MARGIN]  # fmt: skip
    found.sort(key=lambda q: max(abs(a - b) / j.max_velocity for a, b, j in zip(q, start, model.joints)))

    def check(q, budget):
        clear, _, _, used = motion(model, start, q, body, budget, way)
        return clear, used

    return first_certified(found, check)
