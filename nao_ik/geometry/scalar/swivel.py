# -*- coding: utf-8 -*-
# ruff: noqa: UP004, UP009, UP010  (the common subset of Python 2.7 and 3, see the docstring)
"""The elbow swivel in plain Python floats: the scalar path's circle and configurations.

The same geometry as :mod:`nao_ik.geometry.swivel` and
:mod:`nao_ik.geometry.recovery` (read their docstrings for the derivation),
written out for one target with ``math`` and local floats: a numpy or
:mod:`nao_ik.kinematics.ops` call costs about a microsecond of overhead where the float
operation costs a few tens of nanoseconds, and the nearest-solution search
evaluates a few dozen configurations per solve.

Why a second copy of these formulas: the elementwise code of ``swivel.py`` /
``recovery.py`` serves the numpy batch path (and the fallbacks of many other
modules); here the same formulas are fused (both ElbowRoll branches of a
swivel in one pass, the limits' margin and the move time computed on the
fly), which an elementwise backend cannot do. ``tests/unit/geometry/scalar/test_scalar_path.py``
holds the two copies equal to 1e-12.

Written in the common subset of Python 2.7 and 3 with no numpy (type
comments, no f-strings), so that it can run on the robot's own Python.
"""

from __future__ import division

import math

try:  # the type comments' names (typing is not in every Python 2.7)
    from typing import Any, Sequence, Tuple  # noqa: F401
except ImportError:  # pragma: no cover
    pass

_PI = math.pi
_TWO_PI = 2.0 * math.pi
INF = float("inf")
#: Joint-limit slack that counts as inside (rounding at a boundary).
SLACK = 1e-9
#: Margin of a configuration that no joint limit constrains (radians): only its sign matters.
FREE = 10.0
#: Swivels sampled on a target's circle (on both ElbowRoll branches) where solutions are sampled
#: (:func:`samples`, :mod:`nao_ik.geometry.sampled`).
SWIVELS = 24


class Arm(object):
    """The numbers of one arm that the scalar path reads, taken once from an :class:`~nao_ik.model.arm.ArmModel`.

    Attributes:
        s: the shoulder centre (x, y, z).
        ux, uy: the upper-arm vector u (ShoulderRoll frame); l1 its length, p its angle, cp, sp.
        fx, hz: the forearm's length along x and the hand's z offset (turned by WristYaw).
        lx: the forearm alone along x (elbow to wrist: the link points of the body check).
        lo, hi: the five joints' limits; w: their inverse maximum velocities (s/rad).
        flip: True where ElbowRoll's range is positive (the right arm): the roots swap.
    """

    __slots__ = ("model", "s", "ux", "uy", "l1", "il1", "p", "cp", "sp", "fx", "hz", "lx", "lo", "hi", "w", "flip")

    def __init__(self, model):
        # type: (Any) -> None
        joints = model.joints
        self.model = model
        self.s = tuple(float(x) for x in joints[0].offset)
        self.ux, self.uy = float(joints[2].offset[0]), float(joints[2].offset[1])
        self.l1 = math.hypot(self.ux, self.uy)
        self.il1 = 1.0 / self.l1
        self.p = math.atan2(self.uy, self.ux)
        self.cp, self.sp = math.cos(self.p), math.sin(self.p)
        self.fx = float(joints[4].offset[0]) + float(model.hand_offset[0])
        self.hz = float(model.hand_offset[2])
        self.lx = float(joints[4].offset[0])
        self.lo = tuple(float(j.lower) for j in joints)
        self.hi = tuple(float(j.upper) for j in joints)
        self.w = tuple(1.0 / float(j.max_velocity) for j in joints)
        self.flip = self.lo[3] + self.hi[3] > 0.0

    def limited(self, lo, hi):
        # type: (Sequence[float], Sequence[float]) -> Arm
        """The same arm with other joint limits (five each): the limits a search narrows.

        Everything else is shared, ``model`` (whose limits stay the original ones) and ``flip`` (the side
        of ElbowRoll's original range, which narrowed limits inside it keep) included.
        """
        out = Arm.__new__(Arm)
        for name in Arm.__slots__:
            setattr(out, name, getattr(self, name))
        out.lo, out.hi = tuple(lo), tuple(hi)
        return out


