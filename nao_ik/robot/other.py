# -*- coding: utf-8 -*-
# ruff: noqa: UP004, UP009, UP010, UP031  (the common subset of Python 2.7 and 3)
"""The other arm as part of the body: where it stands, and where a command this runtime sent it may take it.

An arm's answer and motion are checked against the other arm's links too (part
:data:`~nao_ik.model.body_data.OTHER_ARM`), as the library's
:func:`nao_ik.geometry.collision.posture_body` adds them for the computer-side service. The other arm
is taken to be anywhere in a *box* of postures (:meth:`nao_ik.robot.record.Record.box`): each joint anywhere
between its sensed angle and the goals of the commands this runtime sent it that may still move it, grown by the
overshoot of a joint retargeted mid-move (:func:`nao_ik.geometry.scalar.sweep.overshoot`); its whole joint range
where it may be anywhere (moving under commands the runtime did not send, or not seen at rest since the runtime
started). A box of one posture (the arm standing, no command running) gives the library's capsules exactly
(:func:`nao_ik.geometry.collision.arm_capsules`: each link whole, its radius); a wider box is cut into pieces, each
link's capsule taken at a piece's middle posture with its radius grown by how far the link's points can be from
there anywhere in the piece (:func:`nao_ik.geometry.scalar.clearance.link_reach_at`, ``box_growth``): a
conservative cover, cut as the library's :func:`nao_ik.geometry.collision.arm_region` cuts it, whose clearance the
library's :mod:`nao_ik.geometry.scalar.clearance` computes as for any body part.

Written in the common subset of Python 2.7 and 3 (the robot runtime).
"""

from __future__ import division

from ..geometry.scalar.clearance import region_rows
from ..model.body_data import OTHER_ARM


def rows(model, lo, hi, part=OTHER_ARM):
    # type: (object, list, list, str) -> tuple
    """Body rows (part, a, b, radius) holding the arm's links at every posture of the box lo..hi
    (:func:`nao_ik.geometry.scalar.clearance.region_rows`, as the library's
    :func:`nao_ik.geometry.collision.arm_region`).

    Returns:
        Capsule rows; for lo == hi the library's :func:`nao_ik.geometry.collision.arm_capsules` of that posture.
    """
    return region_rows(model, lo, hi, part)
