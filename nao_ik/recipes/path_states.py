"""A path's states: every configuration of each of its points allowed by the joint limits, sampled along the
elbow's swivel circle closely enough that a continuous motion has a state near it at every point (step 1 of
:mod:`nao_ik.recipes.path_plan`, whose docstring gives the method and why it holds).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..geometry.proof import arcs
from ..geometry.scalar.swivel import SLACK
from ..geometry.swivel import at, circle, margin_at, swivel_angle, take
from ..kinematics.chain import chain
from ..kinematics.ops import ARRAY
from ..model.arm import ArmModel

#: Largest joint change (rad, the four arm joints) between consecutive states of an arc.
DELTA = 0.025
#: Swivels a turn on the states' base grid, and the most halvings of a piece.
GRID = 64
DEPTH = 12
#: Violation (rad) below which a computed configuration counts as inside the limits.
TOLERANCE = 1e-7
#: Points whose states are sampled at once: their working arrays (about 100 kB a point) do not grow with the path.
BATCH = 256


class Layers(NamedTuple):
    """States of some points: (M, K) padded, ``ok`` False in the padding and where blocked."""

    q: np.ndarray  # (M, K, 5)
    ok: np.ndarray  # (M, K)
    phi: np.ndarray  # (M, K) swivel
    root: np.ndarray  # (M, K) ElbowRoll root


def allowed(model: ArmModel, x: np.ndarray, wrist: float) -> tuple:
    """Every point's allowed arcs, the limits alone: (circles, point (A,), root (A,), start (A,), end (A,)),
    start < end <= start + 2 pi."""
    free = model.bodiless()
    m = len(x)
    c = circle(free, [x[:, 0], x[:, 1], x[:, 2]], np.full(m, float(wrist)), ARRAY)
    start, end = arcs(free, c, list(free.lower[:4]), list(free.upper[:4]))
    rows, cols = np.nonzero(~np.isnan(start))
    s, e = start[rows, cols], end[rows, cols]
    sub = take(c, rows)
    reach = np.broadcast_to(np.asarray(c.reachable), (m,))[rows]
    out = []
    for b in (0, 1):
        _, margin = margin_at(free, sub, 0.5 * (s + e), ARRAY, b)
        keep = (np.broadcast_to(margin, s.shape) >= -SLACK) & reach
        out.append((rows[keep], np.full(int(keep.sum()), b, dtype=np.int8), s[keep], e[keep]))
    return (c,) + tuple(np.concatenate(a) for a in zip(*out))


def states(model: ArmModel, x: np.ndarray, wrist: float, q0: np.ndarray | None = None,
            delta: float = DELTA) -> Layers:  # fmt: skip
    """Step 1: every point's allowed arcs (the limits alone), sampled so that consecutive states are within
    ``delta``.

    With ``q0``, the first point also has states at ``q0``'s elbow's swivel on its circle (both roots, where
    inside the limits): the start's nearest.

    A point repeated bit for bit (a path that comes back to its places) is sampled once; the points are sampled
    BATCH at a time, so that the working arrays do not grow with the path.
    """
    free = model.bodiless()
    m = len(x)
    if not m:
        return pad(0, np.zeros(0, np.int64), np.zeros((0, 5)), np.zeros(0), np.zeros(0, np.int8))
    _, first, inverse = np.unique(x, axis=0, return_index=True, return_inverse=True)
    keep = np.sort(first)  # the distinct points, in path order
    parts = [pad(keep[a : a + BATCH].size, *sampled(free, x[keep[a : a + BATCH]], wrist, delta))
             for a in range(0, keep.size, BATCH)]  # fmt: skip
    start = [] if q0 is None else start_states(free, x[0], wrist, q0)
    index = np.searchsorted(keep, first)[inverse.reshape(-1)]  # each point's distinct point
    used = int(parts[0].ok[index[0]].sum())  # a layer's states are its first slots
    width = max(max(p.ok.shape[1] for p in parts), used + len(start))
    if len(parts) == 1 and keep.size == m and width == parts[0].ok.shape[1]:
        lay = parts[0]
    else:  # each point's layer is its distinct point's, the first one's start states beside them
        lay = Layers(*(np.zeros((m, width) + a.shape[2:], a.dtype) for a in parts[0]))
        owner = index // BATCH
        for j in range(len(parts)):
            rows = np.flatnonzero(owner == j)
            for r in (rows[a : a + BATCH] for a in range(0, rows.size, BATCH)):
                for out, got in zip(lay, parts[j]):
                    out[r, : got.shape[1]] = got[index[r] - j * BATCH]
            parts[j] = None  # copied: its memory goes now
    for j, (qb, phi0, b) in enumerate(start):
        lay.q[0, used + j], lay.ok[0, used + j], lay.phi[0, used + j], lay.root[0, used + j] = qb, True, phi0, b
    return lay


def start_states(free: ArmModel, x: np.ndarray, wrist: float, q0: np.ndarray) -> list:
    """(angles, swivel, root) of the configurations of point ``x`` at ``q0``'s elbow's swivel on its circle, both
    roots, where inside the limits."""
    elbow = chain(free, [float(v) for v in q0]).origins[2]
    c = circle(free, [x[None, 0], x[None, 1], x[None, 2]], np.full(1, float(wrist)), ARRAY)
    phi0 = float(swivel_angle(free, c, [np.array([v]) for v in elbow], ARRAY)[0])
    out = []
    for b in (0, 1):
        qb, vb = configurations(free, c, np.array([0]), np.array([phi0]), np.array([b], dtype=np.int8))
        if vb[0]:
            out.append((qb[0], phi0, b))
    return out


def sampled(free: ArmModel, x: np.ndarray, wrist: float, delta: float) -> tuple:
    """:func:`states`' samples of the points ``x`` (the limits alone): (point (S,), angles (S, 5), swivel (S,),
    root (S,)) of the valid ones, each point's in order along its arcs."""
    c, pt_a, root_a, s, e = allowed(free, x, wrist)
    # The base samples: each arc's two ends and the grid's swivels inside it.
    h = 2.0 * math.pi / GRID
    first = np.floor((s + math.pi) / h) + 1.0
    inner = np.maximum(np.ceil((e + math.pi) / h) - first, 0.0).astype(np.int64)
    count = inner + 2
    arc = np.repeat(np.arange(s.size), count)
    slot = np.arange(arc.size) - np.repeat(np.cumsum(count) - count, count)
    phi = np.where(slot == 0, s[arc], np.where(slot == count[arc] - 1, e[arc], -math.pi + (first[arc] + slot - 1) * h))
    q, valid = configurations(free, c, pt_a[arc], phi, root_a[arc])
    # Halve every piece whose ends are more than ``delta`` apart.
    for _ in range(DEPTH):
        gap = np.abs(np.diff(q[:, :4], axis=0)).max(axis=1)
        cut = np.flatnonzero((gap > delta) & (arc[1:] == arc[:-1]))
        if not cut.size:
            break
        mid = 0.5 * (phi[cut] + phi[cut + 1])
        qm, vm = configurations(free, c, pt_a[arc[cut]], mid, root_a[arc[cut]])
        phi, q = np.insert(phi, cut + 1, mid), np.insert(q, cut + 1, qm, axis=0)
        valid, arc = np.insert(valid, cut + 1, vm), np.insert(arc, cut + 1, arc[cut])
    return pt_a[arc][valid], q[valid], phi[valid], root_a[arc][valid]


