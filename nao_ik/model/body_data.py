# -*- coding: utf-8 -*-
# ruff: noqa: UP004, UP009, UP010  (the common subset of Python 2.7 and 3, see the docstring)
"""NAO's body as plain data: the margins, the body's shapes and the arm's links as tuples.

One source for both sides (as :mod:`nao_ik.model.arm_data` is for the joints): :mod:`nao_ik.model.body`
builds its :class:`~nao_ik.model.body.Capsule`, :class:`~nao_ik.model.body.Box` and
:class:`~nao_ik.model.body.Link` from these tuples (the library, numpy batch path included), and the robot
runtime (:mod:`nao_ik.robot`) checks the same tuples with :mod:`nao_ik.geometry.scalar.clearance`.

A shape is a capsule (a segment swept by a sphere; a sphere is a capsule of zero length) or a rounded box (a
box swept by a sphere): the arm's links, the head and the shoulders are capsules; the torso, the pelvis and the
thighs, flat-sided, are rounded boxes, which a capsule could only hold by bulging 15 to 60 mm past them.
FRAME_TORSO, metres. No mesh is copied: the numbers are measured.

Sources of the numbers:

- ``naoV50.urdf`` (ros-naoqi, in ``shared/reference``): the neck joint
  (HeadYaw) 126.5 mm above the torso origin; the hip joints (HipYawPitch)
  50 mm to the side and 85 mm below it; the thigh (HipPitch to KneePitch)
  100 mm; the shoulders at y = +-98 mm, z = 100 mm.
- NAO_ARM.md, "The real robot's shape" (measured from the meshes and collision primitives of Cyberbotics'
  Webots NAO), and the extents of the same meshes where that table gives no number, measured the same way.
  The shapes hold every vertex of those meshes; between two torso boxes the meshes' faces come up to 3.8 mm
  out of them (4.5 mm on the chest's side wall below a shoulder housing, which the other arm's shoulder holds
  for that arm), which the margins take: an answer keeps at least 5.5 mm from the mesh, a certified motion at
  least 1.75 mm. A test samples the simulated robot's shapes (``sim_stub``, which hold
  every vertex) and finds every point inside the library's (``tests/unit/sim_stub/test_protection.py``;
  the shoulder housings inside each arm's shoulder).

The safety margin: an arm is clear of the body when every link's capsule is
at least :data:`MARGIN` (library) from every body part. ALMotion's stand-in
(``sim_stub``) checks shapes of its own (the real robot's measured surface)
with the smaller :data:`STUB_MARGIN`; the library's shapes hold the stub's, so
wherever the stub's arm comes within STUB_MARGIN of its body, the library's
clearance is under STUB_MARGIN too (``tests/unit/sim_stub/test_protection.py``): neither what the
library answers (MARGIN) nor a motion it certifies (:data:`~nao_ik.geometry.scalar.sweep.SWEEP_MARGIN`) trips it.
(Against the other arm, the moving arm's own check leaves out its upper arm's first 50 mm: there, next to its
shoulder cap, the stub's upper arm comes up to 0.2 mm out of the library's shapes; the margins' 5 and 1.25 mm
over STUB_MARGIN take it.)

Written in the common subset of Python 2.7 and 3 with no numpy (it runs on the robot).
"""

from __future__ import division

import math

#: Clearance the library keeps between the arm's links and the body, metres.
MARGIN = 0.010
#: Clearance the stub ALMotion's own protection enforces (smaller: the library's answers never trip it).
STUB_MARGIN = 0.005

#: Neck (HeadYaw) above the torso origin; hip joints to the side and below; thigh length (naoV50.urdf).
NECK_Z = 0.1265
HIP_Y = 0.050
HIP_Z = -0.085
THIGH_LENGTH = 0.100

#: HipPitch and KneePitch of the standing posture (ALRobotPosture "Stand", as the stub's STAND).
STAND_HIP_PITCH = -0.45

