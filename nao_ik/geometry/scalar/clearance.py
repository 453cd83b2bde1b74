# -*- coding: utf-8 -*-
# ruff: noqa: UP004, UP009, UP010  (the common subset of Python 2.7 and 3, see the docstring)
"""Signed distance of one configuration's arm links to NAO's body, in plain Python floats.

The arm's links are capsules and the body's parts capsules or rounded boxes (:mod:`nao_ik.model.body_data`),
so the distance between a link and a part is the distance between the link's segment and the part's core (a
segment: :func:`segments`; a box: :func:`to_box`) minus both radii (negative: they overlap). The arm is clear
when that distance is at least the margin for every pair. Each link is checked against each part, a pair
skipped when the bounding spheres (and for a box the box around the link's segment) show it is farther than
the best so far (at most CAP); distances beyond CAP are
reported as CAP: only the near region matters to a solver, and the capped value is still
continuous in the configuration.

The library's per-configuration check (:func:`nao_ik.geometry.collision.clearance`) is this code, and
so is the robot runtime's (:mod:`nao_ik.robot`); the numpy batch
(:func:`nao_ik.geometry.collision.clearance_batch`) reads the same shapes and links.

The link points (shoulder, elbow, wrist, hand) come from the float kinematics of
:mod:`nao_ik.geometry.scalar.swivel`.

Written in the common subset of Python 2.7 and 3 with no numpy (it runs on the robot).
"""

from __future__ import division

import collections
import math

from ...model.body_data import HAND_REACH, LINK_ROWS, MARGIN, SHOULDER_BACK, shoulder_row
from .swivel import arm

try:  # the type comments' names (typing is not in every Python 2.7)
    from typing import Any, Callable, List, Sequence, Tuple  # noqa: F401
except ImportError:  # pragma: no cover
    pass

#: Distances beyond this (metres) are reported as CAP.
CAP = 0.05
INF = float("inf")
#: Radians of margin per metre of clearance: the body's clearance enters the swivel search's margin at this
#: scale (1 cm = 0.1 rad), so the same root finders find where the arm touches the body's margin
#: (:func:`nao_ik.geometry.swivel.body_margin`, :func:`body_margin`).
BODY_SCALE = 10.0
#: Bodies kept prepared: the standing body and the latest few (the other arm's links change with its posture).
KEEP = 32


class Clearance(collections.namedtuple("Clearance", "distance part link")):
    """The signed distance of the arm's links to the body.

    Attributes:
        distance: the smallest link-to-part distance minus the radii, metres
            (negative: overlapping), capped at CAP.
        part: the body part nearest the arm (``""`` when every part is beyond CAP).
        link: the arm link nearest it (``""`` likewise).
    """

    __slots__ = ()


class Pair(collections.namedtuple("Pair", "part a d dd centre reach radius box")):
    """A body shape prepared for the check. A capsule: ``d`` = b - a, ``dd`` = |d|^2, ``box`` None. A rounded
    box: ``a`` its centre, ``box`` (rotation torso-to-box or None, half sizes). ``reach``: the radius of a sphere
    about ``centre`` that holds the shape."""

    __slots__ = ()


def prepare(shapes):
    # type: (Sequence[Any]) -> Tuple[Pair, ...]
    """The shapes (rows or shapes of :mod:`nao_ik.model.body_data`: capsules part, a, b, radius; rounded boxes
    part, centre, half, radius, turn) prepared for :func:`clearance`."""
    out = []
    for row in shapes:
        if len(row) == 5:
            part, c, half, radius, turn = row
            reach = math.sqrt(half[0] * half[0] + half[1] * half[1] + half[2] * half[2]) + radius
            out.append(Pair(part, tuple(c), (0.0, 0.0, 0.0), 0.0, tuple(c), reach, radius, (turn, tuple(half))))
            continue
        part, a, b, radius = row
        d = (b[0] - a[0], b[1] - a[1], b[2] - a[2])
        dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
        centre = (0.5 * (a[0] + b[0]), 0.5 * (a[1] + b[1]), 0.5 * (a[2] + b[2]))
        out.append(Pair(part, tuple(a), d, dd, centre, 0.5 * math.sqrt(dd) + radius, radius, None))
    return tuple(out)


_PREPARED = {}  # type: dict


