# -*- coding: utf-8 -*-
# ruff: noqa: UP004, UP009, UP010, UP031  (the common subset of Python 2.7 and 3)
"""What the runtime knows of each arm's motion: the robot's readings of it, and its record of the commands it sent.

The robot is the truth (:mod:`nao_ik.motion.truth`, the rule the computer-side service's engine follows too, by the
same code): each reading of an arm's commanded angles (``getAngles(names, False)``) goes to the arm's
:class:`~nao_ik.motion.truth.Watch`, and the record of the commands this runtime sent the arm is a hypothesis held
against it (:meth:`Record.observe`):

- it holds while the commanded posture stays in the box from where the arm was commanded when each command went
  toward its goal, a retarget's overshoot included, for every command since the arm's last one that ended (a joint
  may be on its way back from braking: :func:`~nao_ik.motion.truth.on_its_way`), and is dropped the moment a reading
  leaves it (``rest()``, ``wakeUp()``, a timeline, another client, the robot's reflex): the reading is then the
  state;
- a command whose goal ALMotion's command reached has ended (:func:`~nao_ik.motion.truth.arrived`): any later
  motion is someone else's, and drops it;
- a command seen at rest short of its goal after ALMotion took it, the motors on, has *stalled*: it may still run
  (postponed, or held by the robot's protection) until the caller proves that nothing holds the arm
  (:meth:`Record.drop`);
- a command is judged only by readings that show the robot after ALMotion took it: asked
  :data:`~nao_ik.motion.truth.LAG` after its answer (:func:`~nao_ik.motion.truth.shows`); an earlier reading may
  show the arm as it was before.

An arm with no record that is not seen at rest (every arm of a runtime that has just started, and one moving under
commands the runtime did not send) may be anywhere in its range (:meth:`Record.unknown`, :meth:`Record.box`).

Written in the common subset of Python 2.7 and 3 (the robot runtime).
"""

from __future__ import division

import threading
import time

from ..geometry.scalar.sweep import BRAKE, hull, way_box
from ..motion.truth import Watch, arrived, on_its_way, shows, way_span, widen

#: Monotonic seconds where the Python has them (3), else the wall clock (2.7): the clock of
#: :mod:`nao_ik.robot.link` too (no libqi needed here).
now = getattr(time, "monotonic", time.time)


class Sent(object):
    """A command this runtime sent to an arm: its goal and fractionMaxSpeed, when it went, its call's future, when its
    answer was seen, the box ALMotion's command may be in while it and the commands before it since the arm's last
    one that ended may still move it (:func:`~nao_ik.motion.truth.widen`), and what the readings showed of it."""

    __slots__ = ("aim", "fraction", "sent", "future", "answered", "span", "ended", "stalled", "lost")

    def __init__(self, aim, fraction, sent, future, span):
        self.aim, self.fraction, self.sent, self.future = list(aim), float(fraction), sent, future
        self.span = span
        self.answered = None  # when ALMotion's answer was seen (no earlier than it came): ALMotion had taken it
        self.ended = False  # ALMotion's command reached its goal
        self.stalled = False  # seen at rest short of its goal after ALMotion took it, the motors on
        self.lost = False  # no answer came in time: ALMotion may take it later

    def taken_by(self, t):
        # type: (float) -> bool
        """ALMotion answered it (so took it) before ``t``."""
        if self.answered is None and self.future is not None and self.future.isFinished():
            self.answered = now()  # seen now: it came no later
        return self.answered is not None and self.answered < t

    def judged_by(self, asked):
        # type: (float) -> bool
        """Whether a reading asked at ``asked`` shows the robot after ALMotion took it (or, a command whose answer
        never came, after it went)."""
        self.taken_by(asked)
        since = self.sent if self.lost else self.answered
        return since is not None and shows(asked, since)


