# -*- coding: utf-8 -*-
# ruff: noqa: UP004, UP009, UP010  (the common subset of Python 2.7 and 3, see the docstring)
"""The robot is the truth: what readings of an arm's commanded angles prove, and when the service's record holds.

NAO is shared: other programs call ``rest()`` and ``wakeUp()``, play timelines, move joints with ``setAngles``;
ALMotion's breathing and idle posture move arms that nothing commanded; the service itself restarts. So the
service decides from the robot's readings, and its record of what it sent is a hypothesis.

The reading this rests on is ``ALMotion.getAngles(names, False)``: the command of the current motion cycle to each
joint (ALMemory's actuator values), not the final target of a running ``setAngles`` (ALMotion tells no such target).
While an interpolation runs, that command changes every cycle; once every joint's command stays the same, nothing
is moving the arm.

- **Late readings**: ``getAngles`` carries no timestamp, and a still arm's readings repeat their values, so a
  reading may show the robot as it was some time before it was asked for (ALMotion's memory, the DCM, a busy
  robot), and nothing tells how long. The rule takes it as up to :data:`LAG` seconds before: a reading asked at
  ``t`` shows the robot as it was at some moment from ``t - LAG`` on. Every proof below allows for it.
- **Seen at rest** (:class:`Watch`): the commanded posture unchanged (within :data:`UNMOVED` a joint) over readings
  asked :data:`REST_SPAN` apart (STOPPED_CYCLES motion cycles of the robot's time, seen through readings up to LAG
  late), or unchanged since the arm was last seen at rest. It proves that no interpolation moved the arm faster
  than UNMOVED per reading interval over that span: a slow motion creeps below the sensed angles' stillness
  threshold (STILL, 0.5 mrad a cycle: 2 % of the slowest setAngles), never below this one (1e-6 rad; the slowest
  setAngles, fraction 0.01 of 6.4 rad/s, changes a command by 1.3 mrad a cycle, and a smooth start by more than
  1e-6 rad in its first cycle). It proves nothing about a command another program sends later, nor about one sent
  within LAG of the last reading (not in it yet): that is the robot's own protection's to catch, as for any two
  programs sharing ALMotion.
- **The record holds** (:func:`on_its_way`) while the commanded posture stays inside the box the service's commands
  since the arm was last at rest allow: from where the arm was commanded when each of them went toward its goal,
  grown by a retarget's overshoot (:func:`way_span`, :func:`widen`). A reading outside it (``rest()``, a timeline,
  another client, the robot's reflex) drops the record: the reading is then the state, and an arm moving under
  commands the service did not send may be anywhere in its range until it is seen at rest. A reading asked within
  LAG of a command's answer may show the arm as it was before ALMotion took it: it judges nothing of that command
  (:func:`shows`).
- **A command that stays short**: seen at rest away from the goal over REST_SPAN from a cycle after ALMotion took
  the command (:meth:`Watch.still_after`), with its motors on (it met motors switched off, ALMotion postponed it
  behind another task, or the robot's protection holds the arm). It still counts as possibly running (a postponed
  command runs later; a held arm goes on when the protection lets go) until the caller proves it does not (the
  robot's ``isCollision`` says nothing holds the arm), or a later reading leaves its box.
"""

from __future__ import division

from ..geometry.scalar.sweep import CYCLE, STOPPED_CYCLES, apart, hull, way_box

try:  # the type comments' names (typing is not in every Python 2.7)
    from typing import Any, List, Optional, Sequence, Tuple  # noqa: F401
except ImportError:  # pragma: no cover
    pass

#: A joint whose command changed by no more than this between two readings (rad) did not move between them.
UNMOVED = 1e-6
#: The bound on how late a reading is (s): ``getAngles`` asked at ``t`` shows the robot as it was at ``t - LAG`` or
#: later. What it costs: a proof of rest takes LAG longer, and a command is judged by readings asked LAG after it.
LAG = 0.5
#: Seconds of readings with an unchanged command that prove an arm at rest: STOPPED_CYCLES cycles of the robot's
#: time, through readings up to LAG late.
REST_SPAN = STOPPED_CYCLES * CYCLE + LAG
#: Seconds a call that moves an arm waits for an arm moving under commands the service did not send (another
#: program, a timeline, ALMotion's breathing or idle posture) to come to rest before it refuses with :data:`FOREIGN`:
#: 2 s for the motion to end, and LAG for the readings that prove it.
FOREIGN_WAIT = 2.0 + LAG
#: Seconds a computation waits for a first proof that an arm it has not seen at rest is at rest (a service that has
#: just started): twice REST_SPAN of readings, so that a busy machine's late readings still make one.
SETTLE = 2 * REST_SPAN
#: Why a call on (or beside) an arm that keeps moving under commands the service did not send is refused.
FOREIGN = (
    "motion: the {arm} keeps moving under commands this service did not send (another program, a timeline, or "
    "ALMotion's breathing or idle posture, which ALAutonomousLife's background movement switches on): stop them "
    "(ALMotion.setBreathEnabled('Arms', False), setIdlePostureEnabled('Arms', False)); nothing sent"
)


