"""Joint angles from points: the exact inverse of the arm's shoulder-elbow-hand geometry.

Both links are rigid vectors in their joint frames: the upper-arm vector
u = (105, +-15, 0) mm (ShoulderRoll frame, elbow offset included) and the
forearm vector f = (55.95 + 57.75, 0, 0) + Rx(WristYaw) (0, 0, -12.31) mm
(ElbowRoll frame, hand offset turned by the held WristYaw). Given the elbow
centre E and the hand H:

- shoulder: E - S = Ry(q1) Rz(q2) u. With u = L1 (cos p, sin p, 0):
  (E-S)_y = L1 sin(q2 + p), so q2 = asin((E-S)_y / L1) - p (the other root has
  cos(q2 + p) < 0, outside ShoulderRoll's limits), and q1 = atan2(-(E-S)_z, (E-S)_x).
- elbow: g = (Ry(q1) Rz(q2))^T (H - E) = Rx(q3) Rz(q4) f. Its x component is
  r cos(q4 + s) with r = |(f_x, f_y)|, s = atan2(f_y, f_x), so
  q4 = +-acos(g_x / r) - s (two roots, the ElbowRoll *branches*), and q3 =
  atan2(g_z, g_y) - atan2(f_z, f_x sin q4 + f_y cos q4).

Every function is elementwise (Python floats or numpy arrays, see
:mod:`nao_ik.kinematics.ops`). The round trip FK -> points -> angles is tested to 1e-9.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from ..kinematics.ops import Ops
from ..model.arm import ArmModel


def upper_arm(model: ArmModel) -> tuple[float, float]:
    """Length and in-plane angle p of the upper-arm vector u (shoulder centre to elbow centre)."""
    ux, uy, _ = model.joints[2].offset
    return math.hypot(ux, uy), math.atan2(uy, ux)


def forearm(model: ArmModel, q5: Any, ops: Ops) -> list:
    """The forearm vector f (elbow centre to hand) in the ElbowRoll frame, for WristYaw q5."""
    wx = model.joints[4].offset[0]
    hx, _, hz = model.hand_offset
    c5, s5 = ops.cos_sin(q5)
    return [wx + hx, -s5 * hz, c5 * hz]


def shoulder_angles(model: ArmModel, v: Sequence[Any], ops: Ops) -> tuple[Any, Any]:
    """(ShoulderPitch, ShoulderRoll) that point the upper arm along v = E - S (any length)."""
    return _shoulder(model, v, ops)[:2]


def shoulder_solution(model: ArmModel, v: Sequence[Any], ops: Ops) -> tuple[Any, Any, tuple]:
    """:func:`shoulder_angles` and their (cos q1, sin q1, cos q2, sin q2), found without trigonometry.

    q1 = atan2(-v_z, v_x) gives cos q1 = v_x / rho, sin q1 = -v_z / rho with
    rho = |(v_x, v_z)| (q1 = 0 where rho = 0, as atan2(0, 0)); q2 = alpha - p
    with sin alpha = v_y / |v| and cos alpha = rho / |v| >= 0 (asin's range).
    """
    q1, q2, rho, sa, p = _shoulder(model, v, ops)
    ca = ops.sqrt(ops.maximum(1.0 - sa * sa, 0.0))
    cp, sp = math.cos(p), math.sin(p)
    flat = rho < 1e-300
    inv = 1.0 / ops.where(flat, 1.0, rho)
    c1 = ops.where(flat, 1.0, v[0] * inv)
    s1 = ops.where(flat, 0.0, -v[2] * inv)
    return q1, q2, (c1, s1, ca * cp + sa * sp, sa * cp - ca * sp)


def _shoulder(model: ArmModel, v: Sequence[Any], ops: Ops) -> tuple:
    """(q1, q2, rho, sin alpha, p) of :func:`shoulder_solution`: the angles alone cost no more (FABRIK's passes
    clamp them and take their trigonometry from the clamped angles)."""
    rho = ops.sqrt(v[0] * v[0] + v[2] * v[2])
    length = ops.maximum(ops.sqrt(rho * rho + v[1] * v[1]), 1e-12)
    _, p = upper_arm(model)
    sa = ops.clip(v[1] / length, -1.0, 1.0)
    return ops.atan2(-v[2], v[0]), ops.asin(sa) - p, rho, sa, p


def elbow_angles(
    model: ArmModel,
    q1: Any,
    q2: Any,
    w: Sequence[Any],
    f: Sequence[Any],
    ops: Ops,
    root: int | None = None,
    trig: tuple | None = None,
):
    """(ElbowYaw, ElbowRoll, excess) that point the forearm along w = H - E, given the shoulder angles.

    ``excess`` > 0 where no angles can: the direction is closer to the upper
    arm's x axis than the hand offset allows (the cosine's excess over 1).
    ``root``: 0 the primary ElbowRoll root (the sign of its range), 1 the
    other; None (default) the one the limits allow. ``trig``: (cos q1,
    sin q1, cos q2, sin q2) if the caller has them.
    """
    c1, s1, c2, s2 = trig if trig is not None else shoulder_trig(q1, q2, ops)
    # g = (Ry(q1) Rz(q2))^T w; rows of the transpose are the columns of Ry Rz.
    gx = c1 * c2 * w[0] + s2 * w[1] - s1 * c2 * w[2]
    gy = -c1 * s2 * w[0] + c2 * w[1] + s1 * s2 * w[2]
    gz = s1 * w[0] + c1 * w[2]
    # Scale g to |f| so that acos sees a consistent cosine.
    fl = ops.sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2])
    gl = ops.maximum(ops.sqrt(gx * gx + gy * gy + gz * gz), 1e-12)
    r = ops.sqrt(f[0] * f[0] + f[1] * f[1])
    cosine = gx * (fl / (gl * r))
    excess = ops.maximum(ops.abs(cosine) - 1.0, 0.0)
    cosine = ops.clip(cosine, -1.0, 1.0)
    a = ops.acos(cosine)
    s = ops.atan2(f[1], f[0])
    # ElbowYaw (see the module docstring): atan2(g_z, g_y) - atan2(f_z, f_x
    # sin q4 + f_y cos q4), where f_x sin q4 + f_y cos q4 = r sin(q4 + s)
    # = -+r sin a for q4 = -+a - s (|g| scaling cancels in the first atan2).
    rsa = r * ops.sqrt(ops.maximum(1.0 - cosine * cosine, 0.0))
    base = ops.atan2(gz, gy)
    j3, j4 = model.joints[2], model.joints[3]
    first, second = -a - s, a - s
    yaw_first, yaw_second = (-rsa, rsa)
    if j4.lower + j4.upper > 0:
        first, second = second, first
        yaw_first, yaw_second = yaw_second, yaw_first
    if isinstance(root, int):
        q4, y = (second, yaw_second) if root else (first, yaw_first)
        return _yaw(base, y, f, ops), q4, excess
    if root is not None:  # an array of roots, one per element
        return _yaw(base, ops.where(root, yaw_second, yaw_first), f, ops), ops.where(root, second, first), excess
    q3a = _yaw(base, yaw_first, f, ops)
    # Keep the root that the limits allow: the primary one (the sign of
    # ElbowRoll's range) unless only the other fits ElbowYaw and ElbowRoll.
    viol_a = _outside(first, j4, ops) + _outside(q3a, j3, ops)
    if not ops.any(viol_a > 0.0):
        return q3a, first, excess
    q3b = _yaw(base, yaw_second, f, ops)
    viol_b = _outside(second, j4, ops) + _outside(q3b, j3, ops)
    take_b = viol_b < viol_a
    return ops.where(take_b, q3b, q3a), ops.where(take_b, second, first), excess


def _yaw(base: Any, y: Any, f: Sequence[Any], ops: Ops) -> Any:
    """ElbowYaw = base - atan2(f_z, y), wrapped to (-pi, pi]."""
    q3 = base - ops.atan2(f[2], y)
    return ops.where(q3 > math.pi, q3 - 2 * math.pi, ops.where(q3 <= -math.pi, q3 + 2 * math.pi, q3))


def shoulder_trig(q1: Any, q2: Any, ops: Ops) -> tuple:
    """(cos q1, sin q1, cos q2, sin q2)."""
    return ops.cos_sin(q1) + ops.cos_sin(q2)


def _outside(q: Any, joint: Any, ops: Ops) -> Any:
    """How far q lies outside the joint's limits (0 inside)."""
    return ops.maximum(joint.lower - q, 0.0) + ops.maximum(q - joint.upper, 0.0)


def recover_angles(model: ArmModel, elbow: Sequence[Any], hand: Sequence[Any], q5: Any, ops: Ops) -> list:
    """Joint angles (unclamped) whose FK puts the elbow centre and the hand at the given points."""
    return recover_angles_checked(model, elbow, hand, q5, ops)[0]


def recover_angles_checked(
    model: ArmModel, elbow: Sequence[Any], hand: Sequence[Any], q5: Any, ops: Ops, root: int | None = None
):
    """:func:`recover_angles` and the ``excess`` of :func:`elbow_angles` (> 0: the hand is missed)."""
    s = model.shoulder
    q1, q2, trig = shoulder_solution(model, [elbow[k] - s[k] for k in range(3)], ops)
    f = forearm(model, q5, ops)
    q3, q4, excess = elbow_angles(model, q1, q2, [hand[k] - elbow[k] for k in range(3)], f, ops, root, trig)
    return [q1, q2, q3, q4, q5], excess
