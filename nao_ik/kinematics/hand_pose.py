"""The hand's pose: ALMotion's position6D, rotation matrices and transforms, in one place.

A position6D is ``[x, y, z, wx, wy, wz]`` in FRAME_TORSO (metres, radians)
with the rotation Rz(wz) * Ry(wy) * Rx(wx), as ``ALMotion.getPosition`` and
``setPositions`` use it. The hand frame is the URDF's ``l_gripper`` /
``r_gripper`` frame (ALMotion's ``LArm`` / ``RArm`` effector): the WristYaw
frame's orientation, moved to the hand point.

Rotations here are 3x3 nested tuples of rows (plain floats: the single-pose
paths stay free of numpy call overhead); :func:`pose6d_to_transform` and
:func:`transform_to_pose6d` speak 4x4 numpy arrays.

Layer: geometry (above :mod:`nao_ik.kinematics.chain`).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..model.arm import ArmModel
from .chain import chain

Rotation = tuple  # ((r00, r01, r02), (r10, r11, r12), (r20, r21, r22))

#: Below this |cos(wy)| the pose is at gimbal lock: wz is set to 0.
GIMBAL = 1e-12


def rotation_from_angles(wx: float, wy: float, wz: float) -> Rotation:
    """Rz(wz) * Ry(wy) * Rx(wx) as rows.

    Args:
        wx, wy, wz: the position6D's angles, radians.

    Returns:
        The rotation matrix, three rows.
    """
    cx, sx = math.cos(wx), math.sin(wx)
    cy, sy = math.cos(wy), math.sin(wy)
    cz, sz = math.cos(wz), math.sin(wz)
    return (
        (cy * cz, cz * sy * sx - sz * cx, cz * sy * cx + sz * sx),
        (cy * sz, sz * sy * sx + cz * cx, sz * sy * cx - cz * sx),
        (-sy, cy * sx, cy * cx),
    )


def angles_from_rotation(r: Sequence[Sequence[float]]) -> tuple[float, float, float]:
    """(wx, wy, wz) with Rz(wz) * Ry(wy) * Rx(wx) = r, wy in [-pi/2, pi/2].

    At gimbal lock (wy = +-pi/2) only wx - +wz is defined: wz is taken as 0.

    Args:
        r: a rotation matrix (rows).

    Returns:
        The three angles, radians.
    """
    cy = math.hypot(r[0][0], r[1][0])
    wy = math.atan2(-r[2][0], cy)
    if cy < GIMBAL:
        return math.atan2(-r[1][2], r[1][1]), wy, 0.0
    return math.atan2(r[2][1], r[2][2]), wy, math.atan2(r[1][0], r[0][0])


def pose6d_to_transform(pose: Sequence[float]) -> np.ndarray:
    """A position6D as a 4x4 homogeneous transform (FRAME_TORSO)."""
    t = np.eye(4)
    t[:3, :3] = rotation_from_angles(float(pose[3]), float(pose[4]), float(pose[5]))
    t[:3, 3] = [float(v) for v in pose[:3]]
    return t


def transform_to_pose6d(t: np.ndarray) -> list[float]:
    """A 4x4 homogeneous transform as a position6D."""
    r = np.asarray(t, dtype=float)
    wx, wy, wz = angles_from_rotation(r[:3, :3].tolist())
    return [float(r[0, 3]), float(r[1, 3]), float(r[2, 3]), wx, wy, wz]


def hand_frame(model: ArmModel, angles: Sequence[float]) -> tuple[list, Rotation]:
    """The hand point and the hand frame's rotation (rows) for five joint angles."""
    ch = chain(model, [float(a) for a in angles])
    x, y, z = ch.rotation  # columns
    return ch.hand, ((x[0], y[0], z[0]), (x[1], y[1], z[1]), (x[2], y[2], z[2]))