#: The pelvis, a rounded box in its leg's HipYawPitch frame (origin the hip joint; left leg, the right mirrors y):
#: (low corner, high corner, both with the rounding, rounding). The pelvis mesh's extents: x -59.4..23.9,
#: y -37..15.4 (from the middle to past the hip joint), z -15.3..43.3 about the hip joint.
PELVIS_BOX = ((-0.0595, -0.0371, -0.0154), (0.0240, 0.0155, 0.0434), 0.010)
#: The thigh, a rounded box in its leg's HipPitch frame (the knee at (0, 0, -THIGH_LENGTH); left leg, the right
#: mirrors y): the thigh mesh's extents, knee cap included (x -45..51.9, y -44..49.4, z -131.7..23.4), rounded
#: by 30, so that its corners reach 59 mm from the hip-knee line, NAO_ARM.md's "knee radius 58-59".
THIGH_BOX = ((-0.0450, -0.0440, -0.1317), (0.0519, 0.0494, 0.0234), 0.030)
#: HipYawPitch turns each leg's hip about (0, 1, -side) / sqrt(2) (side +1 left, -1 right: both axes point up and
#: inward at 45 degrees; naoV50.urdf), then HipRoll about x, then HipPitch about y, all through the hip joint.
HIP_YAW_PITCH_AXIS = (0.0, math.sqrt(0.5), -math.sqrt(0.5))
#: LHipYawPitch, LHipRoll, RHipYawPitch, RHipRoll of the standing posture.
LEGS_REST = (0.0, 0.0, 0.0, 0.0)
#: The joints whose sensed angles place the body's parts (the service and the robot runtime read them with the
#: arms'): the hips' pitch, the head, then the legs' other hip joints (:func:`body_rows`' arguments in order).
BODY_JOINTS = ["LHipPitch", "RHipPitch", "HeadYaw", "HeadPitch", "LHipYawPitch", "LHipRoll", "RHipYawPitch",
               "RHipRoll"]  # fmt: skip
#: The torso, rounded boxes fixed to FRAME_TORSO: (low corner, high corner, both with the rounding, rounding). Their
#: numbers are the extents of the torso mesh of the Webots NAO (NAO_ARM.md, "The real robot's shape": the chest front at
#: the sternum x 56-58, the back x -52.5, the waist's half-width 36-48; the rest measured the same way from the same
#: mesh): every vertex of the mesh lies within them, and between two boxes its faces come at most 4.5 mm out of them (on
#: the chest's sides below the shoulder housings, which SHOULDER_COVER holds for the other arm; elsewhere 3.8 mm, at the
#: seams of the chest and the waist, the waist and the belly, and the back: the margins hold it). A capsule would have
#: to bulge 15-60 mm past a flat side to hold its corners, which the arm reaches: the chest's front corners, the lower
#: belly. The chest's section is an octagon, its front and back corners cut: two boxes, the chest and its sides; above
#: the sternum the chest recedes (the upper chest: the neck's base); below it the waist, its sides and the belly. The
#: shoulder housings go with each arm (SHOULDER_COVER).
TORSO_BOXES = (
    ((-0.0531, -0.0496, 0.0150), (0.0583, 0.0496, 0.0986), 0.015),  # chest: front 58.3 (z 69), back -53.1
    ((-0.0431, -0.0654, 0.0236), (0.0456, 0.0654, 0.0939), 0.015),  # its sides: +-65.4 at z 45
    ((-0.0463, -0.0515, 0.0941), (0.0391, 0.0515, 0.1222), 0.010),  # upper chest
    ((-0.0502, -0.0381, -0.0580), (0.0498, 0.0381, 0.0168), 0.010),  # waist: +-36.5 at z -60..-40
    ((-0.0394, -0.0494, -0.0411), (0.0286, 0.0494, 0.0168), 0.010),  # its sides: +-47.7 at z -40..-20
    ((-0.0321, -0.0175, -0.0965), (0.0457, 0.0175, -0.0579), 0.010),  # belly
)

#: How far the upper arm's shell reaches behind the shoulder joint, along the arm: its root, the shoulder
#: housing (NAO_ARM.md, "The real robot's shape": the upper arm's capsule runs from 42 mm behind to 96 mm
#: past the shoulder joint; the housing sticks out up to 29 mm beyond a plain torso). Chain point 1.
SHOULDER_BACK = 0.042
#: How far the hand reaches along the forearm's axis past the wrist, fingers straight (NAO_ARM.md: the
#: fingers' bases 69 mm past the wrist, two 14 mm phalanges, 5.5 mm radius: 102.5 mm; the mesh is 84 mm
#: long). Chain point 6; its capsule's radius adds the rest.
HAND_REACH = 0.090

