# -*- coding: utf-8 -*-
# ruff: noqa: UP004, UP009, UP010  (the common subset of Python 2.7 and 3, see the docstring)
"""The nearest exact configuration for one target, in plain Python floats.

The search of :mod:`nao_ik.geometry.nearest` (read its docstring: a ring of
swivels on both ElbowRoll branches, linear-minimax refinement, the limits'
boundaries by regula falsi, the exact intervals where the ring is too
coarse, the folds where the branches meet) for a single target, on
:mod:`nao_ik.geometry.scalar.swivel`: both branches of a swivel from one
evaluation, the move time and the limits' margin fused into it. On the joint
limits alone it ends with a proof that no configuration on the circle is
nearer (:meth:`Search.beat`), bettering its answer until there is none.

An extra per-swivel constraint plugs in as ``extra``: a function of the five
joint angles returning a margin (radians or metres, negative = forbidden),
combined with the joint limits' margin (the body's clearance). With
it the answer is the nearest configuration where both margins are >= 0.

Written in the common subset of Python 2.7 and 3 with no numpy.

The search itself is :class:`nao_ik.geometry.scalar.search.Search`.
"""

from __future__ import division

import math

from .search import DERIV, RING, Search
from .swivel import INF, SLACK, arm, circle, elbow_point, hand_point, swivel_angle
from .swivel import second_branch as _second_branch

try:  # the type comments' names (typing is not in every Python 2.7)
    from typing import Any, Callable, List, Optional, Sequence, Tuple  # noqa: F401

    from .swivel import Arm, Circle  # noqa: F401

    Point = Tuple[List[float], float, float]  # angles, move time (INF: not allowed), violation
except ImportError:  # pragma: no cover
    pass

#: Best local minima of the ring refined (step 2).
SEEDS = 2
#: The ring and its seeds where the search ends with its proof (:meth:`Search.beat`, the joint limits alone):
#: the proof finds what a coarser ring misses, at the cost of one more round there.
PROVED_RING = 8
PROVED_SEEDS = 1
#: Start's hand within this distance of the target (metres): local search only.
NEAR = 0.01
#: A ring point this close to the limits (radians) may neighbour a narrow allowed interval.
NARROW = 0.3
#: The near path's extra seed (:func:`_project`): damped least-squares steps from the start toward the target
#: (at most PROJECT_STEPS; damping |e|^2 + PROJECT_DAMPING m^2 as the dls solver's; done within PROJECT_DONE
#: metres, kept within PROJECT_TOL), then a refinement of the circle's configuration at its elbow within
#: SEED_RADIUS (:mod:`~nao_ik.geometry.scalar.search`) radians of swivel.
PROJECT_STEPS = 30
PROJECT_DAMPING = 1e-6
PROJECT_DONE = 1e-7
PROJECT_TOL = 1e-4


def _ring(search, rings, phi0, spacing, first, stop):
    # type: (Search, Tuple[List[Point], ...], float, float, int, int) -> None
    """Append the points at swivels phi0 + i spacing, i in [first, stop), to each branch's ring (one or two)."""
    if len(rings) == 2:
        ring0, ring1 = rings
        both = search.both
        for i in range(first, stop):
            p0, p1 = both(phi0 + i * spacing)
            ring0.append(p0)
            ring1.append(p1)
    else:
        ring0 = rings[0]
        point = search.point
        for i in range(first, stop):
            ring0.append(point(phi0 + i * spacing, 0))