_ARMS = {}  # type: dict


def arm(model):
    # type: (Any) -> Arm
    """The :class:`Arm` of a model (cached by identity: a model is immutable)."""
    hit = _ARMS.get(id(model))
    if hit is not None and hit.model is model:
        return hit
    if len(_ARMS) > 64:
        _ARMS.clear()
    hit = _ARMS[id(model)] = Arm(model)
    return hit


class Circle(object):
    """The elbow's circle for one target (see :class:`nao_ik.geometry.swivel.Circle`), with derived numbers.

    Attributes:
        n, u, v: the axis (shoulder -> hand) and the plane's basis; a, r: centre distance and radius.
        hand: the hand point served (the target, or toward it at the nearest distance the links allow).
        f: the forearm vector for the held WristYaw ``wrist``; reachable: the target's distance is.
        an, ru, rv: a n, r u, r v (the elbow at swivel phi is S + an + cos(phi) ru + sin(phi) rv).
        fl, rf, sf: |f|, |(f_x, f_y)|, atan2(f_y, f_x) (the hand offset's angle in the forearm).
        wm: the held WristYaw's margin to its limits.
    """

    __slots__ = ("n", "u", "v", "a", "r", "hand", "f", "wrist", "reachable", "an", "ru", "rv", "fl", "rf", "irf",
                 "sf", "pi_fz", "hs", "wm")  # fmt: skip


def circle(k, t, wrist):
    # type: (Arm, Sequence[float], float) -> Circle
    """The elbow circle of target ``t`` (three floats) with WristYaw ``wrist`` held.

    Args:
        k: the :class:`Arm`.
        t: the hand target.
        wrist: the held WristYaw.

    Returns:
        The :class:`Circle`.
    """
    sx, sy, sz = k.s
    l1 = k.l1
    f0, f1, f2 = k.fx, -math.sin(wrist) * k.hz, math.cos(wrist) * k.hz
    l2 = math.sqrt(f0 * f0 + f1 * f1 + f2 * f2)
    dx, dy, dz = t[0] - sx, t[1] - sy, t[2] - sz
    d_raw = math.sqrt(dx * dx + dy * dy + dz * dz)
    inv = 1.0 / (d_raw if d_raw > 1e-12 else 1e-12)
    nx, ny, nz = dx * inv, dy * inv, dz * inv
    short, long_ = abs(l1 - l2) + 1e-9, l1 + l2 - 1e-9
    d = min(max(d_raw, short), long_)
    a = (d * d + l1 * l1 - l2 * l2) / (2 * d)
    r = math.sqrt(max(l1 * l1 - a * a, 0.0))
    # Zero swivel: the elbow at its lowest (-z projected on the circle's plane), or toward -x when the arm
    # points straight up or down.
    ux, uy, uz = nz * nx, nz * ny, -1.0 + nz * nz
    un = math.sqrt(ux * ux + uy * uy + uz * uz)
    if un < 1e-6:
        ux, uy, uz = -1.0 + nx * nx, nx * ny, nx * nz
        un = math.sqrt(ux * ux + uy * uy + uz * uz)
    iu = 1.0 / (un if un > 1e-12 else 1e-12)
    ux, uy, uz = ux * iu, uy * iu, uz * iu
    vx, vy, vz = ny * uz - nz * uy, nz * ux - nx * uz, nx * uy - ny * ux
    c = Circle()
    c.n, c.u, c.v, c.a, c.r = (nx, ny, nz), (ux, uy, uz), (vx, vy, vz), a, r
    c.hand = (sx + d * nx, sy + d * ny, sz + d * nz)
    c.f, c.wrist = (f0, f1, f2), wrist
    c.reachable = short <= d_raw <= long_
    c.an, c.ru, c.rv = (a * nx, a * ny, a * nz), (r * ux, r * uy, r * uz), (r * vx, r * vy, r * vz)
    c.fl, c.rf, c.sf = l2, math.sqrt(f0 * f0 + f1 * f1), math.atan2(f1, f0)
    c.irf, c.pi_fz = 1.0 / c.rf, math.copysign(_PI, f2)
    c.hs = (d * nx, d * ny, d * nz)
    c.wm = min(wrist - k.lo[4], k.hi[4] - wrist)
    return c


