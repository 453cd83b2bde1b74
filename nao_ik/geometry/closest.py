"""The closest attainable point: where the hand can get nearest to a target it cannot reach.

The hand's reachable set (WristYaw held) lies between two spheres about the
shoulder, of the smallest and the largest shoulder-hand distance the rigid
links allow, and the joint limits cut it further. Two cases:

1. The point toward the target at the nearest allowed distance (the target
   itself when its distance is allowed) has an allowed elbow swivel: then it
   is the closest attainable point, exactly (nothing of the reachable set
   lies between the two spheres' shell and that point), and the
   configuration is the one nearest to the start posture
   (:func:`nao_ik.geometry.nearest.nearest` on its circle).
2. It has none (the limits exclude that region, e.g. behind the back): the
   closest point lies on a surface where some joints sit at their limits.
   That small problem (four joints in a box, minimise the hand's distance to
   the target) is solved numerically: Levenberg-Marquardt projected onto the
   box, from SEEDS starts at once (the circle's configurations clamped into
   the limits, evenly spread joint-space postures, the start itself), to a
   step below 1e-10 rad; the best distance is kept and, among the starts that
   reach it (within TIE metres), the configuration nearest to the start.

The distance returned in case 2 is a local minimum found from many starts,
not a certificate; the tests compare it with a dense sampling of the joint
space. Where the model has a body and that pose goes through it, the answer
is the closest clear pose (:func:`nao_ik.geometry.clear_search.clear_search`:
a descent with the body's margin as a penalty, from starts that do not
depend on the start posture, so neither does the pose: only which of the
equally near configurations, within CLEAR_TIE, is taken). Where only the
body keeps the hand from the target (an exact solution within the limits
reaches it), the answer is the nearest clear pose toward the target, a
search from the target itself without the descent
(:func:`nao_ik.geometry.clear.closest_clear`), and the start posture where
it finds nothing clear (as :func:`nao_ik.solve_batch` answers): never a pose
through the body.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple, Sequence

import numpy as np

from ..kinematics.chain import chain, jacobian_columns
from ..kinematics.ops import ARRAY, SCALAR
from ..model.arm import ArmModel
from .clear import closest_clear, unreachable_reason
from .clear_search import clear_search
from .damped import damping, step
from .nearest import SLACK, move_time, nearest
from .spread import spread
from .swivel import body_margin

#: Levenberg-Marquardt iterations from every start, then for the POLISH best ones; the starting damping (m^2).
ITERATIONS = 40
POLISH = 4
POLISH_ITERATIONS = 400
DAMPING = 1e-4
#: The descent stops once no start got STALL_GAIN metres closer over STALL iterations (the rest of the crawl
#: along a flat valley would gain less than 20x that).
STALL = 20
STALL_GAIN = 1e-10
#: Distances within this of the best count as equally close (metres); with the body, whose search holds the answers
#: within about its SHIFT of the margin (:mod:`nao_ik.geometry.clear_search`), within CLEAR_TIE.
TIE = 1e-9
CLEAR_TIE = 1e-6
#: Evenly spread joint-space starts (a Halton sequence over the four joints' ranges).
SPREAD = 48


class Closest(NamedTuple):
    """What :func:`closest` returns.

    Attributes:
        angles: the five joint angles (WristYaw held), inside the limits.
        distance: the hand's distance to the target there, metres (0 if reachable).
        exact: True in case 1 of the module docstring (closed form).
    """

    angles: tuple
    distance: float
    exact: bool


def closest(model: ArmModel, target: Sequence[float], q0: Sequence[float]) -> Closest:
    """The attainable configuration whose hand is nearest the target (then nearest the start).

    Args:
        model: the arm (its limits).
        target: FRAME_TORSO metres.
        q0: the start posture (five angles, inside the limits); WristYaw is held.

    Returns:
        :class:`Closest`.
    """
    t = [float(x) for x in target]
    q0 = [float(x) for x in q0]
    near = nearest(model, t, q0, SCALAR)
    if not near.found:
        # The links could reach that distance but the ElbowYaw/ElbowRoll limits
        # do not: the point toward the target at the nearest distance they allow.
        s = model.shoulder
        d = math.sqrt(sum((t[k] - s[k]) ** 2 for k in range(3)))
        lo, hi = distance_range(model, q0[4])
        if d > 1e-12 and not lo <= d <= hi:
            scale = min(max(d, lo + 1e-9), hi - 1e-9) / d
            near = nearest(model, [s[k] + (t[k] - s[k]) * scale for k in range(3)], q0, SCALAR)
    if near.found:
        q = model.clamp(near.q)
        return Closest(q, _distance(model, q, t), True)
    if model.body and unreachable_reason(model, t, q0).startswith("collision"):
        # Only the body is in the way: without it the target itself is the closest pose; the nearest clear one
        # toward it (the start posture where none is found).
        found = closest_clear(model, t, q0)
        return Closest(found.angles, found.distance, False)
    best = _search(model, t, q0, near.circle)
    if model.body and body_margin(model, best.angles) < -SLACK:
        return _clear(model, t, q0)  # the closest pose goes through the body: the closest clear one
    return best


def distance_range(model: ArmModel, wrist: float) -> tuple[float, float]:
    """The smallest and largest shoulder-hand distance the elbow joints' limits allow, WristYaw held (remembered
    per arm and WristYaw: a path's unreachable points share them)."""
    return _distance_range(model.bodiless(), float(wrist))