#: The arm's links as rows (name, start, end, skip, radius): chain points (0 shoulder, 1 the upper arm's root behind it,
#: 2 elbow, 4 wrist, 5 hand effector, 6 the hand's far end), the fraction of the segment left out at its start for the
#: arm's own check (up to 50 mm past the shoulder joint: its shoulder cap, which turns in and against its own housing,
#: next to the torso; another arm meets the whole link), the radius. The radii contain the real arm (NAO_ARM.md, "The
#: real robot's shape", measured from the meshes and collision primitives of the Webots NAO): the upper arm's mesh lies
#: within 30.7 mm of the line from the shoulder to the elbow (its own axis is turned 0.15 rad toward the arm's outside,
#: nearly the elbow's 0.142; mesh radius 24-30 about it) -> 32, which also holds the stub's capsule about the mesh's own
#: axis (radius 30.5); forearm mesh about 27 mm (capsule 22) and the elbow's 20 mm sphere -> 27; the hand (palm and
#: fingers, mesh 84 long x 68 wide x 63 thick, open or closed) -> a capsule along the forearm's axis from the wrist to
#: HAND_REACH, radius 40 (the 68 x 63 cross-section's half diagonal is 46 for a box, about 40 for the rounded palm; the
#: fingertips at 102.5 mm lie within it). The hand's opening (LHand/RHand, a joint ALMotion reports) is not read to
#: shrink it: closed, the fingers curl within 38 mm of its axis (tests/unit/model/test_body.py), so a closed hand is no
#: larger, and a closed hand often holds something whose size nao-ik cannot know.
LINK_ROWS = (
    ("upper arm", 1, 2, 0.62, 0.032),
    ("forearm", 2, 4, 0.0, 0.027),
    ("hand", 4, 6, 0.0, 0.040),
)

#: The body parts, in the order reasons and counts list them.
PARTS = ("torso", "head", "hips", "thighs")
#: The part name of the other arm's links when they are part of the body (the service knows where that arm is).
OTHER_ARM = "other arm"
#: Every name a capsule's ``part`` may have; the batch distance reports an index into it.
NAMES = PARTS + (OTHER_ARM,)


def _turn(axis, angle):
    # type: (tuple, float) -> tuple
    """The rotation by ``angle`` about the unit ``axis``, nine entries row by row (Rodrigues)."""
    x, y, z = axis
    c, s = math.cos(angle), math.sin(angle)
    k = 1.0 - c
    return (c + x * x * k, x * y * k - z * s, x * z * k + y * s,
            y * x * k + z * s, c + y * y * k, y * z * k - x * s,
            z * x * k - y * s, z * y * k + x * s, c + z * z * k)  # fmt: skip


def _times(a, b):
    # type: (tuple, tuple) -> tuple
    """The product of two rotations (nine entries row by row each)."""
    return tuple(sum(a[3 * i + k] * b[3 * k + j] for k in range(3)) for i in range(3) for j in range(3))


def box_row(part, origin, turn, low, high, radius):
    # type: (str, tuple, tuple | None, tuple, tuple, float) -> tuple
    """A rounded box as a row (part, centre, half sizes of its core, rounding, rotation torso-to-box or None).

    Args:
        origin, turn: the frame its corners are given in (FRAME_TORSO position; rotation frame-to-torso, nine
            entries row by row; None: the torso's axes).
        low, high: its corners in that frame, the rounding included.
    """
    half = tuple(0.5 * (h - lo) - radius for lo, h in zip(low, high))
    mid = [0.5 * (lo + h) for lo, h in zip(low, high)]
    if turn is None:
        return (part, tuple(o + m for o, m in zip(origin, mid)), half, radius, None)
    centre = tuple(origin[i] + sum(turn[3 * i + j] * mid[j] for j in range(3)) for i in range(3))
    back = (turn[0], turn[3], turn[6], turn[1], turn[4], turn[7], turn[2], turn[5], turn[8])
    return (part, centre, half, radius, back)