def shoulder(v0, v1, v2, il1, p, cp, sp):
    # type: (float, float, float, float, float, float, float) -> Tuple[float, float, float, float, float, float]
    """ShoulderPitch and ShoulderRoll that point the upper arm at an elbow on its circle, v = E - S with |v| = L1
    = 1 / ``il1``, and their cosines and sines (:func:`nao_ik.geometry.recovery.shoulder_solution`'s formula,
    for one posture: q1 = atan2(-v_z, v_x), q2 = asin(v_y / L1) - p, ``p``, ``cp``, ``sp`` the elbow offset's
    angle and its cosine and sine).

    Returns:
        (q1, q2, cos q1, sin q1, cos q2, sin q2).
    """
    rho = math.sqrt(v0 * v0 + v2 * v2)
    sa = v1 * il1
    if sa < -1.0 or sa > 1.0:
        sa = -1.0 if sa < 0.0 else 1.0
    q2 = math.asin(sa) - p
    q1 = math.atan2(-v2, v0)
    ca = math.sqrt(1.0 - sa * sa)
    if rho < 1e-300:
        return q1, q2, 1.0, 0.0, ca * cp + sa * sp, sa * cp - ca * sp
    return q1, q2, v0 / rho, -v2 / rho, ca * cp + sa * sp, sa * cp - ca * sp


def configurations(k, c, phi):
    # type: (Arm, Circle, float) -> Tuple[float, float, float, float, float, float, float]
    """Both ElbowRoll branches' configurations at swivel ``phi`` (unclamped).

    Returns:
        (ShoulderPitch, ShoulderRoll, ElbowYaw and ElbowRoll of branch 0, the same of branch 1, excess):
        ``excess`` > 0 where no ElbowRoll puts the hand on the point (see
        :func:`nao_ik.geometry.recovery.elbow_angles`; branch 0 is its ``root=0``).
    """
    cph, sph = math.cos(phi), math.sin(phi)
    an, ru, rv = c.an, c.ru, c.rv
    v0 = an[0] + cph * ru[0] + sph * rv[0]
    v1 = an[1] + cph * ru[1] + sph * rv[1]
    v2 = an[2] + cph * ru[2] + sph * rv[2]
    q1, q2, c1, s1, c2, s2 = shoulder(v0, v1, v2, k.il1, k.p, k.cp, k.sp)
    # Elbow (recovery.elbow_angles): g = (Ry(q1) Rz(q2))^T (H - E); |g| = |f| on the circle.
    h = c.hs
    w0, w1, w2 = h[0] - v0, h[1] - v1, h[2] - v2
    t0 = c1 * w0 - s1 * w2
    gx = c2 * t0 + s2 * w1
    gy = c2 * w1 - s2 * t0
    gz = s1 * w0 + c1 * w2
    cosine = gx * c.irf
    excess = abs(cosine) - 1.0
    if excess > 0.0:
        cosine = -1.0 if cosine < 0.0 else 1.0
    else:
        excess = 0.0
    a = math.acos(cosine)
    yaw = math.atan2(c.f[2], c.rf * math.sqrt(1.0 - cosine * cosine))
    base = math.atan2(gz, gy)
    # ElbowYaw = base - atan2(f_z, -+r sin a) for ElbowRoll = -+a - s; atan2(f_z, -x) = +-pi - atan2(f_z, x).
    sf = c.sf
    e_neg = base - (c.pi_fz - yaw)
    e_pos = base - yaw
    if k.flip:
        r0, r1, e0, e1 = a - sf, -a - sf, e_pos, e_neg
    else:
        r0, r1, e0, e1 = -a - sf, a - sf, e_neg, e_pos
    e0 = e0 - _TWO_PI if e0 > _PI else e0 + _TWO_PI if e0 <= -_PI else e0
    e1 = e1 - _TWO_PI if e1 > _PI else e1 + _TWO_PI if e1 <= -_PI else e1
    return q1, q2, e0, r0, e1, r1, excess


