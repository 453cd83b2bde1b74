"""The reachable configuration nearest to a start posture: the ``analytic`` method's rule.

"Nearest" is the time the move takes: ``setAngles`` moves every joint at
its own speed, so a move from q0 to q lasts max_j |q_j - q0_j| / v_j (v_j the
joint's maximum velocity; the fraction of it a caller asks for scales every
joint alike and does not change which configuration is nearest).

Every configuration on the target's elbow circle (:mod:`nao_ik.geometry.swivel`)
is exact, so finding the nearest one is a one-dimensional minimisation of
that move time over the allowed swivels:

1. the move time at the start's own swivel (the start's elbow projected on
   the new circle) and at RING - 1 more swivels evenly around the circle;
2. from the best of them, steps that each minimise the linearised move time
   max_j |a_j + b_j delta| exactly (a convex, piecewise-linear function of
   delta: its minimum is at one of its breakpoints), within a trust region of
   one ring spacing, halved when a step does not improve;
3. a step that leaves the allowed swivels stops at their boundary, found by
   regula falsi (Illinois) on the limits' violation, so the answer can lie
   exactly on a boundary when the limits bind.

Near the start (the start's hand within NEAR of the target, as when a path is
followed) step 1 uses the start's own swivel alone; where that swivel is not
allowed, the whole ring runs too.

One target ends with a proof (:meth:`~nao_ik.geometry.scalar.nearest.Search.beat`):
a move from the start shorter than t seconds keeps every joint within t v_j of
its start, a band that is one more pair of limits per joint, so the swivels
of every shorter move are closed-form intervals
(:func:`nao_ik.geometry.scalar.intervals.faster_arcs`). Empty at the answer's move
time less BEAT (1e-6 s): no configuration on the circle is nearer; else the
search refines from their middles and proves again (at most BEAT_ROUNDS
times; the answer after the last round is the best found, proved or not).
Steps 1-3 only make the first answer good: with the proof they run a coarser
ring (PROVED_RING swivels, one seed), which the proof betters where it
misses; the search alone (RING swivels, two seeds and the near path's
second seed below) can be farther than a 0.5-degree sampling, by up to 0.2 s
on some pairs (``tests/unit/geometry/test_geometry.py``'s FAR_SEEDS). The proof is on the
joint limits alone: the body's clearance (``extra``) has no closed-form
boundaries, and a search within it keeps the full ring and, on small moves,
a second seed: the configuration next to the start that reaches the target
(a few damped least-squares steps from it), at its elbow's swivel and on its
branch.

One target runs in plain Python floats (:mod:`nao_ik.geometry.scalar.nearest`,
the common subset of Python 2.7 and 3 with no numpy: both ElbowRoll branches
from one evaluation, and the folds and the blocked start handled there); many
targets run here, elementwise on numpy arrays (:mod:`nao_ik.kinematics.ops`), each
refinement and boundary step on the rows still moving only, the rows the ring
missed handed to the scalar search. The search's constants live in
``scalar_nearest``. A target with no allowed swivel on the ring is returned
with ``found = False`` for the caller to resolve
(:func:`nao_ik.geometry.scalar.intervals.all_intervals` is exact there).

Cost: most of a batch solve's configuration evaluations are the ring's RING
swivels (refinement and the exact intervals add a few); a coarser ring misses
more of the basins a finer sampling finds. The batch's answers are proved
where the caller gives a start per target (``solve_batch(..., initial=)``):
:mod:`nao_ik.geometry.proof` runs the proof elementwise, and the targets it
finds a shorter move for take the single solve's answer (without the proof,
some pairs would be farther than a 0.5-degree sampling, by up to 0.47 s of
move). From the neutral posture (no
``initial``) the batch keeps its search alone and its speed.
"""

from __future__ import annotations

import contextlib
import math
import threading
from typing import Any, Iterator, NamedTuple, Sequence

import numpy as np

