"""A quick screen: is some sampled swivel of a target inside the limits and clear of the body?

Used before the full nearest-solution search with the body
(:func:`nao_ik.geometry.nearest.nearest`): a target none of whose SWIVELS
sampled swivels (both ElbowRoll branches) is clear is answered as having no
clear solution without that search (a clear arc narrower than the samples'
spacing, 15 degrees, is missed: the answer is then the nearest clear pose
toward the target instead, :mod:`nao_ik.geometry.clear`).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..kinematics.ops import ARRAY
from ..model.arm import ArmModel
from ..model.body import MARGIN
from .collision import clearance_batch, hand_blocked
from .scalar.clearance import CAP
from .scalar.swivel import SWIVELS
from .swivel import at, circle, take

#: The limits' rounding slack.
LIMIT_SLACK = 1e-9
#: Samples :func:`first_clear` tries per point in its first round (then twice as many each round): measured
#: on 798 blocked targets' searches, 0.43 s against 0.57 s with two and 0.95 s with all at once.
ROUND = 4


def swivel_samples(model: ArmModel, pts: np.ndarray, wrist: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The SWIVELS sampled configurations of each point on both ElbowRoll branches, and which the limits allow.

    Returns:
        (angles (N, 2, SWIVELS, 5), unclamped; inside (N, 2, SWIVELS) bool: within the limits and reachable).
    """
    n = pts.shape[0]
    phis = np.linspace(-math.pi, math.pi, SWIVELS, endpoint=False)
    tf = np.repeat(pts, SWIVELS, axis=0)
    pf = np.tile(phis, n)
    c = circle(model, [tf[:, i] for i in range(3)], np.repeat(np.broadcast_to(wrist, (n,)), SWIVELS), ARRAY)
    angles, inside = [], []
    for branch in (0, 1):
        qb, viol = at(model, c, pf, ARRAY, branch)
        angles.append(np.stack(np.broadcast_arrays(*qb), axis=1).reshape(n, SWIVELS, 5))
        ok = (np.broadcast_to(viol, pf.shape) <= LIMIT_SLACK) & np.broadcast_to(c.reachable, pf.shape)
        inside.append(ok.reshape(n, SWIVELS))
    return np.stack(angles, axis=1), np.stack(inside, axis=1)


