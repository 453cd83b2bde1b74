"""The proof that a batch's answers are the nearest: :func:`~nao_ik.geometry.scalar.intervals.faster_arcs` on numpy.

A single target's search ends with a proof (:meth:`~nao_ik.geometry.scalar.nearest.Search.beat`):
the swivels of every move shorter than the answer's are the allowed intervals of the joint limits
narrowed to a band around the start, in closed form, and the answer is the nearest where there are
none. Here the same test runs elementwise over many targets: the boundaries of the narrowed limits
(:func:`~nao_ik.geometry.scalar.intervals.boundary_swivels`, the roots that are no boundary left out as
there), sorted per target, cut each circle into arcs, and the configurations at the arcs' middles,
both ElbowRoll branches, decide whether any arc is allowed. Single allowed points are left out, as
``faster_arcs`` leaves them out, and so are arcs narrower than 1e-12 rad (``faster_arcs`` judges
those; they arise only within about 1e-11 s of the nearest move time, far below the BEAT the
callers subtract).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ..kinematics.ops import ARRAY
from ..model.arm import ArmModel
from .recovery import forearm, upper_arm
from .scalar.intervals import ROOT_SIDE
from .scalar.swivel import SLACK
from .swivel import circle, margin_at, take

_HALF = 0.5 * math.pi


def shorter_exists(model: ArmModel, t: Sequence[Any], q0: Sequence[Any], seconds: np.ndarray) -> np.ndarray:
    """Per target: whether an allowed configuration on its circle moves from ``q0`` in at most ``seconds``.

    Args:
        model: the arm (its joint limits; the body is not looked at).
        t: the targets' three coordinates, (N,) arrays.
        q0: the five start angles, (N,) arrays (inside the limits); WristYaw is held at q0's.
        seconds: (N,) move times at full speed.

    Returns:
        (N,) bool: False where no such configuration exists (the answer that takes ``seconds`` plus
        the margin the caller subtracted is the nearest), True where some arc of them does.
    """
    n = seconds.shape[0]
    q0 = [np.broadcast_to(np.asarray(x, dtype=float), (n,)) for x in q0]
    c = circle(model, [np.broadcast_to(np.asarray(x, dtype=float), (n,)) for x in t], q0[4], ARRAY)
    lo, hi = [], []
    for j, joint in enumerate(model.joints[:4]):
        r = seconds * joint.max_velocity
        lo.append(np.maximum(joint.lower, q0[j] - r))
        hi.append(np.minimum(joint.upper, q0[j] + r))
    start, end = arcs(model, c, lo, hi)
    mid = 0.5 * (start + end)
    mid[seconds <= 0.0] = np.nan  # no move takes at most no time (faster_arcs' own test)
    rows, cols = np.nonzero(~np.isnan(mid))
    found = np.zeros(n, dtype=bool)
    if rows.size == 0:
        return found
    sub = take(c, rows)
    band = [(lo[j][rows], hi[j][rows]) for j in range(4)]
    free = model.bodiless()
    for branch in (0, 1):
        q, m = margin_at(free, sub, mid[rows, cols], ARRAY, branch)
        for j in range(4):
            m = np.minimum(m, np.minimum(q[j] - band[j][0], band[j][1] - q[j]))
        found[rows[m >= -SLACK]] = True  # WristYaw is the circle's, held at the start's
    return found


def arcs(model: ArmModel, c: Any, lo: list, hi: list) -> tuple[np.ndarray, np.ndarray]:
    """The arcs into which the (narrowed) limits' boundaries cut each circle.

    No limit changes state inside an arc, so the configuration at any swivel inside decides the whole arc
    (each ElbowRoll root on its own).

    Args:
        model: the arm; c: the circles (:func:`~nao_ik.geometry.swivel.circle` on (N,) arrays).
        lo, hi: the four arm joints' lower and upper limits, each a float or an (N,) array.

    Returns:
        (start, end), (N, K) swivels, NaN-padded, start in [-pi, pi] and start < end <= start + 2 pi: one
        arc a slot; a circle with no boundary is the one arc (-pi, pi). Arcs narrower than 1e-12 rad (a
        repeated root) are left out.
    """
    cands = np.concatenate(_boundaries(model, c, lo, hi), axis=1)  # (N, K), NaN where no root
    cands.sort(axis=1)  # NaN last
    count = np.sum(~np.isnan(cands), axis=1)
    k = cands.shape[1]
    slot = np.arange(k)[None, :]
    nxt = np.take_along_axis(cands, np.where(slot + 1 < count[:, None], slot + 1, 0), axis=1)
    nxt = np.where(slot + 1 == count[:, None], nxt + 2.0 * math.pi, nxt)
    arc = (slot < count[:, None]) & (nxt - cands > 1e-12)  # a repeated root is no arc
    whole = (count[:, None] == 0) & (slot == 0)
    start = np.where(whole, -math.pi, np.where(arc, cands, np.nan))
    return start, np.where(whole, math.pi, np.where(arc, nxt, np.nan))


def _roots(alpha: Any, beta: Any, gamma: Any) -> list:
    """:func:`~nao_ik.geometry.scalar.intervals._trig_roots` elementwise: both roots, NaN where there are none."""
    r = np.hypot(alpha, beta)
    with np.errstate(divide="ignore", invalid="ignore"):
        k = gamma / r
    ok = (r >= 1e-15) & (k <= 1.0 + 1e-12) & (k >= -1.0 - 1e-12)
    d = np.arctan2(beta, alpha)
    h = np.arccos(np.clip(np.where(ok, k, 0.0), -1.0, 1.0))
    out = []
    for x in (d - h, d + h):
        out.append(np.where(ok, np.arctan2(np.sin(x), np.cos(x)), np.nan))
    return out


def _boundaries(model: ArmModel, c: Any, lo: list, hi: list) -> list:
    """Every swivel where a joint meets its (narrowed) limit, as
    :func:`~nao_ik.geometry.scalar.intervals.boundary_swivels` finds them: a list of (N, m) arrays, NaN where a root
    does not exist or is no boundary."""
    l1, p = upper_arm(model)
    ux, uy, _ = model.joints[2].offset
    s = model.shoulder
    an = [c.a * x for x in c.n]
    ru = [c.r * x for x in c.u]
    rv = [c.r * x for x in c.v]
    out = []
    # ShoulderRoll: (E - S)_y = L1 sin(bound + p).
    for b in (lo[1], hi[1]):
        out += _roots(ru[1], rv[1], l1 * np.sin(np.clip(b + p, -_HALF, _HALF)) - an[1])
    # ShoulderPitch: the plane of q1 = b, on its q1 = b half.
    for b in (lo[0], hi[0]):
        cb, sb = np.cos(b), np.sin(b)
        for x in _roots(-cb * ru[2] - sb * ru[0], -cb * rv[2] - sb * rv[0], cb * an[2] + sb * an[0]):
            cx, sx = np.cos(x), np.sin(x)
            side = (an[0] + cx * ru[0] + sx * rv[0]) * cb - (an[2] + cx * ru[2] + sx * rv[2]) * sb
            out.append(np.where(side >= -ROOT_SIDE, x, np.nan))
    # Elbow joints, in the ElbowYaw parametrisation: (ElbowYaw, ElbowRoll) pairs, then their swivels.
    f = forearm(model, c.wrist, ARRAY)
    fx, fy, fz = (np.broadcast_to(x, c.a.shape) for x in f)
    fl2 = fx * fx + fy * fy + fz * fz
    d = [c.hand[i] - s[i] for i in range(3)]
    k0 = 0.5 * (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] - l1 * l1 - fl2)
    sf = np.arctan2(fy, fx)
    pairs = []
    for b4 in (lo[3], hi[3], -sf, math.pi - sf):
        cb, sb = np.cos(b4), np.sin(b4)
        for q3 in _roots(uy * (fx * sb + fy * cb), -uy * fz, k0 - ux * (fx * cb - fy * sb)):
            pairs.append((q3, np.broadcast_to(b4, q3.shape)))
    for b3 in (lo[2], hi[2]):
        c3, s3 = np.cos(b3), np.sin(b3)
        for q4 in _roots(ux * fx + uy * c3 * fy, uy * c3 * fx - ux * fy, k0 + uy * s3 * fz):
            pairs.append((np.broadcast_to(b3, q4.shape), q4))
    q3 = np.stack([a for a, _ in pairs], axis=1)
    q4 = np.stack([b for _, b in pairs], axis=1)
    out += _swivels(model, c, q3, q4, d, (fx, fy, fz))
    return [np.asarray(x).reshape(x.shape[0], -1) for x in out]


def _swivels(model: ArmModel, c: Any, q3: np.ndarray, q4: np.ndarray, d: list, f: tuple) -> list:
    """:func:`~nao_ik.geometry.scalar.intervals._swivels` elementwise over (N, m) pairs: two (N, m) arrays."""
    _, p = upper_arm(model)
    ux, uy, _ = model.joints[2].offset
    f0, f1, f2 = (x[:, None] for x in f)
    d0, d1, d2 = (x[:, None] for x in d)
    u = [x[:, None] for x in c.u]
    v = [x[:, None] for x in c.v]
    c3, s3, c4, s4 = np.cos(q3), np.sin(q3), np.cos(q4), np.sin(q4)
    gy = s4 * f0 + c4 * f1
    p0, p1, p2 = ux + (c4 * f0 - s4 * f1), uy + c3 * gy - s3 * f2, s3 * gy + c3 * f2
    rp = np.hypot(p0, p1)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = d1 / rp
    th, a0 = np.arctan2(p1, p0), np.arcsin(np.clip(x, -1.0, 1.0))
    out = []
    for q2 in (a0 - th, math.pi - a0 - th):
        y = np.mod(q2 + p + math.pi, 2.0 * math.pi) - math.pi
        keep = (rp >= 1e-12) & (np.abs(y) <= _HALF + ROOT_SIDE)
        c2, s2 = np.cos(q2), np.sin(q2)
        wx = p0 * c2 - p1 * s2
        q1 = np.arctan2(p2 * d0 - wx * d2, wx * d0 + p2 * d2)
        c1, s1 = np.cos(q1), np.sin(q1)
        ex = ux * c2 - uy * s2
        w0, w1, w2 = c1 * ex, ux * s2 + uy * c2, -s1 * ex
        phi = np.arctan2(w0 * v[0] + w1 * v[1] + w2 * v[2], w0 * u[0] + w1 * u[1] + w2 * u[2])
        out.append(np.where(keep, phi, np.nan))
    return out
