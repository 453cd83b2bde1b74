"""A known path planned whole: the elbow's swivel and ElbowRoll root at every point, chosen for the whole path.

Following a path point by point from the previous answer (:mod:`nao_ik.recipes.track`,
the service's ``trackPath``) cannot see ahead: the arm takes the nearest
solution of each point, walks onto a part of the solution set that ends at a
limit, a fold or the body, and must swing across in one step. When the whole
path is known before the first command, the choice can be made for all of it.

The solution set of a hand point with WristYaw held is the elbow's circle
(:mod:`nao_ik.geometry.swivel`): a swivel angle and one of two ElbowRoll roots
give the configuration. The joint limits leave some arcs of it, in closed form
(:func:`nao_ik.geometry.proof.arcs`: every swivel where a joint meets a limit,
and the *folds*, where the two roots meet: there the configuration is the same
on both, the only place where a motion changes root continuously). Along each
allowed arc the configuration is a continuous curve in joint space; the body
cuts pieces out of it. The plan picks one allowed, clear configuration per
point so that the largest step between consecutive points, in move time (max
over joints of |dq| / maximum velocity, as
:func:`nao_ik.geometry.nearest.move_time`), is as small as it can be; among
those plans the first configuration nearest ``initial``, then the smallest sum
of the squared step times.

Method, and why it finds that plan:

1. *States that follow the curve.* Each point's allowed arcs, per root, are
   sampled at their ends (limits and folds, exact) and on a swivel grid
   (GRID a turn), and every piece whose two ends are more than DELTA rad
   apart (largest joint change) is halved, DEPTH times at most: near a fold
   the angles change as the square root of the swivel's distance, and the
   halving follows them there. So every configuration of the allowed set is
   within DELTA / 2 of a state of its point (to the depth's cap). A
   continuous motion along the path then has, at every point, a state within
   DELTA / 2, and the plan through those states steps at most DELTA more
   than the motion: the optimum over the states is within DELTA (in radians;
   DELTA / the slowest joint's velocity in move time) of the optimum over
   every motion, the jump-free one included wherever one exists.
2. *Bottleneck, first step, then sum.* The best plan over the states is a
   path in a layered graph, every state of a point joined to every state of
   the next (the step's move time): one backward pass gives each first state
   the smallest largest step of a plan from it; the first state is the one
   nearest ``initial`` among those within TIE of the optimum B (the states'
   own resolution: plans closer than that to the best are as good as it, and
   the step from ``initial`` counts: a start already on the path starts the
   plan, not a far configuration a hair better), and a forward pass over the
   steps within that first state's own optimum gives the smallest sum of
   squares. Exact on the states (a single pass on (max, sum) pairs would not
   be: the principle of optimality does not hold for that order). Dense
   transitions (every state of a layer to every state of the next): a forced
   jump can be anywhere, and the programme puts it where it is smallest.
3. *Coarse, then filled.* The graph's layers are points the hand reaches
   COARSE apart along the path (every point of a coarse path; at most
   COARSE_LAYERS of them), so a long dense path costs about what a short one
   does; a step across k points costs its move time / k (the points between
   share it evenly). Between two planned layers on the same root the swivel
   is interpolated by the point's place between them, or, where that swivel
   is outside the limits, the point's nearest allowed swivel (along a limit,
   the limit's; from the arcs in closed form): a continuous motion where
   every configuration is inside the limits, clear, and no step more than
   DELTA beyond its even share. Where not (a root change at a fold, the body
   in the way), the points between are planned as in 1-2 with both ends
   fixed, on states four times finer (DELTA / 4: those steps are small).
   Via points (consecutive points farther apart than DENSE: the hand's way
   between them is not given) are layers, each one: nothing is filled
   across a via step, and its length does not count along the path. No
   fill spans more than BATCH points (a path of thousands of points within a
   few millimetres has a layer every BATCH of them).
4. *The body, lazily* (as a lazy roadmap): the plan is made on the limits
   alone; its configurations are checked (clearance >= MARGIN); where a chosen
   one is not clear, every state of its layer and the NEAR layers either side
   is checked, the blocked ones removed, and the plan made again, ROUNDS times
   at most (then every state is checked). Most states are never checked: the
   plan's own are, and those near the body. Each step's motion (the joint-space
   box between its two configurations, every setAngles profile) must keep
   SWEEP_MARGIN: a bound for all steps at once (the clearance at the box's
   centre less how far the links can be from there,
   :func:`nao_ik.geometry.scalar.clearance.box_growth`), then the
   certification (:func:`nao_ik.geometry.sweep.sweep`) where the bound does not settle
   it. A step not certified costs BLOCKED more in the programme, which is
   made again (SWEEP_ROUNDS times at most): it stays only where every other
   plan is worse. Each distinct motion (its two configurations, bit for bit)
   is certified once for the plan, its rounds and its jumps.

Points nearer or farther from the shoulder than the elbow's limits allow are
planned at the point toward them at the nearest distance allowed: where it has
an allowed swivel, that is the closest attainable point
(:func:`nao_ik.geometry.closest.closest`), so the arm follows the reach's
boundary continuously, ``reached`` False. Points with no allowed, clear state
even so (inside the body, or only reached through it) are skipped by the
programme (the states on either side are joined directly) and answered as
``solve`` answers them from the configuration before: the closest attainable
clear pose, ``reached`` False.

*Jumps*, one definition (:func:`jumps`, used by the plan, its tests and
``nao-ik bench --paths``): a step is a jump when its largest joint change is
more than SMOOTH rad and no continuous motion along the path joins its two
configurations: no chain of configurations of points on the hand's segment
between them, inside the limits and clear, with every link at most SMOOTH.
The chain tried first is the swivel interpolated between the two
configurations (one root) along the segment cut into ceil(change / (SMOOTH -
DELTA)) pieces; else the one planned as in 1-2 with both ends fixed on those
pieces (at most PIECES), then on four times as many. A continuous motion's
chain passes that test (its links are within DELTA of the motion's, which
are at most SMOOTH - DELTA); a jump needs one link across the gap it jumps.
A step into or out of a point not reached is a jump when larger than SMOOTH
too, and a step whose motion is not certified clear of the body always is.
A large step that is continuous (the arm sweeping along the solution set
while the hand moves little, as near a singularity) is no jump: ``steps``
and ``worst`` report its size. The tests and the benchmark sample their
Cartesian paths every 3 mm or closer, where a continuous motion's steps in
front of the chest are 0.02-0.04 rad, below SMOOTH.

*Cost.* A path that comes back to its places costs what its distinct places
and motions do: a point repeated bit for bit is sampled once, layers of the
same states share their step costs, and a motion is certified once (2000
points alternating between two places: about a second, most of it the
programme's passes). Memory grows with the layers, never with their square:
each layer's states (at most about 270 at DELTA, some 80 bytes each with the
programme's copies: at most about 45 MB for 2000 via points), the step costs
kept between the programme's two passes (at most KEPT, 16 MB; the others are
built again), and working arrays for BATCH points' states or CHECKS states'
clearances at a time (about 25 and 10 MB; a fill's finer states: at most
BATCH points' at DELTA / 4, about 30 MB): under 100 MB for any path of up to
2000 points (measured: 40-60 MB for 2000 via points, 20 MB for a dense path,
70 MB for 2000 points within 5 cm each of whose fills is planned whole).

Limits of the argument: the states are within DELTA of every allowed
configuration only to the halving's depth and where the midpoint of a piece
is no farther from its ends than they are from each other (true of the smooth
arcs; the folds are exact states); an allowed arc narrower than rounding is
missed; the jump test resolves gaps larger than SMOOTH - DELTA.

The code: step 1 in :mod:`nao_ik.recipes.path_states`, steps 2 and 4 in :mod:`nao_ik.recipes.path_programme`;
here the whole (the coarse layers and their fill, step 3, and the steps' certification) and the jump test.
"""

