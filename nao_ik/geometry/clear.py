"""Where the body is in the way: the nearest clear pose toward a target, and why a target is not reached.

A target that only configurations through the body reach (inside the torso,
or reachable only with the forearm across it) has no clear exact solution.
The answer is then the clear configuration whose hand gets nearest to it:
:func:`closest_clear` searches along rays from the target (or from where the
limits alone would put the hand) in RAYS directions, takes on each ray the
first point with a clear exact solution among the sampled swivels of its
circle (:func:`~nao_ik.geometry.sampled.sampled_clear`, in one batch over every ray and step),
bisects that step, keeps the point nearest the target, and answers there the
clear exact solution nearest the start (:func:`~nao_ik.geometry.nearest.nearest`
with the body). A search, not a certificate: the point is clear and exact,
and within the bisection's resolution (STEP / 2^BISECT) of the nearest such
point along those rays.

:func:`unreachable_reason` says why a target is not reached: ``"out of reach"``
(nearer or farther than the rigid links allow), ``"joint limits"`` (within
the links' reach but no swivel fits the limits), or ``"collision: <part>"``
(the limits allow it, the body does not); ``"not converged"`` where a clear
exact solution exists (a method that stopped short of it).
"""

from __future__ import annotations

import itertools
from typing import NamedTuple, Sequence

import numpy as np

from ..kinematics.chain import chain, forward_batch
from ..kinematics.ops import ARRAY, SCALAR
from ..model.arm import ArmModel
from ..model.body import MARGIN, NAMES
from .collision import clearance, clearance_batch, nearest_core
from .nearest import nearest
from .sampled import sampled_clear
from .swivel import circle

#: Ray directions: the 6 faces of a cube, plus the way out of the nearest part.
RAYS = tuple(d for d in itertools.product((-1.0, 0.0, 1.0), repeat=3) if sum(map(abs, d)) == 1.0)
#: Steps along each ray (metres) and how many; bisections of the first clear step.
STEP = 0.02
STEPS = 8
#: The bisections tried in one batch each (:func:`_bisect`): in as few batches as the points they try (2^levels - 1
#: each) cost no more than the batches they spare.
AT_ONCE = (3, 2)
BISECT = sum(AT_ONCE)


class Clear(NamedTuple):
    """What :func:`closest_clear` returns.

    Attributes:
        angles: five joint angles, inside the limits and clear of the body (or the start, if none found).
        distance: the hand's distance to the target, metres.
        found: False if no ray found a clear point (the start posture is returned).
    """

    angles: tuple
    distance: float
    found: bool


def closest_clear(model: ArmModel, target: Sequence[float], q0: Sequence[float], base: Sequence[float] | None = None
                  ) -> Clear:  # fmt: skip
    """The clear configuration found nearest to ``target`` (then nearest the start), see the module docstring.

    Args:
        model: the arm, with its body.
        target: FRAME_TORSO metres.
        q0: start posture (WristYaw held).
        base: where the rays start (default the target; a closest-attainable hand point for unreachable ones).

    Returns:
        :class:`Clear`.
    """
    t = np.asarray(target, dtype=float)[None]
    b = t if base is None else np.asarray(base, dtype=float)[None]
    q, dist, found = closest_clear_batch(model, t, np.asarray(q0, dtype=float)[None], b)
    return Clear(tuple(float(x) for x in q[0]), float(dist[0]), bool(found[0]))


