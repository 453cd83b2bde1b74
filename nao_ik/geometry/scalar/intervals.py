# -*- coding: utf-8 -*-
# ruff: noqa: UP004, UP009, UP010  (the common subset of Python 2.7 and 3, see the docstring)
"""The swivel intervals that the joint limits allow, from closed-form boundaries.

On the elbow circle of a hand target (:mod:`nao_ik.geometry.swivel`) every
joint angle is a function of the swivel phi; a joint limit cuts the circle
where that function equals the limit. Every such point is found in closed
form, as the roots of an equation ``alpha cos x + beta sin x = gamma``:

- ShoulderRoll: (E - S)_y = L1 sin(q2 + p) and the elbow E - S = a n +
  r (cos phi u + sin phi v) is linear in (cos phi, sin phi), so q2 = bound is
  such an equation in phi.
- ShoulderPitch: q1 = atan2(-(E-S)_z, (E-S)_x) = bound means (E - S) lies on
  the plane through the y axis at that angle: linear in (cos phi, sin phi).
- ElbowRoll and ElbowYaw: on the circle they are not linear in phi (the
  15 mm elbow offset tilts the ElbowYaw axis off the upper arm), but the
  solution set is just as well parametrised by ElbowYaw. The shoulder-hand
  distance fixes u . Rx(q3) Rz(q4) f = (|D|^2 - L1^2 - L2^2) / 2, which is
  linear in (cos q4, sin q4) for a given q3 and linear in (cos q3, sin q3) for
  a given q4. So q4 = bound gives q3 in closed form, q3 = bound gives q4; the
  shoulder angles then point u + Rx(q3) Rz(q4) f at the target (two closed-form
  roots), and the elbow of that configuration gives the boundary's swivel.
  The places where no ElbowRoll fits (the forearm closer to the upper arm's
  axis than the hand offset allows) begin where the two ElbowRoll roots meet,
  q4 = -s or pi - s, the same kind of equation.

These boundary candidates (at most 32) cut the circle into arcs on which no
limit changes state; the joint angles at each arc's midpoint decide whether
the arc is allowed (both ElbowRoll branches), and a candidate that is allowed
while both neighbours are not is a single-point interval. Roots that are no
boundary are left out before they cost an arc: ShoulderPitch's plane also
holds q1 = bound +- pi, and of the two shoulder roots that point the arm at
the hand one may have a ShoulderRoll the circle never takes. A spare root
would only split an arc, so each test keeps a root that fails it by less
than ROOT_SIDE.
A branch whose ElbowRoll cannot reach inside its limits anywhere on the
circle, or every branch where the held WristYaw is outside its own, is empty
without a look at the arcs; the rest are judged in one fused loop
(:func:`_judge`), to the same verdicts as
:func:`~nao_ik.geometry.scalar.swivel.margins`.

Plain Python floats (the scalar path, :mod:`nao_ik.geometry.scalar.swivel`):
the common subset of Python 2.7 and 3, no numpy.
"""

from __future__ import division

import math

from .swivel import SLACK, arm, circle, shoulder

try:  # the type comments' names (typing is not in every Python 2.7)
    from typing import Any, List, Optional, Sequence, Tuple  # noqa: F401

    from .swivel import Arm, Circle  # noqa: F401
except ImportError:  # pragma: no cover
    pass

_PI = math.pi
_TWO_PI = 2.0 * math.pi
Interval = tuple  # (start, end), radians, -pi <= start <= end <= pi
#: A root is left out as no boundary only when it is this far (radians, metres) on the wrong side of its test.
ROOT_SIDE = 1e-9

__all__ = ["SLACK", "Interval", "all_intervals", "boundary_swivels", "faster_arcs", "fold_swivels", "swivel_intervals"]


def _trig_roots(alpha, beta, gamma):
    # type: (float, float, float) -> list
    """Every x in (-pi, pi] with alpha cos x + beta sin x = gamma."""
    r = math.hypot(alpha, beta)
    if r < 1e-15:
        return []
    k = gamma / r
    if k > 1.0 + 1e-12 or k < -1.0 - 1e-12:
        return []
    d = math.atan2(beta, alpha)
    h = math.acos(-1.0 if k < -1.0 else 1.0 if k > 1.0 else k)
    x, y = d - h, d + h
    sin, cos, atan2 = math.sin, math.cos, math.atan2
    return [atan2(sin(x), cos(x)), atan2(sin(y), cos(y))]  # wrapped into (-pi, pi]