from ..kinematics.chain import chain
from ..kinematics.ops import SCALAR, Ops
from ..model.arm import ArmModel
from ..model.body import MARGIN
from .scalar.intervals import faster_arcs
from .scalar.nearest import NARROW, SEEDS, SLACK
from .scalar.nearest import nearest as nearest_scalar
from .scalar.nearest import nearest_clear as nearest_clear_scalar
from .scalar.search import BOUNDARY, BRACKET, CONVERGED, DERIV, GAIN, RING, STEPS, Search
from .scalar.swivel import arm
from .scalar.swivel import circle as scalar_circle
from .swivel import Circle, at, body_margin, circle, margin_at, swivel_angle, take

INF = float("inf")
#: Every joint's weight 1 s/rad: the move time becomes the largest joint change (:func:`none_closer`).
_UNIT = (1.0, 1.0, 1.0, 1.0, 1.0)
#: A batch's target none of whose sampled swivels is clear is still searched in full where one comes within this
#: much of the body's margin (metres): the clear interval may lie between two samples or between a sample and a
#: joint limit.
NEAR_MISS = 0.005
#: Each thread's last search with the body, of one target (``search``) and of a batch (``batch``, kept for the
#: length of one batch solve: :func:`kept_searches`): a solve asks it twice (the method's start or the continuity rule,
#: then the body check of the answers inside the body), the same model, targets and starts.
_LAST = threading.local()
#: Rows at most this many left in a batch boundary search finish in the scalar one.
HANDOFF = 8


class Nearest(NamedTuple):
    """What :func:`nearest` returns (components: floats or arrays).

    Attributes:
        q: the five joint angles (WristYaw held).
        swivel: the elbow's swivel angle.
        seconds: the move time from the start at full speed, s.
        found: False where no swivel tried was allowed (q is then the least violating one).
        circle: the target's elbow circle.
    """

    q: list
    swivel: Any
    seconds: Any
    found: Any
    circle: Circle


def move_time(model: ArmModel, q: Sequence[Any], q0: Sequence[Any], ops: Ops) -> Any:
    """max_j |q_j - q0_j| / v_j over the five joints, seconds at full speed."""
    out = 0.0
    for j, a, b in zip(model.joints, q, q0):
        out = ops.maximum(out, ops.abs(a - b) * (1.0 / j.max_velocity))
    return out


def none_closer(model: ArmModel, t: Sequence[float], q0: Sequence[float], jump: float) -> bool:
    """Whether no configuration on the target's circle, inside the joint limits, keeps every joint within
    ``jump`` radians of ``q0`` (one target, WristYaw held at q0's).

    The closed-form intervals of :func:`~nao_ik.geometry.scalar.intervals.faster_arcs` with every joint weighted
    alike, about a third of :func:`nearest`'s cost: a caller with an answer can learn that no solution
    changes its joints less without searching for the nearest (exact to SLACK; a single allowed swivel,
    which needs an exact tangency, is left out).
    """
    k = arm(model)
    c = scalar_circle(k, [float(x) for x in t], float(q0[4]))
    return faster_arcs(k, c, [float(x) for x in q0], jump, _UNIT) == ([], [])


def _cost(model: ArmModel, c: Circle, phi: Any, q0: Sequence[Any], ops: Ops, branch: Any) -> tuple:
    """(angles, move time or inf where outside the limits, violation) at swivel phi on an ElbowRoll branch.

    The body's clearance is measured up to its margin: whether a configuration is allowed depends on no more, and
    a violation is only ever compared where it is positive (no swivel allowed) or against NARROW.
    """
    q, m = margin_at(model, c, phi, ops, branch, MARGIN)
    return q, ops.where(m >= -SLACK, move_time(model, q, q0, ops), INF), -m


