"""A known path planned whole: the elbow's swivel and ElbowRoll branch at every point, chosen for the whole path.

Following a path point by point from the previous answer (:mod:`nao_ik.track`,
the service's ``trackPath``) cannot see ahead: the arm takes the nearest
solution of each point, walks onto a part of the solution set that ends at a
limit, a fold or the body, and must swing across in one step. When the whole
path is known before the first command, the choice can be made for all of it.

The solution set of a hand point with WristYaw held is the elbow's circle
(:mod:`nao_ik.geometry.swivel`): one swivel angle and one of two ElbowRoll
roots give the configuration, and the joint limits and the body leave some
arcs of it. The plan picks one allowed configuration per point so that the
largest step between consecutive points, in move time (max over joints of
|dq| / maximum velocity, :func:`nao_ik.geometry.nearest.move_time`), is as
small as it can be; among those plans, the sum of the squared step times
(the other steps as small as they can be, a forced jump alone where it is
smallest), with the step from ``initial`` to the first point in that sum too.

Method, and why it finds that plan:

1. *Samples.* Every point's circle sampled at SWIVELS swivels on each
   ElbowRoll root the held WristYaw allows (one batched evaluation of all
   points, :func:`nao_ik.geometry.sampled.swivel_samples`): a sample is a
   state where it is inside the limits and clear of the body by MARGIN.
2. *Bottleneck, then sum.* Over these states the best plan is a shortest
   path in a layered graph: a dynamic programme over the points, first for the
   smallest possible largest step B (min over the previous states of the max
   of its value and the step), then, keeping only steps <= B, for the
   smallest sum of squares. The two passes give the lexicographic optimum
   exactly (a single pass on (max, sum) pairs would not: the principle of
   optimality does not hold for that order).
3. *Refinement.* The same programme again on FINE swivels within one sample
   spacing of the chosen ones (same root); the chosen plan is among them, so
   the refined plan is never worse on the samples. Its steps are the
   sampled optimum to within the fine spacing's effect on the joints.
4. *Continuity.* A step larger than SMOOTH rad may be a jump (no continuous
   motion along the path between the two points) or a large step of a
   continuous motion (a coarse path). Every such step is cut into SPLIT
   pieces along the hand's segment and the whole path planned again: a
   continuous motion's step splits into pieces of about 1/SPLIT of it, a jump
   stays in one piece. A step whose largest piece is more than CONCENTRATED
   of the pieces' sum is a jump.
5. *Motion.* Each step's joint-space box (every setAngles profile) must keep
   SWEEP_MARGIN from the body: first a bound for all steps at once (the
   clearance at the box's centre less how far the links can be from there,
   :func:`nao_ik.geometry.scalar_clearance.box_growth`), then the full
   certification (:func:`nao_ik.sweep.sweep`) for the steps the bound does
   not settle. A step not certified is a jump too.

Points with no allowed sample (out of reach, only through the body, or an
allowed arc narrower than the samples) are answered as ``solve`` answers them
from the previous point's configuration: the exact nearest solution where one
exists, else the closest attainable pose, ``reached`` False. The plan goes on
past them; the steps into and out of them larger than SMOOTH are jumps.

Limits of the argument: the optimum is over the samples (an allowed arc
narrower than a sample spacing is missed; steps are within about the fine
spacing's effect of the continuous optimum), and the continuity test is a
test on the split path, not a proof.
"""

from __future__ import annotations

import math
import time
from typing import NamedTuple, Sequence

import numpy as np

from . import validate
from .api import ArmLike, resolve_arm, solve
from .body import MARGIN
from .collision import clearance_batch
from .geometry.nearest import second_branch
from .geometry.sampled import swivel_samples
from .geometry.scalar_clearance import link_reach
from .geometry.scalar_swivel import arm as scalar_arm
from .geometry.swivel import circle
from .kinematics import forward_batch
from .model import ArmModel
from .ops import ARRAY
from .sweep import SWEEP_MARGIN, sweep
from .track import validate_points