def boundary_swivels(k, c):
    # type: (Arm, Circle) -> List[float]
    """Every swivel (radians) at which some joint meets a limit, on circle ``c``.

    Args:
        k: the arm (:func:`nao_ik.geometry.scalar.swivel.arm`).
        c: the target's circle (:func:`nao_ik.geometry.scalar.swivel.circle`).

    Returns:
        A list of floats (unsorted, may repeat).
    """
    cos, sin = math.cos, math.sin
    l1, p = k.l1, k.p
    (lp, lr, ly, le, _), (hp, hr, hy, he, _) = k.lo, k.hi  # ShoulderPitch, ShoulderRoll, ElbowYaw, ElbowRoll
    a0, a1, a2 = c.an
    u0, u1, u2 = c.ru
    w0, w1, w2 = c.rv
    half = 0.5 * math.pi
    # ShoulderRoll: (E - S)_y = L1 sin(bound + p).
    out = _trig_roots(u1, w1, l1 * sin(min(max(lr + p, -half), half)) - a1)
    out += _trig_roots(u1, w1, l1 * sin(min(max(hr + p, -half), half)) - a1)
    # ShoulderPitch: cos(b) (-(E-S)_z) - sin(b) (E-S)_x = 0, the plane of q1 = b and of q1 = b +- pi: only the
    # half where (E-S)_x cos(b) - (E-S)_z sin(b) >= 0 is q1 = b (kept down to -ROOT_SIDE: a spare root only
    # splits an arc).
    for b in (lp, hp):
        cb, sb = cos(b), sin(b)
        for x in _trig_roots(-cb * u2 - sb * u0, -cb * w2 - sb * w0, cb * a2 + sb * a0):
            cx, sx = cos(x), sin(x)
            if (a0 + cx * u0 + sx * w0) * cb - (a2 + cx * u2 + sx * w2) * sb >= -ROOT_SIDE:
                out.append(x)
    # Elbow joints, in the ElbowYaw parametrisation.
    ux, uy = k.ux, k.uy
    fx, fy, fz = c.f
    d, k0 = _hand(k, c)
    pairs = _elbow_pairs(k, c, (le, he, -c.sf, math.pi - c.sf), k0)
    for b3 in (ly, hy):
        c3, s3 = cos(b3), sin(b3)
        pairs += [(b3, q4) for q4 in _trig_roots(ux * fx + uy * c3 * fy, uy * c3 * fx - ux * fy, k0 + uy * s3 * fz)]
    return out + _swivels(k, c, pairs, d)


def fold_swivels(k, c):
    # type: (Arm, Circle) -> List[float]
    """The swivels where the two ElbowRoll roots meet (q4 = -s or pi - s, the hand offset's angle s).

    There the angles vary as the square root of the swivel's distance (a fold
    of the swivel parametrisation), and one branch continues into the other.
    """
    d, k0 = _hand(k, c)
    return _swivels(k, c, _elbow_pairs(k, c, (-c.sf, math.pi - c.sf), k0), d)


def _hand(k, c):
    # type: (Arm, Circle) -> Tuple[Tuple[float, float, float], float]
    """(the hand relative to the shoulder, (|D|^2 - L1^2 - L2^2) / 2)."""
    s = k.s
    d = (c.hand[0] - s[0], c.hand[1] - s[1], c.hand[2] - s[2])
    return d, 0.5 * (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] - k.l1 * k.l1 - c.fl * c.fl)


def _elbow_pairs(k, c, rolls, k0):
    # type: (Arm, Circle, Sequence[float], float) -> List[Tuple[float, float]]
    """(ElbowYaw, ElbowRoll) pairs with the given ElbowRolls that keep the hand at the target's distance (k0 from
    :func:`_hand`)."""
    ux, uy = k.ux, k.uy
    fx, fy, fz = c.f
    pairs = []
    for b4 in rolls:
        cb, sb = math.cos(b4), math.sin(b4)
        pairs += [(q3, b4) for q3 in _trig_roots(uy * (fx * sb + fy * cb), -uy * fz, k0 - ux * (fx * cb - fy * sb))]
    return pairs


