"""The stub's own shapes of NAO's body, for its arm-against-body protection.

A second source of truth, like the robot itself: independent of the library's body model (``nao_ik.model.body``,
``nao_ik.geometry.collision``), so that a test against the stub can catch a mistake of the library's. The shapes hold
the real robot's surface: the numbers are NAO_ARM.md's ("The real robot's shape", measured from the visual
meshes of Cyberbotics' Webots NAO), completed where that table gives no number by the extents of the same
meshes, measured the same way (numbers only; no file copied). Millimetres below, FRAME_TORSO unless a part's
own frame is named; metres in the code.

Two kinds of shape, each the set of points within a radius of a core:

- capsule: a segment (a point for a sphere) swept by a sphere;
- rounded box: an axis-aligned box (in its part's frame) swept by a sphere, for the flat-sided chest, waist,
  pelvis and thighs, which capsules can only hold by bulging 15 to 60 mm past them.

Both have exact distances to a capsule of the arm (:func:`segment_box_distance`; the segment-segment
distance :func:`sim_stub.shapes.segment_distance`), no sampling. A pair whose axis-aligned bounding boxes are
more than :data:`CAP` apart is answered with that distance instead (never more than the gap; cheaper): every gap
under CAP is exact.

The torso (part "torso", fixed to FRAME_TORSO):

- chest: rounded box x -53.1..58.3, y +-49.6, z 15..98.6, rounding 15; and its sides, x -43.1..45.6, y +-65.4,
  z 23.6..93.9, rounding 15 (two boxes: the chest's section is an octagon, its front and back corners cut).
  NAO_ARM.md: "chest front at the sternum (z 20-100) | x = 56-58" (the mesh: 58.3 at z 69), "back | x = -52.5".
  The chest's sides (+-65.4 at z 45) and its corners (x 54 at y 41, 40 at y 58; -48 at y 37, -32 at y 64) are
  the mesh's; NAO_ARM.md gives no width.
- upper chest: rounded box x -46.3..39.1, y +-51.5, z 94.1..122.2, rounding 10 (the mesh: above the sternum
  plate the chest recedes to x 39 in front, -43 behind; the neck's base).
- waist: rounded box x -50.2..49.8, y +-38.1, z -58..16.8, rounding 10; and its sides, x -39.4..28.6, y +-49.4,
  z -41.1..16.8, rounding 10. NAO_ARM.md: "waist (z -60..0) | half-width 36-48" (the mesh: 47.7 at
  z -40..-20, 36.5 at z -60..-40).
- shoulder housings: spheres of radius 36.5 at (0, +-73.2, 100). NAO_ARM.md: "shoulder housing | sticks out
  up to 29 mm beyond a plain torso shape"; the mesh: a disc around the ShoulderPitch axis (y at z 100),
  radius 35.6, its rim out to y +-96.1.

The head (part "head", in the HeadPitch frame: it turns with HeadYaw and HeadPitch about the neck, 126.5 above
the torso origin): a capsule of radius 62.5 from (0.5, -13.5, 55) to (0.5, 13.5, 55). NAO_ARM.md: "head |
mesh width +-66.5; capsule r 50 across y, centre (0, 0, 181.5)" (55 above the neck); the mesh also runs
x -60.3..58.0 and -2.7..112.9 above the neck, which the r 50 capsule (a simulator's collision primitive) does
not hold.

The hips (part "hips", each in its leg's HipYawPitch frame, 50 to the side of and 85 below the torso origin):
the pelvis, a rounded box x -59.4..23.9, y -37..15.4 (left leg; the right mirrors y), z -15.3..43.3, rounding 10
(the mesh; NAO_ARM.md gives none).

The thighs (part "thighs", each in its leg's HipPitch frame: HipYawPitch, HipRoll and HipPitch turn it, the knee
at (0, 0, -100)): a rounded box x -45..51.9, y -44..49.4 (left leg; the right mirrors y), z -131.7..23.4, rounding
30 (the thigh's mesh, knee cap included). NAO_ARM.md: "knee | radius 58-59 (reachable only crouching)": the same
mesh's farthest point from the hip-knee line, at the knee cap (front, outer side).

The arm's own shapes are :data:`sim_stub.shapes.ARM_SHAPES`; against the body, the upper arm counts from 50 mm
past the shoulder joint on (:data:`UPPER_ARM_FROM`: nearer is its shoulder cap, turning in and against its own
housing, as on the robot), and the arm's own shoulder housing and shoulder cap are left out.
"""