def nearest(model: ArmModel, t: Sequence[Any], q0: Sequence[Any], ops: Ops) -> Nearest:
    """The allowed configuration on the target's circle with the shortest move from ``q0``.

    Allowed: inside the joint limits and, where the model has a body
    (:attr:`~nao_ik.model.arm.ArmModel.body`), clear of it by its margin. The
    search runs on the limits alone first; only the targets whose answer
    comes within the body's margin are searched again with the body's
    clearance as one more limit (:func:`~nao_ik.geometry.swivel.margin_at`).
    The answer found first is then also the nearest clear one: the clear
    swivels are a subset of the allowed ones. One target goes straight to
    the float search with the body as its extra margin; in a batch, a target
    with no clear swivel among a quick sample
    (:func:`~nao_ik.geometry.sampled.first_clear`), none of them within
    NEAR_MISS of clear, gets no second search: ``found`` False.

    Args:
        model: the arm.
        t: the hand target (three components).
        q0: the start posture (five components, inside the limits); WristYaw is held.
        ops: the backend.

    Returns:
        :class:`Nearest`.
    """
    if not model.body:
        got = _recall(model, _rows(t, q0)) if ops is not SCALAR and getattr(_LAST, "batch", None) else None
        return _nearest(model, t, q0, ops) if got is None else got
    if ops is SCALAR:
        # One target: the float search with the body as its extra margin is cheaper than a sampled screen first
        # (the robot runtime runs the same function).
        key = (tuple(float(x) for x in t), tuple(float(x) for x in q0))
        last = getattr(_LAST, "search", None)
        if last is None or last[0] is not model or last[1] != key:
            (q, phi, cost, found, _, _), _ = nearest_clear_scalar(model, t, q0, _body_extra(model))
            last = _LAST.search = (model, key, (tuple(q), phi, cost, found))
        q, phi, cost, found = last[2]
        return Nearest(list(q), phi, cost, found, circle(model, t, q0[4], ops) if not found else None)
    key = _rows(t, q0)
    got = _recall(model, key)
    if got is None:
        got = _nearest_clear(model, t, q0, ops, key)
        _keep(model, key, got)
    return got


def _rows(t: Sequence[Any], q0: Sequence[Any]) -> np.ndarray:
    """(N, 8): each row's target and start, the key of :func:`_recall`."""
    n = max(np.shape(x)[0] if np.ndim(x) else 1 for x in (*t, *q0))
    return np.stack([np.broadcast_to(np.asarray(x, dtype=float), (n,)) for x in (*t, *q0)], axis=1)


@contextlib.contextmanager
def kept_searches() -> Iterator[None]:
    """Within it, this thread's batch searches are kept (:func:`_recall`): one batch solve, whose body check and
    reasons ask again what its method's start searched. Nothing is kept outside it, so that a later batch, or a
    benchmark's next method on the same targets, searches for itself."""
    _LAST.batch = {}
    try:
        yield
    finally:
        _LAST.batch = None


def _keep(model: ArmModel, key: np.ndarray, got: Nearest) -> None:
    """Keep a batch search of ``model`` (with the body, or the limits alone it starts from) for :func:`_recall`,
    within :func:`kept_searches`."""
    kept = getattr(_LAST, "batch", None)
    if kept is not None:  # a copy: the caller may change its arrays in place
        own = Nearest([np.array(x) for x in got.q], *(np.array(x) for x in (got.swivel, got.seconds, got.found)),
                      got.circle)  # fmt: skip
        kept[id(model)] = (model, key, own, None)