def prepared(shapes):
    # type: (Sequence[Any]) -> Tuple[Pair, ...]
    """:func:`prepare`, kept for the KEEP bodies asked last (the same shapes are asked again and again)."""
    key = tuple(shapes)
    got = _PREPARED.get(key)
    if got is None:
        if len(_PREPARED) >= KEEP:
            _PREPARED.clear()
        got = _PREPARED[key] = prepare(key)
    return got


def link_points(k, q):
    # type: (Any, Sequence[float]) -> List[Any]
    """The chain points the links use: shoulder, elbow, wrist, hand (indexed as the links' start/end).

    Args:
        k: the :class:`~nao_ik.geometry.scalar.swivel.Arm`.
        q: five joint angles.

    Returns:
        A list of seven entries: 0 shoulder, 1 the upper arm's root (SHOULDER_BACK behind the shoulder along the
        upper arm), 2 elbow, 4 wrist, 5 hand effector, 6 the hand's far end (HAND_REACH past the wrist along
        the forearm); 3 None.
    """
    trig = (math.cos(q[1]), math.sin(q[1]), math.cos(q[2]), math.sin(q[2]), math.cos(q[3]), math.sin(q[3]))
    return _points(k, q, trig)


def link_frame(k, q):
    # type: (Any, Sequence[float]) -> Tuple[List[Any], List[Tuple[float, ...]]]
    """(:func:`link_points`, :func:`link_reach_at`) at ``q``, from one evaluation of its sines and cosines: what a
    motion check needs at the centre of each box it tries."""
    trig = (math.cos(q[1]), math.sin(q[1]), math.cos(q[2]), math.sin(q[2]), math.cos(q[3]), math.sin(q[3]))
    return _points(k, q, trig), _reach(k, trig)


def _points(k, q, trig):
    # type: (Any, Sequence[float], Tuple[float, ...]) -> List[Any]
    """:func:`link_points` given cos and sin of ShoulderRoll, ElbowYaw and ElbowRoll (``trig``)."""
    c2, s2, c3, s3, c4, s4 = trig
    c1, s1 = math.cos(q[0]), math.sin(q[0])
    s = k.s
    ux, uy = k.ux, k.uy
    lx = k.lx  # the wrist: u + Rx(q3) Rz(q4) (lx, 0, 0)
    wy = s4 * lx
    f0, f1, f2 = k.fx, -math.sin(q[4]) * k.hz, math.cos(q[4]) * k.hz  # the hand: u + Rx(q3) Rz(q4) f(q5)
    gy = s4 * f0 + c4 * f1
    back = -SHOULDER_BACK / k.l1
    tip = 1.0 + HAND_REACH / lx  # the forearm's vector (elbow to wrist) scaled past the wrist
    out = [s]
    # Each point S + Ry(q1) Rz(q2) g, g in the ShoulderRoll frame: the upper arm's root, the elbow (u), the
    # wrist, the hand, the far end (a loop, not a function: this runs for every posture a motion check tries).
    for g0, g1, g2 in (
        (ux * back, uy * back, 0.0),
        (ux, uy, 0.0),
        (ux + c4 * lx, uy + c3 * wy, s3 * wy),
        (ux + c4 * f0 - s4 * f1, uy + c3 * gy - s3 * f2, s3 * gy + c3 * f2),
        (ux + c4 * lx * tip, uy + c3 * wy * tip, s3 * wy * tip),
    ):
        x = c2 * g0 - s2 * g1
        out.append((s[0] + c1 * x + s1 * g2, s[1] + s2 * g0 + c2 * g1, s[2] - s1 * x + c1 * g2))
    out.insert(3, None)
    return out


def clearance(model, q, shapes, cap=CAP):
    # type: (Any, Sequence[float], Sequence[Any], float) -> Clearance
    """Signed distance of one configuration's links to the body.

    Args:
        model: the arm (an :class:`~nao_ik.model.arm.ArmModel` or the robot runtime's model).
        q: five joint angles (floats).
        shapes: the body: rows or shapes of :mod:`nao_ik.model.body_data` (capsules, rounded boxes).
        cap: distances beyond it are reported as it (part and link ``""``), as :func:`clearance_of`: a caller that
            only asks whether the links keep a margin passes the margin, and the pairs farther than it are
            left out by their bounds.

    Returns:
        :class:`Clearance`.
    """
    return clearance_of(link_points(arm(model), q), prepared(shapes), cap=cap)


