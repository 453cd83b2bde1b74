# -*- coding: utf-8 -*-
# ruff: noqa: UP004, UP009, UP010, UP031  (the common subset of Python 2.7 and 3)
"""The other arm as part of the body: where it stands, and where a command this runtime sent it may take it.

An arm's answer and motion are checked against the other arm's links too (part
:data:`~nao_ik.model.body_data.OTHER_ARM`), as the library's
:func:`nao_ik.geometry.collision.posture_body` adds them for the computer-side service. The other arm
is taken to be anywhere in a *box* of postures: each joint anywhere between its sensed angle
and the angles of the commands this runtime sent it that may still be running
(:class:`Commands`), grown by the overshoot of a joint retargeted mid-move
(:func:`nao_ik.geometry.scalar.sweep.overshoot`). A box of one posture (the arm standing, no
command running) gives the library's capsules exactly (:func:`nao_ik.geometry.collision.arm_capsules`:
each link whole, its radius); a wider box is cut into pieces, each link's capsule taken at a
piece's middle posture with its radius grown by how far the link's points can be from there
anywhere in the piece (:func:`nao_ik.geometry.scalar.clearance.link_reach_at`, ``box_growth``): a conservative
cover, cut as the library's :func:`nao_ik.geometry.collision.arm_region` cuts it, whose clearance the
library's :mod:`nao_ik.geometry.scalar.clearance` computes as for any body part.

Written in the common subset of Python 2.7 and 3 (the robot runtime).
"""

from __future__ import division

import threading
import time

from ..geometry.scalar.clearance import region_rows
from ..geometry.scalar.sweep import BRAKE, overshoot
from ..model.body_data import OTHER_ARM

#: Monotonic seconds where the Python has them (3), else the wall clock (2.7): the clock of
#: :mod:`nao_ik.robot.link` too (no libqi needed here).
now = getattr(time, "monotonic", time.time)

#: A command is taken to run at most this factor of its constant-speed time (setAngles' bell-shaped speed takes
#: about 1.5x), plus SLACK seconds.
SLOWER = 2.0
SLACK = 1.0
#: Seconds a command's record is kept after it stopped running (longer than any call's reading is used).
KEEP = 30.0


def rows(model, lo, hi, part=OTHER_ARM):
    # type: (object, list, list, str) -> tuple
    """Body rows (part, a, b, radius) holding the arm's links at every posture of the box lo..hi
    (:func:`nao_ik.geometry.scalar.clearance.region_rows`, as the library's
    :func:`nao_ik.geometry.collision.arm_region`).

    Returns:
        Capsule rows; for lo == hi the library's :func:`nao_ik.geometry.collision.arm_capsules` of that posture.
    """
    return region_rows(model, lo, hi, part)


class Sent(object):
    """A command this runtime sent to an arm: when, its angles, how long it may run once ALMotion took it."""

    __slots__ = ("sent", "answered", "aim", "fraction", "seconds", "future", "rested", "lost")

    def __init__(self, sent, aim, fraction, seconds, future):
        self.sent, self.aim, self.fraction = sent, list(aim), float(fraction)
        self.seconds, self.future = float(seconds), future
        self.answered = None  # when ALMotion's answer was seen (no earlier than it came)
        self.rested = None  # from when the arm was proven at rest after it (:meth:`Commands.rest`)
        self.lost = False  # no answer came in time: ALMotion may take it later (taken_by then says so at KEEP)

    def taken_by(self, t):
        # type: (float) -> bool
        """ALMotion answered it (so took it) before ``t``."""
        if self.answered is None and self.future is not None and self.future.isFinished():
            self.answered = now()  # seen now: it came no later
        return self.answered is not None and self.answered < t