#: Swivels sampled on each point's circle per ElbowRoll root (2.5 degrees apart).
SWIVELS = 144
#: Fine swivels per point across its window (about one sample spacing either side of the chosen one).
FINE = 11
#: The most points sampled whole (a longer path's every few points), and rounds of fine swivels.
COARSE_POINTS = 125
FINE_ROUNDS = 2
#: A step whose largest joint change is at most this (rad) is never a jump.
SMOOTH = 0.05
#: Pieces a large step is cut into to tell a jump from a coarse step of a continuous motion.
SPLIT = 4
#: A step is a jump when its largest piece is more than this share of its pieces' sum.
CONCENTRATED = 0.6
#: Hand error (m) below which a point counts as reached.
REACHED = 1e-4


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
        arm: ``"LArm"``, ``"RArm"`` or an :class:`~nao_ik.model.ArmModel` (its limits and its body: with
            ``ArmModel.bodiless()`` the limits alone).
        initial: the arm's posture before the path (default the neutral posture).
        wrist: WristYaw held along the path (default ``initial``'s).
        fraction: the commands' fractionMaxSpeed (:func:`nao_ik.validate.speed`): the move times reported.

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
    speed = np.array([j.max_velocity for j in model.joints])
    q, live = _plan(model, x, q0, speed)
    large = np.flatnonzero(live[1:] & live[:-1] & (_largest(q) > SMOOTH)) + 1
    concentrated = np.zeros(len(x), dtype=bool)
    if large.size:  # split the large steps and plan again (step 4)
        q, live, concentrated = _split(model, x, q0, speed, large)
    q, reached, errors = _fill(model, x, q, live, q0)
    steps = np.abs(np.diff(np.vstack([q0[None], q]), axis=0)).max(axis=1)
    times = (np.abs(np.diff(np.vstack([q0[None], q]), axis=0)) / (speed * fraction)).max(axis=1)
    jumps = {}
    gap = ~(live[1:] & live[:-1]) & (steps[1:] > SMOOTH)
    for k in np.flatnonzero(gap) + 1:
        jumps[int(k)] = "point unreachable"
    for k in np.flatnonzero(concentrated):
        jumps.setdefault(int(k), "no continuous solution")
    for k, part in _uncertified(model, q, fraction):
        jumps.setdefault(k, f"motion may cross the {part or 'body'}")
    out = tuple(Jump(k, float(steps[k]), float(times[k]), jumps[k]) for k in sorted(jumps))
    worst = float(times[1:].max()) if len(x) > 1 else 0.0
    return PathPlan(q, reached, errors, steps, times, out, worst, time.perf_counter() - t0, model.arm)


def follow_or_refuse(points: Sequence[Sequence[float]], arm: ArmLike, initial: Sequence[float] | None,
                     fraction: float = 1.0, allow_jumps: bool = False) -> tuple[PathPlan, str]:  # fmt: skip
    """The plan of a path, and why it must not be sent (``""`` when it may): for a service's path command.

    A path whose plan has a jump is refused unless the caller allows jumps: the plan says where and how
    large before anything moves. Unreached points are the caller's to judge (``plan.reached``).

    Returns:
        (:class:`PathPlan`, reason): the reason names the largest jump, its point and what allows it.
    """
    plan = plan_path(points, arm, initial, fraction=fraction)
    if not plan.jumps or allow_jumps:
        return plan, ""
    big = max(plan.jumps, key=lambda j: j.radians)
    more = f" (and {len(plan.jumps) - 1} more)" if len(plan.jumps) > 1 else ""
    return plan, (f"the path needs a jump of {big.radians:.2f} rad ({big.seconds:.2f} s) at point {big.index}: "
                  f"{big.reason}{more}; allow jumps to follow it")  # fmt: skip


def _largest(q: np.ndarray) -> np.ndarray:
    """(N - 1,) each step's largest joint change, rad."""
    return np.abs(np.diff(q, axis=0)).max(axis=1)


def _plan(model: ArmModel, x: np.ndarray, q0: np.ndarray, speed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Steps 1-3: (angles (N, 5), live (N,): the points planned from their samples; the others are zeros)."""
    n = len(x)
    wrist = np.full(n, q0[4])
    spacing = 2.0 * math.pi / SWIVELS
    c = circle(model, [x[:1, 0], x[:1, 1], x[:1, 2]], wrist[:1], ARRAY)
    roots = (0, 1) if bool(np.any(second_branch(model, c, ARRAY))) else (0,)
    # The samples on every stride-th point (and the last): a long path's neighbours are close.
    stride = max(1, -(-n // COARSE_POINTS))
    coarse = np.unique(np.append(np.arange(0, n, stride), n - 1))
    grid = np.broadcast_to(np.linspace(-math.pi, math.pi, SWIVELS, endpoint=False), (coarse.size, SWIVELS))
    qa, margin, phi = _states(model, x[coarse], wrist[coarse], grid, roots, True)
    ok = margin >= 0.0
    sampled = ok.any(axis=1)
    q = np.zeros((n, 5))
    if not sampled.any():
        return q, np.zeros(n, dtype=bool)
    rows = coarse[sampled]
    pick = _programme(qa[sampled], ok[sampled], q0, speed)
    chosen = phi[sampled][np.arange(rows.size), pick]
    # Every point's swivel between the chosen ones of the coarse points around it (the shorter way round), and
    # how far a window must reach: a sample spacing and half the swivel's turn between them.
    turn = np.angle(np.exp(1j * np.diff(chosen))) if rows.size > 1 else np.zeros(0)
    unwrapped = chosen[0] + np.concatenate([[0.0], np.cumsum(turn)])
    middle = np.interp(np.arange(n), rows, unwrapped)
    reach_out = spacing + 0.5 * np.abs(np.interp(np.arange(n), rows[1:], turn)) if turn.size else np.full(n, spacing)
    reach_out[rows] = spacing
    nearest_state = qa[sampled][np.arange(rows.size), pick]
    centre = nearest_state[np.clip(np.searchsorted(rows, np.arange(n)), 0, rows.size - 1)]
    near = margin[sampled][np.arange(rows.size), pick][np.clip(np.searchsorted(rows, np.arange(n)), 0, rows.size - 1)]
    live = np.ones(n, dtype=bool)
    for rnd in range(FINE_ROUNDS):
        # Step 3: fine swivels around the chosen ones, on every root (a fold joins them); again around the
        # last round's choice, narrower.
        window = middle[:, None] + reach_out[:, None] * np.linspace(-1.0, 1.0, FINE)[None]
        fine_q, fm, fine_phi = _states(model, x, wrist, window, roots, False)
        if model.body:
            # The body's clearance only where the coarse sample's, less how far the links can have moved from
            # it, does not settle it.
            reach = np.asarray(link_reach(scalar_arm(model)))
            bound = near[:, None] - _growth(reach, np.abs(fine_q - centre[:, None]))
            check = np.flatnonzero(((fm > -np.inf) & (bound < 0.0)).ravel())  # inside the limits, not settled
            flat = fm.reshape(-1)
            flat[check] = clearance_batch(model, fine_q.reshape(-1, 5)[check], model.body)[0] - MARGIN
        fine_ok = fm >= 0.0
        if rnd:  # the last round's choice among the states, so that its plan is among the new ones
            fine_q = np.concatenate([fine_q, q[:, None]], axis=1)
            fine_ok = np.concatenate([fine_ok, live[:, None]], axis=1)
            fine_phi = np.concatenate([fine_phi, middle[:, None]], axis=1)
        live = fine_ok.any(axis=1)
        r = np.flatnonzero(live)
        if not r.size:
            break
        best = _programme(fine_q[r], fine_ok[r], q0, speed)
        q[r], middle[r] = fine_q[r, best], fine_phi[r, best]
        reach_out = 4.0 * reach_out / (FINE - 1)
    return q, live


def _states(model: ArmModel, x: np.ndarray, wrist: np.ndarray, phis: np.ndarray, roots: Sequence[int],
            body: bool) -> tuple:  # fmt: skip
    """Every point's configurations at swivels ``phis`` (N, W) on each root, one block of W per root.

    Returns:
        (angles (N, R W, 5), margin as :func:`~nao_ik.geometry.sampled.swivel_samples` (the body's only with
        ``body``), swivels (N, R W)).
    """
    got = [swivel_samples(model, x, wrist, phis, b, body) for b in roots]
    return (np.concatenate([g[0] for g in got], axis=1), np.concatenate([g[1] for g in got], axis=1),
            np.tile(phis, (1, len(roots))))  # fmt: skip


def _growth(reach: np.ndarray, half: np.ndarray) -> np.ndarray:
    """:func:`~nao_ik.geometry.scalar_clearance.box_growth` on arrays, the largest link's: half (..., 5) -> (...)."""
    return (half @ reach.T).max(axis=-1)


def _programme(qa: np.ndarray, ok: np.ndarray, q0: np.ndarray, speed: np.ndarray) -> np.ndarray:
    """Step 2 on states (N, K, 5) allowed where ``ok`` (every point has one): the chosen state per point."""
    # Each point's allowed states first, and only as many columns as the point with most of them needs.
    order = np.argsort(~ok, axis=1, kind="stable")
    k = max(int(ok.sum(axis=1).max()), 1)
    order = order[:, :k]
    qa, ok = np.take_along_axis(qa, order[:, :, None], axis=1), np.take_along_axis(ok, order, axis=1)
    n = ok.shape[0]
    w = 1.0 / speed[:4]
    # The steps' move times between every state of a point and every state of the next (WristYaw is held).
    # float32: the steps compared are far above its resolution, and the arrays are the programme's main cost.
    qw = (qa[:, :, :4] * w).astype(np.float32)
    cost = np.zeros((n - 1, k, k), dtype=np.float32)
    for j in range(4):
        np.maximum(cost, np.abs(qw[:-1, :, None, j] - qw[1:, None, :, j]), out=cost)
    cost[~ok[:-1]] = np.inf
    cost.transpose(0, 2, 1)[~ok[1:]] = np.inf
    # Pass 1: the smallest largest step.
    v = np.where(ok[0], 0.0, np.inf).astype(np.float32)
    for s in range(n - 1):
        v = np.maximum(v[:, None], cost[s]).min(axis=0)
    bound = float(v.min()) * (1.0 + 1e-6) + 1e-9
    # Pass 2: the smallest sum of squares among the plans within it (the start's step included).
    first = (np.abs(qa[0, :, :4] - q0[:4]) * w).max(axis=1)
    total = np.where(ok[0], first * first, np.inf)
    sq = np.where(cost <= bound, cost * cost, np.inf)
    back = np.zeros((n - 1, k), dtype=np.int64)
    for s in range(n - 1):
        tried = total[:, None] + sq[s]
        back[s] = tried.argmin(axis=0)
        total = tried[back[s], np.arange(k)]
    pick = np.zeros(n, dtype=np.int64)
    pick[-1] = int(total.argmin())
    for s in range(n - 2, -1, -1):
        pick[s] = back[s, pick[s + 1]]
    return order[np.arange(n), pick]


def _split(model: ArmModel, x: np.ndarray, q0: np.ndarray, speed: np.ndarray, large: np.ndarray) -> tuple:
    """Step 4: the path planned again with every large step cut into SPLIT pieces.

    Returns:
        (angles (N, 5) at the original points, live (N,), concentrated (N,): the steps arriving there
        that stayed in one piece).
    """
    n = len(x)
    cut = np.zeros(n, dtype=bool)
    cut[large] = True
    parts, origin = [], []
    for i in range(n):
        if cut[i]:
            s = np.arange(1, SPLIT)[:, None] / SPLIT
            parts.append(x[i - 1] + s * (x[i] - x[i - 1]))
            origin += [-1] * (SPLIT - 1)
        parts.append(x[i : i + 1])
        origin.append(i)
    dense = np.concatenate(parts)
    q, live = _plan(model, dense, q0, speed)
    keep = np.flatnonzero(np.asarray(origin) >= 0)
    concentrated = np.zeros(n, dtype=bool)
    for i in np.flatnonzero(cut):
        end = keep[i]
        piece = _largest(q[end - SPLIT : end + 1])
        whole = bool(live[end - SPLIT : end + 1].all())
        concentrated[i] = whole and piece.max() > max(SMOOTH, CONCENTRATED * piece.sum())
    return q[keep], live[keep], concentrated


def _fill(model: ArmModel, x: np.ndarray, q: np.ndarray, live: np.ndarray, q0: np.ndarray) -> tuple:
    """The points without samples answered as ``solve`` answers them from the point before; (angles, reached,
    errors)."""
    q = q.copy()
    for i in np.flatnonzero(~live):
        start = q0 if i == 0 else q[i - 1]
        q[i] = solve(x[i].tolist(), model, "analytic", initial=start.tolist()).angles
    errors = np.linalg.norm(forward_batch(model, q) - x, axis=1)
    return q, errors <= REACHED, errors


def _uncertified(model: ArmModel, q: np.ndarray, fraction: float) -> list:
    """Step 5: (index, body part) of the steps whose motion is not certified clear of the body."""
    if not model.body or len(q) < 2:
        return []
    centre, half = 0.5 * (q[1:] + q[:-1]), 0.5 * np.abs(q[1:] - q[:-1])
    reach = np.asarray(link_reach(scalar_arm(model)))  # (links, 5): metres per radian
    grow = _growth(reach, half)
    near = clearance_batch(model, centre, model.body)[0]
    out = []
    for s in np.flatnonzero(near - grow < SWEEP_MARGIN):  # the bound does not settle these
        got = sweep(model, q[s], q[s + 1], fraction)
        if not got.clear:
            out.append((int(s) + 1, got.part))
    return out
