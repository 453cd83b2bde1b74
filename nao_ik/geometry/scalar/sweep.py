# -*- coding: utf-8 -*-
# ruff: noqa: UP004, UP009, UP010  (the common subset of Python 2.7 and 3, see the docstring)
"""The motion ``ALMotion.setAngles`` makes, and its clearance from the body by conservative advancement.

``setAngles`` moves every joint from where it is toward its target at its own
speed (``fractionMaxSpeed`` x the joint's maximum velocity), so joints with
short moves arrive first: the path in joint space is a broken line, not the
straight one (:class:`Motion`). :func:`advance` samples that path densely
enough for the body's margin: no point of the arm moves more than
:data:`REACH` times the joints' summed change, so the clearance between two
checked postures is bounded below by theirs; the checks are placed so that a
motion whose checked postures keep SWEEP_MARGIN keeps at least
SWEEP_MARGIN - STEP / 2 everywhere, more than the robot's own protection
margin (:data:`nao_ik.model.body_data.STUB_MARGIN`).

The library's :func:`nao_ik.geometry.sweep.sweep` (and so its plans) is this code, and so is the robot
runtime's check of its command (:mod:`nao_ik.robot.service`).

Written in the common subset of Python 2.7 and 3 with no numpy (it runs on the robot).
"""

from __future__ import division

import heapq
import math

from ...model.body_data import LINK_ROWS
from .clearance import box_growth, clearance, link_frame, link_points, link_segments, pairs_within, prepared
from .swivel import arm

try:  # the type comments' names (typing is not in every Python 2.7)
    from typing import Any, Callable, List, Sequence, Tuple  # noqa: F401
except ImportError:  # pragma: no cover
    pass

#: Clearance every sample of a commanded motion keeps from the body, metres (the answers themselves keep MARGIN).
SWEEP_MARGIN = 0.0075
#: Largest movement of any point of the arm between two samples, metres.
STEP = 0.0025
#: Distance from the shoulder to the farthest point of the arm's links (hand capsule included), metres.
REACH = 0.25
#: ALMotion's control cycle, seconds (NAOqi 2.1; ALMotion.getMotionCycleTime() on a robot).
CYCLE = 0.02
#: An arm whose joints all moved less than this (rad) over a control cycle has stopped.
STILL = 5e-4
#: Cycles within which a command ALMotion took sets the arm off (a smooth start included): an arm still this
#: many cycles after every command to it was answered is not on its way to any of them (unless the robot's
#: collision protection holds it: ``isCollision``).
STOPPED_CYCLES = 5
#: A still arm whose sensed angles are all within SAG (rad) of its command has arrived too: under load, Smart
#: Stiffness lets a joint rest a few hundredths of a radian short of its command (the stub sags up to 0.05).
#: What follows is checked again from where the arm is (the certified check assumed ARRIVED).
SAG = 0.06
#: Cycles a joint retargeted during a move keeps going its old way before it turns (Aldebaran's joint-control
#: documentation: "about 4 cycles", about 0.02 rad at 10 % of HeadYaw's speed).
OVERSHOOT_CYCLES = 4
#: Seconds a joint moving at full speed may take to stop once retargeted (at fraction f: f x BRAKE), going on
#: toward the goal it had: Aldebaran's "about 4 cycles" at 10 % speed, at a constant deceleration (the
#: simulated robot's smooth profile: 0.75 s). A command superseded that long ago (from when ALMotion took the
#: next one) moves the arm no more.
BRAKE = 0.8
#: The most postures :func:`certify` checks before it calls a box not certified (a plan then tries smaller
#: boxes: legs). A larger budget certifies more moves direct, each spared its legs and the waits for the arm at
#: each via (hundreds of ms); its price is the time spent on the boxes it still cannot decide.
#: ``nao-ik bench --body`` (section 3) gives the share approved direct and what the check and the plans cost.
BOX_BUDGET = 1000
#: Other postures for the same task (other exact solutions of a reach's target) tried where the motion to the
#: answer is not certified, nearest move first, their checks within one BOX_BUDGET in all: each costs a check.
ALTERNATIVES = 8
#: After this many postures without a verdict, :func:`certify` also checks the box's corners once (not counted
#: against BOX_BUDGET): a box with a posture inside the body often has one at a corner (a joint at one end of
#: its move, another at the other), which the halving reaches late or not within the budget.
CORNERS_AFTER = 32