class Record(object):
    """Each arm's :class:`~nao_ik.motion.truth.Watch` and the commands this runtime sent it that may still move it.

    Args:
        models: the arm models by arm name (their joint limits bound an arm that may be anywhere).

    ``version(arm)`` changes with every command recorded and whenever the arm becomes one that may be anywhere, so
    that a check can tell whether the other arm's box it used still holds.
    """

    def __init__(self, models):
        self._models = models
        self._lock = threading.Lock()
        self._watch = dict((arm, Watch()) for arm in models)
        self._sent = dict((arm, []) for arm in models)  # arm -> [Sent], oldest first; the last is its last command
        self._version = dict((arm, 0) for arm in models)

    def version(self, arm):
        # type: (str) -> int
        with self._lock:
            return self._version[arm]

    def observe(self, asked, commanded, motors):
        # type: (float, dict, dict) -> None
        """Hold each arm's record against a reading asked at ``asked``: ``commanded`` (arm -> its five commanded
        angles) and ``motors`` (arm -> whether its motors are on). Readings not newer than one taken are ignored
        (two calls' readings may come back out of order)."""
        with self._lock:
            for arm, angles in commanded.items():
                watch = self._watch[arm]
                was = self._unknown(arm)
                if not watch.observe(asked, angles):
                    continue
                sent = self._sent[arm]
                last = sent[-1] if sent else None
                if last is not None and last.judged_by(asked):
                    if arrived(angles, last.aim):
                        last.ended, last.stalled = True, False
                        self._sent[arm] = [last]  # it heads for no earlier goal either
                    else:
                        span = (last.aim, last.aim) if last.ended else last.span  # ended: any motion is another's
                        if not on_its_way(span, angles):
                            self._sent[arm] = []  # another command moved it: the reading is the state
                        else:
                            last.stalled = (bool(motors.get(arm)) and not last.lost
                                            and watch.still_after(last.answered))  # fmt: skip
                if not was and self._unknown(arm):
                    self._version[arm] += 1  # it may be anywhere now: a check against its box before is done again

    def add(self, arm, aim, fraction, future=None):
        # type: (str, list, float, object) -> Sent
        """Record a command to ``arm`` just sent (``future``: its call's, done when ALMotion answers): from where
        ALMotion commanded the arm as last read, toward ``aim`` at ``fraction``."""
        with self._lock:
            watch = self._watch[arm]
            origin = watch.commanded if watch.commanded is not None else aim
            last = self._sent[arm][-1] if self._sent[arm] else None
            span = way_span(self._models[arm], origin, aim, fraction)
            entry = Sent(aim, fraction, now(), future, widen(None if last is None or last.ended else last.span, span))
            kept = [] if last is None or last.ended else self._earlier(arm) + [last]
            self._sent[arm] = kept + [entry]
            self._version[arm] += 1
            return entry

    def unknown(self, arm):
        # type: (str) -> bool
        """Whether the arm may be anywhere in its range: no record of a command this runtime sent it (none since it
        started, or dropped by a reading that left its box), and not seen at rest. ALMotion never tells the goal
        of a running command."""
        with self._lock:
            return self._unknown(arm)

    def running(self, arm):
        # type: (str) -> bool
        """Whether a command this runtime sent the arm may still move it (recorded and not ended)."""
        with self._lock:
            sent = self._sent[arm]
            return bool(sent) and not sent[-1].ended

    def stalled(self, arm):
        # type: (str) -> object
        """The arm's last command where it has stalled (:class:`Sent`), else None."""
        with self._lock:
            sent = self._sent[arm]
            return sent[-1] if sent and sent[-1].stalled and not sent[-1].ended else None

    def held(self, arm):
        # type: (str) -> bool
        """Whether the arm's last command went unanswered and the arm is seen at rest since it went: ALMotion may
        still take it, and no reading will tell."""
        with self._lock:
            sent = self._sent[arm]
            return bool(sent) and sent[-1].lost and self._watch[arm].still_after(sent[-1].sent)

    def drop(self, arm, entry):
        # type: (str, Sent) -> None
        """Forget the arm's commands, where ``entry`` is still its last: it stalled and nothing holds the arm (the
        robot's ``isCollision`` says so), so it runs no more."""
        with self._lock:
            if self._sent[arm] and self._sent[arm][-1] is entry:
                self._sent[arm] = []

    def box(self, model, sensed):
        # type: (object, list) -> tuple
        """(lo, hi, version): the bounds of the postures the arm may take from its reading ``sensed`` on.

        The whole joint range where the arm may be anywhere (:meth:`unknown`); else each joint between its reading
        and the goals of the commands that may still move it (the last, and the earlier ones a joint may still be
        braking toward), past each goal by the overshoot of a joint retargeted on its way there
        (:func:`~nao_ik.geometry.scalar.sweep.way_box`, as the library's region of an arm on its way); a command
        that has ended, between the reading and its goal (a joint under load sags off its command).
        """
        with self._lock:
            version = self._version[model.arm]
            if self._unknown(model.arm):
                return list(model.lower), list(model.upper), version
            sent = self._sent[model.arm]
            if not sent:
                return list(sensed), list(sensed), version
            last = sent[-1]
            if last.ended:
                lo, hi = hull([sensed, last.aim])
            else:
                aims = [(e.aim, e.fraction) for e in self._earlier(model.arm)] + [(last.aim, last.fraction)]
                lo, hi = hull(*way_box(model, sensed, aims))
        return lo, hi, version

    def _unknown(self, arm):
        return not self._sent[arm] and not self._watch[arm].at_rest()

    def _earlier(self, arm):
        """The commands before the arm's last that a joint may still be braking toward: each until its fraction x
        BRAKE s after ALMotion took the next one (from when that answer was seen; while it has not been, it
        stays). The caller holds the lock."""
        sent = self._sent[arm]
        t = now()
        return [e for e, nxt in zip(sent, sent[1:]) if not nxt.taken_by(t - BRAKE * e.fraction)]