def _mirror(box, side):
    # type: (tuple, float) -> tuple
    """A left leg's box (low, high, rounding) for the leg on ``side`` (-1: mirrored in y)."""
    low, high, radius = box
    if side > 0.0:
        return box
    return (low[0], -high[1], low[2]), (high[0], -low[1], high[2]), radius


def _hip_turns(side, hip_pitch, yaw_pitch, roll):
    # type: (float, float, float, float) -> tuple
    """(the pelvis's rotation, the thigh's) of the leg on ``side`` (+1 left, -1 right): HipYawPitch about
    HIP_YAW_PITCH_AXIS (its z mirrored on the right), then HipRoll about x, then HipPitch about y."""
    u = HIP_YAW_PITCH_AXIS
    pelvis = _turn((u[0], u[1], side * u[2]), yaw_pitch)
    c, s = math.cos(roll), math.sin(roll)
    thigh = _times(pelvis, (1.0, 0.0, 0.0, 0.0, c, -s, 0.0, s, c))
    c, s = math.cos(hip_pitch), math.sin(hip_pitch)
    return pelvis, _times(thigh, (c, 0.0, s, 0.0, 1.0, 0.0, -s, 0.0, c))


def pelvis_row(side, yaw_pitch=0.0):
    # type: (float, float) -> tuple
    """The pelvis of one leg (side +1 left, -1 right) as a row (:func:`box_row`): PELVIS_BOX, turned with
    HipYawPitch about the hip joint."""
    turn = _hip_turns(side, 0.0, yaw_pitch, 0.0)[0]
    return box_row("hips", (0.0, side * HIP_Y, HIP_Z), turn, *_mirror(PELVIS_BOX, side))


def thigh_row(side, hip_pitch=STAND_HIP_PITCH, yaw_pitch=0.0, roll=0.0):
    # type: (float, float, float, float) -> tuple
    """The thigh of one leg (side +1 left, -1 right) as a row (:func:`box_row`): THIGH_BOX, turned with
    HipYawPitch, HipRoll and HipPitch about the hip joint."""
    turn = _hip_turns(side, hip_pitch, yaw_pitch, roll)[1]
    return box_row("thighs", (0.0, side * HIP_Y, HIP_Z), turn, *_mirror(THIGH_BOX, side))


#: The head (NAO_ARM.md, "The real robot's shape"): a capsule of HEAD_RADIUS across the head's y axis,
#: +-HEAD_HALF, its centre HEAD_ABOVE the neck joint (z 181.5 mm at rest); it turns with HeadYaw and HeadPitch
#: about the neck (HeadPitch +0.51 brings the face about 27 mm forward). It contains the stub's head (radius 62.5
#: from y -13.5 to 13.5, x 0.5, 55 above the neck: the mesh runs x -60.3..58.0 and -2.7..112.9 above the neck,
#: +-66.5 wide, which the simulator's r 50 capsule does not hold): radius 63 (62.5 and the 0.5 in x), +-13.5.
HEAD_RADIUS, HEAD_HALF, HEAD_ABOVE = 0.063, 0.0135, 0.055
#: HeadPitch's range (the robot's limits, -38.5 to 29.5 degrees).
HEAD_PITCH_RANGE = (-0.6720, 0.5149)


def head_row(head=None):
    # type: (tuple | None) -> tuple
    """The head as a row: at (HeadYaw, HeadPitch) in radians, or, where they are not known (None), a capsule
    holding it at every yaw and pitch (its centre anywhere within HEAD_ABOVE x sin(|pitch|) of the neck's axis,
    its ends HEAD_HALF further, in any direction)."""
    if head is None:
        swing = HEAD_ABOVE * max(math.sin(abs(p)) for p in HEAD_PITCH_RANGE)
        low = NECK_Z + HEAD_ABOVE * min(math.cos(p) for p in HEAD_PITCH_RANGE)
        return ("head", (0.0, 0.0, low), (0.0, 0.0, NECK_Z + HEAD_ABOVE), math.hypot(swing, HEAD_HALF) + HEAD_RADIUS)
    yaw, pitch = head
    cy, sy, cp, sp = math.cos(yaw), math.sin(yaw), math.cos(pitch), math.sin(pitch)
    c = (HEAD_ABOVE * sp * cy, HEAD_ABOVE * sp * sy, NECK_Z + HEAD_ABOVE * cp)  # Rz(yaw) Ry(pitch) (0, 0, above)
    side = (-sy * HEAD_HALF, cy * HEAD_HALF, 0.0)  # the head's y axis, turned by the yaw
    return ("head", tuple(a - b for a, b in zip(c, side)), tuple(a + b for a, b in zip(c, side)), HEAD_RADIUS)