class Motion(object):
    """The motion setAngles makes from ``start`` to ``goal``, by the joints' summed change travelled.

    Each joint moves at ``fraction`` x its maximum velocity until it arrives,
    so the summed change travelled grows piecewise linearly in time; :meth:`at`
    inverts it (pure Python: a few joints, a few breakpoints).

    Args:
        model: the arm (its joints' maximum velocities: ``model.joints[i].max_velocity``).
        start, goal: five joint angles each.
        fraction: ``fractionMaxSpeed`` of the command (the same for every joint).
    """

    def __init__(self, model, start, goal, fraction):
        # type: (Any, Sequence[float], Sequence[float], float) -> None
        self.start = [float(x) for x in start]
        self.delta = [float(g) - s for s, g in zip(self.start, goal)]
        self.speed = [j.max_velocity * fraction for j in model.joints]
        self.length = sum(abs(d) for d in self.delta)  # the summed joint change, radians
        # Breakpoints (time, summed change) where a joint arrives.
        ends = sorted(abs(d) / v for d, v in zip(self.delta, self.speed))
        self._knots, t, done = [(0.0, 0.0)], 0.0, 0.0
        for end in ends:
            rate = sum(v for d, v in zip(self.delta, self.speed) if abs(d) / v > t)
            done += rate * (end - t)
            t = end
            self._knots.append((t, done))

    def travelled(self, seconds):
        # type: (float) -> float
        """The joints' summed change after ``seconds`` of the motion."""
        return sum(min(abs(d), v * max(seconds, 0.0)) for d, v in zip(self.delta, self.speed))

    def at(self, travelled):
        # type: (float) -> List[float]
        """The posture once the joints' summed change reaches ``travelled`` (clipped to the motion)."""
        if travelled >= self.length:
            return [s + d for s, d in zip(self.start, self.delta)]
        t = 0.0
        for (t0, s0), (t1, s1) in zip(self._knots, self._knots[1:]):
            if travelled <= s1:
                t = t0 if s1 == s0 else t0 + (t1 - t0) * (travelled - s0) / (s1 - s0)
                break
        return [s + math.copysign(min(abs(d), v * t), d) for s, d, v in zip(self.start, self.delta, self.speed)]


def advance(path, check, extra=0.0):
    # type: (Motion, Callable[[List[float]], Any], float) -> Tuple[bool, float, str, int]
    """The clearance along ``path`` by conservative advancement.

    From a posture with clearance c, the next posture checked is
    (c - required + STEP) / REACH of summed joint change further on (no point
    of the arm moves more than REACH per radian), so a motion far from the
    body takes a few checks and one near it a check every STEP. A start
    already closer than SWEEP_MARGIN (the robot put there by someone else)
    may move as long as it comes no closer than it is.

    Args:
        path: the :class:`Motion`.
        check: a posture's clearance (an object with ``distance`` and ``part``:
            :func:`nao_ik.geometry.scalar.clearance.clearance` of the arm and the body).
        extra: clearance required beyond SWEEP_MARGIN, metres.

    Returns:
        (clear, the smallest clearance along the motion, the body part there, postures checked).
    """
    low = check(path.start)
    need = min(SWEEP_MARGIN + extra, low.distance) - 1e-9
    travelled, samples, c = 0.0, 1, low
    while travelled < path.length:
        travelled = min(path.length, travelled + (max(c.distance - need, 0.0) + STEP) / REACH)
        c = check(path.at(travelled))
        samples += 1
        if c.distance < low.distance:
            low = c
            if c.distance < need:
                break
    return low.distance >= need, low.distance, low.part, samples


def overshoot(model, fraction):
    # type: (Any, float) -> List[float]
    """How far (rad) each joint may go past where it is when a command retargets it mid-move.

    A joint moving at up to ``fraction`` x its maximum velocity keeps going its old way for
    OVERSHOOT_CYCLES cycles while it decelerates: at most half that speed for that time (a linear
    deceleration; documented: 0.02 rad at 10 % of HeadYaw's 8.27 rad/s, where this bound gives 0.033).
    """
    return [j.max_velocity * fraction * OVERSHOOT_CYCLES * CYCLE / 2.0 for j in model.joints]