from __future__ import annotations

import math
import time
from typing import NamedTuple, Sequence

import numpy as np

from ..api.position import ArmLike, resolve_arm, solve
from ..geometry.closest import distance_range
from ..geometry.collision import clearance_batch
from ..geometry.scalar.clearance import link_reach
from ..geometry.scalar.swivel import arm as scalar_arm
from ..geometry.sweep import SWEEP_MARGIN, sweep
from ..geometry.swivel import circle, swivel_of
from ..kinematics.chain import forward_batch
from ..kinematics.ops import ARRAY
from ..model import validate
from ..model.arm import ArmModel
from ..model.body import MARGIN
from .path_programme import CHECKS, choose
from .path_states import BATCH, DELTA, Layers, allowed, configurations, states
from .track import validate_points

#: Hand distance (m) between the layers of the whole-path programme, and the most layers.
COARSE = 0.005
COARSE_LAYERS = 250
#: A step whose largest joint change is at most this (rad) is never a jump.
SMOOTH = 0.05
#: The most pieces a step is cut into by the jump test (then four times as many).
PIECES = 32
#: Rounds of certification of the plan's steps.
SWEEP_ROUNDS = 3
#: Hand error (m) below which a point counts as reached.
REACHED = 1e-4


#: Points farther apart than this (metres) are via points: the hand's way between them is not given, so a step
#: between them is no jump for being large (its motion is still certified).
DENSE = 0.02


