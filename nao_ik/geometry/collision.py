"""Signed distance of an arm's links to NAO's body (:mod:`nao_ik.model.body`).

The arm's links are capsules and the body's parts capsules or rounded boxes, so the distance between a
link and a part is the distance between the link's segment and the part's core (a segment, or a box) minus
both radii (negative: they overlap). The arm is clear when that distance is at least the margin for every
pair.

Two forms, the same numbers:

- :func:`clearance`: one configuration in pure Python:
  :func:`nao_ik.geometry.scalar.clearance.clearance` (the common subset of
  Python 2.7 and 3; the robot runtime runs the same code), each link against
  each part, a pair skipped when its bound shows it is farther than the cap.
- :func:`clearance_batch`: many configurations with numpy, every pair's bound, the exact distance only where
  the bound is nearer than the nearest so far (or the cap); few configurations all links in one pass.

Distances beyond the cap (at most CAP, :data:`nao_ik.geometry.scalar.clearance.CAP`) are
reported as the cap: only the near region matters to a solver, and the capped
value is still continuous in the configuration. A caller that only asks whether the margin holds passes it as
the cap, and fewer pairs need their exact distance.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ..kinematics.chain import chain
from ..kinematics.ops import ARRAY
from ..model.arm import ArmModel
from ..model.body import BODY, LINKS, MARGIN, NAMES, OTHER_ARM, Capsule, Shape, body, shape
from ..model.body_data import HAND_REACH, HEAD_REST, LEGS_REST, SHOULDER_BACK, STAND_HIP_PITCH
from .scalar.clearance import CAP, KEEP, Clearance, region_rows
from .scalar.clearance import clearance as scalar_clearance
from .scalar.clearance import link_points as scalar_link_points
from .scalar.sweep import hull, way_box
from .scalar.swivel import arm as scalar_arm


def arm_capsules(model: ArmModel, q: Sequence[float], part: str = OTHER_ARM) -> tuple[Capsule, ...]:
    """An arm's links at posture ``q`` as body capsules (for the other arm: :data:`~nao_ik.model.body.OTHER_ARM`).

    Args:
        model: that arm.
        q: its five joint angles.
        part: the name the capsules carry.

    Returns:
        The arm's shoulder (:func:`~nao_ik.model.body_data.shoulder_row`), then one capsule per link of
        :data:`~nao_ik.model.body.LINKS`, the whole link (its shoulder part too).
    """
    q = [float(x) for x in q]
    return tuple(Capsule(*row) for row in region_rows(model, q, q, part))  # a box of one posture: the links exactly


def arm_region(model: ArmModel, postures: Sequence[Sequence[float]], grow_low: Sequence[float] | None = None,
               grow_high: Sequence[float] | None = None, part: str = OTHER_ARM) -> tuple[Capsule, ...]:  # fmt: skip
    """Capsules holding an arm's links in every posture of the joint-space box around ``postures``.

    An arm on its way from one posture to another, at any timing of its joints (each monotonic, as
    setAngles moves them), stays in the box between the two; a retargeted joint may go past it by
    :func:`~nao_ik.geometry.scalar.sweep.overshoot` (``grow_low``, ``grow_high``). The box is split across
    the joint that moves the links most (:func:`nao_ik.geometry.scalar.clearance.region_rows`).

    Returns:
        The links at each piece's centre, each radius grown by that piece's growth.
    """
    lo, hi = hull([[float(x) for x in q] for q in postures], grow_low, grow_high)
    return tuple(Capsule(*row) for row in region_rows(model, lo, hi, part))


def posture_body(
    hip_pitch: tuple[float, float] | None = None,
    other: tuple[ArmModel, Sequence[float]] | None = None,
    other_aim: Sequence[float] | None = None,
    other_fraction: float = 1.0,
    head: tuple[float, float] | None = HEAD_REST,
    other_earlier: Sequence[tuple] = (),
    legs: tuple = LEGS_REST,
) -> tuple[Capsule, ...]:
    """The body at the robot's posture: the thighs at their HipPitch, the other arm where it is or may go.

    Args:
        hip_pitch: (LHipPitch, RHipPitch), radians; None: standing.
        other: (the other arm's model, its five angles); None: left out.
        other_aim: the other arm's last command where it may still be on its way there (None: it is still):
            the other arm is then anywhere on its way (:func:`arm_region`), overshoot included.
        other_fraction: that command's fractionMaxSpeed.
        head: (HeadYaw, HeadPitch), radians (default: standing); None: wherever it may be.
        other_earlier: (aim, fraction) of the other arm's commands before ``other_aim`` that its joints may still
            be braking toward (:func:`~nao_ik.geometry.scalar.sweep.way_box`).
        legs: (LHipYawPitch, LHipRoll, RHipYawPitch, RHipRoll), radians (default: standing).

    Returns:
        The shapes (:func:`nao_ik.model.body.body`, then the other arm's shoulder and links, part
        :data:`~nao_ik.model.body.OTHER_ARM`).
    """
    if hip_pitch is None and head == HEAD_REST and tuple(legs) == LEGS_REST:
        shapes = BODY
    else:
        shapes = body(*(hip_pitch or (STAND_HIP_PITCH, STAND_HIP_PITCH)), head=head, legs=tuple(legs))
    if other is not None:
        model, q = other
        if other_aim is None:
            shapes = shapes + arm_capsules(model, q)
        else:
            shapes = shapes + arm_region(model, *way_box(model, q, [*other_earlier, (other_aim, other_fraction)]))
    return shapes


def link_points(model: ArmModel, q: Sequence[Any]) -> list:
    """The chain points the links use: shoulder, elbow, wrist, hand (index as :class:`~nao_ik.model.body.Link`).

    :func:`nao_ik.geometry.scalar.clearance.link_points` (floats) on the model's numbers.
    """
    return scalar_link_points(scalar_arm(model), [float(x) for x in q])


def clearance(model: ArmModel, q: Sequence[float], shapes: Sequence[Shape] = BODY, cap: float = CAP) -> Clearance:
    """Signed distance of one configuration's links to the body.

    Args:
        model: the arm.
        q: five joint angles.
        shapes: the body (default: standing).
        cap: distances beyond it are reported as it (part and link ``""``); at most CAP. A caller that only
            asks whether the links keep the margin passes MARGIN: the pairs farther than it are left out by
            their bounds (about 40 % less work), and any distance below it is the same number.

    Returns:
        :class:`Clearance`.
    """
    q = [float(x) for x in q]
    cap = min(cap, CAP)
    key = (id(model), q, id(shapes))
    last = _LAST[0]  # one read of one tuple: safe against another thread replacing it
    if last is not None and last[0] == key and last[1] is model and last[2] is shapes and last[3] >= cap:
        # The same question again (the nearest search's check, then the answer's), asked with a cap no larger.
        got = last[4]
        return got if got.distance < cap else Clearance(cap, "", "")
    got = scalar_clearance(model, q, shapes, cap)
    _LAST[0] = (key, model, shapes, cap, got)
    return got


#: The last :func:`clearance` asked, as one tuple (key, model, shapes, cap, answer).
_LAST: list = [None]


def clearance_batch(model: ArmModel, q: np.ndarray, shapes: Sequence[Shape] = BODY, cap: float = CAP,
                    floor: float | None = None) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Signed distances of many configurations' links to the body.

    Args:
        model: the arm.
        q: (N, 5) joint angles.
        shapes: the body.
        cap: as :func:`clearance`'s: distances beyond it are reported as it (at most CAP); a caller that asks
            only whether the margin holds passes the margin, and the pairs whose bound is past it are not
            measured exactly.
        floor: where given, a configuration found nearer than it is left at once (its distance and part then
            only say that it is nearer, by one of its links): a caller that only asks whether a distance reaches
            the floor passes it. Without it every distance is exact up to ``cap``.

    Returns:
        (distance (N,) metres capped at ``cap``, as :func:`clearance`; part (N,) int index into
        :data:`~nao_ik.model.body.NAMES`, -1 where every part is beyond the cap).
    """
    q = np.asarray(q, dtype=float)
    n = q.shape[0]
    ch = chain(model, [q[:, i] for i in range(5)], ARRAY)
    s, e, w = ch.origins[0], ch.origins[2], ch.origins[4]
    upper = math.hypot(*model.joints[2].offset)  # shoulder to elbow
    lower = math.hypot(*model.joints[4].offset)  # elbow to wrist
    pts = {
        0: s,
        1: [s[k] - SHOULDER_BACK / upper * (e[k] - s[k]) for k in range(3)],
        2: e,
        4: w,
        5: ch.hand,
        6: [w[k] + HAND_REACH / lower * (w[k] - e[k]) for k in range(3)],
    }
    segments = []  # per link: (its radius, start (3 arrays), direction (3 arrays))
    for ln in LINKS:
        p, e = pts[ln.start], pts[ln.end]
        if ln.skip:
            p = [p[k] + ln.skip * (e[k] - p[k]) for k in range(3)]
        d1 = [np.asarray(e[k] - p[k], dtype=float) for k in range(3)]
        segments.append((ln.radius, [np.asarray(p[k], dtype=float) for k in range(3)], d1))
    shaped = _arrays(shapes)
    cap = min(cap, CAP)
    best = np.full(n, cap)
    part = np.full(n, -1, dtype=np.int64)
    index = shaped[3]

    def nearer(dist: np.ndarray, rows: Any) -> None:  # the rows' nearest part so far, from one link's distances
        k = np.argmin(dist, axis=1)
        low = dist[np.arange(dist.shape[0]), k]
        closer = low < best[rows]
        best[rows] = np.where(closer, low, best[rows])
        part[rows] = np.where(closer, index[k], part[rows])

    if n <= FUSED_ROWS:  # few rows: numpy's per-call cost dominates, so every link in one pass
        p, d1 = ([np.concatenate([seg[i][k] for seg in segments]) for k in range(3)] for i in (1, 2))
        radii = np.repeat([r for r, _, _ in segments], n)
        for dist in np.split(_link_distances(radii, p, d1, cap, shaped), len(segments)):
            nearer(dist, slice(None))
        return best, part
    # Many: link by link, each link's pairs farther than the nearest so far left to their bounds; with ``floor``,
    # the hand first (the link nearest the body most often where the arm is blocked), and only the rows not yet
    # found below it.
    live = np.arange(n)
    for r, p, d1 in segments if floor is None else reversed(segments):
        rows = slice(None) if live.size == n else live
        if live.size < n:
            p, d1 = [x[live] for x in p], [x[live] for x in d1]
        nearer(_link_distances(np.full(live.size, r), p, d1, best[rows], shaped), rows)
        if floor is not None:
            live = live[best[live] >= floor]
    return best, part


#: At most this many configurations, :func:`clearance_batch` measures all links in one pass (its answers are the same
#: either way: a pair left to its bound is never the nearest).
FUSED_ROWS = 256


def _link_distances(radii: np.ndarray, p: list, d1: list, best: Any, shaped: tuple) -> np.ndarray:
    """(M, shapes) distances between link segments p + t d1 (three (M,) arrays each) of ``radii`` (M,) and the
    shapes (:func:`_arrays`), in their order: exact for the capsules, and for the boxes exact where their bound
    is nearer than ``best`` (or a capsule of that row), else that bound (never nearer than it)."""
    caps, boxes, radius, _ = shaped
    m = radii.shape[0]
    p, d1, r = [x[:, None] for x in p], [x[:, None] for x in d1], radii[:, None]
    ncap = len(caps[2]) if caps else 0
    dist = segment_distance(p, d1, *caps) - (r + radius[:ncap]) if caps else np.empty((m, 0))
    if boxes:  # a pair farther than the nearest so far cannot be the nearest: its bound will do
        near = np.minimum(best, dist.min(axis=1)) if ncap else np.broadcast_to(best, (m,))
        grown = r + radius[ncap:]
        dist = np.concatenate([dist, box_distance(p, d1, *boxes, beyond=near[:, None] + grown) - grown], axis=1)
    return dist


_ARRAYS: dict = {}


def _arrays(shapes: Sequence[Shape]) -> tuple:
    """The shapes as arrays: the capsules' for :func:`segment_distance` (ends a (3 rows), d = b - a, |d|^2; None
    without capsules), the boxes' for :func:`box_distance` (centres, rotations, half sizes, how many lead
    unturned; None without boxes); the radii and the part indices (capsules first, then boxes)."""
    key = tuple(shapes)
    got = _ARRAYS.get(key)
    if got is None:
        if len(_ARRAYS) >= KEEP:
            _ARRAYS.clear()
        key_shapes = [shape(tuple(c)) for c in key]
        caps = [c for c in key_shapes if isinstance(c, Capsule)]
        boxes = [c for c in key_shapes if not isinstance(c, Capsule)]
        cap_arrays = box_arrays = None
        if caps:
            a = np.array([c.a for c in caps], dtype=float).T
            d = np.array([c.b for c in caps], dtype=float).T - a
            cap_arrays = (list(a), list(d), (d * d).sum(axis=0))
        if boxes:
            turn = np.array([np.eye(3) if c.turn is None else np.reshape(c.turn, (3, 3)) for c in boxes])
            plain = next((i for i, c in enumerate(boxes) if c.turn is not None), len(boxes))
            box_arrays = (np.array([c.centre for c in boxes], dtype=float), turn,
                          np.array([c.half for c in boxes], dtype=float), plain)  # fmt: skip
        ordered = caps + boxes
        got = _ARRAYS[key] = (
            cap_arrays, box_arrays, np.array([c.radius for c in ordered]),
            np.array([NAMES.index(c.part) for c in ordered], dtype=np.int64),
        )  # fmt: skip
    return got


def box_distance(p: Sequence[Any], d1: Sequence[Any], centre: np.ndarray, turn: np.ndarray, half: np.ndarray,
                 plain: int = 0, beyond: Any = np.inf) -> np.ndarray:  # fmt: skip
    """Distances between segments p + t d1 (t in [0, 1]; three arrays (N, 1) each) and boxes (B) |turn (x -
    centre)| <= half (each coordinate), (N, B): :func:`nao_ik.geometry.scalar.clearance.to_box` on arrays.

    In each box's frame the squared distance is convex and quadratic between the t where a coordinate crosses a
    face's plane, so its derivative is nondecreasing and linear between them: the least is where the derivative
    turns nonnegative, found among the cuts and solved on its piece. A pair whose lower
    bound (the distance between the box and the box around the segment, in the box's frame) is at least ``beyond``
    (broadcast to (N, B)) gets that bound instead: the exact distance is never less. The first ``plain`` boxes
    are not turned (``turn`` the identity there: the torso's): their frame is the segment's own.
    """
    x = [np.asarray(p[j], dtype=float) - centre[:, j] for j in range(3)]  # (N, B): the boxes' frames from here
    shape = x[0].shape
    dx = [np.broadcast_to(np.asarray(d1[i], dtype=float), shape) for i in range(3)]
    if plain < centre.shape[0]:
        t, r = turn[plain:], [v[:, plain:] for v in x]
        turned = [t[:, i, 0] * r[0] + t[:, i, 1] * r[1] + t[:, i, 2] * r[2] for i in range(3)]
        along = [t[:, i, 0] * d1[0] + t[:, i, 1] * d1[1] + t[:, i, 2] * d1[2] for i in range(3)]
        dx = [np.concatenate([dx[i][:, :plain], np.broadcast_to(along[i], turned[i].shape)], axis=1)
              for i in range(3)]  # fmt: skip
        for i in range(3):
            x[i][:, plain:] = turned[i]
    # The lower bound: the distance between the box and the box around the segment (both in the box's frame).
    low = 0.0
    for i in range(3):
        gap = np.maximum(np.minimum(x[i], x[i] + dx[i]) - half[:, i], -half[:, i] - np.maximum(x[i], x[i] + dx[i]))
        low = low + np.maximum(gap, 0.0) ** 2
    out = low = np.sqrt(low)
    near = np.nonzero(low < beyond)
    if not near[0].size:
        return out
    h = half[near[1]]  # (K, 3)
    xs = [x[i][near] for i in range(3)]
    ds = [dx[i][near] for i in range(3)]
    cuts = [np.zeros_like(xs[0]), np.ones_like(xs[0])]
    for i in range(3):
        moving = ds[i] != 0.0
        step = np.where(moving, ds[i], 1.0)
        for face in (-h[:, i], h[:, i]):
            cuts.append(np.where(moving, np.clip((face - xs[i]) / step, 0.0, 1.0), 0.0))
    t = np.sort(np.stack(cuts, axis=-1), axis=-1)  # (K, 8)
    # Half the derivative at each cut: sum_i dx_i (x_i(t) - x_i(t) clamped to the box); nondecreasing in t,
    # linear between cuts. The least is where it turns nonnegative: at 0, at 1, or between two cuts.
    slope = np.zeros_like(t)
    for i in range(3):
        v = xs[i][:, None] + t * ds[i][:, None]
        slope += ds[i][:, None] * (v - np.clip(v, -h[:, i][:, None], h[:, i][:, None]))
    up = slope >= 0.0
    k = np.where(up.any(axis=1), up.argmax(axis=1), t.shape[1] - 1)
    rows = np.arange(k.size)
    t1, s1 = t[rows, k], slope[rows, k]
    t0, s0 = t[rows, np.maximum(k - 1, 0)], slope[rows, np.maximum(k - 1, 0)]
    fall = s1 - s0
    between = (k > 0) & (s1 >= 0.0) & (fall > 0.0)
    at = np.where(between, t0 - s0 * (t1 - t0) / np.where(fall > 0.0, fall, 1.0), np.where(k == 0, 0.0, t1))
    q = 0.0
    for i in range(3):
        v = np.maximum(np.abs(xs[i] + at * ds[i]) - h[:, i], 0.0)
        q = q + v * v
    out = out.copy()
    out[near] = np.sqrt(q)
    return out


def nearest_core(pts: np.ndarray, shapes: Sequence[Shape]) -> tuple[np.ndarray, np.ndarray]:
    """(nearest points of the shapes' cores to ``pts`` (N, S, 3), the shapes' radii (S,)): a capsule's core is
    its segment, a rounded box's its box; shapes in their order."""
    pts = np.asarray(pts, dtype=float)
    shapes = [shape(tuple(c)) for c in shapes]  # rows or shapes
    out = np.empty((pts.shape[0], len(shapes), 3))
    for k, c in enumerate(shapes):
        if isinstance(c, Capsule):
            a, d = np.asarray(c.a, dtype=float), np.subtract(c.b, c.a)
            dd = float(d @ d)
            u = np.zeros(len(pts)) if dd == 0.0 else np.clip((pts - a) @ d / dd, 0.0, 1.0)
            out[:, k] = a + u[:, None] * d
        else:
            turn = np.eye(3) if c.turn is None else np.reshape(c.turn, (3, 3))
            local = np.clip((pts - c.centre) @ turn.T, -np.asarray(c.half), c.half)
            out[:, k] = c.centre + local @ turn
    return out, np.array([c.radius for c in shapes])


def segment_distance(p: Sequence[Any], d1: Sequence[Any], q: Sequence[Any], d2: Sequence[Any], e: Any) -> Any:
    """Distances between segments p + s d1 and q + t d2 (s, t in [0, 1]), e = |d2|^2 (Ericson); arrays broadcast.

    The first segment's length |d1| is never zero (rigid links); the second may be a point (a sphere).
    """
    r0, r1, r2 = p[0] - q[0], p[1] - q[1], p[2] - q[2]
    a = d1[0] * d1[0] + d1[1] * d1[1] + d1[2] * d1[2]
    c = d1[0] * r0 + d1[1] * r1 + d1[2] * r2
    inv_a = 1.0 / a
    point = np.asarray(e) <= 1e-18
    e = np.where(point, 1.0, e)
    f = d2[0] * r0 + d2[1] * r1 + d2[2] * r2
    b = d1[0] * d2[0] + d1[1] * d2[1] + d1[2] * d2[2]
    den = a * e - b * b
    ok = (den > 1e-18) & ~point
    s = np.where(ok, np.clip((b * f - c * e) / np.where(ok, den, 1.0), 0.0, 1.0), 0.0)
    t = np.where(point, 0.0, (b * s + f) / e)
    s = np.where(point | (t < 0.0), np.clip(-c * inv_a, 0.0, 1.0),
                 np.where(t > 1.0, np.clip((b - c) * inv_a, 0.0, 1.0), s))  # fmt: skip
    t = np.clip(t, 0.0, 1.0)
    x0, x1, x2 = r0 + s * d1[0] - t * d2[0], r1 + s * d1[1] - t * d2[1], r2 + s * d1[2] - t * d2[2]
    return np.sqrt(x0 * x0 + x1 * x1 + x2 * x2)


def hand_blocked(model: ArmModel, pts: np.ndarray, shapes: Sequence[Shape]) -> np.ndarray:
    """(N,) True where no configuration with its hand effector at ``pts`` (N, 3) keeps MARGIN from ``shapes``.

    The hand's link (:data:`~nao_ik.model.body.LINKS`, from the wrist HAND_REACH along the forearm's axis)
    holds the ball around the effector of its radius less the effector's distance from that axis (the hand
    offset's z, turned by WristYaw about the axis; its x lies between the link's ends). A shape nearer the
    effector than MARGIN and that ball's radius is within the margin of the hand's link, whatever the rest of
    the arm: one point-to-segment distance per shape decides it for every configuration at once.
    """
    pts = np.asarray(pts, dtype=float)
    hx, _, hz = model.hand_offset
    hand = next(ln for ln in LINKS if ln.start == 4 and ln.end == 6)
    ball = hand.radius - abs(hz)
    if not shapes or not 0.0 <= hx <= HAND_REACH or ball <= 0.0:
        return np.zeros(pts.shape[0], dtype=bool)  # no claim
    near, radius = nearest_core(pts, shapes)
    gap = np.linalg.norm(pts[:, None, :] - near, axis=2) - radius - ball
    return (gap < MARGIN).any(axis=1)


def clear_of_body(model: ArmModel, q: np.ndarray) -> np.ndarray:
    """(N,) True where configurations (N, 5) keep MARGIN from the model's body (all True without one)."""
    q = np.asarray(q, dtype=float)
    if not model.body:
        return np.ones(q.shape[0], dtype=bool)
    return clearance_batch(model, q, model.body, MARGIN)[0] >= MARGIN
