# -*- coding: utf-8 -*-
# ruff: noqa: UP004, UP009, UP010  (the common subset of Python 2.7 and 3, see the docstring)
"""The search along one target's elbow circle for the configuration nearest a start (:class:`Search`): a ring of
swivels on both ElbowRoll branches, linear-minimax refinement, the limits' boundaries by regula falsi, the exact
intervals where the ring is too coarse, the folds where the branches meet, and the proof that no configuration on
the circle is nearer (:meth:`Search.beat`). :mod:`nao_ik.geometry.scalar.nearest` runs it.

Written in the common subset of Python 2.7 and 3 with no numpy.
"""

from __future__ import division

import math

from .intervals import boundary_swivels, circle_intervals, faster_arcs, fold_swivels
from .swivel import FREE, INF, SLACK, elbow_point, swivel_angle
from .swivel import shoulder as _shoulder

try:  # the type comments' names (typing is not in every Python 2.7)
    from typing import Any, Callable, List, Optional, Sequence, Tuple  # noqa: F401

    from .swivel import Arm, Circle  # noqa: F401

    Point = Tuple[List[float], float, float]  # angles, move time (INF: not allowed), violation
except ImportError:  # pragma: no cover
    pass

#: Swivels tried around the circle (step 1).
RING = 24
#: Linear-minimax steps (step 2) and the relative step of their derivative.
STEPS = 8
DERIV = 1e-7
#: A minimax step shorter than this (radians of swivel), or one that the linearised move time says gains less
#: than GAIN seconds, ends the refinement (the answers are compared to 1e-5 s).
CONVERGED = 1e-10
GAIN = 1e-9
#: Regula-falsi iterations for a boundary (step 3), ended early once the bracket is this narrow (radians).
BOUNDARY = 12
BRACKET = 1e-12
#: Boundaries nearest the start's swivel tried when the start's own swivel is not allowed.
BOUNDARIES = 4
#: Two ElbowRoll roots closer than this (radians) mean a fold of the swivel parametrisation is near,
#: and the first step past it (in sqrt-swivel units).
FOLD = 0.05
FOLD_START = 1e-4
#: Folds this close to the start's swivel (radians) are searched past.
FOLD_REACH = 0.5
#: Offsets (radians) from the start's swivel tried, in turn on each side, where an extra constraint blocks it
#: (its edge is no closed-form boundary).
BESIDE = tuple(0.004 * 2.0**i for i in range(8))

#: Radians of swivel around the near path's extra seed its configuration is refined within.
SEED_RADIUS = 0.05

#: The last step (:meth:`Search.beat`): a move this much shorter (seconds at full speed) is looked for in the
#: exact intervals where the moves are shorter, at most BEAT_ROUNDS times.
BEAT = 1e-6
BEAT_ROUNDS = 4

_PI = math.pi
_TWO_PI = 2.0 * math.pi
_NEG = -SLACK
_cos, _sin, _sqrt, _acos, _atan2 = math.cos, math.sin, math.sqrt, math.acos, math.atan2


def _gap(a, b):
    # type: (float, float) -> float
    """|a - b| on the circle, radians in [0, pi]."""
    x = (a - b) % _TWO_PI
    return _TWO_PI - x if x > math.pi else x