def overshoots(model, start, aim, fraction):
    # type: (Any, Sequence[float], Sequence[float], float) -> Tuple[List[float], List[float]]
    """How far each joint on its way from ``start`` to ``aim`` may go past the box between them, below and above:
    :func:`overshoot`, on the side each joint is moving."""
    over = overshoot(model, fraction)
    low = [o if a < s else 0.0 for s, a, o in zip(start, aim, over)]
    high = [o if a > s else 0.0 for s, a, o in zip(start, aim, over)]
    return low, high


def apart(a, b):
    # type: (Sequence[float], Sequence[float]) -> float
    """How far apart two postures are: their largest joint difference (rad; what STILL and SAG bound)."""
    return max(abs(x - y) for x, y in zip(a, b))


def way_box(model, reading, aims):
    # type: (Any, Sequence[float], Sequence[Tuple[Sequence[float], float]]) -> Tuple[List[List[float]], List[float], List[float]]
    """(postures, growth below, growth above): the box an arm may be in from ``reading`` on while it may still head
    for any of ``aims`` ((aim, fraction) each, the last the newest): a joint retargeted while it moved toward an
    earlier one goes on toward it as it brakes (for up to fraction x BRAKE s), so every such aim bounds the box;
    past each, the overshoot on the side the joint moved (:func:`overshoots`)."""
    low, high = [0.0] * 5, [0.0] * 5
    for aim, fraction in aims:
        lo, hi = overshoots(model, reading, aim, fraction)
        low = [max(a, b) for a, b in zip(low, lo)]
        high = [max(a, b) for a, b in zip(high, hi)]
    return [list(reading)] + [list(aim) for aim, _ in aims], low, high


def hull(postures, grow_low=None, grow_high=None):
    # type: (Sequence[Sequence[float]], Sequence[float] | None, Sequence[float] | None) -> Tuple[List[float], List[float]]
    """The joint-space box (lower, upper corners) around ``postures``, grown per joint below and above."""
    lo = [min(q[j] for q in postures) for j in range(5)]
    hi = [max(q[j] for q in postures) for j in range(5)]
    if grow_low is not None:
        lo = [a - g for a, g in zip(lo, grow_low)]
    if grow_high is not None:
        hi = [b + g for b, g in zip(hi, grow_high)]
    return lo, hi


def first_certified(candidates, check, most=ALTERNATIVES):
    # type: (Any, Callable[[Any, int], Tuple[bool, int]], int) -> Any
    """The first of at most ``most`` ``candidates`` (postures that do the same task, best first) whose motion
    ``check(q, budget)`` certifies, giving (clear, postures checked), their checks together within one
    BOX_BUDGET; None where none is."""
    left = BOX_BUDGET
    for k, q in enumerate(candidates):
        if k >= most or left <= 0:
            break
        clear, used = check(q, left)
        if clear:
            return q
        left -= used
    return None