def _recall(model: ArmModel, key: np.ndarray) -> Nearest | None:
    """This thread's last batch search of ``model``, at the rows whose target and start are ``key``'s (N, 8);
    None unless it answered every one of them. The body check and its reasons then keep the answers the method's
    start found. A fresh search of fewer rows may end elsewhere where two configurations are equally near: its
    last boundary steps run in floats where few rows are left (seen: 1e-3 rad apart, their move times 8e-7 s
    apart)."""
    kept = getattr(_LAST, "batch", None)
    last = kept.get(id(model)) if kept else None
    if last is None or last[0] is not model:
        return None
    if last[3] is None:  # the rows by their bytes, built at the first recall
        last = kept[id(model)] = (*last[:3], {r.tobytes(): i for i, r in enumerate(last[1])})
    index = []
    for r in key:  # the first row it did not search ends the look
        i = last[3].get(r.tobytes())
        if i is None:
            return None
        index.append(i)
    idx = np.asarray(index, dtype=np.int64)
    got = last[2]
    size = last[1].shape[0]

    def pick(x: Any) -> Any:
        return np.broadcast_to(x, (size,))[idx]

    return Nearest([pick(x) for x in got.q], pick(got.swivel), pick(got.seconds), pick(got.found),
                   take(got.circle, idx))  # fmt: skip


def _nearest_clear(model: ArmModel, t: Sequence[Any], q0: Sequence[Any], ops: Ops, key: np.ndarray) -> Nearest:
    """:func:`nearest` with the body, arrays: the limits alone first (kept too: the reasons ask it), the body's
    margin only where it binds."""
    from .sampled import first_clear

    free = _nearest(model.bodiless(), t, q0, ops)
    _keep(model.bodiless(), key, free)
    hit = np.asarray(free.found & (body_margin(model, free.q, ops, MARGIN) < -SLACK))  # only whether it holds
    if not hit.any():
        return free
    n = hit.shape[0]
    rows = np.flatnonzero(hit)
    # Targets with no clear sampled swivel and none within NEAR_MISS of clear: no full search (see
    # nao_ik.geometry.sampled). A clear interval narrower than the samples' spacing (often where it ends at a
    # joint limit) leaves its neighbours just short of the margin: the full search finds it.
    pts = np.stack([np.broadcast_to(x, (n,))[rows] for x in t], axis=1)
    ok, _, _, best = first_clear(model, pts, np.broadcast_to(q0[4], (n,))[rows], floor=MARGIN - NEAR_MISS)
    some = ok | (best >= MARGIN - NEAR_MISS)
    blocked = rows[~some]
    rows = rows[some]
    if blocked.size:
        found_all = np.array(np.broadcast_to(free.found, (n,)))
        found_all[blocked] = False
        free = free._replace(found=found_all)
    if not rows.size:
        return free

    def pick(x: Any) -> Any:
        return np.broadcast_to(x, (n,))[rows]

    sub = _nearest(model, [pick(x) for x in t], [pick(x) for x in q0], ops)
    q = [np.array(np.broadcast_to(x, (n,))) for x in free.q]
    phi, sec, found = (np.array(np.broadcast_to(x, (n,))) for x in (free.swivel, free.seconds, free.found))
    for j in range(5):
        q[j][rows] = np.broadcast_to(sub.q[j], rows.shape)
    for whole, part in ((phi, sub.swivel), (sec, sub.seconds), (found, sub.found)):
        whole[rows] = np.broadcast_to(part, rows.shape)
    return Nearest(q, phi, sec, found, free.circle)


