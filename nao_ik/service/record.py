"""The service's record of its commands to each arm, held against the robot's readings (the robot is the truth).

The record is a hypothesis (:mod:`nao_ik.motion.truth`): each arm's commands since it was last at rest, the box
they may put ALMotion's command in, and what the readings prove (:class:`~nao_ik.motion.truth.Watch`: moving, seen
at rest). A reading that leaves the box drops the record (``rest()``, ``wakeUp()``, a timeline, another client, the
robot's reflex); an arm moving under commands the service did not send may then be anywhere in its range until it
is seen at rest (:meth:`Record.unknown`). What became of a command its caller could not be told is kept for the
arm's next call and for ``getArmState``.

The engine (:mod:`nao_ik.service.engine`) owns the lock every method here runs under (its commit lock), reads the
robot and sends; this module only keeps and judges.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Any, Callable

from ..geometry.scalar.sweep import BRAKE, CYCLE, apart
from ..model.arm import ARMS, ArmModel
from ..motion.truth import Watch, arrived, on_its_way, shows, way_span, widen

#: What became of an arm's last command, told to its next call and by ``getArmState``.
LIMP = "its last command met its motors switched off (rest(), setStiffnesses): the arm did not follow it"
MOVED_OFF = ("another command moved the arm off the way of its last one (another program, a timeline, rest() or "
             "wakeUp(), the robot's reflex)")  # fmt: skip
SHORT = ("its last command stayed short of its goal (met motors switched off, or another task took the arm) and runs "
         "no more")  # fmt: skip


class Aimed:
    """A command recorded for an arm: its posture and fraction, when it was sent (monotonic s, taken once the call
    went out: readings asked before do not show it), its call's future (None where its answer had come when it
    was recorded, or never will), when its answer was first seen (when ALMotion took it, or later), and whether
    the arm was seen at rest since (``rested``: exactly at it and heading for nothing else, or proved at rest:
    :meth:`Engine.at_rest`): a joint then brakes toward it no more once the next command comes."""

    __slots__ = ("aim", "fraction", "sent", "future", "seen", "rested", "stalled")

    def __init__(self, aim: list, fraction: float, sent: float, future: Any, seen: float | None):
        self.aim, self.fraction, self.sent, self.future, self.seen = aim, fraction, sent, future, seen
        self.rested = False
        self.stalled = False  # seen at rest short of its goal since ALMotion took it (:meth:`Record.observe`)


class Record:
    """Each arm's commands and readings.

    Args:
        lock: the lock every method runs under (re-entrant: the engine's commit lock).
        model: the arm's model (its joints' names, limits and speeds) by name.
    """

    def __init__(self, lock: threading.RLock, model: Callable[[str], ArmModel]):
        self._lock = lock
        self._model = model
        # What the robot's readings of each arm's commanded angles prove (moving, seen at rest).
        self.watch = {arm: Watch() for arm in ARMS}
        # Per arm, its commands whose goal its joints may still head for (the last, and those before it until BRAKE x
        # their fraction after the next one was taken), oldest first (:meth:`earlier`); never empty once the arm was
        # commanded (each change assigns a whole list): its last entry is the arm's last command (:meth:`last`).
        self._aimed: dict[str, list[Aimed]] = {}
        # Per arm, the box its commands since it was last at rest may put ALMotion's command in (:meth:`add`).
        self._span: dict[str, tuple] = {}
        # Per arm, what became of its last command that its caller could not be told (met motors switched off,
        # replaced by another program's, stayed short), and when that command was sent: told to the arm's next call
        # (:meth:`news`); the same kept for ``getArmState`` (:meth:`fate`) until the arm's next command.
        self._news: dict[str, tuple[float, str]] = {}
        self._fate: dict[str, str] = {}

    def reset(self) -> None:
        """A new ALMotion: the arms are seen at rest again before they are taken as still (what ran meanwhile is not
        known). One assignment: a reader compares :attr:`watch` by identity."""
        self.watch = {arm: Watch() for arm in ARMS}

    def last(self, arm: str) -> Aimed | None:
        """The arm's last command (None before the first)."""
        entries = self._aimed.get(arm)
        return entries[-1] if entries else None

    def aims(self) -> dict[str, list]:
        """The last posture commanded to each arm (the motion may still run)."""
        return {arm: entries[-1].aim for arm, entries in list(self._aimed.items()) if entries}

    def unknown(self, arm: str) -> bool:
        """Whether the arm may be anywhere in its range: not seen at rest (:class:`~nao_ik.motion.truth.Watch`) and
        on no way of the service's commands (none since the service started, or its record dropped by a reading
        that left it: :meth:`observe`). ALMotion never tells the target of a running command."""
        return self.last(arm) is None and not self.watch[arm].at_rest()

    def fate(self, arm: str) -> str:
        """What became of the arm's last command ("" where nothing is known)."""
        return self._fate.get(arm, "")

    def news(self, arm: str, began: float) -> str:
        """What became of a command sent to the arm before ``began`` (monotonic s), told once ("" where nothing)."""
        with self._lock:
            sent, news = self._news.get(arm, (math.inf, ""))
            if sent >= began:
                return ""
            del self._news[arm]
            return news

    def add(self, arm: str, new: Aimed) -> None:
        """Record a command to the arm: the box ALMotion's command may go through widens by its way from where the
        arm was last read (a retargeted joint may still brake toward the goals before it)."""
        with self._lock:
            last = self.last(arm)
            if last is not None and last.rested:  # the arm rested since its last command: it brakes toward none
                entries = []
            else:
                self.earlier(arm)  # drops what no longer moves it
                entries = self._aimed.get(arm, [])
            self._fate.pop(arm, None)
            self._aimed[arm] = entries + [new]  # one assignment: readers without the lock see a whole list
            origin = self.watch[arm].commanded or new.aim
            span = way_span(self._model(arm), origin, new.aim, new.fraction)
            self._span[arm] = widen(None if last is None or last.rested else self._span.get(arm), span)

    def earlier(self, arm: str) -> tuple:
        """(aim, fraction) of the arm's commands before its last one that its joints may still head for: a joint
        retargeted mid-move goes on braking toward its old goal for up to its fraction x BRAKE s after ALMotion
        took the new command (from when that answer was seen, no earlier than it came; while it has not come,
        the old goal stays)."""
        with self._lock:
            entries = self._aimed.get(arm)
            if not entries:
                return ()
            now = time.monotonic()
            for e in entries:
                if e.seen is None and e.future is not None and e.future.isFinished():
                    e.seen = now
            kept = [e for e, nxt in zip(entries, entries[1:])
                    if nxt.seen is None or now < nxt.seen + BRAKE * e.fraction]  # fmt: skip
            self._aimed[arm] = kept + entries[-1:]
            # Each goal once, at the largest fraction it was sent at (the box and the bodies built on it do not
            # change while an arm is sent back and forth between the same postures), the last command's left out.
            goals: dict[tuple, float] = {}
            for e in kept:
                key = tuple(e.aim)
                if key != tuple(entries[-1].aim):
                    goals[key] = max(goals.get(key, 0.0), e.fraction)
            return tuple((list(aim), fraction) for aim, fraction in goals.items())

    def at_aim(self, arm: str, reading: Any, asked: float) -> None:
        """A reading asked a cycle or more after the arm's last command went, the arm exactly at that command (every
        joint within 1e-9; a joint braking toward an earlier one passes there moving, all five at once only by
        chance): it rests there, heading for no earlier command."""
        last = self.last(arm)
        if last is not None and asked >= last.sent + CYCLE and apart(last.aim, reading) <= 1e-9:
            self.seen_still(arm, rested=True)

    def seen_still(self, arm: str, rested: bool = False) -> None:
        """The arm was seen still (no joint moving over STILL a cycle): it brakes toward no earlier command; with
        ``rested``, proved at rest (:meth:`Engine.at_rest`): nor toward its last one once the next comes."""
        with self._lock:
            entries = self._aimed[arm] = self._aimed.get(arm, [])[-1:]
            if rested and entries:
                entries[-1].rested = True

    def observe(self, reading: Any) -> bool:
        """Hold each arm's record against a reading of the robot; whether an arm's region grew (it became
        :meth:`unknown`: a check against a body read before is to be done again).

        The record holds while the commanded posture read is on the way of the arm's commands from where the first
        of them went (:func:`~nao_ik.motion.truth.on_its_way`); it is dropped the moment it is not, and the reading
        is then the state. A command seen at rest short of its goal, once ALMotion took it and with the motors on,
        is marked stalled: it may still run (postponed, or held by the robot's protection) until the caller shows it
        does not (:meth:`drop`).
        """
        grew = False
        with self._lock:
            for arm in ARMS:
                names = self._model(arm).names
                commanded = [reading.commanded[n] for n in names]
                watch = self.watch[arm]
                was = self.unknown(arm)
                if not watch.observe(reading.asked, commanded):
                    continue
                last = self.last(arm)
                if last is not None:
                    self.earlier(arm)  # when ALMotion took its commands (``seen``)
                if last is not None and reading.asked >= last.sent and arrived(commanded, last.aim):
                    if not last.rested:
                        self.seen_still(arm, rested=True)  # ALMotion's command ended there: any move now is another's
                elif last is not None and last.seen is not None and shows(reading.asked, last.seen):
                    # A reading that shows the robot after ALMotion took the command (LAG late at most).
                    motors = all(reading.stiffness[n] > 0.0 for n in names)
                    limp = not motors and reading.stiffness_asked >= last.sent
                    if limp:
                        self._news[arm], self._fate[arm] = (last.sent, LIMP), LIMP
                    span = (last.aim, last.aim) if last.rested else self._span[arm]
                    if not on_its_way(span, commanded):
                        self.drop(arm, LIMP if limp else MOVED_OFF)
                    else:
                        last.stalled = motors and watch.still_after(last.seen)
                grew = grew or not was and self.unknown(arm)
        return grew

    def drop(self, arm: str, why: str, only: Aimed | None = None) -> None:
        """The readings say the arm's record does not hold (with ``only``: where that is still its last command):
        forget its commands (the reading is the state), and tell ``why`` to its next call."""
        with self._lock:
            last = self.last(arm)
            if only is not None and last is not only:
                return
            self._aimed[arm] = []
            self._span.pop(arm, None)
            sent = -math.inf if last is None else last.sent
            if self._news.get(arm, (None, ""))[0] != sent:  # what was seen of it first (its motors off) says most
                self._news[arm], self._fate[arm] = (sent, why), why
