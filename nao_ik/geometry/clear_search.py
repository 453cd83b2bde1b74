"""The closest clear pose: where the hand gets nearest a target with every link outside the body's margin.

Where the closest attainable pose without the body (:mod:`nao_ik.geometry.closest`) goes through the body, the
closest pose with it has some link at the margin. :func:`clear_search` minimises the hand's distance to the
target over the configurations inside the joint limits (WristYaw held) with the body's clearance as a penalty:
the residuals are the hand minus the target and, where the links come nearer the body than MARGIN + SHIFT,
the weight times that shortfall (its derivative by differences of FD rad). Projected Levenberg-Marquardt
(:mod:`nao_ik.geometry.damped`) runs in STAGES of growing weight, each start until it stalls (less than
STALL_GAIN metres over STALL steps) or its stage's steps run out: a light weight first lets the starts slide
along the body toward the target, the last holds them at the margin.

The starts are the SEEDS configurations clear of the body whose hands lie nearest the target among POOL
postures spread evenly over the four position joints' ranges (a Halton sequence, the same for every call);
after the first stage the KEEP best go on. None of them is the caller's start posture, so the pose found does
not depend on where the arm is: :func:`nao_ik.geometry.closest.closest` takes, among the answers equally near
the target, the one with the shortest move from there. The searches are remembered (the last SAVED arms,
targets and WristYaws): a solve that asks twice, and the methods of a benchmark on the same targets, search
once.

SHIFT keeps the answers clear: the descent aims SHIFT beyond the margin, more than the penalty leaves inside
it at the last weight (about |hand - target| / weight^2: 0.1 um there), so an answer keeps the margin and lies
within about SHIFT of it. The answer is a local minimum from many starts, not a certificate: the tests compare
it with a dense sampling of the clear configurations.
"""

from __future__ import annotations

import functools
from typing import NamedTuple, Sequence

import numpy as np

from ..kinematics.chain import chain, forward_batch, jacobian_columns
from ..kinematics.ops import ARRAY
from ..model.arm import ArmModel
from ..model.body import MARGIN
from .collision import clearance_batch
from .damped import damping, step
from .spread import spread

#: Postures the starts are picked from, and how many of the clear ones nearest the target start; how many go on
#: after the first stage.
POOL = 16384
SEEDS = 32
KEEP = 8
#: The penalty's weights and each one's steps at most.
STAGES = ((10.0, 20), (100.0, 20), (1000.0, 40))
#: Metres beyond the margin the descent aims; radians of the clearance's differences.
SHIFT = 1e-5
FD = 1e-6
#: A start stops once it gained less than STALL_GAIN metres over STALL steps; the starting damping (m^2).
STALL = 8
STALL_GAIN = 1e-9
DAMPING = 1e-4
#: Searches remembered.
SAVED = 64


class ClearSearch(NamedTuple):
    """What :func:`clear_search` returns: the clear answers, nearest the target first (none where no posture of
    the pool is clear).

    Attributes:
        angles: (K, 5) configurations inside the limits, clear of the body by its margin.
        distances: (K,) their hands' distances to the target, metres, ascending.
    """

    angles: np.ndarray
    distances: np.ndarray


def clear_search(model: ArmModel, target: Sequence[float], wrist: float) -> ClearSearch:
    """The clear configurations whose hands get nearest the target, WristYaw held at ``wrist`` (see the module
    docstring).

    Args:
        model: the arm, with its body.
        target: FRAME_TORSO metres.
        wrist: the held WristYaw, radians.

    Returns:
        :class:`ClearSearch` (fresh arrays: the caller may change them).
    """
    angles, distances = _saved(model, tuple(float(x) for x in target), float(wrist))
    return ClearSearch(np.array(angles, dtype=float).reshape(-1, 5), np.array(distances, dtype=float))


@functools.lru_cache(maxsize=SAVED)
def _saved(model: ArmModel, target: tuple, wrist: float) -> tuple:
    """:func:`clear_search`, as tuples (kept)."""
    t = np.asarray(target, dtype=float)
    seeds = _seeds(model, t, wrist)
    if not seeds.size:  # the body leaves no posture of the pool clear
        return (), ()
    q = seeds
    for stage, (weight, steps) in enumerate(STAGES):
        q, cost = _descend(model, q, t, weight, steps)
        if stage == 0:
            q = q[np.argsort(cost, kind="stable")[:KEEP]]
    q = np.concatenate([q, seeds])  # a start's own posture is clear: never an answer worse than the starts
    q = q[clearance_batch(model, q, model.body, MARGIN)[0] >= MARGIN]
    d = np.linalg.norm(forward_batch(model, q) - t, axis=1)
    order = np.argsort(d, kind="stable")
    return tuple(map(tuple, q[order].tolist())), tuple(d[order].tolist())


