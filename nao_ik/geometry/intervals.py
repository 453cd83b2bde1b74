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
while both neighbours are not is a single-point interval. Extra candidates
(roots of a line's other half, the second pointing root) only split arcs.

Plain Python floats (the scalar path, :mod:`nao_ik.geometry.scalar_swivel`):
the common subset of Python 2.7 and 3, no numpy.
"""

from __future__ import division

import math

from .scalar_swivel import SLACK, arm, circle, configurations, margins, swivel_angle

try:  # the type comments' names (typing is not in every Python 2.7)
    from typing import Any, List, Sequence, Tuple  # noqa: F401

    from .scalar_swivel import Arm, Circle  # noqa: F401
except ImportError:  # pragma: no cover
    pass

Interval = tuple  # (start, end), radians, -pi <= start <= end <= pi

__all__ = ["SLACK", "Interval", "all_intervals", "boundary_swivels", "fold_swivels", "swivel_intervals"]


def _wrap(x):
    # type: (float) -> float
    return math.atan2(math.sin(x), math.cos(x))


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
    h = math.acos(min(max(k, -1.0), 1.0))
    return [_wrap(d - h), _wrap(d + h)]


def boundary_swivels(k, c):
    # type: (Arm, Circle) -> List[float]
    """Every swivel (radians) at which some joint meets a limit, on circle ``c``.

    Args:
        k: the arm (:func:`nao_ik.geometry.scalar_swivel.arm`).
        c: the target's circle (:func:`nao_ik.geometry.scalar_swivel.circle`).

    Returns:
        A list of floats (unsorted, may repeat).
    """
    l1, p = k.l1, k.p
    lo, hi = k.lo, k.hi
    va, vb, vc = c.an, c.ru, c.rv
    out = []
    # ShoulderRoll: (E - S)_y = L1 sin(bound + p).
    for b in (lo[1], hi[1]):
        y = l1 * math.sin(min(max(b + p, -0.5 * math.pi), 0.5 * math.pi))
        out += _trig_roots(vb[1], vc[1], y - va[1])
    # ShoulderPitch: cos(b) (-(E-S)_z) - sin(b) (E-S)_x = 0.
    for b in (lo[0], hi[0]):
        cb, sb = math.cos(b), math.sin(b)
        out += _trig_roots(-cb * vb[2] - sb * vb[0], -cb * vc[2] - sb * vc[0], cb * va[2] + sb * va[0])
    # Elbow joints, in the ElbowYaw parametrisation.
    ux, uy = k.ux, k.uy
    fx, fy, fz = c.f
    d, k0 = _hand(k, c)
    pairs = _elbow_pairs(k, c, (lo[3], hi[3], -c.sf, math.pi - c.sf))
    for b3 in (lo[2], hi[2]):
        c3, s3 = math.cos(b3), math.sin(b3)
        pairs += [(b3, q4) for q4 in _trig_roots(ux * fx + uy * c3 * fy, uy * c3 * fx - ux * fy, k0 + uy * s3 * fz)]
    for q3, q4 in pairs:
        for e in _elbows(k, q3, q4, c.f, d):
            out.append(swivel_angle(c, e, k.s))
    return out


def fold_swivels(k, c):
    # type: (Arm, Circle) -> List[float]
    """The swivels where the two ElbowRoll roots meet (q4 = -s or pi - s, the hand offset's angle s).

    There the angles vary as the square root of the swivel's distance (a fold
    of the swivel parametrisation), and one branch continues into the other.
    """
    d, _ = _hand(k, c)
    out = []
    for q3, q4 in _elbow_pairs(k, c, (-c.sf, math.pi - c.sf)):
        out += [swivel_angle(c, e, k.s) for e in _elbows(k, q3, q4, c.f, d)]
    return out


def _hand(k, c):
    # type: (Arm, Circle) -> Tuple[Tuple[float, float, float], float]
    """(the hand relative to the shoulder, (|D|^2 - L1^2 - L2^2) / 2)."""
    s = k.s
    d = (c.hand[0] - s[0], c.hand[1] - s[1], c.hand[2] - s[2])
    return d, 0.5 * (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] - k.l1 * k.l1 - c.fl * c.fl)


def _elbow_pairs(k, c, rolls):
    # type: (Arm, Circle, Sequence[float]) -> List[Tuple[float, float]]
    """(ElbowYaw, ElbowRoll) pairs with the given ElbowRolls that keep the hand at the target's distance."""
    ux, uy = k.ux, k.uy
    fx, fy, fz = c.f
    _, k0 = _hand(k, c)
    pairs = []
    for b4 in rolls:
        cb, sb = math.cos(b4), math.sin(b4)
        pairs += [(q3, b4) for q3 in _trig_roots(uy * (fx * sb + fy * cb), -uy * fz, k0 - ux * (fx * cb - fy * sb))]
    return pairs


def _elbows(k, q3, q4, f, d):
    # type: (Arm, float, float, Sequence[float], Sequence[float]) -> List[Tuple[float, float, float]]
    """Elbow points of the configurations with this ElbowYaw and ElbowRoll whose hand is at S + d."""
    ux, uy = k.ux, k.uy
    c3, s3 = math.cos(q3), math.sin(q3)
    c4, s4 = math.cos(q4), math.sin(q4)
    gx, gy, gz = c4 * f[0] - s4 * f[1], s4 * f[0] + c4 * f[1], f[2]
    p = (ux + gx, uy + c3 * gy - s3 * gz, s3 * gy + c3 * gz)  # u + Rx(q3) Rz(q4) f
    rp = math.hypot(p[0], p[1])
    if rp < 1e-12:
        return []
    x = min(max(d[1] / rp, -1.0), 1.0)
    th, a0 = math.atan2(p[1], p[0]), math.asin(x)
    s = k.s
    out = []
    for q2 in (a0 - th, math.pi - a0 - th):
        c2, s2 = math.cos(q2), math.sin(q2)
        wx, wz = p[0] * c2 - p[1] * s2, p[2]
        q1 = math.atan2(wz * d[0] - wx * d[2], wx * d[0] + wz * d[2])
        c1, s1 = math.cos(q1), math.sin(q1)
        ex = ux * c2 - uy * s2  # Rz(q2) u, then Ry(q1)
        out.append((s[0] + c1 * ex, s[1] + ux * s2 + uy * c2, s[2] - s1 * ex))
    return out


def swivel_intervals(model, target, wrist, branch):
    # type: (Any, Sequence[float], float, int) -> List[Tuple[float, float]]
    """The allowed swivel intervals of one ElbowRoll branch, exact to rounding.

    Args:
        model: the arm (its limits), an :class:`~nao_ik.model.ArmModel`.
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


def circle_intervals(k, c):
    # type: (Arm, Circle) -> Tuple[List[Tuple[float, float]], List[Tuple[float, float]]]
    """:func:`all_intervals` on a circle already built: (branch 0's intervals, branch 1's)."""
    cands = sorted(set(boundary_swivels(k, c)))
    if not cands:
        return tuple([(-math.pi, math.pi)] if _allowed(k, c, 0.0)[b] else [] for b in (0, 1))
    n = len(cands)
    # Both branches in one evaluation: the arcs' middles, then the candidates between two excluded arcs (a
    # candidate beside an allowed arc is that arc's end whatever its own state).
    arcs = ([], [])
    for i in range(n):
        ok = _allowed(k, c, 0.5 * (cands[i] + (cands[i + 1] if i + 1 < n else cands[0] + 2.0 * math.pi)))
        arcs[0].append(ok[0])
        arcs[1].append(ok[1])
    points = ([False] * n, [False] * n)
    for i in range(n):
        if not (arcs[0][i] or arcs[0][i - 1]) or not (arcs[1][i] or arcs[1][i - 1]):
            points[0][i], points[1][i] = _allowed(k, c, cands[i])
    return tuple(_assemble(cands, arcs[b], points[b]) for b in (0, 1))


def _allowed(k, c, phi):
    # type: (Arm, Circle, float) -> Tuple[bool, bool]
    """(branch 0, branch 1): the configurations at swivel phi are inside the limits."""
    m0, m1 = margins(k, c, *configurations(k, c, phi))
    return m0 >= -SLACK, m1 >= -SLACK


def _assemble(cands, arc_ok, point_ok):
    # type: (List[float], Sequence[bool], Sequence[bool]) -> List[Tuple[float, float]]
    """Intervals from the candidates, which arcs (cands[i], cands[i+1]) are allowed, and which candidates."""
    k = len(cands)
    if all(arc_ok):
        return [(-math.pi, math.pi)]
    raw = []
    # Walk the arcs starting after an excluded one, so that no run wraps around the list.
    start = [bool(x) for x in arc_ok].index(False)
    order = [(start + 1 + i) % k for i in range(k)]
    i = 0
    while i < k:
        if arc_ok[order[i]]:
            first = order[i]
            while i + 1 < k and arc_ok[order[i + 1]]:
                i += 1
            lo, hi = cands[first], cands[(order[i] + 1) % k]
            raw.append((lo, hi if hi > lo else hi + 2.0 * math.pi))
        i += 1
    # A candidate allowed while both its arcs are not: a single allowed swivel.
    for m in range(k):
        if point_ok[m] and not arc_ok[m] and not arc_ok[m - 1]:
            raw.append((cands[m], cands[m]))
    out = []
    for lo, hi in raw:
        if hi > math.pi:
            out += [(lo, math.pi), (-math.pi, hi - 2.0 * math.pi)]
        else:
            out.append((lo, hi))
    return sorted(out)