def _nearest(model: ArmModel, t: Sequence[Any], q0: Sequence[Any], ops: Ops) -> Nearest:
    """:func:`nearest` on the limits of ``model`` (and its body, if it has one, at every swivel tried)."""
    if ops is SCALAR:
        extra = _body_extra(model)
        q, phi, cost, found, _, _ = nearest_scalar(model, t, q0, extra)
        return Nearest(q, phi, cost, found, circle(model, t, q0[4], ops) if not found else None)
    c = circle(model, t, q0[4], ops)
    ch = chain(model, q0, ops)
    phi0 = swivel_angle(model, c, ch.origins[2], ops)
    spacing = 2.0 * math.pi / RING
    # Both ElbowRoll branches where the second can be inside the limits.
    branches = (0, 1) if ops.any(second_branch(model, c, ops)) else (0,)
    ring = [[_cost(model, c, phi0 + k * spacing, q0, ops, b) for k in range(RING)] for b in branches]
    best = None
    for q, phi, cost, branch in [s for b, r in zip(branches, ring) for s in _seeds(r, phi0, spacing, ops, b)]:
        run = _refine(model, c, q0, q, phi, cost, 0.5 * spacing, ops, branch)
        if best is None:
            best = run
        else:
            take = run[2] < best[2]
            best = (ops.where_list(take, run[0], best[0]), ops.where(take, run[1], best[1]),
                    ops.where(take, run[2], best[2]))  # fmt: skip
    q, phi, cost = best
    # A branch whose ring has no allowed swivel may still have an allowed
    # interval narrower than the ring's spacing (near a limit, or the second
    # branch's thin region): where a ring point was close to allowed, start
    # from the exact intervals' ends and middles too (the scalar search, per target).
    close = [_lowest([x[2] for x in r], ops) < NARROW for r in ring]
    missed = close[0] & (cost == INF)
    if len(ring) > 1:
        missed = missed | ((cost == INF) | close[1]) & (ring[1][0][1] == INF)
    missed = c.reachable & missed
    if ops.any(missed):
        q, phi, cost = _narrow(model, t, q0, (q, phi, cost), missed)
    return Nearest(q, phi, cost, cost < INF, c)


def second_branch(model: ArmModel, c: Circle, ops: Ops) -> Any:
    """True where the second ElbowRoll root can lie inside the limits (and the two roots can meet).

    The roots are -a - s and a - s (a in [0, pi], s the hand offset's angle in
    the forearm, nonzero only with WristYaw turned); the second one's range
    reaches the limits only when s exceeds ElbowRoll's margin from straight.
    """
    s = ops.atan2(c.f[1], c.f[0])
    lo, hi = model.lower[3], model.upper[3]
    return (hi >= -s - 1e-12) if lo + hi < 0.0 else (lo <= -s + 1e-12)


def _lowest(values: list, ops: Ops) -> Any:
    out = values[0]
    for v in values[1:]:
        out = ops.minimum(out, v)
    return out


def _narrow(model: ArmModel, t: Sequence[Any], q0: Sequence[Any], best: tuple, rows: np.ndarray) -> tuple:
    """The nearest configuration from the exact intervals, for the targets (rows) the ring may have missed (the
    ring's answer kept where it is nearer)."""
    k = arm(model)
    extra = _body_extra(model)
    q = [np.array(np.broadcast_to(x, rows.shape)) for x in best[0]]
    phi, cost = (np.array(np.broadcast_to(x, rows.shape)) for x in best[1:])
    for i in np.flatnonzero(rows):
        ti = [float(x[i]) for x in t]
        q0i = [float(np.broadcast_to(x, rows.shape)[i]) for x in q0]
        had = ([float(x[i]) for x in q], float(phi[i]), float(cost[i]))  # the ring's answer, kept where nearer
        qi, phi[i], cost[i] = Search(k, scalar_circle(k, ti, q0i[4]), q0i, extra).narrow(had)
        for j in range(5):
            q[j][i] = qi[j]
    return q, phi, cost


def _body_extra(model: ArmModel) -> Any:
    """The float search's extra margin: the body's, as :func:`~nao_ik.geometry.swivel.margin_at` has it; or None."""
    return (lambda q: body_margin(model, q, SCALAR)) if model.body else None