def checker(model, shapes):
    # type: (Any, Sequence[Any]) -> Callable[[Sequence[float]], Clearance]
    """:func:`clearance` of many postures of one arm against one body (a motion's checks): the arm's numbers
    and the body prepared once.

    Args:
        model: the arm; shapes: the body, as for :func:`clearance`.

    Returns:
        A function of five joint angles (floats) giving their :class:`Clearance`.
    """
    k, pairs = arm(model), prepared(shapes)
    return lambda q: clearance_of(link_points(k, q), pairs)


def point_reach(k):
    # type: (Any) -> Tuple[Tuple[float, ...], ...]
    """How far each chain point of :func:`link_points` lies from each joint's axis, at most, over every posture.

    A change dq of joint j moves a point at distance r from its axis by at most r |dq| (a chord is no longer
    than its arc), and the joints' moves add up: so a posture within h_j of another in every joint has each
    point within sum_j r_j h_j of where it was. The shoulder joints' axes pass through the shoulder, the elbow
    joints' through the elbow, WristYaw's along the forearm through the wrist.

    Returns:
        Seven rows (as :func:`link_points`; 3 unused) of five bounds, metres.
    """
    hand = math.hypot(k.fx, k.hz)  # elbow to hand effector
    far = k.lx + HAND_REACH  # elbow to the hand's far end, on WristYaw's axis
    return (
        (0.0,) * 5,
        (SHOULDER_BACK, SHOULDER_BACK, 0.0, 0.0, 0.0),
        (k.l1, k.l1, 0.0, 0.0, 0.0),
        (0.0,) * 5,
        (k.l1 + k.lx, k.l1 + k.lx, k.lx, k.lx, 0.0),
        (k.l1 + hand, k.l1 + hand, hand, hand, abs(k.hz)),
        (k.l1 + far, k.l1 + far, far, far, 0.0),
    )


def link_reach(k):
    # type: (Any) -> Tuple[Tuple[float, ...], ...]
    """Per row of LINK_ROWS, the bound of :func:`point_reach` for every point of that link's segment (the larger
    of its ends': the distance to a line is convex along a segment)."""
    r = point_reach(k)
    return tuple(tuple(max(a, b) for a, b in zip(r[start], r[end])) for _, start, end, _, _ in LINK_ROWS)


def link_reach_at(k, q):
    # type: (Any, Sequence[float]) -> List[Tuple[float, ...]]
    """Per row of LINK_ROWS (upper arm, forearm, hand: the rows as they stand), per joint, how far the link's points
    lie from the joint's axis at the posture ``q``:
    :func:`link_reach`'s bound for the postures of a box around ``q`` (its centre), and a tighter one.

    Go from ``q`` to any posture of the box one joint at a time, from the shoulder out: while joint j turns, the
    joints before it are already where they end and those after it still where they are in ``q``. Turning
    joint j carries a point around j's axis, and the point's distance from that axis depends on the joints after
    j alone, so it is the distance in ``q``; a turn by dq moves the point by at most that distance x |dq|. So a
    posture within h_j of ``q`` in every joint has each point within sum_j r_j(q) h_j of where it is in ``q``,
    r_j(q) its distance from j's axis in ``q`` (0 for a joint that does not carry the point: one past it in the
    chain).

    Returns:
        Rows as :func:`link_reach`'s, metres.
    """
    return _reach(k, (math.cos(q[1]), math.sin(q[1]), math.cos(q[2]), math.sin(q[2]), math.cos(q[3]),
                      math.sin(q[3])))  # fmt: skip


