# -*- coding: utf-8 -*-
# ruff: noqa: UP004, UP009, UP010  (the common subset of Python 2.7 and 3, see the docstring)
"""Streaming: an arm moved toward a goal in short commands, one a motion cycle, each certified from where the arm
may be.

One ``setAngles`` to a far goal hands the whole motion to ALMotion's profile, which nobody publishes, so a check
must hold for every way that profile could take, and every retarget from anywhere on it. Streamed, the arm goes
along the straight joint-space line from its command toward the goal, each command :data:`LOOKAHEAD` cycles of
motion ahead of the arm's commanded posture, so the arm never catches up with it while the goal is farther, and
the box each command needs certified is a few cycles of motion long.

**Where the arm may be** (:func:`region`). The reading (``getAngles(names, False)``, asked at ``asked``) shows the
arm's commanded posture as it was at some moment from ``asked - LAG`` on (:mod:`nao_ik.motion.truth`). From that
moment each joint's command goes monotonically from where it is toward the newest target it has taken, but for a
retargeted joint, which keeps its old way for a few cycles as it brakes (:func:`~nao_ik.geometry.scalar.sweep.
overshoots`). The targets it may have taken since, or still brake toward, are those sent from ``asked - LAG -
BRAKE x fraction`` on (:func:`recent`), and the new one. So the arm stays within the joint-space box around the
reading and those targets, grown by each one's overshoot (:func:`~nao_ik.geometry.scalar.sweep.way_box`), whatever
the profile: the box the new command must keep clear of the body (:func:`~nao_ik.geometry.scalar.sweep.certify`,
the body including the other arm where it may be). A command sent nothing after it leaves the arm
in the box of the last certified one: a stream that stops (no target, the body in the way) stops the arm inside
certified space, within :func:`horizon` of the last command sent plus its braking. An arm already nearer the body than
:data:`NEED` (put there by another program) may only move where it comes no nearer: a stream of commands each allowed
a little nearer would creep into the body.

**Slowing near the body** (MoveIt Servo's rule): a step that brings the arm closer to the body slows as the arm
nears the body's margin (:func:`scale`), down to :data:`SLOWEST`; a step that leaves it does not. Where the
straight step is not certified, the step with one joint held still that is (the arm slides along the margin), else
half the step, else nothing: the arm stops at its last command.

Written in the common subset of Python 2.7 and 3 with no numpy: it runs on the robot too.
"""

from __future__ import division

from ..geometry.scalar.clearance import clearance
from ..geometry.scalar.sweep import BRAKE, CYCLE, SWEEP_MARGIN, certify, hull, way_box
from .truth import LAG, UNMOVED

try:  # the type comments' names (typing is not in every Python 2.7)
    from typing import Any, List, NamedTuple, Optional, Sequence, Tuple  # noqa: F401
except ImportError:  # pragma: no cover
    pass

#: Cycles of motion each command is ahead of the arm's commanded posture: more than the cycles between two
#: commands and a reading's round trip, so that the arm never arrives at one before the next replaces it (it would
#: stop and start: a stutter), few enough that the box each command needs certified stays small.
LOOKAHEAD = 4
#: Metres beyond the body's margin within which a step toward the body slows: at the margin's edge the arm moves at
#: SLOWEST of its speed, SLOW_ZONE beyond it at full speed.
SLOW_ZONE = 0.015
#: The slowest a step toward the body goes, as a share of the stream's speed.
SLOWEST = 0.1
#: The clearance every commanded posture keeps from the body (the margin of a certified motion).
NEED = SWEEP_MARGIN
#: Postures one step's certifications may check in all, its candidates together (a step's box is small: a few dozen
#: postures decide most near the body; one not decided within it is not sent, and the arm stops at its last command).
STEP_BUDGET = 150