def _seeds(ring: list, phi0: Any, spacing: float, ops: Ops, branch: int) -> list:
    """Up to SEEDS starts (angles, swivel, cost): the ring's best local minima, or its least violating point.

    Arrays only: one target goes to the float search (:func:`nao_ik.geometry.scalar.nearest._seeds`).
    """
    costs = np.stack([np.broadcast_to(r[1], phi0.shape) for r in ring], axis=1)
    vios = np.stack([np.broadcast_to(r[2], phi0.shape) for r in ring], axis=1)
    qs = np.stack([np.stack(np.broadcast_arrays(*r[0]), axis=1) for r in ring], axis=1)  # (N, K, 5)
    local = (costs <= np.roll(costs, 1, axis=1)) & (costs <= np.roll(costs, -1, axis=1)) & (costs < INF)
    order = np.argsort(np.where(local, costs, INF), axis=1, kind="stable")[:, :SEEDS]
    none = ~np.isfinite(costs).any(axis=1)
    order[none, 0] = np.argmin(vios[none], axis=1)
    rows = np.arange(costs.shape[0])
    out = []
    for s in range(order.shape[1]):
        i = order[:, s]
        cost = costs[rows, i]
        if s and not np.isfinite(cost).any():
            break
        q = qs[rows, i]
        out.append(([q[:, j] for j in range(5)], phi0 + i * spacing, cost, branch))
    return out


def _refine(
    model: ArmModel, c: Circle, q0: Sequence[Any], q: list, phi: Any, cost: Any, radius: float, ops: Ops, branch: int
):
    """Linear-minimax steps from an allowed start (steps 2 and 3 of the module docstring), arrays.

    Each step works on the rows still moving only: a row leaves once its trust
    region is below 1e-9 rad or its step below CONVERGED (as the scalar search).
    """
    n = np.shape(phi)[0]
    q = [np.array(np.broadcast_to(x, (n,)), dtype=float) for x in q]
    phi, cost = (np.array(np.broadcast_to(x, (n,)), dtype=float) for x in (phi, cost))
    q0 = [np.broadcast_to(x, (n,)) for x in q0]
    radius = np.full(n, float(radius))
    active = np.flatnonzero(cost < INF)
    for _ in range(STEPS):
        active = active[radius[active] > 1e-9]
        if not active.size:
            break
        cr, q0r, pa = take(c, active), [x[active] for x in q0], phi[active]
        qd, _ = at(model, cr, pa + DERIV, ops, branch)
        delta, predicted = _minimax_step(model, [x[active] for x in q], qd, q0r, radius[active], ops)
        moving = (np.abs(delta) >= CONVERGED) & (cost[active] - predicted >= GAIN)
        active, delta, pa = active[moving], delta[moving], pa[moving]
        if not active.size:
            break
        cr, q0r = take(c, active), [x[active] for x in q0]
        step = pa + delta
        q_new, cost_new, _ = _cost(model, cr, step, q0r, ops, branch)
        q_new = [np.array(np.broadcast_to(x, active.shape)) for x in q_new]
        cost_new = np.array(np.broadcast_to(cost_new, active.shape))
        outside = cost_new == INF
        if outside.any():  # only the rows that left the allowed swivels
            rows = np.flatnonzero(outside)
            cb, q0b = take(cr, rows), [x[rows] for x in q0r]
            phi_b = _boundary(model, cb, pa[rows], step[rows], ops, branch)
            qb, cost_b, _ = _cost(model, cb, phi_b, q0b, ops, branch)
            for j in range(5):
                q_new[j][rows] = qb[j]
            cost_new[rows], step[rows] = cost_b, phi_b
        better = cost_new < cost[active]
        # Standing on the boundary (it gave the swivel back): every shorter step leaves it too.
        stuck = outside & (np.abs(step - pa) < BRACKET) & ~better
        radius[active[stuck]] = 0.0
        rows = active[better]
        for j in range(5):
            q[j][rows] = q_new[j][better]
        cost[rows], phi[rows] = cost_new[better], step[better]
        worse = active[~better]  # halve the step that failed (a shorter radius alone could repeat it)
        radius[worse] = 0.5 * np.minimum(radius[worse], np.abs(delta[~better]))
    return q, phi, cost