def _project(k, t, q0):
    # type: (Arm, Sequence[float], Sequence[float]) -> Optional[List[float]]
    """The configuration next to ``q0`` that puts the hand on ``t``: damped least squares on the first four
    joints from ``q0`` (WristYaw held, the Jacobian by forward differences of the float kinematics, each step
    kept within the limits); None where it does not get within PROJECT_TOL.

    Near a fold or a limit the start's own swivel can lead the search to a far solution on a small move; this
    configuration's swivel and branch lie next to the start. Used where no proof follows (the search within
    an extra constraint).
    """
    q = [q0[0], q0[1], q0[2], q0[3], q0[4]]
    lo, hi = k.lo, k.hi
    h = hand_point(k, q)
    done2 = PROJECT_DONE * PROJECT_DONE
    for _ in range(PROJECT_STEPS):
        e0, e1, e2 = t[0] - h[0], t[1] - h[1], t[2] - h[2]
        err2 = e0 * e0 + e1 * e1 + e2 * e2
        if err2 <= done2:
            return q
        lam = err2 + PROJECT_DAMPING
        cols = []
        a00 = a11 = a22 = lam
        a01 = a02 = a12 = 0.0
        for j in range(4):
            qd = list(q)
            qd[j] += DERIV
            hd = hand_point(k, qd)
            c0, c1, c2 = (hd[0] - h[0]) / DERIV, (hd[1] - h[1]) / DERIV, (hd[2] - h[2]) / DERIV
            cols.append((c0, c1, c2))
            a00 += c0 * c0
            a11 += c1 * c1
            a22 += c2 * c2
            a01 += c0 * c1
            a02 += c0 * c2
            a12 += c1 * c2
        # y = (J J^T + damping I)^-1 e (symmetric 3 x 3, by its adjugate), then dq = J^T y.
        m00 = a11 * a22 - a12 * a12
        m01 = a02 * a12 - a01 * a22
        m02 = a01 * a12 - a02 * a11
        det = a00 * m00 + a01 * m01 + a02 * m02
        if det == 0.0:
            return None
        m11 = a00 * a22 - a02 * a02
        m12 = a01 * a02 - a00 * a12
        m22 = a00 * a11 - a01 * a01
        y0 = (m00 * e0 + m01 * e1 + m02 * e2) / det
        y1 = (m01 * e0 + m11 * e1 + m12 * e2) / det
        y2 = (m02 * e0 + m12 * e1 + m22 * e2) / det
        for j in range(4):  # within the limits, as the solvers' steps
            x = q[j] + cols[j][0] * y0 + cols[j][1] * y1 + cols[j][2] * y2
            q[j] = lo[j] if x < lo[j] else hi[j] if x > hi[j] else x
        h = hand_point(k, q)
    e0, e1, e2 = t[0] - h[0], t[1] - h[1], t[2] - h[2]
    return q if e0 * e0 + e1 * e1 + e2 * e2 <= PROJECT_TOL * PROJECT_TOL else None


def _seeds(ring, phi0, spacing, branch, most):
    # type: (List[Point], float, float, int, int) -> List[Tuple[List[float], float, float, int]]
    """Up to ``most`` starts (angles, swivel, cost, branch): the ring's best local minima, or its least violating
    point."""
    k = len(ring)
    costs = [r[1] for r in ring]
    if all(cst == INF for cst in costs):
        i = min(range(k), key=lambda i: ring[i][2])
        return [(ring[i][0], phi0 + i * spacing, INF, branch)]
    minima = [i for i in range(k) if costs[i] < INF and costs[i] <= costs[i - 1] and costs[i] <= costs[(i + 1) % k]]
    best = sorted(minima, key=costs.__getitem__)[:most]
    return [(ring[i][0], phi0 + i * spacing, costs[i], branch) for i in best]