class Sent(object):
    """A command of the stream: its target, its fraction of the joints' maximum speed, when it was sent and when
    ALMotion's answer came (monotonic s; None until it came: ALMotion took it by then), and the box the arm was
    certified to stay in from then until the next command is taken (:func:`region`)."""

    __slots__ = ("aim", "fraction", "at", "answered", "box")

    def __init__(self, aim, fraction, at, box):
        # type: (Sequence[float], float, float, Tuple[List[float], List[float]]) -> None
        self.aim = [float(q) for q in aim]
        self.fraction = float(fraction)
        self.at = float(at)
        self.answered = None  # type: Optional[float]
        self.box = box


class Step(object):
    """What one cycle decided: ``command`` (five angles, None: send nothing), at ``fraction``; ``held``: why the arm
    is held back ("" where it is not: the arm goes at the stream's speed); ``box``: the region certified for the
    command (:func:`region`; None with no command)."""

    __slots__ = ("command", "fraction", "held", "box")

    def __init__(self, command, fraction, held, box=None):
        # type: (Optional[List[float]], float, str, Any) -> None
        self.command = command
        self.fraction = fraction
        self.held = held
        self.box = box


def recent(sent, asked, commanded):
    # type: (Sequence[Sent], float, Sequence[float]) -> List[Sent]
    """The commands of ``sent`` (oldest first) the arm may have taken after the moment a reading asked at ``asked``
    shows, or may still brake toward then.

    That moment is ``asked - LAG`` at the earliest, when the arm headed for the newest command ALMotion had
    answered by then (or an older one). The reading also dates itself: the arm's command stays in each command's
    certified box from when the command is sent until the next one is taken, so a commanded posture outside the
    boxes of every command before command k shows a moment after command k was sent. From the earliest moment on:
    the command the arm may have been heading for then and those after it, and the ones before them whose
    successor's answer came less than BRAKE x their fraction before that moment (they may still brake toward them).
    """
    if not sent:
        return []
    lower = asked - LAG
    window = 0  # the newest command ALMotion had answered by the earliest moment: the earlier ones were superseded
    for k, s in enumerate(sent):
        if s.answered is not None and s.answered <= lower:
            window = k
    first = window
    for k in range(window, len(sent)):
        lo, hi = sent[k].box
        if all(a - UNMOVED <= q <= b + UNMOVED for q, a, b in zip(commanded, lo, hi)):
            first = k  # the reading may show the arm in this command's box: heading for it, or a later one
            break
    moment = max(lower, sent[first].at)
    fastest = [sent[0].fraction]  # the fastest of the commands before each one
    for s in sent[1:first]:
        fastest.append(max(fastest[-1], s.fraction))
    keep = first
    while keep > 0:
        nxt = sent[keep]
        if nxt.answered is not None and moment >= nxt.answered + BRAKE * fastest[keep - 1]:
            break  # every command before it was superseded, and has braked, by then
        keep -= 1
    return list(sent[keep:])


def horizon(model, fraction):
    # type: (Any, float) -> List[float]
    """How far (rad, per joint) a command may be ahead of the arm's commanded posture: LOOKAHEAD cycles at
    ``fraction`` of each joint's maximum speed (where a stream that stops leaves the arm, before its braking)."""
    return [j.max_velocity * fraction * LOOKAHEAD * CYCLE for j in model.joints]


def region(model, commanded, sent, asked, aim=None, fraction=None):
    # type: (Any, Sequence[float], Sequence[Sent], float, Optional[Sequence[float]], Optional[float]) -> Tuple[List[float], List[float]]
    """The joint-space box (lower, upper corners, within the joint limits) the arm may be in: from its commanded
    posture read at ``asked``, toward every command of ``sent`` it may have taken since (:func:`recent`) and
    ``aim`` at ``fraction`` if given (the command to send), each grown by its overshoot."""
    aims = [(s.aim, s.fraction) for s in recent(sent, asked, commanded)]
    return _box(model, commanded, aims + ([(aim, fraction)] if aim is not None else []))


def _box(model, commanded, aims):
    # type: (Any, Sequence[float], Sequence[Tuple[Sequence[float], float]]) -> Tuple[List[float], List[float]]
    """:func:`region` of the commands ``aims`` ((aim, fraction) each)."""
    lo, hi = hull(*way_box(model, commanded, aims))
    return [max(a, m) for a, m in zip(lo, model.lower)], [min(b, m) for b, m in zip(hi, model.upper)]