def sampled_clear(model: ArmModel, pts: np.ndarray, wrist: np.ndarray, q0: np.ndarray | None = None
                  ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """(found (N,), angles (N, 5)): whether a sampled swivel of each point is inside the limits and clear.

    SWIVELS swivels on both ElbowRoll branches (:func:`swivel_samples`); the angles are the clearest allowed
    one, or with ``q0`` (N, 5) the clear one with the shortest move from it
    (:func:`~nao_ik.geometry.nearest.move_time`).
    """
    n = pts.shape[0]
    angles, inside = swivel_samples(model, pts, wrist)
    best_q, best_m = np.zeros((n, 5)), np.full(n, -np.inf)
    cap = CAP if q0 is None else MARGIN  # ranked by move time: only whether a sample keeps the margin counts
    for branch in (0, 1):
        qa = angles[:, branch].reshape(-1, 5)
        m = np.full(qa.shape[0], -np.inf)
        rows = np.flatnonzero(inside[:, branch].ravel())
        if rows.size:  # the body's clearance only where the limits allow
            m[rows] = clearance_batch(model, qa[rows], model.body, cap)[0] - MARGIN
        m, qa = m.reshape(n, SWIVELS), qa.reshape(n, SWIVELS, 5)
        if q0 is not None:  # rank the clear ones by move time instead (a clear one always beats a blocked one)
            speed = np.array([j.max_velocity for j in model.joints])
            seconds = (np.abs(qa - np.asarray(q0)[:, None, :]) / speed).max(axis=2)
            m = np.where(m >= 0.0, 1e3 - seconds, m)
        j = m.argmax(axis=1)
        mj = m[np.arange(n), j]
        take = mj > best_m
        best_m = np.where(take, mj, best_m)
        best_q = np.where(take[:, None], qa[np.arange(n), j], best_q)
    return best_m >= 0.0, np.clip(best_q, model.lower, model.upper)


def clear_by_move(model: ArmModel, target: Sequence[float], q0: Sequence[float]) -> np.ndarray:
    """The target's sampled configurations (:func:`swivel_samples`, WristYaw held at ``q0``'s) inside the limits
    and clear of the body, by their move time from ``q0`` (:func:`~nao_ik.geometry.nearest.move_time`), the
    shortest first: other exact solutions of a reach, (K, 5)."""
    q0 = np.asarray(q0, dtype=float)
    angles, inside = swivel_samples(model, np.asarray(target, dtype=float)[None], q0[4:5])
    q = angles.reshape(-1, 5)[inside.ravel()]
    if model.body and q.size:
        q = q[clearance_batch(model, q, model.body, MARGIN)[0] >= MARGIN]
    speed = np.array([j.max_velocity for j in model.joints])
    return q[np.argsort((np.abs(q - q0) / speed).max(axis=1), kind="stable")]


def first_clear(model: ArmModel, pts: np.ndarray, wrist: np.ndarray, hint: np.ndarray | None = None,
                floor: float = MARGIN) -> tuple:  # fmt: skip
    """(clear (N,), angles (N, 5) clamped, sample index (N,), the clearance of the clearest sample tried (N,),
    capped at MARGIN and exact from ``floor`` (at most MARGIN) up, below it only below; -inf where none was tried
    inside the limits or the hand itself is in the body's way): a clear sample of each point, if any.

    The same samples and test as :func:`sampled_clear`'s ``found``, made and tried lazily: nearest the hint
    (N,) sample index (swivel index + SWIVELS x branch) first (in swivel, then the other branch), in rounds
    of ROUND, 2 ROUND, ... per point; a point leaves once one is clear, so only a blocked one costs them all,
    unless the body is in the way of the hand itself there (:func:`~nao_ik.geometry.collision.hand_blocked`).
    """
    n = pts.shape[0]
    hint = np.zeros(n, dtype=np.int64) if hint is None else hint
    c = circle(model, [pts[:, i] for i in range(3)], wrist, ARRAY)
    phis = np.linspace(-math.pi, math.pi, SWIVELS, endpoint=False)
    idx = np.arange(2 * SWIVELS)
    apart = np.abs((idx[None, :] % SWIVELS) - (hint[:, None] % SWIVELS))
    apart = np.minimum(apart, SWIVELS - apart) * 2 + (idx[None, :] // SWIVELS != hint[:, None] // SWIVELS)
    order = np.argsort(apart, axis=1, kind="stable")
    ok, where, q = np.zeros(n, dtype=bool), np.zeros(n, dtype=np.int64), np.zeros((n, 5))
    best = np.full(n, -np.inf)
    done, width = 0, ROUND
    # Out of the links' reach, or a hand in the body's way: no sample is clear.
    rows = np.flatnonzero(np.broadcast_to(c.reachable, (n,)))
    rows = rows[~hand_blocked(model, pts[rows], model.body)]
    while rows.size and done < idx.size:
        cols = order[rows, done : done + width]
        owner, sample = np.repeat(rows, cols.shape[1]), cols.ravel()
        gap = np.full(sample.shape, -np.inf)
        angles = np.zeros((sample.size, 5))
        for branch in (0, 1):
            sel = np.flatnonzero(sample // SWIVELS == branch)
            cb = take(c, owner[sel])
            qb, viol = at(model, cb, phis[sample[sel] % SWIVELS], ARRAY, branch)
            angles[sel] = np.stack(np.broadcast_arrays(*qb), axis=1)
            inside = sel[(np.broadcast_to(viol, sel.shape) <= LIMIT_SLACK) & np.broadcast_to(cb.reachable, sel.shape)]
            gap[inside] = clearance_batch(model, angles[inside], model.body, MARGIN, min(floor, MARGIN))[0]
        np.maximum.at(best, owner, gap)
        clear = (gap >= MARGIN).reshape(cols.shape)
        hit = clear.any(axis=1)
        pick = clear[hit].argmax(axis=1)
        where[rows[hit]] = cols[hit, pick]
        q[rows[hit]] = angles.reshape(cols.shape + (5,))[hit, pick]
        ok[rows[hit]] = True
        done += width
        width *= 2
        rows = rows[~hit]
    return ok, np.clip(q, model.lower, model.upper), where, best