from __future__ import annotations

import math
from typing import Mapping, NamedTuple, Sequence

from .body import STAND
from .shapes import ARM_SHAPES, _point, frames, head_frame, pelvis_frame, segment_distance, thigh_frame

#: The body's parts, in the order the protection lists them.
PARTS = ("torso", "head", "hips", "thighs")
#: The joints that place the head and the legs' shapes.
POSTURE_JOINTS = ("HeadYaw", "HeadPitch", "LHipYawPitch", "LHipRoll", "LHipPitch", "RHipYawPitch", "RHipRoll",
                  "RHipPitch")  # fmt: skip
#: Where the stub stands, head straight (sim_stub.body.STAND).
STANDING = {j: STAND[j] for j in POSTURE_JOINTS}

#: Rounded boxes fixed to the torso: (name, low corner, high corner (the rounding included), rounding radius).
TORSO_BOXES = (
    ("chest", (-0.0531, -0.0496, 0.0150), (0.0583, 0.0496, 0.0986), 0.015),
    ("chest sides", (-0.0431, -0.0654, 0.0236), (0.0456, 0.0654, 0.0939), 0.015),
    ("upper chest", (-0.0463, -0.0515, 0.0941), (0.0391, 0.0515, 0.1222), 0.010),
    ("waist", (-0.0502, -0.0381, -0.0580), (0.0498, 0.0381, 0.0168), 0.010),
    ("waist sides", (-0.0394, -0.0494, -0.0411), (0.0286, 0.0494, 0.0168), 0.010),
    ("belly", (-0.0321, -0.0175, -0.0965), (0.0457, 0.0175, -0.0579), 0.010),
)
#: The shoulder housings: spheres on the ShoulderPitch axis (the left one's y; the right mirrors).
SHOULDER_Y, SHOULDER_Z, SHOULDER_RADIUS = 0.0732, 0.100, 0.0365
#: The head, in the HeadPitch frame: a capsule (start, end, radius).
HEAD = ((0.0005, -0.0135, 0.055), (0.0005, 0.0135, 0.055), 0.0625)
#: The left pelvis, in the left HipYawPitch frame: a rounded box (low, high, rounding); the right mirrors y.
PELVIS = ((-0.0595, -0.0371, -0.0154), (0.0240, 0.0155, 0.0434), 0.010)
#: The left thigh, in the left HipPitch frame: a rounded box (low, high, rounding); the right mirrors y.
THIGH = ((-0.0450, -0.0440, -0.1317), (0.0519, 0.0494, 0.0234), 0.030)
#: Against the body, the upper arm's capsule starts this far past the shoulder joint along the arm: nearer is the
#: arm's shoulder cap, which turns in and against its own housing (the housing holds the arm's axis up to 27 mm
#: from the joint; its front face, at y 72, stands 2 mm off the capsule at ShoulderRoll 0).
UPPER_ARM_FROM = 0.050
#: Pairs whose bounding boxes are farther apart than this are answered with that distance, metres (more than
#: the protection's margin and its "near" band).
CAP = 0.040


class Shape(NamedTuple):
    """One shape of the body at a posture, FRAME_TORSO.

    Attributes:
        part: index into :data:`PARTS`.
        box: False for a capsule (``a``-``b``, a point for a sphere), True for a rounded box (centre ``a``,
            ``b`` the core box's half sizes, ``turn`` the rotation torso-to-box, nine entries row by row, or None
            where the box is aligned with the torso).
        a, b: see ``box``.
        radius: the capsule's radius, or the box's rounding.
        turn: see ``box``.
        side: +1 / -1 for the left / right shoulder housing, else 0.
        low, high: the corners of an axis-aligned box holding the shape.
    """

    part: int
    box: bool
    a: tuple
    b: tuple
    radius: float
    turn: tuple | None
    side: float
    low: tuple
    high: tuple


def _capsule(part: str, a, b, radius: float, side: float = 0.0) -> Shape:
    low = tuple(min(x, y) - radius for x, y in zip(a, b))
    high = tuple(max(x, y) + radius for x, y in zip(a, b))
    return Shape(PARTS.index(part), False, tuple(a), tuple(b), radius, None, side, low, high)