class Commands(object):
    """The commands this runtime sent to each arm, kept while they may still move it.

    ``box(arm, sensed, asked)``: the postures the arm may take from a reading asked at ``asked`` on
    (each joint between the bounds): the reading and the commands that may still run then (the
    last one ALMotion took before the reading, unless it had finished by then, every one it had
    not taken yet, and every earlier one whose next command ALMotion took less than its fraction x
    BRAKE s before the reading: a later command replaces the earlier one's angles, but a joint on its
    way to them goes on braking toward them). ``version`` changes with
    every command, so a check can tell whether the box it used still holds. A reading asked after the arm was
    proven at rest (:meth:`rest`) leaves out the commands taken before the proof.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._sent = {}  # arm -> [Sent], oldest first
        self._version = {}

    def version(self, arm):
        # type: (str) -> int
        with self._lock:
            return self._version.get(arm, 0)

    def add(self, arm, aim, fraction, seconds, future=None):
        # type: (str, list, float, float, object) -> Sent
        """Record a command to ``arm`` just sent (at ``fraction`` of the maximum speed) that runs ``seconds`` at
        most once ALMotion took it (:func:`run_time`); ``future``: its call's, done when ALMotion answers."""
        entry = Sent(now(), aim, fraction, seconds, future)
        with self._lock:
            t = now()
            kept = [e for e in self._sent.get(arm, []) if not e.taken_by(t - e.seconds - KEEP)]
            self._sent[arm] = kept + [entry]
            self._version[arm] = self._version.get(arm, 0) + 1
        return entry

    def settled(self, arm, t):
        # type: (str, float) -> bool
        """Whether ALMotion answered every command recorded for ``arm`` before ``t`` (none went unanswered)."""
        with self._lock:
            sent = list(self._sent.get(arm, []))
        return all(e.taken_by(t) and not e.lost for e in sent)

    def rest(self, arm, since):
        # type: (str, float) -> None
        """The arm was proven at rest from a reading asked at ``since`` on (:meth:`NaoArmIK._at_rest`): the commands
        ALMotion took before then move it no more, in the box of any reading asked from then on (one asked earlier
        still has them: the arm may have moved after it)."""
        with self._lock:
            for e in self._sent.get(arm, []):
                if e.taken_by(since) and (e.rested is None or since < e.rested):
                    e.rested = since

    def box(self, model, sensed, asked):
        # type: (object, list, float) -> tuple
        """(lo, hi, version): the bounds of the arm's postures from the reading ``sensed`` asked at ``asked`` on.

        Each joint between its reading and the aims of the commands that may still run, and past an aim by
        the overshoot of a joint retargeted on its way there (:func:`~nao_ik.geometry.scalar.sweep.overshoot`).
        """
        lo, hi = list(sensed), list(sensed)
        with self._lock:
            sent = list(self._sent.get(model.arm, []))
            version = self._version.get(model.arm, 0)
        last = None
        for i, e in enumerate(sent):
            if e.taken_by(asked):
                last = i
        for i, e in enumerate(sent):
            if e.rested is not None and asked >= e.rested:
                continue  # the arm was proven at rest after it, by the reading's time
            if last is not None and i < last and sent[i + 1].taken_by(asked - BRAKE * e.fraction):
                continue  # replaced by the next command before the reading, long enough before for a joint to brake
            if i == last and asked >= e.answered + e.seconds:
                continue  # finished before the reading: the reading shows where it ended
            over = overshoot(model, e.fraction)
            lo = [min(a, g - o) if g < s else a for a, g, s, o in zip(lo, e.aim, sensed, over)]
            hi = [max(b, g + o) if g > s else b for b, g, s, o in zip(hi, e.aim, sensed, over)]
        return lo, hi, version


def run_time(model, lo, hi, aim, fraction):
    # type: (object, list, list, list, float) -> float
    """Seconds a command to ``aim`` may run when the arm is anywhere in the box lo..hi (SLOWER, SLACK)."""
    worst = max(max(abs(g - a), abs(g - b)) / (j.max_velocity * fraction)
                for g, a, b, j in zip(aim, lo, hi, model.joints))  # fmt: skip
    return SLOWER * worst + SLACK
