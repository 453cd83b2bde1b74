"""NAO's body as data: the shapes an arm must not go through, and the arm's own links.

The numbers and their sources are in :mod:`nao_ik.model.body_data` (plain tuples in the common
subset of Python 2.7 and 3, which the robot runtime reads too); this module gives them the
library's types: :class:`Capsule` and :class:`Link` (NamedTuples with the same fields as the
rows, so a Capsule equals its row), :data:`BODY`, :func:`body`, :func:`thigh`, :data:`LINKS`.

Every shape is a capsule (a segment swept by a sphere; a sphere is a capsule
of zero length), FRAME_TORSO, metres. The safety margin: an arm is clear of
the body when every link's capsule is at least :data:`MARGIN` (library) from
every body part; ALMotion's stand-in (``sim_stub``) checks shapes of its own
with the smaller :data:`STUB_MARGIN`, and these are sized so that what the library commands does not trip it.
"""

from __future__ import annotations

from typing import NamedTuple

from .body_data import (  # noqa: F401  (the numbers, re-exported under their old names)
    HEAD_REST,
    HIP_Y,
    HIP_Z,
    LEGS_REST,
    LINK_ROWS,
    MARGIN,
    NAMES,
    NECK_Z,
    OTHER_ARM,
    PARTS,
    STAND_HIP_PITCH,
    STUB_MARGIN,
    THIGH_LENGTH,
    TORSO_X,
    body_rows,
    thigh_row,
)


class Capsule(NamedTuple):
    """A segment ``a``-``b`` swept by a sphere of ``radius`` (FRAME_TORSO, metres).

    Attributes:
        part: the body part it belongs to (``"torso"``, ``"head"``, ``"hips"``, ``"thighs"``),
            the name a ``reason`` gives.
        a, b: the segment's ends.
        radius: the sphere's radius.
    """

    part: str
    a: tuple[float, float, float]
    b: tuple[float, float, float]
    radius: float


class Link(NamedTuple):
    """One arm link as a capsule between two points of the arm's chain.

    Attributes:
        name: ``"upper arm"``, ``"forearm"`` or ``"hand"``.
        start, end: chain points (0 shoulder, 2 elbow, 4 wrist, 5 hand effector).
        skip: fraction of the segment left out at its start (the upper arm
            near the shoulder is the shoulder's own housing, part of the torso).
        radius: the link's radius.
    """

    name: str
    start: int
    end: int
    skip: float
    radius: float


#: The arm's links (:data:`nao_ik.model.body_data.LINK_ROWS`: the radii's sources there).
LINKS: tuple[Link, ...] = tuple(Link(*row) for row in LINK_ROWS)


def thigh(side: float, hip_pitch: float = STAND_HIP_PITCH) -> Capsule:
    """The thigh of one leg (side +1 left, -1 right) at a HipPitch (:func:`nao_ik.model.body_data.thigh_row`)."""
    return Capsule(*thigh_row(side, hip_pitch))


def body(left_hip_pitch: float = STAND_HIP_PITCH, right_hip_pitch: float = STAND_HIP_PITCH,
         head: tuple[float, float] | None = HEAD_REST, legs: tuple = LEGS_REST) -> tuple[Capsule, ...]:  # fmt: skip
    """NAO's body (both arms share it), thighs at the given HipPitch (and ``legs``: LHipYawPitch, LHipRoll,
    RHipYawPitch, RHipRoll), the head at (HeadYaw, HeadPitch) or, None, wherever it may be.

    The shapes: :func:`nao_ik.model.body_data.body_rows` (torso, head, hips, thighs; their sizes and sources there).
    """
    return tuple(Capsule(*row) for row in body_rows(left_hip_pitch, right_hip_pitch, head, legs))


#: The body at the standing posture.
BODY: tuple[Capsule, ...] = body()