def margins(k, c, q1, q2, e0, r0, e1, r1, excess):
    # type: (Arm, Circle, float, float, float, float, float, float, float) -> Tuple[float, float]
    """The two branches' signed distances to the limits (see :func:`nao_ik.geometry.swivel.margin_at`)."""
    lo, hi = k.lo, k.hi
    m = min(q1 - lo[0], hi[0] - q1, q2 - lo[1], hi[1] - q2, c.wm, -excess if excess > 0.0 else FREE)
    return (min(m, e0 - lo[2], hi[2] - e0, r0 - lo[3], hi[3] - r0),
            min(m, e1 - lo[2], hi[2] - e1, r1 - lo[3], hi[3] - r1))  # fmt: skip


def elbow_point(k, q1, q2):
    # type: (Arm, float, float) -> Tuple[float, float, float]
    """The elbow centre of shoulder angles (q1, q2): S + Ry(q1) Rz(q2) u."""
    c1, s1, c2, s2 = math.cos(q1), math.sin(q1), math.cos(q2), math.sin(q2)
    ex = k.ux * c2 - k.uy * s2
    s = k.s
    return s[0] + c1 * ex, s[1] + k.ux * s2 + k.uy * c2, s[2] - s1 * ex


def hand_point(k, q):
    # type: (Arm, Sequence[float]) -> Tuple[float, float, float]
    """The hand of configuration q (five floats): E + Ry(q1) Rz(q2) Rx(q3) Rz(q4) f(q5)."""
    c1, s1, c2, s2 = math.cos(q[0]), math.sin(q[0]), math.cos(q[1]), math.sin(q[1])
    c3, s3, c4, s4 = math.cos(q[2]), math.sin(q[2]), math.cos(q[3]), math.sin(q[3])
    f0, f1, f2 = k.fx, -math.sin(q[4]) * k.hz, math.cos(q[4]) * k.hz
    g0 = k.ux + c4 * f0 - s4 * f1  # u + Rx(q3) Rz(q4) f
    gy, gz = s4 * f0 + c4 * f1, f2
    g1, g2 = k.uy + c3 * gy - s3 * gz, s3 * gy + c3 * gz
    x = c2 * g0 - s2 * g1  # Rz(q2), then Ry(q1)
    s = k.s
    return s[0] + c1 * x + s1 * g2, s[1] + s2 * g0 + c2 * g1, s[2] - s1 * x + c1 * g2


def swivel_angle(c, e, s):
    # type: (Circle, Sequence[float], Sequence[float]) -> float
    """The swivel of elbow point ``e`` projected on circle ``c`` (shoulder ``s``)."""
    w0, w1, w2 = e[0] - s[0], e[1] - s[1], e[2] - s[2]
    u, v = c.u, c.v
    return math.atan2(w0 * v[0] + w1 * v[1] + w2 * v[2], w0 * u[0] + w1 * u[1] + w2 * u[2])


def second_branch(k, c):
    # type: (Arm, Circle) -> bool
    """True where the second ElbowRoll root can lie inside the limits (see ``nearest.second_branch``)."""
    lo, hi = k.lo[3], k.hi[3]
    return (hi >= -c.sf - 1e-12) if lo + hi < 0.0 else (lo <= -c.sf + 1e-12)


def samples(k, t, wrist, swivels):
    # type: (Arm, Sequence[float], float, int) -> list
    """The exact configurations of target ``t`` at ``swivels`` swivels evenly around the circle from -pi, on both
    ElbowRoll branches (branch 0's first), WristYaw ``wrist`` held, inside the limits (within SLACK, summed
    over the joints with the excess where no ElbowRoll fits), the target reachable; the scalar twin of
    :func:`nao_ik.geometry.sampled.swivel_samples`' allowed ones."""
    c = circle(k, t, wrist)
    if not c.reachable:
        return []
    step = _TWO_PI / swivels
    found = ([], [])  # type: Tuple[list, list]
    for i in range(swivels):
        q1, q2, e0, r0, e1, r1, excess = configurations(k, c, i * step - _PI)
        for out, e, r in ((found[0], e0, r0), (found[1], e1, r1)):
            q = [q1, q2, e, r, wrist]
            over = excess
            for x, lo, hi in zip(q, k.lo, k.hi):
                over += max(lo - x, 0.0) + max(x - hi, 0.0)
            if over <= SLACK:
                out.append(q)
    return found[0] + found[1]