def _reach(k, trig):
    # type: (Any, Tuple[float, ...]) -> List[Tuple[float, ...]]
    """:func:`link_reach_at` given cos and sin of ShoulderRoll, ElbowYaw and ElbowRoll (``trig``)."""
    c2, s2, c3, s3, c4, s4 = trig
    ux, uy, lx, l1 = k.ux, k.uy, k.lx, k.l1
    wy = s4 * lx
    # Each point as g in the ShoulderRoll frame (as :func:`link_points`): its distance from ShoulderPitch's axis
    # (the square distance from the shoulder less the offset along that axis squared) and from ShoulderRoll's.
    along = s2 * ux + c2 * uy
    x = l1 * l1 - along * along
    elbow = math.sqrt(x if x >= 0.0 else 0.0)
    # The upper arm's root is the elbow's offset scaled by -SHOULDER_BACK / l1: its distances scale the same way.
    root = SHOULDER_BACK / l1
    root = root if root > 1.0 else 1.0
    tip = 1.0 + HAND_REACH / lx
    # The wrist and the hand's far end (u + tip (wrist - u)), written out (the comparisons are max's, in its order:
    # this runs for every box a motion check tries).
    g0, g1, g2 = ux + c4 * lx, uy + c3 * wy, s3 * wy
    along = s2 * g0 + c2 * g1
    flat = g0 * g0 + g1 * g1
    x = flat + g2 * g2 - along * along
    wrist0, wrist1 = math.sqrt(x if x >= 0.0 else 0.0), math.sqrt(flat)
    g0, g1, g2 = ux + tip * c4 * lx, uy + tip * c3 * wy, tip * s3 * wy
    along = s2 * g0 + c2 * g1
    flat = g0 * g0 + g1 * g1
    x = flat + g2 * g2 - along * along
    end0, end1 = math.sqrt(x if x >= 0.0 else 0.0), math.sqrt(flat)
    # The elbow joints' axes pass through the elbow (ElbowYaw's along the upper arm, ElbowRoll's across the
    # forearm); WristYaw's along the forearm, which holds every link point past the elbow.
    ay = abs(wy)
    return [
        (elbow * root, l1 * root, 0.0, 0.0, 0.0),
        (elbow if elbow >= wrist0 else wrist0, l1 if l1 >= wrist1 else wrist1, ay, lx, 0.0),
        (wrist0 if wrist0 >= end0 else end0, wrist1 if wrist1 >= end1 else end1, ay * tip, lx * tip, 0.0),
    ]


def box_growth(reach, half):
    # type: (Sequence[Sequence[float]], Sequence[float]) -> List[float]
    """Per link, how far its points may be from where they are at a box's centre, ``half`` its half-widths."""
    h0, h1, h2, h3, h4 = half
    return [w[0] * h0 + w[1] * h1 + w[2] * h2 + w[3] * h3 + w[4] * h4 for w in reach]


#: An arm's region (:func:`region_rows`) is covered by at most this many grown copies of its links (each piece
#: grown by its own bound, :func:`link_reach_at`, 8 cover about as tightly as 16 grown by the bound for every
#: posture did, with half the capsules for every check against them) ...
REGION_PIECES = 8
#: ... each grown by at most this much where fewer suffice, metres.
REGION_GROWTH = 0.01


def region_rows(model, lo, hi, part):
    # type: (Any, Sequence[float], Sequence[float], str) -> tuple
    """Body rows (part, a, b, radius): the arm's shoulder first (:func:`~nao_ik.model.body_data.shoulder_row`,
    fixed to the torso), then rows holding its links at every posture of the joint-space box lo..hi.

    The box is halved across the joint that moves the links most, the piece whose links grow most first,
    until every piece grows them by at most REGION_GROWTH or there are REGION_PIECES pieces; each link is
    taken at its piece's middle posture, its radius grown by how far its points can be from there anywhere
    in the piece (:func:`link_reach_at`, :func:`box_growth`). A box of one posture gives the links exactly.
    """
    k = arm(model)

    def piece(p, q):
        centre = [0.5 * (a + b) for a, b in zip(p, q)]
        pts, reach = link_frame(k, centre)
        grow = box_growth(reach, [0.5 * (b - a) for a, b in zip(p, q)])
        return max(grow), p, q, grow, [max(w) for w in zip(*reach)], pts

    pieces = [piece(list(lo), list(hi))]
    while len(pieces) < REGION_PIECES:
        worst = max(range(len(pieces)), key=lambda i: pieces[i][0])
        if pieces[worst][0] <= REGION_GROWTH:
            break
        _, p, q, _, weight, _ = pieces.pop(worst)
        j = max(range(5), key=lambda i: weight[i] * (q[i] - p[i]))
        mid = 0.5 * (p[j] + q[j])
        pieces += [piece(p, q[:j] + [mid] + q[j + 1 :]), piece(p[:j] + [mid] + p[j + 1 :], q)]
    out = [shoulder_row(k.s, part)]  # fixed to the torso wherever the arm is
    for _, _, _, grow, _, pts in pieces:
        for (_, start, end, _, radius), g in zip(LINK_ROWS, grow):
            out.append((part, tuple(pts[start]), tuple(pts[end]), radius + g))
    return tuple(out)


