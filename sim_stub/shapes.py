"""The stub's own shapes of NAO's arms and its own kinematics, for its collision protection.

Independent of the library: its own forward kinematics (the chain of
NAO_ARM.md's geometry table, written out here; the head's and legs' frames too,
where :mod:`sim_stub.body_shapes` hangs the body's shapes) and its own capsules, sized
after the real robot's arm (NAO_ARM.md, "The real robot's shape": numbers
measured from the collision primitives and meshes of Cyberbotics' Webots
NAO; no file copied). Millimetres below, metres in the code; left arm (the
right mirrors y).

- upper arm: the arm's mesh, which lies along its own axis (5 mm along the
  ShoulderRoll frame's x axis, turned 0.15 rad toward the arm's outside,
  nearly the elbow's direction, 0.142 rad) within 30.5 mm of it from 20 mm
  behind to 98 mm past that axis's origin: a capsule of radius 30.5 there (the
  simulator's capsule of radius 24, likewise turned toward the elbow, misses 99
  of the mesh's 120 vertices by up to 7 mm);
- shoulder cap: the mesh of the housing around the shoulder joint that turns
  with the arm, a shell 35 to 50.6 mm from the joint: a sphere of radius 50.6
  at the joint (it meets the other arm; against its own body it is left out,
  see :mod:`sim_stub.body_shapes`);
- elbow: sphere of radius 20 at the ElbowYaw joint;
- forearm: capsule of radius 22 from the elbow to the WristYaw joint;
- hand (palm and fingers, mesh 84 long x 68 wide x 63 thick; primitives up to
  about 100 mm along the wrist's x): capsule of radius 30 from (35, 0, -5)
  to (65, 0, -5) in the WristYaw frame, covering x 5..95 mm and the palm's
  thickness.

The library keeps its own arm links (:data:`nao_ik.model.body.LINKS`); a test
against the stub checks the library's model against these (and against
:mod:`sim_stub.body_shapes`, the stub's body).
"""

from __future__ import annotations

import math
from typing import Sequence

# NAO_ARM.md "Arm geometry" (identical for NAO H25 V4, V5 and V6), metres.
SHOULDER_Y, SHOULDER_Z = 0.098, 0.100
UPPER_ARM, ELBOW_Y = 0.105, 0.015
LOWER_ARM = 0.05595
HAND_X, HAND_Z = 0.05775, -0.01231

#: The upper arm mesh's own axis in the ShoulderRoll frame (left arm): its origin along x, its turn about z.
UPPER_ARM_ORIGIN, UPPER_ARM_TILT = 0.005, 0.15
#: Where the upper arm's capsule runs along that axis, and its radius (the mesh lies within it).
UPPER_ARM_SPAN, UPPER_ARM_RADIUS = (-0.020, 0.098), 0.0305


def _along_upper_arm(t: float) -> tuple:
    """The point ``t`` metres along the upper arm mesh's axis, ShoulderRoll frame (left arm)."""
    return (UPPER_ARM_ORIGIN + t * math.cos(UPPER_ARM_TILT), t * math.sin(UPPER_ARM_TILT), 0.0)


#: The arm's shapes: (name, frame, start, end, radius); frame 0 ShoulderRoll, 1 ElbowRoll, 2 WristYaw;
#: points in that frame, left arm, metres.
ARM_SHAPES = (
    ("upper arm", 0, *(_along_upper_arm(x) for x in UPPER_ARM_SPAN), UPPER_ARM_RADIUS),
    ("elbow", 1, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), 0.020),
    ("forearm", 1, (0.0, 0.0, 0.0), (LOWER_ARM, 0.0, 0.0), 0.022),
    ("hand", 2, (0.035, 0.0, -0.005), (0.065, 0.0, -0.005), 0.030),
    ("shoulder cap", 0, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), 0.0506),
)

Vec = tuple  # (x, y, z)
Rot = tuple  # nine entries, row by row


def _mul(a: Rot, b: Rot) -> Rot:
    a0, a1, a2, a3, a4, a5, a6, a7, a8 = a
    b0, b1, b2, b3, b4, b5, b6, b7, b8 = b
    return (
        a0 * b0 + a1 * b3 + a2 * b6, a0 * b1 + a1 * b4 + a2 * b7, a0 * b2 + a1 * b5 + a2 * b8,
        a3 * b0 + a4 * b3 + a5 * b6, a3 * b1 + a4 * b4 + a5 * b7, a3 * b2 + a4 * b5 + a5 * b8,
        a6 * b0 + a7 * b3 + a8 * b6, a6 * b1 + a7 * b4 + a8 * b7, a6 * b2 + a7 * b5 + a8 * b8,
    )  # fmt: skip