@functools.lru_cache(maxsize=256)
def _distance_range(model: ArmModel, wrist: float) -> tuple[float, float]:
    """:func:`distance_range`, computed.

    The distance depends on ElbowYaw q3 and ElbowRoll q4 only: |S-H|^2 =
    L1^2 + L2^2 + 2 u . Rx(q3) Rz(q4) f, and for a given q4 that dot product
    is alpha + beta cos q3 + gamma sin q3, whose extremes over q3's range are
    in closed form (the free extreme or an end). Over q4: a grid, then golden
    sections on the best cells.
    """
    from .recovery import forearm, upper_arm

    l1, _ = upper_arm(model)
    ux, uy, _ = model.joints[2].offset
    fx, fy, fz = forearm(model, float(wrist), SCALAR)
    lo3, hi3, lo4, hi4 = model.lower[2], model.upper[2], model.lower[3], model.upper[3]

    def extreme(q4: np.ndarray, sign: float) -> np.ndarray:
        c4, s4 = np.cos(q4), np.sin(q4)
        alpha, beta, gamma = ux * (fx * c4 - fy * s4), uy * (fx * s4 + fy * c4), -uy * fz + 0.0 * q4
        ends = [alpha + beta * math.cos(b) + gamma * math.sin(b) for b in (lo3, hi3)]
        best = np.maximum(*ends) if sign > 0 else np.minimum(*ends)
        free = np.arctan2(sign * gamma, sign * beta)  # where the q3 term is largest (sign 1) or smallest (-1)
        inside = (free >= lo3) & (free <= hi3)
        at_free = alpha + sign * np.hypot(beta, gamma)
        return np.where(inside, at_free if sign > 0 else at_free, best) * sign

    base = l1 * l1 + fx * fx + fy * fy + fz * fz
    out = []
    for sign in (-1.0, 1.0):
        grid = np.linspace(lo4, hi4, 201)
        k = int(np.argmax(extreme(grid, sign)))
        a, b = grid[max(k - 1, 0)], grid[min(k + 1, 200)]
        for _ in range(60):  # golden sections to ~1e-13 rad
            m1, m2 = b - 0.618033988749895 * (b - a), a + 0.618033988749895 * (b - a)
            if extreme(np.array([m1]), sign)[0] >= extreme(np.array([m2]), sign)[0]:
                b = m2
            else:
                a = m1
        value = max(extreme(np.array([0.5 * (a + b), grid[k]]), sign)) * sign
        out.append(math.sqrt(max(base + 2.0 * value, 0.0)))
    return out[0], out[1]