def body_margin(model, q, shapes):
    # type: (Any, Sequence[float], Sequence[Any]) -> float
    """(clearance to ``shapes`` - MARGIN) x BODY_SCALE: the search's ``extra`` margin, negative within MARGIN."""
    return (clearance(model, q, shapes).distance - MARGIN) * BODY_SCALE


def clearance_of(pts, pairs, grow=None, cap=CAP):
    # type: (List[Any], Sequence[Pair], Sequence[float] | None, float) -> Clearance
    """:func:`clearance` of given link points (:func:`link_points`) against prepared shapes (:func:`prepared`).

    Args:
        grow: metres added to each link's radius (one per row of LINK_ROWS), or None: the links of a box of
            postures around these (:func:`box_growth`).
        cap: distances beyond it are reported as it.
    """
    best, part, link = cap, "", ""
    for name, p, d1, aa, radius, m, half in link_segments(pts, grow):
        reach = half + radius + best
        for s in pairs:
            c = s.centre
            lim = reach + s.reach
            dx, dy, dz = m[0] - c[0], m[1] - c[1], m[2] - c[2]
            if dx * dx + dy * dy + dz * dz >= lim * lim:
                continue
            if s.box is None:
                dist = segments(p, d1, aa, s.a, s.d, s.dd) - radius - s.radius
            else:
                dist = to_box(p, d1, s, best + radius + s.radius) - radius - s.radius
            if dist < best:
                best, part, link = dist, s.part, name
                reach = half + radius + best
    return Clearance(best, part, link)


def link_segments(pts, grow=None):
    # type: (List[Any], Sequence[float] | None) -> List[tuple]
    """Each link of LINK_ROWS as the clearance checks take it: (name, start, axis, |axis|^2, radius (grown by
    ``grow``, one per row, unless None), middle, half length), its start moved past the part it skips."""
    out = []
    for i, (name, start, end, skip, radius) in enumerate(LINK_ROWS):
        p, e = pts[start], pts[end]
        if skip:
            p = [p[k] + skip * (e[k] - p[k]) for k in range(3)]
        d1 = (e[0] - p[0], e[1] - p[1], e[2] - p[2])
        aa = d1[0] * d1[0] + d1[1] * d1[1] + d1[2] * d1[2]
        mid = (0.5 * (p[0] + e[0]), 0.5 * (p[1] + e[1]), 0.5 * (p[2] + e[2]))
        out.append((name, p, d1, aa, radius + (grow[i] if grow is not None else 0.0), mid, 0.5 * math.sqrt(aa)))
    return out


def pairs_within(links, pairs, grow, need):
    # type: (List[tuple], Sequence[Any], Sequence[float] | None, float) -> Tuple[float, str, list, float, str]
    """The (link index, prepared shape) ``pairs`` closer than ``need``, the links (:func:`link_segments`, not
    grown) grown by ``grow`` (None: not grown): the least distance among them (``need`` + 1e-6 if none), its
    part, and those pairs in order; then, among those pairs, the least distance of the links not grown that is
    below ``need`` (``need`` + 1e-6 if none) and its part (one distance computation per pair serves both). A
    pair whose centres are far enough apart is not computed: its distance is at least ``need``.
    """
    low, part, out = need + 1e-6, "", []
    exact, exact_part = low, ""
    for i, s in pairs:
        _, p, d1, aa, radius, m, half = links[i]
        grown = radius + grow[i] if grow is not None else radius
        c = s.centre
        lim = half + grown + need + s.reach
        dx, dy, dz = m[0] - c[0], m[1] - c[1], m[2] - c[2]
        far = dx * dx + dy * dy + dz * dz
        if far >= lim * lim:
            continue
        seg = segments(p, d1, aa, s.a, s.d, s.dd) if s.box is None else to_box(p, d1, s, need + grown + s.radius)
        dist = seg - grown - s.radius
        if dist < need:
            out.append((i, s))
            if dist < low:
                low, part = dist, s.part
            if grow is not None:
                lim = half + radius + need + s.reach
                if far < lim * lim:
                    dist = seg - radius - s.radius
                    if dist < need and dist < exact:
                        exact, exact_part = dist, s.part
    if grow is None:
        exact, exact_part = low, part
    return low, part, out, exact, exact_part