def _point(origin: Vec, r: Rot, x: float, y: float, z: float) -> Vec:
    return (
        origin[0] + r[0] * x + r[1] * y + r[2] * z,
        origin[1] + r[3] * x + r[4] * y + r[5] * z,
        origin[2] + r[6] * x + r[7] * y + r[8] * z,
    )


def _rx(a: float) -> Rot:
    c, s = math.cos(a), math.sin(a)
    return (1.0, 0.0, 0.0, 0.0, c, -s, 0.0, s, c)


def _ry(a: float) -> Rot:
    c, s = math.cos(a), math.sin(a)
    return (c, 0.0, s, 0.0, 1.0, 0.0, -s, 0.0, c)


def _rz(a: float) -> Rot:
    c, s = math.cos(a), math.sin(a)
    return (c, -s, 0.0, s, c, 0.0, 0.0, 0.0, 1.0)


def frames(arm: str, q: Sequence[float]) -> list[tuple[Vec, Rot]]:
    """(origin, rotation: nine entries row by row) of the ShoulderRoll, ElbowRoll and WristYaw frames, and the
    hand point with the wrist's rotation, FRAME_TORSO.

    The chain: the shoulder at (0, +-98, 100) mm, ShoulderPitch about y then ShoulderRoll about z; the
    elbow at (105, +-15, 0) mm in that frame, ElbowYaw about x then ElbowRoll about z; the wrist 55.95 mm
    along x, WristYaw about x; the hand point (57.75, 0, -12.31) mm in the wrist frame.
    """
    side = 1.0 if arm == "LArm" else -1.0
    shoulder = (0.0, side * SHOULDER_Y, SHOULDER_Z)
    r_sh = _mul(_ry(q[0]), _rz(q[1]))
    elbow = _point(shoulder, r_sh, UPPER_ARM, side * ELBOW_Y, 0.0)
    r_el = _mul(_mul(r_sh, _rx(q[2])), _rz(q[3]))
    wrist = _point(elbow, r_el, LOWER_ARM, 0.0, 0.0)
    r_wr = _mul(r_el, _rx(q[4]))
    hand = _point(wrist, r_wr, HAND_X, 0.0, HAND_Z)
    return [(shoulder, r_sh), (elbow, r_el), (wrist, r_wr), (hand, r_wr)]


# The head and the legs (Aldebaran's published NAO H25 link lengths, as the ros-naoqi URDF of NAO V5 has them; not
# in NAO_ARM.md's table, which covers the arms), metres: the neck (HeadYaw, then HeadPitch) 126.5 mm above the
# torso origin; each hip (HipYawPitch, then HipRoll, then HipPitch) 50 mm to the side and 85 mm below it; the
# knee 100 mm below the hip along the thigh. HipYawPitch turns about (0, 1, -1)/sqrt(2) on the left and
# (0, 1, 1)/sqrt(2) on the right (both legs' axes point up and inward at 45 degrees).
NECK_Z = 0.1265
HIP_Y, HIP_Z = 0.050, -0.085
THIGH = 0.100
_HALF_SQRT2 = math.sqrt(0.5)


def _axis(u: Vec, a: float) -> Rot:
    """The rotation by ``a`` about the unit axis ``u`` (Rodrigues)."""
    x, y, z = u
    c, s = math.cos(a), math.sin(a)
    k = 1.0 - c
    return (
        c + x * x * k, x * y * k - z * s, x * z * k + y * s,
        y * x * k + z * s, c + y * y * k, y * z * k - x * s,
        z * x * k - y * s, z * y * k + x * s, c + z * z * k,
    )  # fmt: skip


def head_frame(yaw: float, pitch: float) -> tuple[Vec, Rot]:
    """(origin, rotation) of the head (the HeadPitch frame) at HeadYaw ``yaw``, HeadPitch ``pitch``, FRAME_TORSO:
    the neck at (0, 0, 126.5) mm, HeadYaw about z then HeadPitch about y."""
    return (0.0, 0.0, NECK_Z), _mul(_rz(yaw), _ry(pitch))


def pelvis_frame(leg: str, hip_yaw_pitch: float) -> tuple[Vec, Rot]:
    """(origin, rotation) of a leg's HipYawPitch link (``leg`` "LLeg" or "RLeg"), FRAME_TORSO: the hip at
    (0, +-50, -85) mm, turned about the leg's HipYawPitch axis."""
    side = 1.0 if leg == "LLeg" else -1.0
    return (0.0, side * HIP_Y, HIP_Z), _axis((0.0, _HALF_SQRT2, -side * _HALF_SQRT2), hip_yaw_pitch)


