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

import numpy as np

from ..body import MARGIN
from ..collision import clearance_batch
from ..model import ArmModel
from ..ops import ARRAY
from .swivel import at, circle

#: Swivels sampled on each point's circle (both ElbowRoll branches), and the limits' rounding slack.
SWIVELS = 24
LIMIT_SLACK = 1e-9


def swivel_samples(model: ArmModel, pts: np.ndarray, wrist: np.ndarray, phis: np.ndarray, branch: object,
                   body: bool = True) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The configurations at sampled swivels of each point, and how clear each is.

    Args:
        model: the arm (its body, if any, is checked).
        pts: (N, 3) hand points.
        wrist: (N,) WristYaw held (or one value).
        phis: (K,) swivels shared by every point, or (N, K) per point.
        branch: the ElbowRoll root (0 or 1), or (N, K) roots, one per sample.
        body: False: the limits alone (the caller checks the body where it needs to).

    Returns:
        (angles (N, K, 5) clipped into the limits; margin (N, K): the clearance to the body minus MARGIN
        (metres; +inf without a body, or with ``body`` False) where the configuration is inside the limits
        (to LIMIT_SLACK) and the point within the links' reach, -inf where not). A sample is allowed where its
        margin is >= 0.
    """
    n = pts.shape[0]
    phis = np.broadcast_to(np.asarray(phis, dtype=float), (n, np.shape(phis)[-1]))
    k = phis.shape[1]
    tf = np.repeat(pts, k, axis=0)
    c = circle(model, [tf[:, i] for i in range(3)], np.repeat(np.broadcast_to(wrist, (n,)), k), ARRAY)
    root = branch if isinstance(branch, int) else np.asarray(branch).ravel()
    qb, viol = at(model, c, phis.ravel(), ARRAY, root)
    qa = np.clip(np.stack(np.broadcast_arrays(*qb), axis=1), model.lower, model.upper)
    m = np.full(qa.shape[0], -np.inf)
    inside = np.flatnonzero((np.broadcast_to(viol, m.shape) <= LIMIT_SLACK) & np.broadcast_to(c.reachable, m.shape))
    # The body's clearance only where the limits allow.
    m[inside] = clearance_batch(model, qa[inside], model.body)[0] - MARGIN if model.body and body else np.inf
    return qa.reshape(n, k, 5), m.reshape(n, k)


def sampled_clear(model: ArmModel, pts: np.ndarray, wrist: np.ndarray, q0: np.ndarray | None = None
                  ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """(found (N,), angles (N, 5)): whether a sampled swivel of each point is inside the limits and clear.

    SWIVELS swivels on both ElbowRoll branches; the angles are the clearest allowed one, or with ``q0``
    (N, 5) the clear one with the shortest move from it (:func:`~nao_ik.geometry.nearest.move_time`).
    """
    n = pts.shape[0]
    phis = np.linspace(-math.pi, math.pi, SWIVELS, endpoint=False)
    best_q, best_m = np.zeros((n, 5)), np.full(n, -np.inf)
    for branch in (0, 1):
        qa, m = swivel_samples(model, pts, wrist, phis, branch)
        if q0 is not None:  # rank the clear ones by move time instead (a clear one always beats a blocked one)
            speed = np.array([j.max_velocity for j in model.joints])
            seconds = (np.abs(qa - np.asarray(q0)[:, None, :]) / speed).max(axis=2)
            m = np.where(m >= 0.0, 1e3 - seconds, m)
        j = m.argmax(axis=1)
        mj = m[np.arange(n), j]
        take = mj > best_m
        best_m = np.where(take, mj, best_m)
        best_q = np.where(take[:, None], qa[np.arange(n), j], best_q)
    return best_m >= 0.0, best_q
