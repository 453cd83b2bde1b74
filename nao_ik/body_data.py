# -*- coding: utf-8 -*-
# ruff: noqa: UP004, UP009, UP010  (the common subset of Python 2.7 and 3, see the docstring)
"""NAO's body as plain data: the margins, the body's capsules and the arm's links as tuples.

One source for both sides (as :mod:`nao_ik.arm_data` is for the joints): :mod:`nao_ik.body`
builds its :class:`~nao_ik.body.Capsule` / :class:`~nao_ik.body.Link` from these tuples (the
library, numpy batch path included), and the robot runtime (:mod:`nao_ik.robot`) checks the
same tuples with :mod:`nao_ik.geometry.scalar_clearance`.

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
at least :data:`MARGIN` (library) from every body part; ALMotion's stand-in
(``sim_stub``) checks the same shapes with the smaller :data:`STUB_MARGIN`,
so what the library commands never trips it.

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

#: The thigh's radius: the thigh mesh is 102 x 96 mm across.
THIGH_RADIUS = 0.045

#: The arm's links as rows (name, start, end, skip, radius): chain points (0 shoulder, 2 elbow, 4 wrist,
#: 5 hand effector), the fraction of the segment left out at its start (the upper arm near the shoulder
#: is the shoulder's own housing, part of the torso), the radius. NAO's upper arm and forearm are about
#: 40 mm thick (the datasheet's photographs against the 105 mm upper arm); the hand capsule covers the
#: palm between the wrist and the hand effector (the fingers, which close around the effector point,
#: are not modelled).
LINK_ROWS = (
    ("upper arm", 0, 2, 0.35, 0.015),
    ("forearm", 2, 4, 0.0, 0.018),
    ("hand", 4, 5, 0.0, 0.018),
)

#: The body parts, in the order reasons and counts list them.
PARTS = ("torso", "head", "hips", "thighs")
#: The part name of the other arm's links when they are part of the body (the service knows where that arm is).
OTHER_ARM = "other arm"
#: Every name a capsule's ``part`` may have; the batch distance reports an index into it.
NAMES = PARTS + (OTHER_ARM,)


def thigh_row(side, hip_pitch=STAND_HIP_PITCH):
    # type: (float, float) -> tuple
    """The thigh of one leg (side +1 left, -1 right) at a HipPitch (HipYawPitch and HipRoll 0), as a row.

    HipPitch turns about y: the knee is at hip + Ry(hip_pitch) (0, 0, -THIGH_LENGTH).

    Returns:
        ("thighs", hip, knee, THIGH_RADIUS).
    """
    hip = (0.0, side * HIP_Y, HIP_Z)
    knee = (hip[0] - math.sin(hip_pitch) * THIGH_LENGTH, hip[1], hip[2] - math.cos(hip_pitch) * THIGH_LENGTH)
    return ("thighs", hip, knee, THIGH_RADIUS)


def body_rows(left_hip_pitch=STAND_HIP_PITCH, right_hip_pitch=STAND_HIP_PITCH):
    # type: (float, float) -> tuple
    """NAO's body as rows (part, a, b, radius), thighs at the given HipPitch (both arms share it).

    - torso: two vertical capsules side by side, 55 mm radius, at y = +-20 mm:
      x from -59 to +51 mm (118 mm deep, the mesh's depth), y +-75 mm (the
      chest between the shoulder housings; the shoulders sit at +-98 mm, so an
      upper arm beside the chest clears it), z from -85 mm (the hip joints'
      level) to +135 mm (just above the shoulders, below the neck joint).
    - head (with the neck): a sphere of 62 mm radius (the head is 139 mm
      wide, 120 mm tall) centred 55 mm above the neck joint.
    - hips: the pelvis as a capsule across between the two hip joints,
      radius 40 mm (pelvis mesh 61 x 65 mm across).
    - thighs: :func:`thigh_row` of each leg.

    Args:
        left_hip_pitch, right_hip_pitch: LHipPitch and RHipPitch, radians.

    Returns:
        Six rows: torso, torso, head, hips, left thigh, right thigh.
    """
    return (
        ("torso", (TORSO_X, 0.020, -0.030), (TORSO_X, 0.020, 0.080), 0.055),
        ("torso", (TORSO_X, -0.020, -0.030), (TORSO_X, -0.020, 0.080), 0.055),
        ("head", (0.0, 0.0, NECK_Z + 0.055), (0.0, 0.0, NECK_Z + 0.055), 0.062),
        ("hips", (TORSO_X, -HIP_Y, HIP_Z), (TORSO_X, HIP_Y, HIP_Z), 0.040),
        thigh_row(1.0, left_hip_pitch),
        thigh_row(-1.0, right_hip_pitch),
    )