class Search(object):
    """One target's search state: the arm, the circle, the start, the extra constraint.

    A *point* is (angles, move time or INF where not allowed, violation = -margin).

    The evaluations (:meth:`both`, :meth:`point`, :meth:`angles`, :meth:`margin`) are
    :func:`~nao_ik.geometry.scalar.swivel.configurations`, :func:`~nao_ik.geometry.scalar.swivel.margins`
    and the move time fused into one body each, on the circle's, the arm's and the start's numbers
    taken once (``geo``, ``lim``, ``mv``, ``wd``): the same floating-point operations in the same order, so
    the same floats, each ``min``/``max`` written out as the comparisons it makes, in its order (the
    search's hot path: a few dozen evaluations per target). One branch's evaluation leaves out the
    other branch's ElbowYaw, ElbowRoll, margin and extra constraint (a pure function of the angles).
    """

    __slots__ = ("k", "c", "q0", "base", "extra", "evaluations", "geo", "lim", "mv", "wd")

    def __init__(self, k, c, q0, extra=None):
        # type: (Arm, Circle, Sequence[float], Optional[Callable[[List[float]], float]]) -> None
        self.k, self.c, self.q0, self.extra = k, c, q0, extra
        w = k.w
        self.base = abs(c.wrist - q0[4]) * w[4]
        self.evaluations = 0
        # The numbers the evaluations read, taken once (see the class docstring).
        an, ru, rv, hs, lo, hi = c.an, c.ru, c.rv, c.hs, k.lo, k.hi
        self.geo = (an[0], an[1], an[2], ru[0], ru[1], ru[2], rv[0], rv[1], rv[2], hs[0], hs[1], hs[2],
                    k.il1, k.p, k.cp, k.sp, c.irf, c.rf, c.f[2], c.pi_fz, c.sf, k.flip)  # fmt: skip
        self.lim = (lo[0], hi[0], lo[1], hi[1], lo[2], hi[2], lo[3], hi[3], c.wm)
        self.mv = (q0[0], q0[1], q0[2], q0[3], w[0], w[1], w[2], w[3], self.base, c.wrist)
        self.wd = (w[0] / DERIV, w[1] / DERIV, w[2] / DERIV, w[3] / DERIV)  # the derivative's weights (minimax)

    def both(self, phi):
        # type: (float) -> Tuple[Point, Point]
        """(branch 0's point, branch 1's point) at swivel phi."""
        self.evaluations += 1
        return self._eval(phi, 2, self.extra)

    def point(self, phi, branch):
        # type: (float, int) -> Point
        """One branch's point at swivel phi (:meth:`both`'s, the other branch left out)."""
        self.evaluations += 1
        return self._eval(phi, branch, self.extra)[branch]

    def angles(self, phi, branch):
        # type: (float, int) -> Tuple[float, float, float, float]
        """One branch's joint angles at swivel phi (no extra constraint, not counted: for a derivative)."""
        q = self._eval(phi, branch, None)[branch][0]
        return q[0], q[1], q[2], q[3]

    def margin(self, phi, branch):
        # type: (float, int) -> float
        """The signed distance to the limits (and the extra constraint) at swivel phi: :meth:`point`'s -violation."""
        return -self.point(phi, branch)[2]

    def _eval(self, phi, want, extra):
        # type: (float, int, Optional[Callable[[List[float]], float]]) -> Tuple[Optional[Point], Optional[Point]]
        """(branch 0's point, branch 1's) at swivel phi: of branch ``want`` (0 or 1; the other None) or both (2).

        :func:`~nao_ik.geometry.scalar.swivel.configurations`, then
        :func:`~nao_ik.geometry.scalar.swivel.margins` (with ``extra``), then the move time, fused (see the
        class docstring).
        """
        a0, a1, a2, u0, u1, u2, b0, b1, b2, h0, h1, h2, il1, p, cp, sp, irf, rf, fz, pi_fz, sf, flip = self.geo
        # scalar_swivel.configurations: the elbow on the circle (E - S), the shoulder, then the elbow's roots.
        cph, sph = _cos(phi), _sin(phi)
        v0 = a0 + cph * u0 + sph * b0
        v1 = a1 + cph * u1 + sph * b1
        v2 = a2 + cph * u2 + sph * b2
        q1, q2, c1, s1, c2, s2 = _shoulder(v0, v1, v2, il1, p, cp, sp)
        g0, g1, g2 = h0 - v0, h1 - v1, h2 - v2
        gt = c1 * g0 - s1 * g2
        cosine = (c2 * gt + s2 * g1) * irf
        excess = abs(cosine) - 1.0
        if excess > 0.0:
            cosine = -1.0 if cosine < 0.0 else 1.0
        else:
            excess = 0.0
        a = _acos(cosine)
        yaw = _atan2(fz, rf * _sqrt(1.0 - cosine * cosine))
        base = _atan2(s1 * g0 + c1 * g2, c2 * g1 - s2 * gt)
        # scalar_swivel.margins, the shoulder's, the held wrist's and the reach's part: each min(...) as the
        # comparisons it makes, left to right.
        lo0, hi0, lo1, hi1, lo2, hi2, lo3, hi3, wm = self.lim
        m = q1 - lo0
        y = hi0 - q1
        if y < m:
            m = y
        y = q2 - lo1
        if y < m:
            m = y
        y = hi1 - q2
        if y < m:
            m = y
        if wm < m:
            m = wm
        if excess > 0.0:
            y = -excess
            if y < m:
                m = y
        elif FREE < m:
            m = FREE
        p0, p1, p2, p3, w0, w1, w2, w3, shared, wrist = self.mv
        x = -1.0  # the move time's shoulder part, once a branch needs it
        out = [None, None]  # type: List[Optional[Point]]
        for branch in (0, 1):
            if want != 2 and want != branch:
                continue
            if (branch != 0) != flip:  # the root a - s (branch 0 of the right arm, branch 1 of the left)
                r = a - sf
                e = base - yaw
            else:
                r = -a - sf
                e = base - (pi_fz - yaw)
            e = e - _TWO_PI if e > _PI else e + _TWO_PI if e <= -_PI else e
            mb = m  # the elbow's part of margins
            y = e - lo2
            if y < mb:
                mb = y
            y = hi2 - e
            if y < mb:
                mb = y
            y = r - lo3
            if y < mb:
                mb = y
            y = hi3 - r
            if y < mb:
                mb = y
            q = [q1, q2, e, r, wrist]
            if extra is not None:
                y = extra(q)
                if y < mb:
                    mb = y
            t = INF
            if mb >= _NEG:  # the move time: each max(...) as the comparisons it makes, left to right
                if x < 0.0:
                    x = abs(q1 - p0) * w0
                    y = abs(q2 - p1) * w1
                    if y > x:
                        x = y
                    if shared > x:
                        x = shared
                t = x
                y = abs(e - p2) * w2
                if y > t:
                    t = y
                y = abs(r - p3) * w3
                if y > t:
                    t = y
            out[branch] = (q, t, -mb)
        return out[0], out[1]

    def seeded(self, seed, best):
        # type: (Sequence[float], Tuple[List[float], float, float]) -> Tuple[List[float], float, float]
        """The circle's configuration at the elbow of ``seed`` (a configuration near the start that reaches the
        target, :func:`_project`), on the branch whose ElbowRoll is nearer the seed's, refined; the nearer of it
        and ``best``."""
        k = self.k
        phi = swivel_angle(self.c, elbow_point(k, seed[0], seed[1]), k.s)
        p = self.both(phi)
        b = 0 if abs(p[0][0][3] - seed[3]) <= abs(p[1][0][3] - seed[3]) else 1
        q, cost, _ = p[b]
        if cost == INF:
            return best
        run = self.refine(q, phi, cost, SEED_RADIUS, b)
        return run if run[2] < best[2] else best

    def refine(self, q, phi, cost, radius, branch):
        # type: (List[float], float, float, float, int) -> Tuple[List[float], float, float]
        """Linear-minimax steps from an allowed start (steps 2 and 3 of ``nearest``'s docstring).

        Returns:
            (angles, swivel, move time).
        """
        if cost == INF:
            return q, phi, cost
        qd = None
        for _ in range(STEPS):
            if radius <= 1e-9:
                break
            if qd is None:  # the derivative where the search stands (unchanged after a failed step)
                qd = self.angles(phi + DERIV, branch)
            delta = self.minimax(q, qd, radius)
            if abs(delta) < CONVERGED or cost - self.predicted(q, qd, delta) < GAIN:
                break
            step = phi + delta
            q_new, cost_new, _ = self.point(step, branch)
            if cost_new == INF:
                step = self.boundary(phi, step, branch)
                if abs(step - phi) < BRACKET:  # standing on the boundary: every shorter step leaves it too
                    break
                q_new, cost_new, _ = self.point(step, branch)
            if cost_new < cost:
                q, cost, phi, qd = q_new, cost_new, step, None
            else:  # halve the step that failed (a shorter radius alone could repeat it)
                radius = 0.5 * min(radius, abs(delta))
        return q, phi, cost

    def minimax(self, q, qd, radius):
        # type: (Sequence[float], Sequence[float], float) -> float
        """The delta in [-radius, radius] minimising max_j |a_j + b_j delta| (the linearised move time).

        The function is the upper envelope of the lines +-(a_j + b_j delta),
        convex: its minimum is where a rising line meets a falling one, and
        every such pair meets at or below it (the pair's own V has its lowest
        point there), so the pair meeting highest gives the minimum. Outside
        the trust region, its nearer end.
        """
        mv, wd = self.mv, self.wd
        rising, falling = [], []
        for j in range(4):  # the lines (a_j, b_j) made rising and falling; a level line bounds both sides
            x = q[j]
            a = (x - mv[j]) * mv[4 + j]
            b = (qd[j] - x) * wd[j]
            if b > 0.0:
                rising.append((a, b))
                falling.append((-a, -b))
            elif b < 0.0:
                rising.append((-a, -b))
                falling.append((a, b))
            else:
                rising.append((abs(a), 0.0))
                falling.append((abs(a), 0.0))
        top = 0.0
        for ap, bp in rising:
            for an, bn in falling:  # their meeting height; two level lines: the higher bounds it, anywhere
                den = bp - bn
                h = ap + bp * ((an - ap) / den) if den > 1e-12 else ap if ap > an else an
                if h > top:
                    top = h
        # Every delta where no line exceeds that minimum; the one nearest the current swivel.
        lo, hi = -INF, INF
        for a, b in rising:
            if b > 0.0:
                x = (top - a) / b
                if x < hi:
                    hi = x
        for a, b in falling:
            if b < 0.0:
                x = (top - a) / b
                if x > lo:
                    lo = x
        d = 0.0 if lo <= 0.0 <= hi else lo if lo > 0.0 else hi
        if lo > hi:  # rounding
            d = 0.5 * (lo + hi)
        return -radius if d < -radius else radius if d > radius else d

    def predicted(self, q, qd, delta):
        """The linearised move time after a step delta (see :meth:`minimax`)."""
        mv, wd = self.mv, self.wd
        out = mv[8]  # the held WristYaw's time (self.base)
        for j in range(4):
            x = q[j]
            x = abs((x - mv[j]) * mv[4 + j] + (qd[j] - x) * wd[j] * delta)
            if x > out:
                out = x
        return out

    def boundary(self, inside, outside, branch):
        # type: (float, float, int) -> float
        """The last allowed swivel from ``inside`` toward ``outside``: Illinois on the limits' margin."""
        lo, hi = inside, outside
        f_lo = self.margin(lo, branch) + SLACK
        f_hi = self.margin(hi, branch) + SLACK
        side = 0.0
        for _ in range(BOUNDARY):
            if hi - lo < BRACKET and lo - hi < BRACKET:
                break
            den = f_lo - f_hi
            x = lo + f_lo * (hi - lo) / (den if den != 0.0 else 1.0)
            if not (x - lo) * (x - hi) < 0.0:  # keep the secant strictly inside the bracket (else bisect)
                x = 0.5 * (lo + hi)
            fx = self.margin(x, branch) + SLACK
            if 0.0 <= fx < SLACK:  # on the boundary to the slack's resolution
                return x
            if fx >= 0.0:
                if side > 0.0:  # Illinois: halve the value kept at the end that did not move twice in a row
                    f_hi *= 0.5
                lo, f_lo, side = x, fx, 1.0
            else:
                if side < 0.0:
                    f_lo *= 0.5
                hi, f_hi, side = x, fx, -1.0
        return lo

    def nearest_boundary(self, phi0, branches):
        # type: (float, Tuple[int, ...]) -> Tuple[List[float], float, float]
        """From the allowed-set boundaries nearest the start's swivel (closed form), refined."""
        cands = sorted(boundary_swivels(self.k, self.c), key=lambda p: _gap(p, phi0))
        best = ([0.0] * 5, phi0, INF)
        for phi in cands[:BOUNDARIES]:
            for b in branches:
                q, cost, _ = self.point(phi, b)
                if cost < best[2]:
                    best = self.refine(q, phi, cost, 0.5 * math.pi / RING, b)
        return best

    def beside(self, phi0, branches, best):
        # type: (float, Tuple[int, ...], Tuple[List[float], float, float]) -> Tuple[List[float], float, float]
        """The first allowed swivel at growing offsets on each side of the start's, refined."""
        for b in branches:
            for sign in (1.0, -1.0):
                for off in BESIDE:
                    q, cost, _ = self.point(phi0 + sign * off, b)
                    if cost < INF:
                        run = self.refine(q, phi0 + sign * off, cost, off, b)
                        if run[2] < best[2]:
                            best = run
                        break
        return best

    def narrow(self, best):
        # type: (Tuple[List[float], float, float]) -> Tuple[List[float], float, float]
        """The nearest configuration from the exact intervals' ends and middles, refined."""
        for branch, ivs in enumerate(circle_intervals(self.k, self.c)):
            for lo, hi in ivs:
                for phi in (lo, 0.5 * (lo + hi), hi):
                    q, cost, _ = self.point(phi, branch)
                    if cost < best[2]:
                        best = self.refine(q, phi, cost, 0.5 * (hi - lo), branch)
        return best

    def beat(self, best):
        # type: (Tuple[List[float], float, float]) -> Tuple[List[float], float, float]
        """The answer proved nearest (to BEAT seconds), or bettered until it is (at most BEAT_ROUNDS times).

        :func:`~nao_ik.geometry.scalar.intervals.faster_arcs` gives, in closed form, the swivels whose moves are
        shorter than the answer's by BEAT: none, and no configuration on the circle is nearer (the proof);
        else the search refines from the middle of each (inside the limits and nearer, by construction).
        Only for the joint limits alone (an extra constraint has no closed-form boundaries).
        """
        for _ in range(BEAT_ROUNDS):
            cost = best[2]
            for branch, ivs in enumerate(faster_arcs(self.k, self.c, self.q0, cost - BEAT)):
                for lo, hi in ivs:
                    phi = 0.5 * (lo + hi)
                    q, got, _ = self.point(phi, branch)
                    if got < best[2]:
                        best = self.refine(q, phi, got, 0.5 * (hi - lo), branch)
            if best[2] >= cost:
                break
        return best

    def folds(self, phi0, best):
        # type: (float, Tuple[List[float], float, float]) -> Tuple[List[float], float, float]
        """Try the continuations past the folds near the start's swivel and past the answer's own."""
        best = self.past_fold(best)
        for phi in fold_swivels(self.k, self.c):
            if _gap(phi, phi0) < FOLD_REACH:
                best = self.past_fold(best, phi)
        return best

    def past_fold(self, best, fold=None):
        # type: (Tuple[List[float], float, float], Optional[float]) -> Tuple[List[float], float, float]
        """Refine across a fold: where the two ElbowRoll roots meet, the angles vary as sqrt(phi - phi_f).

        The linear steps in phi crawl there (an unbounded derivative), so the
        search continues in x with phi = phi_f +- x^2, in which the angles are
        smooth, on both branches (they meet at the fold).
        """
        phi = best[1] if fold is None else fold
        p0, p1 = self.both(phi)
        if abs(p0[0][3] - p1[0][3]) > FOLD:
            return best
        for sign in (1.0, -1.0):
            for branch in (0, 1):
                x, radius = FOLD_START, math.sqrt(_TWO_PI / RING)
                qx, cx, _ = self.point(phi + sign * x * x, branch)
                if cx == INF:
                    continue
                for _ in range(2 * STEPS):
                    xd = x + DERIV
                    qd = self.angles(phi + sign * xd * xd, branch)
                    nx = max(x + self.minimax(qx, qd, radius), 0.0)
                    qn, cn, _ = self.point(phi + sign * nx * nx, branch)
                    if cn < cx:
                        x, qx, cx = nx, qn, cn
                    else:
                        radius *= 0.5
                    if radius < 1e-9:
                        break
                if cx < best[2]:
                    best = (qx, phi + sign * x * x, cx)
        return best