def configurations(free: ArmModel, c, rows: np.ndarray, phi: np.ndarray, root: np.ndarray) -> tuple:
    """The configurations at swivels ``phi`` on circles ``rows`` of ``c``, roots ``root``: (angles (n, 5) clipped
    into the limits, inside (n,): within TOLERANCE of them and on the point)."""
    if not phi.size:
        return np.zeros((0, 5)), np.zeros(0, dtype=bool)
    got, violation = at(free, take(c, rows), phi, ARRAY, root)
    q = np.clip(np.stack(np.broadcast_arrays(*got), axis=1), free.lower, free.upper)
    inside = (np.broadcast_to(violation, phi.shape) <= TOLERANCE) & np.broadcast_to(c.reachable, (len(c.a),))[rows]
    return q, inside


def pad(m: int, point: np.ndarray, q: np.ndarray, phi: np.ndarray, root: np.ndarray) -> Layers:
    """States listed with their point, as (m, K) padded layers."""
    order = np.argsort(point, kind="stable")
    point, q, phi, root = point[order], q[order], phi[order], root[order]
    count = np.bincount(point, minlength=m)
    k = max(int(count.max()) if m else 0, 1)
    slot = np.arange(point.size) - np.repeat(np.cumsum(count) - count, count)
    out = Layers(np.zeros((m, k, 5)), np.zeros((m, k), dtype=bool), np.zeros((m, k)), np.zeros((m, k), np.int8))
    out.q[point, slot], out.ok[point, slot], out.phi[point, slot], out.root[point, slot] = q, True, phi, root
    return out