def thigh_frame(leg: str, hip_yaw_pitch: float, hip_roll: float, hip_pitch: float) -> tuple[Vec, Rot]:
    """(origin, rotation) of a leg's thigh (the HipPitch frame), FRAME_TORSO: the pelvis frame, then HipRoll
    about x and HipPitch about y; the knee is at (0, 0, -100) mm in it."""
    origin, r = pelvis_frame(leg, hip_yaw_pitch)
    return origin, _mul(_mul(r, _rx(hip_roll)), _ry(hip_pitch))


def knee_point(leg: str, hip_yaw_pitch: float, hip_roll: float, hip_pitch: float) -> Vec:
    """The knee (KneePitch joint) of ``leg``, FRAME_TORSO (the stub's own kinematics)."""
    origin, r = thigh_frame(leg, hip_yaw_pitch, hip_roll, hip_pitch)
    return _point(origin, r, 0.0, 0.0, -THIGH)


def hand_point(arm: str, q: Sequence[float]) -> Vec:
    """The ALMotion hand effector of ``arm`` at ``q``, FRAME_TORSO (the stub's own kinematics)."""
    return frames(arm, q)[3][0]


def capsules(arm: str, q: Sequence[float]) -> list[tuple[Vec, Vec, float]]:
    """(start, end, radius) of each of the arm's shapes at ``q``, FRAME_TORSO."""
    side = 1.0 if arm == "LArm" else -1.0
    f = frames(arm, q)
    out = []
    for _, k, a, b, radius in ARM_SHAPES:
        origin, rot = f[k]
        out.append((_point(origin, rot, a[0], side * a[1], a[2]), _point(origin, rot, b[0], side * b[1], b[2]), radius))
    return out


def segment_distance(p1: Sequence[float], q1: Sequence[float], p2: Sequence[float], q2: Sequence[float]) -> float:
    """The distance between segments p1-q1 and p2-q2 (either may be a point).

    The closest points of two segments: the clamped solution of the two lines' closest points (Ericson,
    Real-Time Collision Detection, 5.1.9).
    """
    d1 = (q1[0] - p1[0], q1[1] - p1[1], q1[2] - p1[2])
    d2 = (q2[0] - p2[0], q2[1] - p2[1], q2[2] - p2[2])
    r = (p1[0] - p2[0], p1[1] - p2[1], p1[2] - p2[2])
    a = d1[0] * d1[0] + d1[1] * d1[1] + d1[2] * d1[2]
    e = d2[0] * d2[0] + d2[1] * d2[1] + d2[2] * d2[2]
    f = d2[0] * r[0] + d2[1] * r[1] + d2[2] * r[2]
    eps = 1e-18
    if a <= eps and e <= eps:
        s = t = 0.0
    elif a <= eps:
        s, t = 0.0, min(max(f / e, 0.0), 1.0)
    else:
        c = d1[0] * r[0] + d1[1] * r[1] + d1[2] * r[2]
        if e <= eps:
            s, t = min(max(-c / a, 0.0), 1.0), 0.0
        else:
            b = d1[0] * d2[0] + d1[1] * d2[1] + d1[2] * d2[2]
            denom = a * e - b * b
            s = min(max((b * f - c * e) / denom, 0.0), 1.0) if denom > eps else 0.0
            t = (b * s + f) / e
            if t < 0.0:
                s, t = min(max(-c / a, 0.0), 1.0), 0.0
            elif t > 1.0:
                s, t = min(max((b - c) / a, 0.0), 1.0), 1.0
    dx = p1[0] + d1[0] * s - p2[0] - d2[0] * t
    dy = p1[1] + d1[1] * s - p2[1] - d2[1] * t
    dz = p1[2] + d1[2] * s - p2[2] - d2[2] * t
    return math.sqrt(dx * dx + dy * dy + dz * dz)


def _box(shapes: list) -> tuple[Vec, Vec]:
    lo = tuple(min(min(p[i], e[i]) - r for p, e, r in shapes) for i in range(3))
    hi = tuple(max(max(p[i], e[i]) + r for p, e, r in shapes) for i in range(3))
    return lo, hi


def arms_gap(left: Sequence[float], right: Sequence[float], beyond: float = math.inf) -> float:
    """The clearance between the two arms' shapes, metres (negative: they overlap).

    ``beyond``: where the boxes around the two arms are farther apart than this, their distance is
    answered instead (less than or equal to the clearance; cheaper).
    """
    ls, rs = capsules("LArm", left), capsules("RArm", right)
    if beyond < math.inf:
        (llo, lhi), (rlo, rhi) = _box(ls), _box(rs)
        apart = math.sqrt(sum(max(0.0, rlo[i] - lhi[i], llo[i] - rhi[i]) ** 2 for i in range(3)))
        if apart > beyond:
            return apart
    return min(segment_distance(p, e, pp, ee) - r - rr for p, e, r in ls for pp, ee, rr in rs)
