"""The closed-form inverse of a full hand pose (position and orientation): five joints from six constraints.

The arm's rotation is R = Ry(q1) Rz(q2) Rx(q3) Rz(q4) Rx(q5) and WristYaw
turns about the forearm, so the hand frame's x axis R e_x is the forearm's
direction whatever q5. The hand offset h = (57.75, 0, -12.31) mm is fixed in
the WristYaw frame, so it turns with the whole rotation R. Hence, for a hand
pose (p, R):

- the wrist (WristYaw origin) is W = p - R h;
- the elbow centre is E = W - L2 R e_x (L2 = 55.95 mm, the forearm);
- the shoulder angles and ElbowYaw/ElbowRoll point the upper arm at E and the
  forearm at W: :func:`~nao_ik.geometry.recovery.recover_angles_checked` on the
  arm with the hand offset removed (its "hand" is then the wrist point), two
  ElbowRoll roots;
- WristYaw is what remains: Rx(q5) = (Ry Rz Rx Rz)^T R.

The pose is one the arm can take (consistent) exactly when |E - S| is the
upper arm's length and the recovered angles are inside the limits; elsewhere
the same formulas give the configuration of a nearby consistent pose (the
shoulder and elbow angles only use the directions of E - S and W - E), the
seed of the least-squares compromise.

Scalar (Python floats): one pose at a time.
"""

from __future__ import annotations

import math
from typing import NamedTuple, Sequence

from ..kinematics.ops import SCALAR
from ..model.arm import ArmModel
from .recovery import recover_angles_checked, upper_arm


class PoseRoot(NamedTuple):
    """One closed-form configuration of a hand pose.

    Attributes:
        q: the five joint angles, unclamped.
        violation: how far the configuration is from being exact and allowed:
            radians outside the limits, plus the elbow angles' excess, plus
            the mismatch of |E - S| with the upper arm's length (metres).
    """

    q: tuple[float, ...]
    violation: float


_WRIST_MODELS: dict = {}


def _wrist_model(model: ArmModel) -> ArmModel:
    """The arm with the hand offset removed: its hand point is the wrist (WristYaw origin)."""
    w = _WRIST_MODELS.get(model)
    if w is None:
        w = model._replace(hand_offset=(0.0, 0.0, 0.0))
        if len(_WRIST_MODELS) > 64:
            _WRIST_MODELS.clear()
        _WRIST_MODELS[model] = w
    return w