def _swivels(k, c, pairs, d):
    # type: (Arm, Circle, Sequence[Tuple[float, float]], Sequence[float]) -> List[float]
    """The swivels of the elbows of the configurations with these (ElbowYaw, ElbowRoll) pairs, hand at S + d.

    Pair by pair, the two shoulder roots that point u + Rx(q3) Rz(q4) f at the
    hand (none where that vector is along the y axis); each elbow's swivel as
    :func:`~nao_ik.geometry.scalar.swivel.swivel_angle` gives it.
    """
    cos, sin, atan2 = math.cos, math.sin, math.atan2
    ux, uy, p = k.ux, k.uy, k.p
    half = 0.5 * _PI + ROOT_SIDE
    sx, sy, sz = k.s
    f0, f1, f2 = c.f
    d0, d1, d2 = d
    cu0, cu1, cu2 = c.u
    cv0, cv1, cv2 = c.v
    out = []
    for q3, q4 in pairs:
        c3, s3 = cos(q3), sin(q3)
        c4, s4 = cos(q4), sin(q4)
        gy = s4 * f0 + c4 * f1
        p0, p1, p2 = ux + (c4 * f0 - s4 * f1), uy + c3 * gy - s3 * f2, s3 * gy + c3 * f2  # u + Rx(q3) Rz(q4) f
        rp = math.hypot(p0, p1)
        if rp < 1e-12:
            continue
        x = d1 / rp
        th, a0 = atan2(p1, p0), math.asin(-1.0 if x < -1.0 else 1.0 if x > 1.0 else x)
        for q2 in (a0 - th, math.pi - a0 - th):
            # The circle's own ShoulderRoll is asin((E-S)_y / L1) - p: a root with q2 + p beyond +-pi/2 is no
            # configuration of the circle (its swivel has other elbow angles), so no boundary.
            y = (q2 + p + _PI) % _TWO_PI - _PI
            if y > half or y < -half:
                continue
            c2, s2 = cos(q2), sin(q2)
            wx = p0 * c2 - p1 * s2
            q1 = atan2(p2 * d0 - wx * d2, wx * d0 + p2 * d2)
            c1, s1 = cos(q1), sin(q1)
            ex = ux * c2 - uy * s2  # Rz(q2) u, then Ry(q1): the elbow is S + (c1 ex, ux s2 + uy c2, -s1 ex)
            # (S + e) - S, not e: the same rounding as swivel_angle(c, elbow, S), so the candidates are bit-identical
            # to its (scalar_nearest orders candidates by their gaps).
            w0, w1, w2 = (sx + c1 * ex) - sx, (sy + ux * s2 + uy * c2) - sy, (sz - s1 * ex) - sz
            out.append(atan2(w0 * cv0 + w1 * cv1 + w2 * cv2, w0 * cu0 + w1 * cu1 + w2 * cu2))  # swivel_angle
    return out


def swivel_intervals(model, target, wrist, branch):
    # type: (Any, Sequence[float], float, int) -> List[Tuple[float, float]]
    """The allowed swivel intervals of one ElbowRoll branch, exact to rounding.

    Args:
        model: the arm (its limits), an :class:`~nao_ik.model.arm.ArmModel`.
        target: the hand target, FRAME_TORSO metres (where it is nearer or
            farther than the links allow, the circle of the nearest distance).
        wrist: the held WristYaw.
        branch: 0 or 1, the ElbowRoll root.

    Returns:
        Sorted ``(start, end)`` pairs within [-pi, pi]; an interval through
        +-pi is split in two; ``[(-pi, pi)]`` for the whole circle; a single
        allowed swivel is ``(phi, phi)``.
    """
    return all_intervals(model, target, wrist)[branch]


def all_intervals(model, target, wrist):
    # type: (Any, Sequence[float], float) -> Tuple[List[Tuple[float, float]], List[Tuple[float, float]]]
    """:func:`swivel_intervals` of both branches at once (one set of boundaries)."""
    k = arm(model)
    return circle_intervals(k, circle(k, [float(x) for x in target], float(wrist)))


def circle_intervals(k, c, points=True):
    # type: (Arm, Circle, bool) -> Tuple[List[Tuple[float, float]], List[Tuple[float, float]]]
    """:func:`all_intervals` on a circle already built: (branch 0's intervals, branch 1's).

    With ``points`` False, the single-point intervals are left out (and not looked for).
    """
    dead0, dead1 = _dead(k, c)
    if dead0 and dead1:
        return [], []
    live = (0 if dead0 else 1) + (0 if dead1 else 2)  # the branches to judge: 1 branch 0, 2 branch 1, 3 both
    cands = sorted(set(boundary_swivels(k, c)))
    n = len(cands)
    if not n:
        ok = _judge(k, c, (0.0,), (live,))
        return tuple([(-math.pi, math.pi)] if ok[b][0] else [] for b in (0, 1))
    # Both branches in one pass: the arcs' middles, then the candidates between two excluded arcs of a branch
    # that can be allowed (a candidate beside an allowed arc is that arc's end whatever its own state), each
    # for the branches that need it.
    ends = cands[1:] + [cands[0] + 2.0 * math.pi]
    a0, a1 = _judge(k, c, [0.5 * (x + y) for x, y in zip(cands, ends)], [live] * n)
    lone, needs = [], []
    for i in range(n if points else 0):
        m = (0 if dead0 or a0[i] or a0[i - 1] else 1) + (0 if dead1 or a1[i] or a1[i - 1] else 2)
        if m:
            lone.append(i)
            needs.append(m)
    alone = ([False] * n, [False] * n)
    if lone:
        p0, p1 = _judge(k, c, [cands[i] for i in lone], needs)
        for j, i in enumerate(lone):
            alone[0][i], alone[1][i] = p0[j], p1[j]
    return [] if dead0 else _assemble(cands, a0, alone[0]), [] if dead1 else _assemble(cands, a1, alone[1])