def forward_pose(model: ArmModel, angles: Sequence[float]) -> list[float]:
    """The hand's position6D, as ``ALMotion.getPosition(effector, FRAME_TORSO, ...)`` gives it.

    Args:
        model: the arm.
        angles: its five joint angles, chain order, radians.

    Returns:
        ``[x, y, z, wx, wy, wz]``.
    """
    p, r = hand_frame(model, angles)
    return [float(p[0]), float(p[1]), float(p[2]), *angles_from_rotation(r)]


def rotation_angle(target: Rotation, r: Rotation) -> float:
    """The angle between two orientations (the length of :func:`rotation_vector`), radians."""
    (a0, a1, a2), (b0, b1, b2), (c0, c1, c2) = target
    (d0, d1, d2), (f0, f1, f2), (g0, g1, g2) = r
    # Trace and antisymmetric part of target * r^T.
    tr = a0 * d0 + a1 * d1 + a2 * d2 + b0 * f0 + b1 * f1 + b2 * f2 + c0 * g0 + c1 * g1 + c2 * g2
    vx = (c0 * f0 + c1 * f1 + c2 * f2) - (b0 * g0 + b1 * g1 + b2 * g2)
    vy = (a0 * g0 + a1 * g1 + a2 * g2) - (c0 * d0 + c1 * d1 + c2 * d2)
    vz = (b0 * d0 + b1 * d1 + b2 * d2) - (a0 * f0 + a1 * f1 + a2 * f2)
    return math.atan2(0.5 * math.sqrt(vx * vx + vy * vy + vz * vz), 0.5 * (tr - 1.0))


def rotation_vector(target: Rotation, r: Rotation) -> tuple[float, float, float]:
    """The rotation that takes ``r`` to ``target``, log(target * r^T), as a FRAME_TORSO vector (radians).

    Its length is the angle between the two orientations; its components are
    what the axisMask's WX, WY and WZ bits select.
    """
    (a0, a1, a2), (b0, b1, b2), (c0, c1, c2) = target
    (d0, d1, d2), (f0, f1, f2), (g0, g1, g2) = r
    # e = target * r^T: e_ij = target row i . r row j.
    e00, e01, e02 = a0 * d0 + a1 * d1 + a2 * d2, a0 * f0 + a1 * f1 + a2 * f2, a0 * g0 + a1 * g1 + a2 * g2
    e10, e11, e12 = b0 * d0 + b1 * d1 + b2 * d2, b0 * f0 + b1 * f1 + b2 * f2, b0 * g0 + b1 * g1 + b2 * g2
    e20, e21, e22 = c0 * d0 + c1 * d1 + c2 * d2, c0 * f0 + c1 * f1 + c2 * f2, c0 * g0 + c1 * g1 + c2 * g2
    vx, vy, vz = 0.5 * (e21 - e12), 0.5 * (e02 - e20), 0.5 * (e10 - e01)
    s = math.sqrt(vx * vx + vy * vy + vz * vz)  # sin(angle)
    c = 0.5 * (e00 + e11 + e22 - 1.0)  # cos(angle)
    angle = math.atan2(s, c)
    if c > -0.99:
        k = angle / s if s > 1e-300 else 1.0
        return vx * k, vy * k, vz * k
    # Near a half turn the antisymmetric part vanishes: the axis from the symmetric part.
    e = ((e00, e01, e02), (e10, e11, e12), (e20, e21, e22))
    d = [e00, e11, e22]
    i = d.index(max(d))
    col = [0.5 * (e[i][j] + e[j][i]) for j in range(3)]
    col[i] = e[i][i] - c  # the symmetric part is c I + (1 - c) n n^T
    n = math.sqrt(sum(v * v for v in col)) or 1.0
    axis = [v / n for v in col]
    if axis[0] * vx + axis[1] * vy + axis[2] * vz < 0.0:
        axis = [-v for v in axis]
    return axis[0] * angle, axis[1] * angle, axis[2] * angle