def wrist_and_elbow(model: ArmModel, p: Sequence[float], r: Sequence[Sequence[float]]) -> tuple[list, list]:
    """The wrist point W = p - R h and the elbow point E = W - L2 R e_x of a hand pose.

    Args:
        model: the arm.
        p: the hand point, FRAME_TORSO metres.
        r: the hand frame's rotation (rows).

    Returns:
        (W, E), each three floats.
    """
    hx, hy, hz = model.hand_offset
    lw = model.joints[4].offset[0]
    (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = r
    w = [p[0] - (r00 * hx + r01 * hy + r02 * hz), p[1] - (r10 * hx + r11 * hy + r12 * hz),
         p[2] - (r20 * hx + r21 * hy + r22 * hz)]  # fmt: skip
    e = [w[0] - lw * r00, w[1] - lw * r10, w[2] - lw * r20]
    return w, e


def pose_root(model: ArmModel, p: Sequence[float], r: Sequence[Sequence[float]], root: int) -> PoseRoot:
    """The configuration of hand pose (p, r) on one ElbowRoll root (0: the primary one, 1: the other).

    Returns:
        The :class:`PoseRoot`.
    """
    w, e = wrist_and_elbow(model, p, r)
    (q1, q2, q3, q4, _), excess = recover_angles_checked(_wrist_model(model), e, w, 0.0, SCALAR, root)
    c1, s1 = math.cos(q1), math.sin(q1)
    c2, s2 = math.cos(q2), math.sin(q2)
    c3, s3 = math.cos(q3), math.sin(q3)
    c4, s4 = math.cos(q4), math.sin(q4)
    # Columns y and z of R4 = A B, A = Ry(q1) Rz(q2), B = Rx(q3) Rz(q4):
    # B e_y = (-s4, c3 c4, s3 c4), B e_z = (0, -s3, c3).
    a = ((c1 * c2, -c1 * s2, s1), (s2, c2, 0.0), (-s1 * c2, s1 * s2, c1))
    by, bz = (-s4, c3 * c4, s3 * c4), (0.0, -s3, c3)
    y4 = [a[i][0] * by[0] + a[i][1] * by[1] + a[i][2] * by[2] for i in range(3)]
    z4 = [a[i][1] * bz[1] + a[i][2] * bz[2] for i in range(3)]
    # Rx(q5) = R4^T R: its (1, 1) and (2, 2) are cos q5, (2, 1) is sin q5 and (1, 2) is -sin q5.
    m11 = y4[0] * r[0][1] + y4[1] * r[1][1] + y4[2] * r[2][1]
    m22 = z4[0] * r[0][2] + z4[1] * r[1][2] + z4[2] * r[2][2]
    m21 = z4[0] * r[0][1] + z4[1] * r[1][1] + z4[2] * r[2][1]
    m12 = y4[0] * r[0][2] + y4[1] * r[1][2] + y4[2] * r[2][2]
    q5 = math.atan2(m21 - m12, m11 + m22)
    q = (q1, q2, q3, q4, q5)
    s = model.shoulder
    dx, dy, dz = e[0] - s[0], e[1] - s[1], e[2] - s[2]
    violation = excess + abs(math.sqrt(dx * dx + dy * dy + dz * dz) - upper_arm(model)[0])
    for x, lo, hi in zip(q, model.lower, model.upper):
        if x < lo:
            violation += lo - x
        elif x > hi:
            violation += x - hi
    return PoseRoot(q, violation)


def pose_roots(model: ArmModel, p: Sequence[float], r: Sequence[Sequence[float]]) -> list[PoseRoot]:
    """Every closed-form configuration of a hand pose that the limits may allow.

    With the wrist as the "hand", the two ElbowRoll roots are q4 and -q4; when
    ElbowRoll's range excludes 0 (NAO's: -88.5 .. -2 degrees for the left arm)
    at most one of them is allowed, the primary one, and only it is computed.

    Returns:
        One or two :class:`PoseRoot`.
    """
    j4 = model.joints[3]
    roots = [pose_root(model, p, r, 0)]
    if j4.lower < 0.0 < j4.upper:
        roots.append(pose_root(model, p, r, 1))
    return roots


class FastPose(NamedTuple):
    """What :func:`pose_fast` returns.

    Attributes:
        q: the five joint angles (unclamped).
        violation: as :attr:`PoseRoot.violation`.
        outside: True where an angle lies outside the limits (by at most ``violation``).
        position_error: distance from the hand of ``q`` (forward kinematics) to p, metres.
        rotation_error: angle between the hand frame of ``q`` and r, radians.
    """

    q: tuple
    violation: float
    outside: bool
    position_error: float
    rotation_error: float


def pose_fast(model: ArmModel, p: Sequence[float], r: Sequence[Sequence[float]]) -> FastPose | None:
    """:func:`pose_roots` for the common case, written out for speed, with the errors of its answer.

    The single-pose hot path of ``solve_pose`` (a few microseconds in plain
    Python): where ElbowRoll's range is one-sided (NAO's), the one root of
    :func:`pose_root`. With the wrist as the hand the recovery's equations
    reduce to g = (Ry Rz)^T (W - E) = |g| (cos q4, sin q4 cos q3, sin q4 sin q3),
    so q4 = -+acos(g_x / |g|) (the sign of the range) and q3 = atan2(+-g_z, +-g_y).
    Each angle's sine and cosine come from the same numbers as the angle
    (cos atan2(y, x) = x / |(x, y)|, ...), and the forward kinematics of the
    answer is the product Ry(q1) Rz(q2) [u] Rx(q3) Rz(q4) [L2] Rx(q5) [h] of
    them; the errors are measured on it. The tests check the angles against
    :func:`pose_root` and the errors against the kinematic chain.

    Returns:
        The :class:`FastPose`, or None where ElbowRoll's range contains 0
        (two roots: use :func:`pose_roots`).
    """
    const = _constants(model)
    if const is None:
        return None
    sign, hx, hy, hz, lw, ux, uy, s0, s1_, s2_, l1, pa, cpa, spa, bounds = const
    sqrt, atan2 = math.sqrt, math.atan2
    (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = r
    # Wrist W = p - R h, elbow E = W - L2 R e_x; v = E - S, d = W - E.
    dx, dy, dz = lw * r00, lw * r10, lw * r20
    vx = p[0] - (r00 * hx + r01 * hy + r02 * hz) - dx - s0
    vy = p[1] - (r10 * hx + r11 * hy + r12 * hz) - dy - s1_
    vz = p[2] - (r20 * hx + r21 * hy + r22 * hz) - dz - s2_
    rho = sqrt(vx * vx + vz * vz)
    length = sqrt(rho * rho + vy * vy)
    # Shoulder: v = Ry(q1) Rz(q2) u, (E-S)_y = L1 sin(q2 + p), q1 = atan2(-v_z, v_x).
    sa = vy / length if length > 1e-12 else 0.0
    sa = -1.0 if sa < -1.0 else 1.0 if sa > 1.0 else sa
    ca = sqrt(1.0 - sa * sa)
    q2 = math.asin(sa) - pa
    c2, s2 = ca * cpa + sa * spa, sa * cpa - ca * spa
    q1 = atan2(-vz, vx)
    c1, s1 = (vx / rho, -vz / rho) if rho > 1e-300 else (1.0, 0.0)
    # Elbow: g = (Ry Rz)^T d.
    gx = c1 * c2 * dx + s2 * dy - s1 * c2 * dz
    gy = -c1 * s2 * dx + c2 * dy + s1 * s2 * dz
    gz = s1 * dx + c1 * dz
    c4 = gx / lw
    c4 = -1.0 if c4 < -1.0 else 1.0 if c4 > 1.0 else c4
    q4 = sign * math.acos(c4)
    s4 = sign * sqrt(1.0 - c4 * c4)
    q3 = atan2(sign * gz, sign * gy)
    rho3 = sqrt(gy * gy + gz * gz)
    c3, s3 = (sign * gy / rho3, sign * gz / rho3) if rho3 > 1e-300 else (math.cos(q3), math.sin(q3))
    # A = Ry(q1) Rz(q2); R4 = A Rx(q3) Rz(q4): columns x, y, z.
    a00, a01, a02 = c1 * c2, -c1 * s2, s1
    a20, a21, a22 = -s1 * c2, s1 * s2, c1
    bx1, bx2, by1, by2 = c3 * s4, s3 * s4, c3 * c4, s3 * c4
    x0, x1, x2 = a00 * c4 + a01 * bx1 + a02 * bx2, s2 * c4 + c2 * bx1, a20 * c4 + a21 * bx1 + a22 * bx2
    y0, y1, y2 = a01 * by1 + a02 * by2 - a00 * s4, c2 * by1 - s2 * s4, a21 * by1 + a22 * by2 - a20 * s4
    z0, z1, z2 = a02 * c3 - a01 * s3, -c2 * s3, a22 * c3 - a21 * s3
    # WristYaw: Rx(q5) = R4^T R, whose (2, 1) - (1, 2) is 2 sin q5 and (1, 1) + (2, 2) is 2 cos q5.
    sn = z0 * r01 + z1 * r11 + z2 * r21 - (y0 * r02 + y1 * r12 + y2 * r22)
    cs = y0 * r01 + y1 * r11 + y2 * r21 + z0 * r02 + z1 * r12 + z2 * r22
    q5 = atan2(sn, cs)
    rho5 = sqrt(sn * sn + cs * cs)
    c5, s5 = (cs / rho5, sn / rho5) if rho5 > 1e-300 else (1.0, 0.0)
    q = (q1, q2, q3, q4, q5)
    # Forward kinematics of q: R = R4 Rx(q5) = (x, y', z'); hand = S + A u + L2 x + R h.
    y0, y1, y2, z0, z1, z2 = (
        c5 * y0 + s5 * z0, c5 * y1 + s5 * z1, c5 * y2 + s5 * z2,
        c5 * z0 - s5 * y0, c5 * z1 - s5 * y1, c5 * z2 - s5 * y2,
    )  # fmt: skip
    lx = lw + hx
    ex = s0 + a00 * ux + a01 * uy + lx * x0 + hy * y0 + hz * z0 - p[0]
    ey = s1_ + s2 * ux + c2 * uy + lx * x1 + hy * y1 + hz * z1 - p[1]
    ez = s2_ + a20 * ux + a21 * uy + lx * x2 + hy * y2 + hz * z2 - p[2]
    # The angle between r and the answer's rotation (x, y, z) from their chordal distance:
    # |r - R|_F = 2 sqrt(2) sin(angle / 2), precise down to the smallest angles.
    d00, d01, d02 = r00 - x0, r01 - y0, r02 - z0
    d10, d11, d12 = r10 - x1, r11 - y1, r12 - z1
    d20, d21, d22 = r20 - x2, r21 - y2, r22 - z2
    chord = sqrt(d00 * d00 + d01 * d01 + d02 * d02 + d10 * d10 + d11 * d11 + d12 * d12 + d20 * d20 + d21 * d21
                 + d22 * d22) * _HALF_SQRT_HALF  # fmt: skip
    rotation_error = 2.0 * math.asin(chord if chord < 1.0 else 1.0)
    lo1, lo2, lo3, lo4, lo5, hi1, hi2, hi3, hi4, hi5 = bounds
    violation = abs(length - l1) + (abs(gx / lw) - 1.0 if abs(gx) > lw else 0.0)
    outside = not (lo1 <= q1 <= hi1 and lo2 <= q2 <= hi2 and lo3 <= q3 <= hi3 and lo4 <= q4 <= hi4 and lo5 <= q5 <= hi5)
    if outside:
        for x, lo, hi in zip(q, bounds[:5], bounds[5:]):
            violation += max(lo - x, 0.0) + max(x - hi, 0.0)
    return _tuple_new(FastPose, (q, violation, outside, sqrt(ex * ex + ey * ey + ez * ez), rotation_error))


_CONSTANTS: dict = {}
_HALF_SQRT_HALF = 0.5 * math.sqrt(0.5)
_tuple_new = tuple.__new__


def _constants(model: ArmModel) -> tuple | None:
    """The numbers :func:`pose_fast` reads, per model (None where ElbowRoll's range contains 0)."""
    key = id(model)
    hit = _CONSTANTS.get(key)
    if hit is not None and hit[0] is model:
        return hit[1]
    j4 = model.joints[3]
    const = None
    if not j4.lower < 0.0 < j4.upper:
        ux, uy, _ = model.joints[2].offset
        l1, pa = upper_arm(model)
        const = (1.0 if j4.upper > 0.0 else -1.0, *model.hand_offset, model.joints[4].offset[0], ux, uy,
                 *model.shoulder, l1, pa, math.cos(pa), math.sin(pa), model.lower + model.upper)  # fmt: skip
    if len(_CONSTANTS) > 64:
        _CONSTANTS.clear()
    _CONSTANTS[key] = (model, const)
    return const