def nearest(model, t, q0, extra=None):
    # type: (Any, Sequence[float], Sequence[float], Optional[Callable[[List[float]], float]]) -> Tuple[List[float], float, float, bool, Circle, int]
    """The allowed configuration on the target's circle with the shortest move from ``q0`` (floats).

    Args:
        model: the arm (an :class:`~nao_ik.model.arm.ArmModel`).
        t: the hand target (three floats).
        q0: the start posture (five floats, inside the limits); WristYaw is held.
        extra: an optional per-configuration margin (negative = forbidden), see the module docstring.

    Returns:
        (angles (a list of five floats), swivel, move time in seconds at full speed (INF where nothing was
        found), found, the :class:`~nao_ik.geometry.scalar.swivel.Circle`, evaluations made).
    """
    k = arm(model)
    c = circle(k, t, q0[4])
    search = Search(k, c, q0, extra)
    phi0 = swivel_angle(c, elbow_point(k, q0[0], q0[1]), k.s)
    proved = extra is None  # on the limits alone the search ends with the proof (Search.beat): a coarser ring
    ring, most = (PROVED_RING, PROVED_SEEDS) if proved else (RING, SEEDS)
    spacing = 2.0 * math.pi / ring
    count = ring
    h = hand_point(k, q0)
    if (t[0] - h[0]) ** 2 + (t[1] - h[1]) ** 2 + (t[2] - h[2]) ** 2 <= NEAR * NEAR:
        count = 1
    # Both ElbowRoll branches where the second can be inside the limits.
    two = _second_branch(k, c)
    branches = (0, 1) if two else (0,)
    rings = ([], []) if two else ([],)
    _ring(search, rings, phi0, spacing, 0, count)
    blocked = all(r[0][1] == INF for r in rings)  # the start's own swivel is not allowed
    beside_start = None
    if count == 1 and blocked:
        # Near the start but its swivel is not allowed (the start sits on a limit, or past a fold): the allowed
        # set's boundaries nearest the start's swivel. Near a fold the angles vary as the square root of the
        # swivel, so the nearest swivel need not be the nearest move: the whole ring runs too, and the nearer
        # answer counts (an answer 13x farther than a clear solution was seen on the continuity protocol).
        beside_start = search.nearest_boundary(phi0, branches)
        if extra is not None:
            beside_start = search.beside(phi0, branches, beside_start)
        if beside_start[2] < INF:
            beside_start = search.past_fold(beside_start)
        _ring(search, rings, phi0, spacing, 1, ring)
    best = None
    for b in branches:
        for q, phi, cost, branch in _seeds(rings[b], phi0, spacing, b, most):
            run = search.refine(q, phi, cost, 0.5 * spacing, branch)
            if best is None or run[2] < best[2]:
                best = run
    if beside_start is not None and beside_start[2] < best[2]:
        best = beside_start
    # A branch whose ring has no allowed swivel may still have an allowed interval narrower than the ring's
    # spacing (near a limit, or the second branch's thin region): where a ring point was close to allowed,
    # start from the exact intervals' ends and middles too.
    close = [min([x[2] for x in r]) < NARROW for r in rings]
    missed = close[0] and best[2] == INF
    if two:
        missed = missed or ((best[2] == INF or close[1]) and rings[1][0][1] == INF)
    if c.reachable and (missed or blocked or (proved and best[2] == INF)):
        # Also where the start's swivel is not allowed: the nearest may lie at the end of an interval narrower
        # than the ring's spacing next to it. And wherever the proved path's coarse ring found nothing: the
        # proof needs an answer to start from, and the exact intervals have one if any exists.
        best = search.narrow(best)
    if two:  # folds are where the two branches meet
        best = search.folds(phi0, best)
    if proved:  # the proof, bettering the answer where it fails
        if best[2] < INF:
            best = search.beat(best)
    elif count == 1 and c.reachable:  # a small move: also from the configuration next to the start
        seed = _project(k, t, q0)
        if seed is not None:
            best = search.seeded(seed, best)
    q, phi, cost = best
    return q, phi, cost, cost < INF, c, search.evaluations


def nearest_clear(model, t, q0, extra):
    # type: (Any, Sequence[float], Sequence[float], Optional[Callable[[List[float]], float]]) -> Tuple[Tuple[Any, ...], Optional[List[float]]]
    """:func:`nearest` within an extra constraint (the body), the limits' answer first.

    The nearest on the joint limits alone; where that answer's extra margin is below -SLACK, the
    search again with ``extra`` (whose answer is then also the nearest allowed one: the allowed
    swivels are a subset of the limits'). The library's scalar path
    (:func:`nao_ik.geometry.nearest.nearest` with a body) and the robot runtime run this.

    Args:
        model: the arm.
        t: the hand target (three floats).
        q0: the start posture (five floats, inside the limits).
        extra: the constraint's margin of five joint angles (negative = forbidden), or None.

    Returns:
        (:func:`nearest`'s tuple, the limits-only answer's angles where the second search ran, else None).
    """
    got = nearest(model, t, q0)
    if extra is None or not got[3] or extra(got[0]) >= -SLACK:
        return got, None
    return nearest(model, t, q0, extra), got[0]