def certify(model, shapes, lo, hi, need, budget=BOX_BUDGET):
    # type: (Any, Sequence[Any], Sequence[float], Sequence[float], float, int) -> Tuple[bool, float, str, int]
    """Whether every posture in the joint-space box [lo, hi] keeps ``need`` clearance from ``shapes``.

    The box between a command's start and its goal holds every motion in which each joint goes
    monotonically from its start to its goal, at any timing: linear or smooth, the joints synchronised
    or not. So a box that keeps the clearance certifies the command whatever profile ALMotion's
    setAngles follows. Branch and bound: the clearance at the box's centre, with each link grown by how
    far its points may be from there anywhere in the box (:func:`~nao_ik.geometry.scalar.clearance.
    link_reach_at`, :func:`~nao_ik.geometry.scalar.clearance.box_growth`), bounds the whole box's from below;
    where it is too small the box is halved across the joint that moves the links still within reach of the
    body most, the box of least bound first, until every part is certified, a centre itself is too close (a
    posture some motion takes: not clear), or ``budget`` postures were checked (not certified). A box with no
    verdict after CORNERS_AFTER postures has its corners checked too (each one a posture some motion takes).

    Returns:
        (clear, the clearance (bound) where it failed (``need`` where it did not), the body part there,
        postures checked).
    """
    k = arm(model)
    # The (link, body shape) pairs a box has yet to clear: a pair whose bound keeps ``need`` over a box keeps it
    # over every part of that box (the bound is below the true least distance there), so its parts skip it.
    everything = [(i, s) for i in range(len(LINK_ROWS)) for s in prepared(shapes)]
    todo = [(list(lo), list(hi), everything)]  # boxes to check
    # The boxes not certified yet, least bound first: a box with a posture in the body is found sooner (its parts
    # nearest the body are halved first), and one that is clear takes the same boxes in any order.
    heap = []  # type: list
    samples = 0
    cornered = False
    while True:
        for a, b, pairs in todo:
            centre = [0.5 * (x + y) for x, y in zip(a, b)]
            half = [0.5 * (y - x) for x, y in zip(a, b)]
            samples += 1
            pts, reach = link_frame(k, centre)
            links = link_segments(pts)
            low, part, open_pairs, exact, exact_part = pairs_within(links, pairs, box_growth(reach, half), need)
            if not open_pairs:
                continue
            if exact < need:
                return False, exact, exact_part, samples
            heapq.heappush(heap, (low, samples, a, b, centre, half, open_pairs, part, reach))
        if not heap:
            return True, need + 1e-6, "", samples
        if samples >= CORNERS_AFTER and not cornered:  # a hard box: a posture at a corner may be in the body
            cornered = True
            for bits in range(1 << len(lo)):
                corner = [h if bits >> j & 1 else x for j, (x, h) in enumerate(zip(lo, hi))]
                exact, exact_part = pairs_within(link_segments(link_points(k, corner)), everything, None, need)[:2]
                if exact < need:
                    return False, exact, exact_part, samples
        if samples >= budget:
            return False, heap[0][0], heap[0][7], samples
        _, _, a, b, centre, half, open_pairs, _, reach = heapq.heappop(heap)
        # Across the joint that moves the links still near the body most there (the first such joint).
        near = [reach[i] for i in sorted({i for i, _ in open_pairs})]
        j, most = 0, -1.0
        for jj in range(5):
            moves = max(w[jj] for w in near) * half[jj]
            if moves > most:
                j, most = jj, moves
        mid = centre[j]
        a2, b1 = list(a), list(b)
        b1[j], a2[j] = mid, mid
        todo = [(a2, b, open_pairs), (a, b1, open_pairs)]


def certify_from(model, shapes, start, lo, hi, need, budget=BOX_BUDGET):
    # type: (Any, Sequence[Any], Sequence[float], Sequence[float], Sequence[float], float, int) -> Tuple[bool, float, str, int]
    """:func:`certify` of the box [lo, hi] of a command from ``start``: every body part kept ``need`` away, but a
    part ``start`` is already within ``need`` + STEP / 2 of (the arm put there by someone else; or inside the
    region where the other arm may be on its way, which is larger than that arm) kept no more than STEP / 2
    nearer than it is, so that the arm may move away from it.

    Each part is judged on its own: a start deep inside one part lowers the need for that part alone, never for
    the others (a start inside the other arm's region once let a leg through the thighs).

    Returns:
        As :func:`certify`: (clear, the clearance (bound) where it failed, or the least need where it did not, the
        part there, postures checked, within ``budget`` in all).
    """
    groups = {}  # type: dict
    order = []  # the parts in the order of ``shapes``
    for s in shapes:
        if s[0] not in groups:
            groups[s[0]] = []
            order.append(s[0])
        groups[s[0]].append(s)
    kept, near = [], []
    for part in order:
        here = clearance(model, start, groups[part]).distance - STEP / 2
        if here < need:
            near.append((groups[part], here))
        else:
            kept.extend(groups[part])
    checks = ([(kept, need)] if kept else []) + near
    if not checks:
        return certify(model, shapes, lo, hi, need - 1e-9, budget)
    samples, least = 0, need
    for group, floor in checks:
        clear, distance, part, n = certify(model, group, lo, hi, floor - 1e-9, max(budget - samples, 1))
        samples += n
        if not clear:
            return False, distance, part, samples
        least = min(least, distance)
    return True, least, "", samples