def faster_arcs(k, c, q0, seconds, weights=None):
    # type: (Arm, Circle, Sequence[float], float, Optional[Sequence[float]]) -> Tuple[List[Tuple[float, float]], List[Tuple[float, float]]]
    """The swivel intervals (branch 0's, branch 1's) whose moves from ``q0`` take at most ``seconds``.

    The move time max_j |q_j - q0_j| / v_j is at most ``seconds`` exactly where every joint stays within
    seconds * v_j of its start: a band around the start, which is one more pair of limits per joint. So
    the set is :func:`circle_intervals` with each joint's limits narrowed to its band: where it is empty,
    no configuration on the circle is nearer than ``seconds``; where not, every swivel inside its
    intervals is. Two approximations, both far below the nearest search's BEAT (1e-6 s): the bands
    are judged to SLACK (1e-9 rad, so up to about 1e-10 s more), and single-point intervals are left
    out (a shorter move that is one isolated allowed swivel needs an exact tangency of two bands or
    limits). The circle's WristYaw is held: its own move is part of every one.

    Args:
        k: the arm; c: the target's circle.
        q0: the start posture (five floats, inside the limits, so that every band lies inside them).
        seconds: the move time to beat, at full speed.
        weights: the five joints' seconds per radian (default the arm's, 1 / maximum velocity); all 1:
            the largest joint change, radians.

    Returns:
        As :func:`circle_intervals`.
    """
    w = k.w if weights is None else weights
    if abs(c.wrist - q0[4]) * w[4] >= seconds:
        return [], []
    lo, hi = list(k.lo), list(k.hi)
    for j in range(4):
        r = seconds / w[j]
        if q0[j] - r > lo[j]:
            lo[j] = q0[j] - r
        if q0[j] + r < hi[j]:
            hi[j] = q0[j] + r
    return circle_intervals(k.limited(lo, hi), c, points=False)


def _dead(k, c):
    # type: (Arm, Circle) -> Tuple[bool, bool]
    """(branch 0, branch 1): no swivel of the circle can be allowed, by the held WristYaw or by ElbowRoll alone.

    A branch's ElbowRoll is a - s or -a - s with a = acos(...) in [0, pi] (s the
    hand offset's angle, :func:`~nao_ik.geometry.scalar.swivel.configurations`),
    so a - s >= -s and -a - s <= -s in floats too (rounding is monotonic), and
    the margin ``hi - (a - s)`` or ``(-a - s) - lo`` is at most its value at
    a = 0: where that is below -SLACK, :func:`_judge` refuses every swivel of
    the branch.
    """
    neg = -SLACK
    if c.wm < neg:
        return True, True
    sf = c.sf
    up = k.hi[3] - (0.0 - sf) < neg  # the root a - s never gets down to the upper limit
    down = (-0.0 - sf) - k.lo[3] < neg  # the root -a - s never gets up to the lower limit
    return (up, down) if k.flip else (down, up)