def scale(gap_now, gap_next):
    # type: (float, float) -> float
    """The share of its speed a step goes at: 1 where it leaves the body (``gap_next`` >= ``gap_now``, clearances
    beyond the margin, m), else from SLOWEST at the margin to 1 at SLOW_ZONE beyond it."""
    if gap_next >= gap_now:
        return 1.0
    return max(SLOWEST, min(1.0, gap_next / SLOW_ZONE))


def toward(model, start, goal, fraction):
    # type: (Any, Sequence[float], Sequence[float], float) -> List[float]
    """The posture on the straight joint-space line from ``start`` toward ``goal`` at most :func:`horizon` away
    per joint (``goal`` where it is nearer)."""
    reach = horizon(model, fraction)
    delta = [g - s for s, g in zip(start, goal)]
    share = 1.0
    for d, r in zip(delta, reach):
        if abs(d) > r:
            share = min(share, r / abs(d))
    return [s + share * d for s, d in zip(start, delta)]


def step(model, shapes, commanded, asked, goal, fraction, sent, margin):
    # type: (Any, Sequence[Any], Sequence[float], float, Sequence[float], float, Sequence[Sent], float) -> Step
    """One cycle of a stream: the command that takes the arm on toward ``goal``, certified from where it may be.

    Args:
        model: the arm (joint limits and maximum velocities).
        shapes: the body as read (the other arm where it may be included).
        commanded: the arm's commanded posture as read (``getAngles(names, False)``), asked at ``asked``.
        goal: the posture to go to (within the limits).
        fraction: the stream's fraction of the joints' maximum speed.
        sent: the stream's commands so far, oldest first (at least those since ``asked`` - LAG - BRAKE).
        margin: the body's margin every answer keeps (m): the slowing counts from it.

    Returns:
        :class:`Step`.
    """
    commanded = [float(q) for q in commanded]
    here = clearance(model, commanded, shapes).distance if shapes else float("inf")
    last = sent[-1].aim if sent else commanded
    if max(abs(g - q) for g, q in zip(goal, last)) <= UNMOVED:  # on its way there already (or there)
        return Step(None, fraction, "")
    ahead = toward(model, commanded, goal, fraction)
    share = 1.0
    if shapes:
        there = clearance(model, ahead, shapes).distance
        share = scale(here - margin, there - margin)
        if share < 1.0:
            ahead = toward(model, commanded, goal, fraction * share)
    candidates = [(ahead, "")]
    # Held back: one joint held still (the arm slides along the margin), nearest the goal first; then half the step.
    slides = []
    for j in range(5):
        if abs(ahead[j] - commanded[j]) > UNMOVED:
            slid = list(ahead)
            slid[j] = commanded[j]
            slides.append((sum((a - g) ** 2 for a, g in zip(slid, goal)), j, slid))
    candidates += [(slid, "the body: sliding along its margin") for _, _, slid in sorted(slides)]
    candidates.append(([0.5 * (a + q) for a, q in zip(ahead, commanded)], "the body: half a step"))
    checked = 0
    f = fraction * share
    taken = [(s.aim, s.fraction) for s in recent(sent, asked, commanded)]  # the same for every candidate
    for q, why in candidates:
        if max(abs(a - b) for a, b in zip(q, commanded)) <= UNMOVED:
            continue
        lo, hi = _box(model, commanded, taken + [(q, f)])
        if not shapes:
            return Step(q, f, why, (lo, hi))
        if checked >= STEP_BUDGET:
            break
        clear, _, _, used = certify(model, shapes, lo, hi, min(NEED, here) - 1e-9, STEP_BUDGET - checked)
        checked += used
        if clear:
            held = why or ("the body: slowed near its margin" if share < 1.0 else "")
            return Step(q, f, held, (lo, hi))
    return Step(None, f, "the body: no certified step toward the target")