#: HeadYaw and HeadPitch of the standing posture.
HEAD_REST = (0.0, 0.0)


def body_rows(left_hip_pitch=STAND_HIP_PITCH, right_hip_pitch=STAND_HIP_PITCH, head=HEAD_REST, legs=LEGS_REST):
    # type: (float, float, tuple | None, tuple) -> tuple
    """NAO's body as rows, the legs and the head at the given posture (both arms share it).

    - torso: :data:`TORSO_BOXES`, rounded boxes fixed to FRAME_TORSO. The shoulder housings, which stick out
      beyond them, go with each arm (:func:`shoulder_row`): the other arm's shapes are part of the body.
    - head: :func:`head_row` at (HeadYaw, HeadPitch) ``head``, or holding every head posture where ``head`` is
      None.
    - hips: the pelvis of each leg, :func:`pelvis_row`, a rounded box turned with its HipYawPitch.
    - thighs: :func:`thigh_row` of each leg, a rounded box turned with its HipYawPitch, HipRoll and HipPitch.

    A row is a capsule (part, a, b, radius: the segment a-b swept by a sphere of that radius) or a rounded box
    (part, centre, half sizes, rounding, rotation torso-to-box or None: :func:`box_row`).

    Args:
        left_hip_pitch, right_hip_pitch: LHipPitch and RHipPitch, radians.
        head: (HeadYaw, HeadPitch), radians; None: not known (every head posture).
        legs: (LHipYawPitch, LHipRoll, RHipYawPitch, RHipRoll), radians (LEGS_REST: 0, standing).

    Returns:
        Eleven rows: the six torso boxes, the head, the left pelvis and thigh, the right pelvis and thigh.
    """
    return (
        box_row("torso", (0.0, 0.0, 0.0), None, *TORSO_BOXES[0]),
        box_row("torso", (0.0, 0.0, 0.0), None, *TORSO_BOXES[1]),
        box_row("torso", (0.0, 0.0, 0.0), None, *TORSO_BOXES[2]),
        box_row("torso", (0.0, 0.0, 0.0), None, *TORSO_BOXES[3]),
        box_row("torso", (0.0, 0.0, 0.0), None, *TORSO_BOXES[4]),
        box_row("torso", (0.0, 0.0, 0.0), None, *TORSO_BOXES[5]),
        head_row(head),
        pelvis_row(1.0, legs[0]),
        thigh_row(1.0, left_hip_pitch, legs[0], legs[1]),
        pelvis_row(-1.0, legs[2]),
        thigh_row(-1.0, right_hip_pitch, legs[2], legs[3]),
    )


#: An arm's shoulder as the other arm meets it (left; the right mirrors y): the shoulder housing, torso mesh that
#: sticks out up to 29 mm beyond a plain torso (NAO_ARM.md; the mesh: a disc around the ShoulderPitch axis, y 70
#: to 96.1, within 41 mm of the axis where it meets the chest's side wall), and the shoulder cap that turns with
#: the arm, a shell 35 to 50.6 mm from the joint (the upper arm's mesh): a capsule on the ShoulderPitch axis from
#: y SHOULDER_COVER[0] to the joint, radius SHOULDER_COVER[1]. An arm's own links leave it out (LINK_ROWS' skip).
SHOULDER_COVER = (0.0732, 0.051)


def shoulder_row(shoulder, part):
    # type: (tuple, str) -> tuple
    """The shoulder of the arm whose shoulder joint is at ``shoulder`` as a capsule row (:data:`SHOULDER_COVER`)."""
    x, y, z = (float(v) for v in shoulder)
    return (part, (x, math.copysign(SHOULDER_COVER[0], y), z), (x, y, z), SHOULDER_COVER[1])