def _box(part: str, origin, rot, lo, hi, radius: float) -> Shape:
    """A rounded box whose sides ``lo``..``hi`` (the rounding included) are in the frame (``origin``, ``rot``)."""
    core = tuple((h - low) / 2.0 - radius for low, h in zip(lo, hi))
    centre = _point(origin, rot, *[(low + h) / 2.0 for low, h in zip(lo, hi)])
    turn = None if rot == _IDENTITY else (rot[0], rot[3], rot[6], rot[1], rot[4], rot[7], rot[2], rot[5], rot[8])
    half = [sum(abs(rot[3 * i + j]) * core[j] for j in range(3)) + radius for i in range(3)]
    low = tuple(c - h for c, h in zip(centre, half))
    high = tuple(c + h for c, h in zip(centre, half))
    return Shape(PARTS.index(part), True, centre, core, radius, turn, 0.0, low, high)


_IDENTITY = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)


def _mirror_box(lo: Sequence[float], hi: Sequence[float]) -> tuple[tuple, tuple]:
    """The box mirrored in y (left to right)."""
    return (lo[0], -hi[1], lo[2]), (hi[0], -lo[1], hi[2])


def body(posture: Mapping[str, float] | None = None) -> tuple[Shape, ...]:
    """The body's shapes with the head and legs at ``posture`` (joint name -> angle, radians; a joint of
    :data:`POSTURE_JOINTS` it leaves out stays where :data:`STANDING` has it)."""
    q = STANDING if posture is None else {j: float(posture.get(j, STANDING[j])) for j in POSTURE_JOINTS}
    key = tuple(q[j] for j in POSTURE_JOINTS)
    got = _CACHE.get(key)
    if got is not None:
        return got
    shapes = [_box("torso", (0.0, 0.0, 0.0), _IDENTITY, lo, hi, r) for _, lo, hi, r in TORSO_BOXES]
    for side in (1.0, -1.0):
        centre = (0.0, side * SHOULDER_Y, SHOULDER_Z)
        shapes.append(_capsule("torso", centre, centre, SHOULDER_RADIUS, side))
    origin, rot = head_frame(q["HeadYaw"], q["HeadPitch"])
    shapes.append(_capsule("head", _point(origin, rot, *HEAD[0]), _point(origin, rot, *HEAD[1]), HEAD[2]))
    for leg in ("LLeg", "RLeg"):
        hyp, roll, pitch = (q[leg[0] + j] for j in ("HipYawPitch", "HipRoll", "HipPitch"))
        for part, (lo, hi, r), frame in (("hips", PELVIS, pelvis_frame(leg, hyp)),
                                         ("thighs", THIGH, thigh_frame(leg, hyp, roll, pitch))):  # fmt: skip
            if leg == "RLeg":
                lo, hi = _mirror_box(lo, hi)
            shapes.append(_box(part, *frame, lo, hi, r))
    got = tuple(shapes)
    if len(_CACHE) >= 64:
        _CACHE.clear()
    _CACHE[key] = got
    return got


_CACHE: dict = {}


def arm_shapes(arm: str, q: Sequence[float]) -> list[tuple[tuple, tuple, float]]:
    """The arm's shapes as the body meets them: (start, end, radius) of :data:`~sim_stub.shapes.ARM_SHAPES`
    (upper arm, elbow, forearm, hand), FRAME_TORSO, the upper arm from :data:`UPPER_ARM_FROM` past the shoulder
    joint."""
    side = 1.0 if arm == "LArm" else -1.0
    f = frames(arm, q)
    out = []
    for name, frame, start, end, radius in ARM_SHAPES:
        if name == "shoulder cap":
            continue
        origin, rot = f[frame]
        if name == "upper arm":  # from where its axis is UPPER_ARM_FROM along the ShoulderRoll frame's x axis
            t = (UPPER_ARM_FROM - start[0]) / (end[0] - start[0])
            start = tuple(a + t * (b - a) for a, b in zip(start, end))
        out.append((_point(origin, rot, start[0], side * start[1], start[2]),
                    _point(origin, rot, end[0], side * end[1], end[2]), radius))  # fmt: skip
    return out