class Jump(NamedTuple):
    """A step of the plan that is no continuous motion.

    Attributes:
        index: the point the step arrives at (the step from point index - 1).
        radians: its largest joint change.
        seconds: its move time at the plan's fraction of the maximum speed.
        reason: ``"no continuous solution"``, ``"motion may cross the <part>"`` or ``"point unreachable"``.
    """

    index: int
    radians: float
    seconds: float
    reason: str


class PathPlan(NamedTuple):
    """A planned path.

    Attributes:
        angles: (N, 5) joint angles per point.
        reached: (N,) whether the hand is on each point (within REACHED).
        errors: (N,) the hand's distance to each point, metres.
        steps: (N,) each step's largest joint change, rad (step 0: from ``initial``).
        step_seconds: (N,) each step's move time at ``fraction`` (step 0: from ``initial``).
        jumps: the steps that are no continuous motion (:class:`Jump`), in path order.
        worst: the largest step's move time at ``fraction`` along the path (step 0 left out), s.
        seconds: the time the plan took, s.
        arm: the arm's name.
    """

    angles: np.ndarray
    reached: np.ndarray
    errors: np.ndarray
    steps: np.ndarray
    step_seconds: np.ndarray
    jumps: tuple
    worst: float
    seconds: float
    arm: str


def plan_path(
    points: Sequence[Sequence[float]],
    arm: ArmLike = "LArm",
    initial: Sequence[float] | None = None,
    *,
    wrist: float | None = None,
    fraction: float = 1.0,
) -> PathPlan:
    """The configurations for a whole path, chosen together (see the module docstring).

    Args:
        points: the hand's points in order, FRAME_TORSO metres (1 to 2000).
        arm: ``"LArm"``, ``"RArm"`` or an :class:`~nao_ik.model.arm.ArmModel` (its limits and its body: with
            ``ArmModel.bodiless()`` the limits alone).
        initial: the arm's posture before the path (default the neutral posture).
        wrist: WristYaw held along the path (default ``initial``'s).
        fraction: the commands' fractionMaxSpeed (:func:`nao_ik.model.validate.speed`): the move times reported.

    Returns:
        :class:`PathPlan`.
    """
    t0 = time.perf_counter()
    model = resolve_arm(arm)
    x = validate_points(points)
    start = model.neutral if initial is None else model.clamp(validate.vector(initial, 5, "initial"))
    q0 = np.asarray(start, dtype=float)
    if wrist is not None:
        q0[4] = min(max(validate.number(wrist, "wrist"), model.lower[4]), model.upper[4])
    fraction = validate.speed(fraction)
    certified: dict = {}  # each distinct motion certified once, for the plan's rounds and its jumps
    q, live = _plan(model, _attainable(model, x, q0[4]), q0, fraction, _via(x), certified)
    q = _answer_unreached(model, x, q, live, q0)
    errors = np.linalg.norm(forward_batch(model, q) - x, axis=1)
    reached = errors <= REACHED
    speed = _speed(model)
    moves = np.abs(np.diff(np.vstack([q0[None], q]), axis=0))
    steps = moves.max(axis=1)
    times = (moves / (speed * fraction)).max(axis=1)
    found = jumps(model, x, q, reached, fraction, certified=certified)
    out = tuple(Jump(k, float(steps[k]), float(times[k]), why) for k, why in found)
    worst = float(times[1:].max()) if len(x) > 1 else 0.0
    return PathPlan(q, reached, errors, steps, times, out, worst, time.perf_counter() - t0, model.arm)