def _seeds(model: ArmModel, t: np.ndarray, wrist: float) -> np.ndarray:
    """(K <= SEEDS, 5) the clear postures of the pool whose hands lie nearest ``t``."""
    pool, hands = _pool(model.bodiless(), wrist)
    order = np.argsort(np.linalg.norm(hands - t, axis=1), kind="stable")
    found = []
    size = 8 * SEEDS
    for at in range(0, order.size, size):  # in blocks, nearest first, until SEEDS are clear
        rows = order[at : at + size]
        found.extend(rows[clearance_batch(model, pool[rows], model.body, MARGIN)[0] >= MARGIN][: SEEDS - len(found)])
        if len(found) >= SEEDS:
            break
    return pool[np.asarray(found, dtype=np.int64)]


@functools.lru_cache(maxsize=16)
def _pool(model: ArmModel, wrist: float) -> tuple[np.ndarray, np.ndarray]:
    """(POOL, 5) postures spread evenly over the four position joints' ranges (WristYaw ``wrist``), and their
    hands (kept per arm and WristYaw)."""
    q = spread(model, POOL, wrist)
    q.setflags(write=False)
    hands = forward_batch(model, q)
    hands.setflags(write=False)
    return q, hands


def _descend(model: ArmModel, q: np.ndarray, t: np.ndarray, weight: float, steps: int) -> tuple:
    """Projected Levenberg-Marquardt on the penalised residuals from every start in q (K, 5); returns (q, the
    squared residuals' sums (K,))."""
    lo, hi = np.asarray(model.lower), np.asarray(model.upper)
    q = q.copy()
    lam = np.full(q.shape[0], DAMPING)
    e, jac = _residuals(model, q, t, weight)
    cost = np.einsum("ki,ki->k", e, e)
    mark = cost.copy()
    live = np.arange(q.shape[0])
    for it in range(1, steps + 1):
        if not live.size:
            break
        move, trial = step(q[live], jac[live], e[live], lam[live], lo, hi)
        te, tjac = _residuals(model, trial, t, weight)
        tcost = np.einsum("ki,ki->k", te, te)
        better = tcost < cost[live]
        took = live[better]
        q[took], e[took], jac[took], cost[took] = trial[better], te[better], tjac[better], tcost[better]
        lam[live] = damping(lam[live], better)
        done = (np.abs(move).max(axis=1) < 1e-10) | (lam[live] > 1e6)
        if it % STALL == 0:
            done |= np.sqrt(mark[live]) - np.sqrt(cost[live]) < STALL_GAIN
            mark[live] = cost[live]
        live = live[~done]
    return q, cost


def _residuals(model: ArmModel, q: np.ndarray, t: np.ndarray, weight: float) -> tuple:
    """(what a step should remove (K, 4): the target minus the hand, minus the weighted shortfall from
    MARGIN + SHIFT; its derivative (K, 4, 4) with respect to the four position joints)."""
    k = q.shape[0]
    ch = chain(model, [q[:, i] for i in range(5)], ARRAY)
    hand = np.stack(np.broadcast_arrays(*ch.hand), axis=1)
    jh = np.stack([np.stack(np.broadcast_arrays(*col), axis=1) for col in jacobian_columns(ch, range(4))], axis=2)
    moved = np.repeat(q[None], 5, axis=0)  # q, then q with each position joint moved by FD
    for j in range(4):
        moved[j + 1, :, j] += FD
    aim = MARGIN + SHIFT
    # Capped just past the aim: only where the links come nearer than it does the distance count.
    near = clearance_batch(model, moved.reshape(-1, 5), model.body, aim + SHIFT)[0].reshape(5, k)
    short = np.maximum(aim - near, 0.0)
    e = np.concatenate([t - hand, -weight * short[0][:, None]], axis=1)
    jac = np.concatenate([jh, (weight * (short[1:] - short[0]) / FD).T[:, None, :]], axis=1)
    return e, jac