def segment_box_distance(p: Sequence[float], d: Sequence[float], e: Sequence[float]) -> float:
    """The distance between the segment p + t d (t in [0, 1]) and the box |x_i| <= e_i (in the box's frame).

    Exact: the squared distance of the segment's point to the box is convex and piecewise quadratic in t, its
    pieces split where a coordinate crosses a face's plane; the least of each piece's least value (its
    quadratic's vertex, clamped to the piece) is the least over the segment.
    """
    cuts = [0.0, 1.0]
    for i in range(3):
        if d[i] != 0.0:
            for face in (-e[i], e[i]):
                t = (face - p[i]) / d[i]
                if 0.0 < t < 1.0:
                    cuts.append(t)
    cuts.sort()
    best = math.inf
    for k in range(len(cuts) - 1):
        lo, hi = cuts[k], cuts[k + 1]
        mid = (lo + hi) * 0.5
        qa = qb = 0.0  # the piece's squared distance: qa t^2 + 2 qb t + const
        for i in range(3):
            x = p[i] + mid * d[i]
            if x > e[i]:
                qa += d[i] * d[i]
                qb += d[i] * (p[i] - e[i])
            elif x < -e[i]:
                qa += d[i] * d[i]
                qb += d[i] * (p[i] + e[i])
        t = -qb / qa if qa > 0.0 else mid
        t = lo if t < lo else hi if t > hi else t
        s = 0.0
        for i in range(3):
            x = abs(p[i] + t * d[i]) - e[i]
            if x > 0.0:
                s += x * x
        if s < best:
            best = s
    return math.sqrt(best)


def _gap(seg: tuple, shape: Shape) -> float:
    """The gap between an arm's capsule (start, end, radius) and a body shape, exact."""
    a, b, r = seg
    if not shape.box:
        return segment_distance(a, b, shape.a, shape.b) - r - shape.radius
    c = shape.a
    p = (a[0] - c[0], a[1] - c[1], a[2] - c[2])
    d = (b[0] - a[0], b[1] - a[1], b[2] - a[2])
    m = shape.turn
    if m is not None:
        p = (m[0] * p[0] + m[1] * p[1] + m[2] * p[2], m[3] * p[0] + m[4] * p[1] + m[5] * p[2],
             m[6] * p[0] + m[7] * p[1] + m[8] * p[2])  # fmt: skip
        d = (m[0] * d[0] + m[1] * d[1] + m[2] * d[2], m[3] * d[0] + m[4] * d[1] + m[5] * d[2],
             m[6] * d[0] + m[7] * d[1] + m[8] * d[2])  # fmt: skip
    return segment_box_distance(p, d, shape.b) - r - shape.radius


def part_gaps(arm: str, q: Sequence[float], posture: Mapping[str, float] | None = None,
              cap: float = CAP) -> list[float]:  # fmt: skip
    """The arm's gap to each part of :data:`PARTS`, metres (negative: they overlap).

    A pair of shapes whose axis-aligned bounding boxes are more than ``cap`` apart counts that distance (never
    more than the gap): every gap under ``cap`` is exact (``cap`` inf: all are).
    """
    own = 1.0 if arm == "LArm" else -1.0
    out = [math.inf] * len(PARTS)
    shapes = body(posture)
    cap2 = cap * cap
    for seg in arm_shapes(arm, [float(x) for x in q]):
        a, b, r = seg
        lx, hx = (a[0] - r, b[0] + r) if a[0] < b[0] else (b[0] - r, a[0] + r)
        ly, hy = (a[1] - r, b[1] + r) if a[1] < b[1] else (b[1] - r, a[1] + r)
        lz, hz = (a[2] - r, b[2] + r) if a[2] < b[2] else (b[2] - r, a[2] + r)
        for shape in shapes:
            if shape.side == own:
                continue
            low, high = shape.low, shape.high
            sx = low[0] - hx  # the boxes' separation along x: at most one of the two differences is positive
            if sx < 0.0:
                sx = lx - high[0]
                if sx < 0.0:
                    sx = 0.0
            sy = low[1] - hy
            if sy < 0.0:
                sy = ly - high[1]
                if sy < 0.0:
                    sy = 0.0
            sz = low[2] - hz
            if sz < 0.0:
                sz = lz - high[2]
                if sz < 0.0:
                    sz = 0.0
            apart = sx * sx + sy * sy + sz * sz
            gap = math.sqrt(apart) if apart > cap2 else _gap(seg, shape)
            if gap < out[shape.part]:
                out[shape.part] = gap
    return out