def segments(p, d1, a, q, d2, e):
    # type: (Sequence[float], Sequence[float], float, Sequence[float], Sequence[float], float) -> float
    """Distance between segments p + s d1 and q + t d2 (s, t in [0, 1]); a = |d1|^2 > 0, e = |d2|^2 (Ericson)."""
    r0, r1, r2 = p[0] - q[0], p[1] - q[1], p[2] - q[2]
    c = d1[0] * r0 + d1[1] * r1 + d1[2] * r2
    if e <= 1e-18:  # the part is a sphere
        s = min(max(-c / a, 0.0), 1.0)
        t = 0.0
    else:
        f = d2[0] * r0 + d2[1] * r1 + d2[2] * r2
        b = d1[0] * d2[0] + d1[1] * d2[1] + d1[2] * d2[2]
        den = a * e - b * b
        s = min(max((b * f - c * e) / den, 0.0), 1.0) if den > 1e-18 else 0.0
        t = (b * s + f) / e
        if t < 0.0:
            t, s = 0.0, min(max(-c / a, 0.0), 1.0)
        elif t > 1.0:
            t, s = 1.0, min(max((b - c) / a, 0.0), 1.0)
    x0 = r0 + s * d1[0] - t * d2[0]
    x1 = r1 + s * d1[1] - t * d2[1]
    x2 = r2 + s * d1[2] - t * d2[2]
    return math.sqrt(x0 * x0 + x1 * x1 + x2 * x2)


def to_box(p, d1, s, beyond=INF):
    # type: (Sequence[float], Sequence[float], Pair, float) -> float
    """Distance between the segment p + t d1 (t in [0, 1]) and the core of the prepared box ``s`` (its rounding
    not taken off); where a lower bound of it (the distance between the box and the box around the segment, in
    the box's frame) is at least ``beyond``, that bound.

    In the box's frame the squared distance of the segment's point to the box is sum_i max(|x_i(t)| - h_i, 0)^2:
    convex in t, and quadratic between the t where a coordinate crosses a face's plane, so its derivative is
    nondecreasing and linear between them. The least is where the derivative turns nonnegative: at a cut, or
    between two, solved on that piece (:func:`nao_ik.geometry.collision.box_distance` is this on arrays).
    """
    turn, h = s.box
    c = s.a
    r0, r1, r2 = p[0] - c[0], p[1] - c[1], p[2] - c[2]
    if turn is None:
        x, dx = (r0, r1, r2), tuple(d1)
    else:
        x = (turn[0] * r0 + turn[1] * r1 + turn[2] * r2, turn[3] * r0 + turn[4] * r1 + turn[5] * r2,
             turn[6] * r0 + turn[7] * r1 + turn[8] * r2)  # fmt: skip
        e0, e1, e2 = d1
        dx = (turn[0] * e0 + turn[1] * e1 + turn[2] * e2, turn[3] * e0 + turn[4] * e1 + turn[5] * e2,
              turn[6] * e0 + turn[7] * e1 + turn[8] * e2)  # fmt: skip
    low = 0.0
    for i in range(3):
        a, b = (x[i], x[i] + dx[i]) if dx[i] >= 0.0 else (x[i] + dx[i], x[i])
        gap = a - h[i] if a > h[i] else -h[i] - b if b < -h[i] else 0.0
        low += gap * gap
    if beyond <= 0.0 or low >= beyond * beyond:
        return math.sqrt(low)
    cuts = [0.0, 1.0]
    for i in range(3):
        if dx[i] != 0.0:
            for face in (-h[i], h[i]):
                t = (face - x[i]) / dx[i]
                if 0.0 < t < 1.0:
                    cuts.append(t)
    cuts.sort()
    at, before = 1.0, None
    for t in cuts:
        slope = 0.0  # half the derivative at t: sum_i dx_i (x_i(t) - x_i(t) clamped to the box)
        for i in range(3):
            v = x[i] + t * dx[i]
            if v > h[i]:
                slope += dx[i] * (v - h[i])
            elif v < -h[i]:
                slope += dx[i] * (v + h[i])
        if slope >= 0.0:
            if before is None:
                at = t
            else:
                t0, s0 = before
                at = t0 - s0 * (t - t0) / (slope - s0) if slope > s0 else t
            break
        before = (t, slope)
    q = 0.0
    for i in range(3):
        v = abs(x[i] + at * dx[i]) - h[i]
        if v > 0.0:
            q += v * v
    return math.sqrt(q)
