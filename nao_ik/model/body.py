"""NAO's body as data: the shapes an arm must not go through, and the arm's own links.

The numbers and their sources are in :mod:`nao_ik.model.body_data` (plain tuples in the common
subset of Python 2.7 and 3, which the robot runtime reads too); this module gives them the
library's types: :class:`Capsule`, :class:`Box` and :class:`Link` (NamedTuples with the same fields as the
rows, so a shape equals its row), :data:`BODY`, :func:`body`, :func:`shape`, :func:`corners`, :data:`LINKS`.

A shape is a capsule (a segment swept by a sphere; a sphere is a capsule of zero length) or a rounded box
(a box swept by a sphere), FRAME_TORSO, metres. The safety margin: an arm is clear of the body when every
link's capsule is at least :data:`MARGIN` (library) from every body part; ALMotion's stand-in (``sim_stub``)
checks shapes of its own with the smaller :data:`STUB_MARGIN`; the library's hold the stub's (which hold
every vertex of the real robot's meshes: :mod:`nao_ik.model.body_data` says how near the meshes' faces
come), so what the library commands does not trip it.
"""

from __future__ import annotations

from typing import NamedTuple, Union

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
    body_rows,
)


class Capsule(NamedTuple):
    """A segment ``a``-``b`` swept by a sphere of ``radius`` (FRAME_TORSO, metres).

    Attributes:
        part: the body part it belongs to (``"torso"``, ``"head"``, ``"hips"``, ``"thighs"``, ``"other arm"``),
            the name a ``reason`` gives.
        a, b: the segment's ends.
        radius: the sphere's radius.
    """

    part: str
    a: tuple[float, float, float]
    b: tuple[float, float, float]
    radius: float


class Box(NamedTuple):
    """A box swept by a sphere of ``radius`` (FRAME_TORSO, metres): the points within ``radius`` of the box
    ``|turn (p - centre)| <= half`` (each coordinate).

    Attributes:
        part: as :class:`Capsule`'s.
        centre: the box's centre.
        half: its core's half sizes along its own axes (the rounding not included).
        radius: the rounding.
        turn: the rotation torso-to-box, nine entries row by row; None: the torso's axes.
    """

    part: str
    centre: tuple[float, float, float]
    half: tuple[float, float, float]
    radius: float
    turn: tuple[float, ...] | None


#: A body shape.
Shape = Union[Capsule, Box]


def shape(row: tuple) -> Shape:
    """The shape of a row of :mod:`nao_ik.model.body_data` (four entries: a capsule; five: a rounded box)."""
    return Capsule(*row) if len(row) == 4 else Box(*row)


def corners(c: Shape) -> tuple[tuple[float, float, float], ...]:
    """The points that place a shape's core: a capsule's segment ends; a rounded box's eight corners (FRAME_TORSO).
    Two shapes of the same size whose corners are within d of each other are within d everywhere."""
    if isinstance(c, Capsule):
        return (c.a, c.b)
    turn = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0) if c.turn is None else c.turn
    out = []
    for sx in (-1.0, 1.0):
        for sy in (-1.0, 1.0):
            for sz in (-1.0, 1.0):
                v = (sx * c.half[0], sy * c.half[1], sz * c.half[2])  # box frame; to the torso by turn's transpose
                out.append(tuple(c.centre[i] + sum(turn[3 * j + i] * v[j] for j in range(3)) for i in range(3)))
    return tuple(out)


class Link(NamedTuple):
    """One arm link as a capsule between two points of the arm's chain.

    Attributes:
        name: ``"upper arm"``, ``"forearm"`` or ``"hand"``.
        start, end: chain points (0 shoulder, 1 the upper arm's root behind it, 2 elbow, 4 wrist, 5 hand
            effector, 6 the hand's far end).
        skip: fraction of the segment left out at its start for the arm's own check (the upper arm near the
            shoulder: its shoulder cap, which turns against its own housing).
        radius: the link's radius.
    """

    name: str
    start: int
    end: int
    skip: float
    radius: float


#: The arm's links (:data:`nao_ik.model.body_data.LINK_ROWS`: the radii's sources there).
LINKS: tuple[Link, ...] = tuple(Link(*row) for row in LINK_ROWS)


def body(left_hip_pitch: float = STAND_HIP_PITCH, right_hip_pitch: float = STAND_HIP_PITCH,
         head: tuple[float, float] | None = HEAD_REST, legs: tuple = LEGS_REST) -> tuple[Shape, ...]:  # fmt: skip
    """NAO's body (both arms share it), thighs at the given HipPitch (and ``legs``: LHipYawPitch, LHipRoll,
    RHipYawPitch, RHipRoll), the head at (HeadYaw, HeadPitch) or, None, wherever it may be.

    The shapes: :func:`nao_ik.model.body_data.body_rows` (torso, head, hips, thighs; their sizes and sources there).
    """
    return tuple(shape(row) for row in body_rows(left_hip_pitch, right_hip_pitch, head, legs))


#: The body at the standing posture.
BODY: tuple[Shape, ...] = body()