def follow_or_refuse(points: Sequence[Sequence[float]], arm: ArmLike, initial: Sequence[float] | None,
                     fraction: float = 1.0, allow_jumps: bool = False) -> tuple[PathPlan, str]:  # fmt: skip
    """The plan of a path, and why it must not be sent (``""`` when it may): for a service's path command.

    A path whose points force a jump (no continuous solution, or points out of reach or only through the body)
    is refused unless the caller allows jumps: the plan says where and how large before anything moves. A step
    whose motion the check does not certify is left to the service's own check of the stream.

    Returns:
        (:class:`PathPlan`, reason): the reason names the largest jump, its point and what allows it.
    """
    plan = plan_path(points, arm, initial, fraction=fraction)
    # The jumps the path's own points force; a step whose motion is not certified is the service's to stop at
    # (its stream check ends the path before that command, as for any path).
    forced = [j for j in plan.jumps if not j.reason.startswith("motion")]
    if not forced or allow_jumps:
        return plan, ""
    big = max(forced, key=lambda j: j.radians)
    more = f" (and {len(forced) - 1} more)" if len(forced) > 1 else ""
    return plan, (f"the path needs a jump of {big.radians:.2f} rad ({big.seconds:.2f} s) at point {big.index}: "
                  f"{big.reason}{more}; allow jumps to follow it")  # fmt: skip


def jumps(model: ArmModel, x: np.ndarray, q: np.ndarray, reached: np.ndarray | None = None,
          fraction: float = 1.0, *, certified: dict | None = None) -> list[tuple[int, str]]:  # fmt: skip
    """The steps of configurations ``q`` along points ``x`` that are jumps (the module docstring's definition).

    Args:
        model: the arm (its limits, and its body if it has one).
        x: (N, 3) the hand's points; q: (N, 5) a configuration for each (the hand on it where ``reached``).
        reached: (N,) which points ``q`` reaches (default: those whose hand is within REACHED).
        fraction: the commands' fractionMaxSpeed (the motion check does not depend on it).
        certified: the motions certified so far (:func:`_uncertified`'s memo), kept and added to.

    Returns:
        (index of the point the step arrives at, reason) per jump, in path order.
    """
    x, q = np.asarray(x, dtype=float), np.asarray(q, dtype=float)
    if reached is None:
        reached = np.linalg.norm(forward_batch(model, q) - x, axis=1) <= REACHED
    out = {}
    # Between points farther apart than DENSE the path does not say where the hand goes: a large step there is
    # the motion between the caller's via points, judged by its certification alone.
    big = (np.abs(np.diff(q[:, :4], axis=0)).max(axis=1) > SMOOTH) & ~_via(x)
    for k in np.flatnonzero(big & ~(reached[1:] & reached[:-1])) + 1:
        out[int(k)] = "point unreachable"
    test = np.flatnonzero(big & reached[1:] & reached[:-1])
    for k in test[~_joined(model, x, q, test)] + 1:
        out[int(k)] = "no continuous solution"
    for k, part in _uncertified(model, q, fraction, certified=certified):
        out.setdefault(k, f"motion may cross the {part or 'body'}")
    return sorted(out.items())