def closest_clear_batch(model: ArmModel, targets: np.ndarray, q0: np.ndarray, bases: np.ndarray | None = None
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """:func:`closest_clear` of many targets (M, 3) from starts (M, 5), every ray of every target in one batch.

    Returns:
        (angles (M, 5), distances (M,), found (M,)); where nothing clear was found, the start posture.
    """
    targets = np.asarray(targets, dtype=float)
    m = targets.shape[0]
    bases = targets if bases is None else np.asarray(bases, dtype=float)
    dirs = ray_directions(model, bases)
    k = dirs.shape[1]
    steps = STEP * np.arange(1, STEPS + 1)
    pts = bases[:, None, None, :] + steps[None, None, :, None] * dirs[:, :, None, :]  # (M, K, S, 3)
    wrist = np.repeat(q0[:, 4], k * STEPS)
    found, q = sampled_clear(model, pts.reshape(-1, 3), wrist)
    found, q = found.reshape(m, k, STEPS), q.reshape(m, k, STEPS, 5)
    hit = found.any(axis=2)  # (M, K)
    first = found.argmax(axis=2)
    hi = steps[first]
    lo = np.where(first > 0, steps[np.maximum(first - 1, 0)], 0.0)
    best_q = np.take_along_axis(q, first[:, :, None, None], axis=2)[:, :, 0]
    rows = np.flatnonzero(hit.ravel())
    d_flat, b_flat = dirs.reshape(-1, 3)[rows], np.repeat(bases, k, axis=0)[rows]
    w_flat = np.repeat(q0[:, 4], k)[rows]
    lo, hi, bq = lo.ravel()[rows], hi.ravel()[rows], best_q.reshape(-1, 5)[rows]
    for levels in AT_ONCE:
        lo, hi, bq = _bisect(model, b_flat, d_flat, w_flat, lo, hi, bq, levels)
    dist = np.full(m * k, np.inf)
    dist[rows] = np.linalg.norm(forward_batch(model, bq) - np.repeat(targets, k, axis=0)[rows], axis=1)
    allq = np.zeros((m * k, 5))
    allq[rows] = bq
    pick = dist.reshape(m, k).argmin(axis=1)
    out_q = allq.reshape(m, k, 5)[np.arange(m), pick]
    found_any = hit.any(axis=1)
    out_q = np.where(found_any[:, None], out_q, q0)
    # There, the sampled clear configuration with the shortest move from the start.
    rows = np.flatnonzero(found_any)
    if rows.size:
        ok, nq = sampled_clear(model, forward_batch(model, out_q[rows]), q0[rows, 4], q0[rows])
        out_q[rows[ok]] = nq[ok]
    return out_q, np.linalg.norm(forward_batch(model, out_q) - targets, axis=1), found_any


def _bisect(model: ArmModel, bases: np.ndarray, dirs: np.ndarray, wrist: np.ndarray, lo: np.ndarray, hi: np.ndarray,
            q: np.ndarray, levels: int) -> tuple:  # fmt: skip
    """``levels`` bisections of each ray's bracket (lo, hi] (the clear end hi, its sample ``q``): every midpoint
    they may take, 2^levels - 1 per ray, tried in one batch, then the bisections replayed on them (the same
    midpoints and answers as one at a time, in one batch instead of ``levels``).

    Returns:
        (lo, hi, q) after them.
    """
    n = lo.size
    if not n:
        return lo, hi, q
    los, his, mids = [lo[:, None]], [hi[:, None]], []
    for _ in range(levels):  # the tree, level by level: node j's halves are nodes 2j (clear at its mid) and 2j + 1
        mid = 0.5 * (los[-1] + his[-1])
        mids.append(mid)
        los.append(np.stack([los[-1], mid], axis=2).reshape(n, -1))
        his.append(np.stack([mid, his[-1]], axis=2).reshape(n, -1))
    width = [m.shape[1] for m in mids]
    flat = np.concatenate(mids, axis=1)  # (n, 2^levels - 1)
    ray = np.repeat(np.arange(n), flat.shape[1])
    ok, qm = sampled_clear(model, bases[ray] + flat.ravel()[:, None] * dirs[ray], wrist[ray])
    ok, qm = ok.reshape(n, -1), qm.reshape(n, -1, 5)
    node, first, rows = np.zeros(n, dtype=np.int64), 0, np.arange(n)
    for k, w in enumerate(width):
        at = first + node
        clear = ok[rows, at]
        mid = mids[k][rows, node]
        hi, lo = np.where(clear, mid, hi), np.where(clear, lo, mid)
        q = np.where(clear[:, None], qm[rows, at], q)
        node, first = 2 * node + ~clear, first + w
    return lo, hi, q


def ray_directions(model: ArmModel, bases: np.ndarray) -> np.ndarray:
    """(M, K, 3) the unit directions searched from each base (M, 3): the way out of the nearest part, then RAYS.

    The way out of a part is from the nearest point of its core (a capsule's axis, a rounded box's box) to the
    base (forward where the base is on the core).
    """
    bases = np.asarray(bases, dtype=float)
    grid = np.array(RAYS) / np.linalg.norm(RAYS, axis=1)[:, None]
    core, radius = nearest_core(bases, model.body)
    w = bases[:, None, :] - core  # (M, parts, 3)
    length = np.linalg.norm(w, axis=2)
    near = (length - radius).argmin(axis=1)
    out, size = w[np.arange(len(bases)), near], length[np.arange(len(bases)), near]
    out = np.where(size[:, None] < 1e-9, [1.0, 0.0, 0.0], out / np.maximum(size, 1e-9)[:, None])
    return np.concatenate([out[:, None], np.broadcast_to(grid, (len(bases),) + grid.shape)], axis=1)


def unreachable_reason(model: ArmModel, target: Sequence[float], q0: Sequence[float]) -> str:
    """Why no clear exact solution reaches ``target`` (see the module docstring)."""
    t = [float(x) for x in target]
    c = circle(model, t, float(q0[4]), SCALAR)
    if not c.reachable:
        return "out of reach"
    free = nearest(model.bodiless(), t, [float(x) for x in q0], SCALAR)
    if not free.found:
        return "joint limits"
    clr = clearance(model, model.clamp(free.q), model.body)
    if model.body and clr.distance < MARGIN:
        return f"collision: {clr.part}"
    return "not converged"  # a clear exact solution exists: the method stopped short of it


def unreachable_reasons(model: ArmModel, targets: np.ndarray, q0: np.ndarray) -> np.ndarray:
    """:func:`unreachable_reason` of many targets (M, 3) from starts (M, 5), in one batch: (M,) str."""
    targets, q0 = np.asarray(targets, dtype=float), np.asarray(q0, dtype=float)
    m = targets.shape[0]
    out = np.full(m, "not converged", dtype=object)
    if m == 0:
        return out
    cols = [targets[:, i] for i in range(3)]
    c = circle(model, cols, q0[:, 4], ARRAY)
    free = nearest(model.bodiless(), cols, [q0[:, i] for i in range(5)], ARRAY)
    found = np.broadcast_to(free.found, (m,))
    q = np.clip(np.stack(np.broadcast_arrays(*free.q), axis=1), model.lower, model.upper)
    if model.body:
        dist, part = clearance_batch(model, q, model.body, MARGIN)
        for i in np.flatnonzero(found & (dist < MARGIN)):
            out[i] = f"collision: {NAMES[part[i]]}"
    out[~found] = "joint limits"
    out[~np.broadcast_to(c.reachable, (m,))] = "out of reach"
    return out


def hand(model: ArmModel, q: Sequence[float]) -> list:
    """The hand point of one configuration."""
    return chain(model, [float(x) for x in q]).hand