class Watch(object):
    """One arm's commanded posture as read, newest last: whether it moves, and where it was last seen at rest.

    Attributes:
        asked: when the newest reading taken was asked for (monotonic s; None before the first).
        commanded: its commanded posture.
        still_since: when the first of the readings in a row with that same posture was asked for.
        rest: the posture where the arm was last seen at rest, None while it has not been since it last moved.
    """

    __slots__ = ("asked", "commanded", "still_since", "rest")

    def __init__(self):
        # type: () -> None
        self.asked = None  # type: Optional[float]
        self.commanded = None  # type: Optional[List[float]]
        self.still_since = None  # type: Optional[float]
        self.rest = None  # type: Optional[List[float]]

    def observe(self, asked, commanded):
        # type: (float, Sequence[float]) -> bool
        """Take a reading asked at ``asked`` (monotonic s) of the arm's commanded posture; False (and nothing
        changes) where it is not newer than the newest taken."""
        if self.asked is not None and asked <= self.asked:
            return False
        commanded = [float(q) for q in commanded]
        same = self.commanded is not None and apart(commanded, self.commanded) <= UNMOVED
        if not same:
            self.still_since = asked
            if self.rest is not None and apart(commanded, self.rest) > UNMOVED:
                self.rest = None
        if self.rest is None and same and asked - self.still_since >= REST_SPAN - 1e-9:
            self.rest = commanded
        self.asked, self.commanded = asked, commanded
        return True

    def at_rest(self):
        # type: () -> bool
        """Whether the arm is seen at rest (its newest reading at :attr:`rest`)."""
        return self.rest is not None

    def still_after(self, since):
        # type: (float) -> bool
        """Whether the arm is seen at rest by readings all asked after ``since`` + one cycle, over :data:`REST_SPAN`:
        a command ALMotion took at ``since`` would have moved it (the newest of them, LAG late at most, shows the
        robot STOPPED_CYCLES cycles after that or later)."""
        return (self.rest is not None and self.asked is not None
                and self.asked - max(self.still_since, since + CYCLE) >= REST_SPAN - 1e-9)  # fmt: skip


def shows(asked, since):
    # type: (float, float) -> bool
    """Whether a reading asked at ``asked`` shows the robot as it was after ``since`` (a command's answer: ALMotion
    had taken it), up to :data:`LAG` late as it may be."""
    return asked >= since + LAG


def way_span(model, origin, aim, fraction):
    # type: (Any, Sequence[float], Sequence[float], float) -> Tuple[List[float], List[float]]
    """The joint-space box (lower, upper corners) a command may take the arm's command through: from ``origin``
    (where the arm was commanded when it went) to ``aim`` (its goal, sent at ``fraction``), grown by a retarget's
    overshoot on the side each joint moves (:func:`nao_ik.geometry.scalar.sweep.way_box`)."""
    return hull(*way_box(model, origin, [(aim, fraction)]))


def widen(span, other):
    # type: (Optional[Tuple[List[float], List[float]]], Tuple[List[float], List[float]]) -> Tuple[List[float], List[float]]
    """The box around two boxes (``span`` None: ``other``). Commands that retarget one another keep the arm's
    command in the box around their spans: each joint goes from somewhere in one toward the next one's goal."""
    if span is None:
        return list(other[0]), list(other[1])
    return [min(a, b) for a, b in zip(span[0], other[0])], [max(a, b) for a, b in zip(span[1], other[1])]


def on_its_way(span, commanded):
    # type: (Tuple[Sequence[float], Sequence[float]], Sequence[float]) -> bool
    """Whether a commanded posture read is one the service's commands may have put the arm at: inside ``span``
    (:func:`widen` of their :func:`way_span` since the arm was last at rest, each joint within :data:`UNMOVED`)."""
    return all(a - UNMOVED <= q <= b + UNMOVED for q, a, b in zip(commanded, span[0], span[1]))


def anywhere(model):
    # type: (Any) -> Tuple[List[float], float, Tuple[Tuple[List[float], float]]]
    """(goal, fraction, earlier goals): an arm that may be anywhere in its range, as a way toward goals (the way
    from its reading toward them spans its whole joint box), for the body and the motion check."""
    return list(model.upper), 1.0, ((list(model.lower), 1.0),)


def arrived(commanded, aim):
    # type: (Sequence[float], Sequence[float]) -> bool
    """Whether the commanded posture is the goal (each joint within :data:`UNMOVED`): the command has ended there."""
    return apart(commanded, aim) <= UNMOVED


def check_motors(arm, names, stiffness):
    # type: (str, Sequence[str], Sequence[float]) -> None
    """Refuse an arm whose motors are off, as read (a command would move nothing; neither the service nor the robot
    runtime switches them on by itself)."""
    off = [n for n, v in zip(names, stiffness) if not v > 0.0]
    if off:
        raise RuntimeError("{} motors are off (stiffness 0 on {}): call ALMotion.wakeUp() or setStiffnesses "
                           "first".format(arm, ", ".join(off)))  # fmt: skip