# ------------------------------------------------------------------------------------------------ the plan


def _via(x: np.ndarray) -> np.ndarray:
    """(N - 1,) the steps between via points: points farther apart than DENSE."""
    return np.linalg.norm(np.diff(x, axis=0), axis=1) > DENSE


def _speed(model: ArmModel) -> np.ndarray:
    """(5,) the joints' maximum velocities, rad/s."""
    return np.array([j.max_velocity for j in model.joints])


def _attainable(model: ArmModel, x: np.ndarray, wrist: float) -> np.ndarray:
    """The points, those nearer or farther from the shoulder than the elbow's limits allow moved toward it to the
    nearest distance they do: there is the closest attainable point where its circle has an allowed swivel
    (:func:`nao_ik.geometry.closest.closest`, case 1)."""
    lo, hi = distance_range(model, wrist)
    v = x - np.asarray(model.shoulder)
    d = np.linalg.norm(v, axis=1)
    out = (d > 1e-12) & ((d < lo) | (d > hi))
    if not out.any():
        return x
    y = x.copy()
    y[out] = np.asarray(model.shoulder) + v[out] * (np.clip(d[out], lo + 1e-9, hi - 1e-9) / d[out])[:, None]
    return y


def _plan(model: ArmModel, x: np.ndarray, q0: np.ndarray, fraction: float, via: np.ndarray,
          certified: dict) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Steps 1-4: (angles (N, 5), live (N,): the points planned; the others' rows are zeros). ``via``: the steps
    between via points (:func:`_via`), whose ends are layers; ``certified``: :func:`_uncertified`'s memo."""
    n = len(x)
    weights = 1.0 / _speed(model)[:4]
    # The hand's way along the path, via steps left out (the hand's way there is not given, and nothing is
    # filled across them): the coarse layers are spread over the rest.
    along = np.concatenate([[0.0], np.cumsum(np.where(via, 0.0, np.linalg.norm(np.diff(x, axis=0), axis=1)))])
    spacing = max(COARSE, along[-1] / COARSE_LAYERS)
    cell = np.floor(along / spacing)
    coarse = np.flatnonzero(np.concatenate([[True], cell[1:] != cell[:-1]]))
    coarse = np.union1d(coarse, [n - 1])
    if via.any():
        ends = np.flatnonzero(via)
        coarse = np.union1d(coarse, np.concatenate([ends, ends + 1]))
    wide = np.flatnonzero(np.diff(coarse) > BATCH)  # a fill spans at most BATCH points
    extra = [k for a in wide for k in range(coarse[a] + BATCH, coarse[a + 1], BATCH)]
    coarse = np.union1d(coarse, np.array(extra, dtype=np.int64))
    lay = states(model, x[coarse], q0[4], q0)
    blocked: set = set()
    checked = np.full(lay.ok.shape, np.nan)
    q = np.zeros((n, 5))
    live = np.zeros(n, dtype=bool)
    for _ in range(SWEEP_ROUNDS + 1):
        picks = choose(model, lay, checked, weights, q0, blocked, coarse)
        rows = np.flatnonzero(picks >= 0)
        q[:] = 0.0
        live[:] = False
        if not rows.size:
            return q, live
        idx = coarse[rows]
        q[idx] = lay.q[rows, picks[rows]]
        live[idx] = True
        _fill(model, x, q, live, idx, lay.phi[rows, picks[rows]], lay.root[rows, picks[rows]], weights)
        failed = [k for k, _ in _uncertified(model, q[live], fraction, np.flatnonzero(live), certified)]
        if not failed or not model.body:
            break
        # A step not certified: its coarse step costs BLOCKED more, and the programme runs again.
        for k in failed:
            j = int(np.searchsorted(idx, k))  # the coarse layer at or after the step's end
            j = min(max(j, 1), rows.size - 1)
            blocked.add((int(rows[j - 1]), int(picks[rows[j - 1]]), int(rows[j]), int(picks[rows[j]])))
    return q, live


def _fill(model: ArmModel, x: np.ndarray, q: np.ndarray, live: np.ndarray, idx: np.ndarray,
          phi: np.ndarray, root: np.ndarray, weights: np.ndarray) -> None:  # fmt: skip
    """Step 3: the points between the planned layers ``idx`` (swivels ``phi``, roots ``root``), into ``q``/``live``.

    Where both ends are on one root, the swivel interpolated; where that is outside the limits, the nearest
    allowed swivel of the point (along a limit, the limit's); kept where every configuration is inside the
    limits, clear, and no step more than DELTA beyond its even share of the whole. The rest: the programme
    with both ends fixed, on states four times finer.
    """
    gaps = np.flatnonzero(np.diff(idx) > 1)
    if not gaps.size:
        return
    same = gaps[root[gaps] == root[gaps + 1]]
    redo = set(gaps[root[gaps] != root[gaps + 1]].tolist())
    if same.size:
        inner = [np.arange(idx[g] + 1, idx[g + 1]) for g in same]
        pts = np.concatenate(inner)
        seg = np.repeat(same, [p.size for p in inner])
        a, b = idx[seg], idx[seg + 1]
        turn = np.angle(np.exp(1j * (phi[seg + 1] - phi[seg])))
        want = phi[seg] + (pts - a) / (b - a) * turn
        c, pt_arc, root_arc, s, e = allowed(model, x[pts], q[idx[0], 4])
        # The nearest allowed swivel on the segment's root (the wanted one where it is allowed).
        mine = root_arc == root[seg][pt_arc]
        rel = np.mod(want[pt_arc] - s, 2.0 * math.pi)
        past, before = rel - (e - s), 2.0 * math.pi - rel
        off = np.where(~mine, np.inf, np.where(past <= 0.0, 0.0, np.minimum(past, before)))
        to = np.where(past <= 0.0, want[pt_arc], np.where(past < before, e, s))
        order = np.lexsort((off, pt_arc))
        first = order[np.concatenate([[True], pt_arc[order][1:] != pt_arc[order][:-1]])] if order.size else order
        found = np.zeros(pts.size, dtype=bool)
        found[pt_arc[first]] = np.isfinite(off[first])
        want[pt_arc[first[found[pt_arc[first]]]]] = to[first[found[pt_arc[first]]]]
        qi, inside = configurations(model.bodiless(), c, np.arange(pts.size), want, root[seg])
        inside &= found
        ends = q[idx]
        share = np.abs(ends[seg + 1, :4] - ends[seg, :4]).max(axis=1) / (b - a) + DELTA
        prev = np.where((pts - 1 == a)[:, None], q[a], np.roll(qi, 1, axis=0))
        inside &= np.abs(qi[:, :4] - prev[:, :4]).max(axis=1) <= share
        last = np.flatnonzero(pts + 1 == b)
        inside[last] &= np.abs(q[b[last], :4] - qi[last, :4]).max(axis=1) <= share[last]
        if model.body:
            inside[inside] &= clearance_batch(model, qi[inside], model.body, MARGIN)[0] >= MARGIN
        bad = np.unique(seg[~inside])
        redo.update(bad.tolist())
        good = ~np.isin(seg, bad)
        q[pts[good]] = qi[good]
        live[pts[good]] = True
    for g in sorted(redo):  # planned with both ends fixed
        a, b = int(idx[g]), int(idx[g + 1])
        lay = _pinned(states(model, x[a + 1 : b], q[a, 4], delta=DELTA / 4), q[a], q[b])
        checked = np.full(lay.ok.shape, np.nan)
        checked[0, 0] = checked[-1, 0] = np.inf  # the ends are the plan's, already clear
        picks = choose(model, lay, checked, weights, None)
        got = np.flatnonzero(picks[1:-1] >= 0)
        q[a + 1 + got] = lay.q[1 + got, picks[1 + got]]
        live[a + 1 + got] = True


def _pinned(lay: Layers, qa: np.ndarray, qb: np.ndarray) -> Layers:
    """The layers with a first and a last layer of one state each, ``qa`` and ``qb``."""
    m, k = lay.ok.shape
    q = np.zeros((m + 2, k, 5))
    ok = np.zeros((m + 2, k), dtype=bool)
    q[1:-1], ok[1:-1] = lay.q, lay.ok
    q[0, 0], q[-1, 0], ok[0, 0], ok[-1, 0] = qa, qb, True, True
    phi, root = np.zeros((m + 2, k)), np.zeros((m + 2, k), np.int8)
    phi[1:-1], root[1:-1] = lay.phi, lay.root
    return Layers(q, ok, phi, root)


def _answer_unreached(model: ArmModel, x: np.ndarray, q: np.ndarray, live: np.ndarray, q0: np.ndarray) -> np.ndarray:
    """The points the plan has no state for, answered as ``solve`` answers them from the configuration before (the
    start's for the first point): the closest attainable clear pose, each from the one before, so that a run of
    them slides along what stops the hand instead of hopping."""
    q = q.copy()
    for i in np.flatnonzero(~live):
        q[i] = solve(x[i].tolist(), model, "analytic", initial=(q0 if i == 0 else q[i - 1]).tolist()).angles
    return q


# ------------------------------------------------------------------------------------------------ jumps


def _joined(model: ArmModel, x: np.ndarray, q: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """(len(steps),) whether a chain of links of at most SMOOTH joins q[s] to q[s + 1] along x[s] -> x[s + 1]."""
    out = np.zeros(steps.size, dtype=bool)
    if not steps.size:
        return out
    change = np.abs(q[steps + 1, :4] - q[steps, :4]).max(axis=1)
    pieces = np.ceil(change / (SMOOTH - DELTA)).astype(np.int64)
    group = np.cumsum(pieces) // CHECKS  # the steps' pieces checked about CHECKS at a time
    for g in np.unique(group):
        mine = group == g
        out[mine] = _swivel_route(model, x, q, steps[mine], pieces[mine])
    for finer in (1, 4):
        todo = np.flatnonzero(~out)
        if not todo.size:
            break
        pieces = finer * np.minimum(np.ceil(change[todo] / (SMOOTH - DELTA)), PIECES).astype(np.int64)
        # The steps' pieces sampled for about BATCH points at a time: their states do not grow with the path.
        group = np.cumsum(pieces - 1) // BATCH
        for g in np.unique(group):
            mine = np.flatnonzero(group == g)
            step, piece = steps[todo[mine]], pieces[mine]
            lay = states(model, np.concatenate([x[s] + np.arange(1, p)[:, None] / p * (x[s + 1] - x[s])
                                                 for s, p in zip(step, piece)]), q[0, 4])  # fmt: skip
            end = np.cumsum(piece - 1)
            for i, s, a, b in zip(todo[mine], step, end - (piece - 1), end):
                out[i] = _chained(model, _pinned(Layers(*(v[a:b] for v in lay)), q[s], q[s + 1]))
    return out


def _chained(model: ArmModel, part: Layers) -> bool:
    """Whether the plan through ``part`` (its first and last layers: a step's two configurations) has a state at
    every layer, each clear and every link at most SMOOTH."""
    checked = np.full(part.ok.shape, np.nan)
    checked[0, 0] = checked[-1, 0] = np.inf
    picks = choose(model, part, checked, np.ones(4), None)
    kept = np.flatnonzero(picks >= 0)
    chain_q = part.q[kept, picks[kept]]
    clear = not model.body or bool((checked[kept, picks[kept]] >= MARGIN).all())
    return kept.size == part.ok.shape[0] and clear and np.abs(np.diff(chain_q[:, :4], axis=0)).max() <= SMOOTH


def _swivel_route(model: ArmModel, x: np.ndarray, q: np.ndarray, steps: np.ndarray, pieces: np.ndarray) -> np.ndarray:
    """(len(steps),) whether the first chain tried joins each step: the hand along its segment cut into
    ``pieces``, the swivel between the two configurations' (one root), every link at most SMOOTH, inside the
    limits and clear."""
    free = model.bodiless()
    phi, root = swivel_of(free, q)
    one = root[steps] == root[steps + 1]
    if not one.any():
        return one
    use = steps[one]
    count = np.maximum(pieces[one], 1)
    owner = np.repeat(np.arange(use.size), count - 1)
    f = (np.arange(owner.size) - np.repeat(np.cumsum(count - 1) - (count - 1), count - 1) + 1) / count[owner]
    s = use[owner]
    pts = x[s] + f[:, None] * (x[s + 1] - x[s])
    turn = np.angle(np.exp(1j * (phi[s + 1] - phi[s])))
    c = circle(free, [pts[:, 0], pts[:, 1], pts[:, 2]], np.full(pts.shape[0], q[0, 4]), ARRAY)
    qi, inside = configurations(free, c, np.arange(pts.shape[0]), phi[s] + f * turn, root[s])
    if model.body and inside.any():
        inside[inside] &= clearance_batch(model, qi[inside], model.body, MARGIN)[0] >= MARGIN
    # Every link: from the step's start through its pieces to its end.
    before = np.where(f * count[owner] <= 1.0 + 1e-9, -1, np.arange(owner.size) - 1)
    prev = np.where((before < 0)[:, None], q[s], qi[np.maximum(before, 0)])
    link = np.abs(qi[:, :4] - prev[:, :4]).max(axis=1)
    good = np.ones(use.size, dtype=bool)
    np.logical_and.at(good, owner, inside & (link <= SMOOTH))
    lastrow = np.cumsum(count - 1) - 1
    has = count > 1
    tail = np.abs(q[use + 1, :4] - np.where(has[:, None], qi[np.maximum(lastrow, 0)], q[use])[:, :4]).max(axis=1)
    good &= tail <= SMOOTH
    out = np.zeros(steps.size, dtype=bool)
    out[np.flatnonzero(one)] = good
    return out


def _uncertified(model: ArmModel, q: np.ndarray, fraction: float, index: np.ndarray | None = None,
                 certified: dict | None = None) -> list:  # fmt: skip
    """(index of the point a step arrives at, body part) of the steps of ``q`` whose motion is not certified clear
    of the body (``index``: the rows' point indices, default 0..N-1).

    Each distinct motion (its two configurations, bit for bit) is certified once: ``certified`` maps those
    already certified to (clear, part), and is added to. A path that comes back to its places (an alternation
    between two, 2000 times) repeats its motions: their certification costs what its distinct ones do.
    """
    if not model.body or len(q) < 2:
        return []
    index = np.arange(len(q)) if index is None else index
    certified = {} if certified is None else certified
    centre, half = 0.5 * (q[1:] + q[:-1]), 0.5 * np.abs(q[1:] - q[:-1])
    reach = np.asarray(link_reach(scalar_arm(model)))  # (links, 5): metres per radian
    grow = (half @ reach.T).max(axis=-1)  # box_growth's largest link, on arrays
    near = clearance_batch(model, centre, model.body)[0]
    out = []
    for s in np.flatnonzero(near - grow < SWEEP_MARGIN):  # the bound does not settle these
        key = (q[s].tobytes(), q[s + 1].tobytes())
        if key not in certified:
            got = sweep(model, q[s], q[s + 1], fraction)
            certified[key] = (got.clear, got.part)
        clear, part = certified[key]
        if not clear:
            out.append((int(index[s + 1]), part))
    return out


__all__ = ["DELTA", "SMOOTH", "Jump", "PathPlan", "follow_or_refuse", "jumps", "plan_path"]