def _minimax_step(model: ArmModel, q: Sequence[Any], qd: Sequence[Any], q0: Sequence[Any], radius: Any, ops: Ops):
    """The delta in [-radius, radius] minimising max_j |a_j + b_j delta| (the linearised move time), and that minimum.

    The function is convex and piecewise linear in delta; its minimum is at a
    breakpoint: where one term is zero, where two terms are equal in size, or
    at the trust region's ends.
    """
    a, b = [], []
    for j in range(4):
        v = 1.0 / model.joints[j].max_velocity
        a.append((q[j] - q0[j]) * v)
        b.append((qd[j] - q[j]) * (v / DERIV))
    cands = [-radius, radius]
    for j in range(4):
        cands.append(-a[j] / ops.where(ops.abs(b[j]) > 1e-12, b[j], 1e-12))
        for k in range(j + 1, 4):
            for sign in (1.0, -1.0):
                den = b[j] - sign * b[k]
                cands.append((sign * a[k] - a[j]) / ops.where(ops.abs(den) > 1e-12, den, 1e-12))
    best_d, best_f = 0.0 * radius, INF
    for d in cands:
        d = ops.minimum(ops.maximum(d, -radius), radius)
        f = 0.0
        for j in range(4):
            f = ops.maximum(f, ops.abs(a[j] + b[j] * d))
        take = f < best_f
        best_d, best_f = ops.where(take, d, best_d), ops.where(take, f, best_f)
    return best_d, best_f


def _boundary(model: ArmModel, c: Circle, inside: Any, outside: Any, ops: Ops, branch: int) -> Any:
    """The last allowed swivel from ``inside`` toward ``outside``: Illinois on the limits' margin (arrays).

    A row stops once its bracket is narrower than BRACKET or its point is on
    the boundary to the slack's resolution (as the scalar search).
    """
    lo, hi = np.array(inside, dtype=float), np.array(outside, dtype=float)
    f_lo = np.array(np.broadcast_to(margin_at(model, c, lo, ops, branch)[1] + SLACK, lo.shape))
    f_hi = np.array(np.broadcast_to(margin_at(model, c, hi, ops, branch)[1] + SLACK, lo.shape))
    side = np.zeros(lo.shape)
    active = np.arange(lo.shape[0])
    for _ in range(BOUNDARY):
        active = active[np.abs(hi[active] - lo[active]) >= BRACKET]
        if active.size <= HANDOFF:  # a few slow rows: numpy's per-call cost would dominate
            k = arm(model)
            extra = _body_extra(model)
            for i in active:
                ci = scalar_circle(k, [float(np.broadcast_to(x, lo.shape)[i]) for x in c.hand],
                                   float(np.broadcast_to(c.wrist, lo.shape)[i]))  # fmt: skip
                lo[i] = Search(k, ci, [0.0] * 5, extra).boundary(float(lo[i]), float(hi[i]), branch)
            break
        la, ha, fl, fh = lo[active], hi[active], f_lo[active], f_hi[active]
        den = fl - fh
        x = la + fl * (ha - la) / np.where(den != 0.0, den, 1.0)
        # Keep the secant strictly inside the bracket (else bisect).
        x = np.where((x - la) * (x - ha) < 0.0, x, 0.5 * (la + ha))
        fx = np.broadcast_to(margin_at(model, take(c, active), x, ops, branch)[1] + SLACK, x.shape)
        ok = fx >= 0.0
        sa = side[active]
        # Illinois: halve the value kept at the end that did not move twice in a row.
        f_hi[active] = np.where(ok, np.where(sa > 0.0, 0.5 * fh, fh), fx)
        f_lo[active] = np.where(ok, fx, np.where(sa < 0.0, 0.5 * fl, fl))
        lo[active], hi[active] = np.where(ok, x, la), np.where(ok, ha, x)
        side[active] = np.where(ok, 1.0, -1.0)
        active = active[~(ok & (fx < SLACK))]  # on the boundary to the slack's resolution
    return lo