def _judge(k, c, phis, needs):
    # type: (Arm, Circle, Sequence[float], Sequence[int]) -> Tuple[List[bool], List[bool]]
    """(branch 0's, branch 1's) verdicts: are the configurations at each swivel in ``phis`` inside the limits?

    Each swivel is judged for the branches that ``needs`` asks for (1 branch 0, 2
    branch 1, 3 both); the other branch's verdict there is False.

    The same numbers as :func:`~nao_ik.geometry.scalar.swivel.configurations` and
    :func:`~nao_ik.geometry.scalar.swivel.margins` (a margin >= -SLACK), fused
    into one loop: the circle's and the arm's numbers are read once, each limit
    is compared as that margin's own term (min(...) >= -SLACK is every term's
    >= -SLACK), and a swivel stops as soon as both branches are decided.
    """
    cos, sin, sqrt, acos, atan2 = math.cos, math.sin, math.sqrt, math.acos, math.atan2
    a0, a1, a2 = c.an
    u0, u1, u2 = c.ru
    w0, w1, w2 = c.rv
    h0, h1, h2 = c.hs
    irf, rf, fz, sf, pi_fz = c.irf, c.rf, c.f[2], c.sf, c.pi_fz
    il1, p, cp, sp, flip = k.il1, k.p, k.cp, k.sp, k.flip
    (lp, lr, ly, le, _), (hp, hr, hy, he, _) = k.lo, k.hi  # ShoulderPitch, ShoulderRoll, ElbowYaw, ElbowRoll
    neg = -SLACK
    n = len(phis)
    ok0, ok1 = [False] * n, [False] * n
    if c.wm < neg:  # the held WristYaw outside its limits: nothing is allowed
        return ok0, ok1
    for i in range(n):
        phi, m = phis[i], needs[i]
        cph, sph = cos(phi), sin(phi)
        v0 = a0 + cph * u0 + sph * w0
        v1 = a1 + cph * u1 + sph * w1
        v2 = a2 + cph * u2 + sph * w2
        q1, q2, c1, s1, c2, s2 = shoulder(v0, v1, v2, il1, p, cp, sp)
        if q2 - lr < neg or hr - q2 < neg or q1 - lp < neg or hp - q1 < neg:
            continue
        # Elbow (recovery.elbow_angles): g = (Ry(q1) Rz(q2))^T (H - E); |g| = |f| on the circle.
        g0, g1, g2 = h0 - v0, h1 - v1, h2 - v2
        t0 = c1 * g0 - s1 * g2
        cosine = (c2 * t0 + s2 * g1) * irf
        excess = abs(cosine) - 1.0
        if excess > 0.0:
            if -excess < neg:
                continue
            cosine = -1.0 if cosine < 0.0 else 1.0
        a = acos(cosine)
        if flip:
            r0, r1 = a - sf, -a - sf
        else:
            r0, r1 = -a - sf, a - sf
        b0 = m != 2 and r0 - le >= neg and he - r0 >= neg
        b1 = m != 1 and r1 - le >= neg and he - r1 >= neg
        if not (b0 or b1):
            continue
        # ElbowYaw = base - atan2(f_z, -+r sin a) for ElbowRoll = -+a - s; atan2(f_z, -x) = +-pi - atan2(f_z, x).
        yaw = atan2(fz, rf * sqrt(1.0 - cosine * cosine))
        base = atan2(s1 * g0 + c1 * g2, c2 * g1 - s2 * t0)
        e_neg = base - (pi_fz - yaw)
        e_pos = base - yaw
        e0, e1 = (e_pos, e_neg) if flip else (e_neg, e_pos)
        if b0:
            e0 = e0 - _TWO_PI if e0 > _PI else e0 + _TWO_PI if e0 <= -_PI else e0
            ok0[i] = e0 - ly >= neg and hy - e0 >= neg
        if b1:
            e1 = e1 - _TWO_PI if e1 > _PI else e1 + _TWO_PI if e1 <= -_PI else e1
            ok1[i] = e1 - ly >= neg and hy - e1 >= neg
    return ok0, ok1


def _assemble(cands, arc_ok, point_ok):
    # type: (List[float], Sequence[bool], Sequence[bool]) -> List[Tuple[float, float]]
    """Intervals from the candidates, which arcs (cands[i], cands[i+1]) are allowed, and which candidates."""
    k = len(cands)
    ok = [bool(x) for x in arc_ok]
    if all(ok):
        return [(-math.pi, math.pi)]
    if not any(ok) and not any(point_ok):
        return []
    raw = []
    # Walk the arcs from the one after an excluded arc round to that one, so that no run wraps around the
    # list: a run of allowed arcs from cands[first] ends where the next excluded arc begins.
    start = ok.index(False)
    first = -1
    for j in range(start + 1, start + k + 1):
        i = j - k if j >= k else j
        if ok[i]:
            if first < 0:
                first = i
        elif first >= 0:
            lo, hi = cands[first], cands[i]
            raw.append((lo, hi if hi > lo else hi + 2.0 * math.pi))
            first = -1
    # A candidate allowed while both its arcs are not: a single allowed swivel.
    for m in range(k):
        if point_ok[m] and not ok[m] and not ok[m - 1]:
            raw.append((cands[m], cands[m]))
    out = []
    for lo, hi in raw:
        if hi > math.pi:
            out += [(lo, math.pi), (-math.pi, hi - 2.0 * math.pi)]
        else:
            out.append((lo, hi))
    return sorted(out)
