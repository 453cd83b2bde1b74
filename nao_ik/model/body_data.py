# -*- coding: utf-8 -*-
# ruff: noqa: UP004, UP009, UP010  (the common subset of Python 2.7 and 3, see the docstring)
"""NAO's body as plain data: the margins, the body's capsules and the arm's links as tuples.

One source for both sides (as :mod:`nao_ik.model.arm_data` is for the joints): :mod:`nao_ik.model.body`
builds its :class:`~nao_ik.model.body.Capsule` / :class:`~nao_ik.model.body.Link` from these tuples (the
library, numpy batch path included), and the robot runtime (:mod:`nao_ik.robot`) checks the
same tuples with :mod:`nao_ik.geometry.scalar.clearance`.

Every shape is a capsule (a segment swept by a sphere; a sphere is a capsule
of zero length), the convex shape humanoid controllers use and NAOqi's own
arm collision protection uses (spheres for head, hips and torso, capsules for
the limbs). FRAME_TORSO, metres. The shapes are fitted by hand to NAO's
published dimensions; no mesh is copied.

Sources of the numbers:

- ``naoV50.urdf`` (ros-naoqi, in ``shared/reference``): the neck joint
  (HeadYaw) 126.5 mm above the torso origin; the hip joints (HipYawPitch)
  50 mm to the side and 85 mm below it; the thigh (HipPitch to KneePitch)
  100 mm; the shoulders at y = +-98 mm, z = 100 mm; the torso's centre of
  mass at x = -4.1 mm, z = 43 mm (where the torso's shapes are centred in x).
- Aldebaran's NAO H25 datasheet: 574 mm tall, 275 mm wide (shoulder to
  shoulder with the arms), 311 mm deep overall.
- For scale only: the bounding boxes of the collision meshes of NAO's
  published simulation model, about 118 x 180 x 237 mm (torso; 180 mm wide
  includes the shoulder housings), 125 x 139 x 120 mm (head), 102 x 96 x
  155 mm (thigh), 91 x 61 x 65 mm (pelvis). The shapes below stay inside
  those sizes where the arm must move freely (the chest in front of the
  shoulders) and cover them where it must not go (the chest's core, the
  head, the hips and thighs).

The safety margin: an arm is clear of the body when every link's capsule is
at least :data:`MARGIN` (library) from every body part. ALMotion's stand-in
(``sim_stub``) checks shapes of its own (the real robot's measured surface)
with the smaller :data:`STUB_MARGIN`; the shapes here are sized so that
wherever the stub's arm comes within STUB_MARGIN of its body, the library's
clearance is under MARGIN (``tests/unit/sim_stub/test_protection.py``): what the
library commands does not trip it.

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
#: The torso's centre of mass in x (naoV50.urdf, torso inertial origin): the torso's shapes are centred there.
TORSO_X = -0.004

#: HipPitch and KneePitch of the standing posture (ALRobotPosture "Stand", as the stub's STAND).
STAND_HIP_PITCH = -0.45

#: The thigh's radius: the thigh mesh is 102 x 96 mm across, half of 102 (the stub's thigh, a box x -45..51.9,
#: y -44..49.4 about the hip-knee line, rounding 30, reaches 59 from that line at its corners, NAO_ARM.md's "knee
#: radius 58-59"; 50 keeps the library's clearance under its margin wherever the stub's is under its own).
THIGH_RADIUS = 0.050
#: The pelvis (the stub's pelvis: the mesh, x -59.4..23.9 about the hip joints, z -100.3..-41.7): the hips' capsule
#: across between the hip joints is centred at the mesh's middle in x, its radius 42 reaching x -59.75 behind.
PELVIS_X, PELVIS_RADIUS = -0.01775, 0.042
#: The farthest point of the hips' capsule half on a leg's side from that leg's hip joint (its axis runs from the
#: middle to PELVIS_X behind the joint): what a HipYawPitch turn about the joint moves it by, per radian.
PELVIS_REACH = math.hypot(PELVIS_X, HIP_Y) + PELVIS_RADIUS
#: LHipYawPitch, LHipRoll, RHipYawPitch, RHipRoll of the standing posture.
LEGS_REST = (0.0, 0.0, 0.0, 0.0)
#: The joints whose sensed angles place the body's parts (the service and the robot runtime read them with the
#: arms'): the hips' pitch, the head, then the legs' other hip joints (:func:`body_rows`' arguments in order).
BODY_JOINTS = ["LHipPitch", "RHipPitch", "HeadYaw", "HeadPitch", "LHipYawPitch", "LHipRoll", "RHipYawPitch",
               "RHipRoll"]  # fmt: skip
#: The chest's sides (NAO_ARM.md gives no width; the stub's "chest sides", the mesh's: x -43.1..45.6, y +-65.4,
#: z 23.6..93.9, a box rounded by 15, its flat core z 38.6..78.9), which an upper arm hanging or rolled in meets
#: and the torso's capsule (y +-58) misses: a vertical capsule each side, at the box's middle in x, from z 39 to 79,
#: y +-40, radius 28: it reaches y +-68, 2.6 mm past the mesh (the upper arm's capsule runs to the elbow, 15 mm off
#: the real upper arm's axis, so its inner side lies up to 7 mm outside the real arm's). Left side; the right
#: mirrors y.
CHEST_SIDE, CHEST_SIDE_Z, CHEST_SIDE_RADIUS = (0.002, 0.040), (0.039, 0.079), 0.028

#: How far the upper arm's shell reaches behind the shoulder joint, along the arm: its root, the shoulder
#: housing (NAO_ARM.md, "The real robot's shape": the upper arm's capsule runs from 42 mm behind to 96 mm
#: past the shoulder joint; the housing sticks out up to 29 mm beyond a plain torso). Chain point 1.
SHOULDER_BACK = 0.042
#: How far the hand reaches along the forearm's axis past the wrist, fingers straight (NAO_ARM.md: the
#: fingers' bases 69 mm past the wrist, two 14 mm phalanges, 5.5 mm radius: 102.5 mm; the mesh is 84 mm
#: long). Chain point 6; its capsule's radius adds the rest.
HAND_REACH = 0.090

#: The arm's links as rows (name, start, end, skip, radius): chain points (0 shoulder, 1 the upper arm's
#: root behind it, 2 elbow, 4 wrist, 5 hand effector, 6 the hand's far end), the fraction of the segment
#: left out at its start for the arm's own check (its root is inside its own shoulder housing, next to the
#: torso; another arm meets the whole link), the radius. The radii contain the real arm (NAO_ARM.md, "The
#: real robot's shape", measured from the meshes and collision primitives of the Webots NAO): upper arm mesh
#: radius 24-30 mm -> 30; forearm mesh about 27 mm (capsule 22) and the elbow's 20 mm sphere -> 27; the hand
#: (palm and fingers, mesh 84 long x 68 wide x 63 thick, open or closed) -> a capsule along the forearm's
#: axis from the wrist to HAND_REACH, radius 40 (the 68 x 63 cross-section's half diagonal is 46 for a box,
#: about 40 for the rounded palm; the fingertips at 102.5 mm lie within it). The hand's opening (LHand/RHand,
#: a joint ALMotion reports) is not read to shrink it: closed, the fingers curl within 38 mm of its axis
#: (tests/unit/model/test_body.py), so a closed hand is no larger, and a closed hand often holds something whose size
#: nao-ik cannot know.
LINK_ROWS = (
    ("upper arm", 1, 2, 0.53, 0.030),
    ("forearm", 2, 4, 0.0, 0.027),
    ("hand", 4, 6, 0.0, 0.040),
)

#: The body parts, in the order reasons and counts list them.
PARTS = ("torso", "head", "hips", "thighs")
#: The part name of the other arm's links when they are part of the body (the service knows where that arm is).
OTHER_ARM = "other arm"
#: Every name a capsule's ``part`` may have; the batch distance reports an index into it.
NAMES = PARTS + (OTHER_ARM,)


def thigh_row(side, hip_pitch=STAND_HIP_PITCH, yaw_pitch=0.0, roll=0.0):
    # type: (float, float, float, float) -> tuple
    """The thigh of one leg (side +1 left, -1 right) at a HipPitch, HipYawPitch and HipRoll, as a row.

    HipPitch turns about y: the knee is at hip + Ry(hip_pitch) (0, 0, -THIGH_LENGTH). HipYawPitch and HipRoll
    turn the thigh further about axes through the hip joint (naoV50.urdf: the three hip joints share their
    origin): a turn by an angle a moves a point at distance d from the hip by at most a x d, so the capsule at
    HipPitch alone, its radius grown by (|yaw_pitch| + |roll|) x THIGH_LENGTH, holds the thigh wherever they put
    it (exact at 0, the standing legs).

    Returns:
        ("thighs", hip, knee, radius).
    """
    hip = (0.0, side * HIP_Y, HIP_Z)
    knee = (hip[0] - math.sin(hip_pitch) * THIGH_LENGTH, hip[1], hip[2] - math.cos(hip_pitch) * THIGH_LENGTH)
    return ("thighs", hip, knee, THIGH_RADIUS + (abs(yaw_pitch) + abs(roll)) * THIGH_LENGTH)


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
    """NAO's body as rows (part, a, b, radius), thighs at the given HipPitch (both arms share it).

    - torso: a vertical capsule of 58 mm radius on the torso's axis, its
      centres from z -15 to +125 mm (the Webots NAO's torso primitive: radius
      55 over the same span): x +-58 mm (the chest front at the sternum is at
      56-58 mm, the back at -52.5), y +-58 mm, a waist 37 mm wide at z -60
      (the robot's: 36-48); and the chest's sides, a vertical capsule each
      side (CHEST_SIDE: y +-68 from z 39 to 79, the chest being 131 mm wide
      there). The shoulder housings, which stick out beyond it, are the upper
      arms' roots (:data:`LINK_ROWS`, SHOULDER_BACK): the other arm's links
      are part of the body.
    - head: :func:`head_row` at (HeadYaw, HeadPitch) ``head``, or holding
      every head posture where ``head`` is None.
    - hips: the pelvis as a capsule across between the two hip joints,
      PELVIS_X behind them, radius PELVIS_RADIUS (pelvis mesh x -59.4..23.9);
      each half turns with its leg's HipYawPitch about its hip joint: the
      radius grown by the larger |HipYawPitch| x PELVIS_REACH holds it.
    - thighs: :func:`thigh_row` of each leg.

    Args:
        left_hip_pitch, right_hip_pitch: LHipPitch and RHipPitch, radians.
        head: (HeadYaw, HeadPitch), radians; None: not known (every head posture).
        legs: (LHipYawPitch, LHipRoll, RHipYawPitch, RHipRoll), radians (LEGS_REST: 0, standing).

    Returns:
        Seven rows: torso, the chest's left and right sides (part "torso"), head, hips, left thigh, right thigh.
    """
    x, y = CHEST_SIDE
    return (
        ("torso", (0.0, 0.0, -0.015), (0.0, 0.0, 0.125), 0.058),
        ("torso", (x, y, CHEST_SIDE_Z[0]), (x, y, CHEST_SIDE_Z[1]), CHEST_SIDE_RADIUS),
        ("torso", (x, -y, CHEST_SIDE_Z[0]), (x, -y, CHEST_SIDE_Z[1]), CHEST_SIDE_RADIUS),
        head_row(head),
        (
            "hips",
            (PELVIS_X, -HIP_Y, HIP_Z),
            (PELVIS_X, HIP_Y, HIP_Z),
            PELVIS_RADIUS + max(abs(legs[0]), abs(legs[2])) * PELVIS_REACH,
        ),
        thigh_row(1.0, left_hip_pitch, legs[0], legs[1]),
        thigh_row(-1.0, right_hip_pitch, legs[2], legs[3]),
    )