def _clear(model: ArmModel, t: Sequence[float], q0: Sequence[float]) -> Closest:
    """The closest clear pose (:func:`nao_ik.geometry.clear_search.clear_search`): among the answers within CLEAR_TIE
    of the nearest, the shortest move from the start; the start posture where nothing clear was found."""
    found = clear_search(model, t, q0[4])
    if not found.distances.size:
        return Closest(tuple(q0), _distance(model, q0, t), False)
    ties = np.flatnonzero(found.distances <= found.distances[0] + CLEAR_TIE)
    times = [move_time(model, found.angles[i].tolist(), q0, SCALAR) for i in ties]
    pick = int(ties[int(np.argmin(times))])
    return Closest(tuple(float(x) for x in found.angles[pick]), float(found.distances[pick]), False)


def _distance(model: ArmModel, q: Sequence[float], t: Sequence[float]) -> float:
    h = chain(model, list(q)).hand
    return math.sqrt(sum((a - b) ** 2 for a, b in zip(h, t)))


def _seeds(model: ArmModel, q0: Sequence[float], c) -> np.ndarray:
    """(K, 5) starts inside the limits: the start, the circle clamped, spread postures."""
    from .swivel import at

    lo, hi = np.asarray(model.lower), np.asarray(model.upper)
    phis = np.linspace(-math.pi, math.pi, 24, endpoint=False)
    cols = [np.full(phis.size, x) for x in c.hand]
    from .swivel import circle

    ring = circle(model, cols, np.full(phis.size, q0[4]), ARRAY)
    qs = []
    for b in (0, 1):
        q, _ = at(model, ring, phis, ARRAY, b)
        qs.append(np.stack(np.broadcast_arrays(*q), axis=1))
    seeds = np.concatenate([np.asarray(q0, dtype=float)[None], *qs, spread(model, SPREAD, q0[4])])
    seeds = np.where(np.isfinite(seeds), seeds, 0.0)
    return np.clip(seeds, lo, hi)


def _search(model: ArmModel, t: Sequence[float], q0: Sequence[float], c) -> Closest:
    """Case 2: projected Levenberg-Marquardt on the hand's distance, from every seed at once."""
    tv = np.asarray(t, dtype=float)
    q = _seeds(model, q0, c)
    q, err = _descend(model, q, tv, ITERATIONS)
    # The valleys along a limit are flat: the best few starts go on to convergence.
    keep = np.argsort(err)[:POLISH]
    q, err = _descend(model, q[keep], tv, POLISH_ITERATIONS)
    best = err.min()
    ties = np.flatnonzero(err <= best + TIE)
    times = [move_time(model, q[i].tolist(), q0, SCALAR) for i in ties]
    pick = int(ties[int(np.argmin(times))])
    return Closest(tuple(float(x) for x in q[pick]), float(err[pick]), False)


def _descend(model: ArmModel, q: np.ndarray, tv: np.ndarray, iterations: int) -> tuple:
    """Projected Levenberg-Marquardt from every start in q (K, 5); returns (q, distances)."""
    lo, hi = np.asarray(model.lower), np.asarray(model.upper)
    k = q.shape[0]
    lam = np.full(k, DAMPING)
    err = _errors(model, q, tv)
    mark = err.copy()
    for it in range(iterations):
        if it and it % STALL == 0:  # no start gained STALL_GAIN over the last STALL iterations: they have converged
            if np.all(mark - err < STALL_GAIN):
                break
            mark = err.copy()
        ch = chain(model, [q[:, i] for i in range(5)], ARRAY)
        hand = np.stack(np.broadcast_arrays(*ch.hand), axis=1)
        e = tv - hand
        jac = np.stack([np.stack(np.broadcast_arrays(*col), axis=1) for col in jacobian_columns(ch, range(4))], axis=2)
        move, trial = step(q, jac, e, lam, lo, hi)
        new = _errors(model, trial, tv)
        better = new < err - 1e-15
        q = np.where(better[:, None], trial, q)
        err = np.where(better, new, err)
        lam = damping(lam, better)
        if np.all((np.abs(move).max(axis=1) < 1e-10) | (lam > 1e6)):
            break
    return q, err


def _errors(model: ArmModel, q: np.ndarray, t: np.ndarray) -> np.ndarray:
    h = chain(model, [q[:, i] for i in range(5)], ARRAY).hand
    return np.linalg.norm(np.stack(np.broadcast_arrays(*h), axis=1) - t, axis=1)
