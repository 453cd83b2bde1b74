"""The robot's sensed arm angles and stiffnesses, kept current while the service is in use.

A reach needs the arm's sensed angles (its start posture) and stiffnesses
(motors on?). Asking ALMotion on every call costs a caller two robot round
trips before any work starts; over Wi-Fi that is most of a reach's time.
:class:`SensedCache` reads both arms' angles and stiffnesses with two calls in
flight at once, and while calls keep coming (for :data:`WARM` seconds after the
last one) a thread re-reads them every ALMotion control cycle (20 ms).

The age of a reading is counted from the moment it was asked for (so it is
never underestimated); a call takes the cached reading only if it is at most
:data:`MAX_AGE` (two control cycles) old, else it reads the robot itself.
When the robot's round trip alone exceeds that age (:data:`SLOW_COUNT` times
in a row), the polling is useless and stops for :data:`SLOW_PAUSE` seconds;
every call then reads fresh.
A failed reading drops the cache (so does a new ALMotion): the next call
reads fresh and gets the robot's error itself, and a reading asked before the
drop is not kept when it answers later.

A call may also need a reading asked after some moment (``since``: the
arm's last command, which an older reading does not show). After sending a
command the service asks for one at once (:meth:`SensedCache.follow`) without
waiting: the caller's next call, which comes at least one client round trip
later, finds it answered or on its way and waits only for the rest of it,
instead of a whole robot round trip of its own. A command moves the arm, not
its motors' stiffness: that reading asks for the angles only (one call behind
the command instead of two) and takes the stiffnesses of the newest full
reading (kept apart from the angles, so the newest stiffnesses are used
whichever reading has the newest angles), usable while those are at most
:data:`MAX_AGE` old like any cached stiffness.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Callable, NamedTuple, Sequence

from ..geometry.scalar.sweep import CYCLE
from .link import MotionLink, Pending, reply_numbers

#: The oldest reading a call may start from, seconds (two control cycles).
MAX_AGE = 2 * CYCLE
#: Seconds the polling goes on after the last call.
WARM = 2.0
#: Seconds the polling pauses after SLOW_COUNT round trips in a row longer than MAX_AGE.
SLOW_PAUSE = 5.0
SLOW_COUNT = 3


class Reading(NamedTuple):
    """One reading of the arms: when it was asked for and answered (monotonic seconds), sensed angles, stiffnesses
    and commanded angles (``getAngles(names, False)``: this motion cycle's command to each joint).

    ``stiffness_asked``: when its stiffnesses were asked for (``asked``, or earlier for a :meth:`SensedCache.follow`
    reading, which takes them from an older one).
    """

    asked: float
    answered: float
    angles: dict
    stiffness: dict
    stiffness_asked: float
    commanded: dict


class _InFlight(NamedTuple):
    """A reading asked for and not yet collected: when, its calls (no stiffness call for a follow-up), and the
    cache's generation then (:meth:`SensedCache.invalidate` starts a new one: a new ALMotion, or a failure)."""

    asked: float
    angles: Pending
    stiffness: Pending | None
    generation: int
    commanded: Pending


class SensedCache:
    """Sensed angles and stiffnesses of ``names``, at most :data:`MAX_AGE` old when used.

    Args:
        link: the line to ALMotion.
        names: the joints to read (both arms).
        max_age: the oldest reading a call may use, seconds.
        observe: called with every reading kept (the newest by when it was asked), outside the cache's lock:
            readings of two threads may reach it out of order.
    """

    def __init__(self, link: MotionLink, names: Sequence[str], max_age: float = MAX_AGE,
                 observe: Callable[[Reading], None] | None = None):  # fmt: skip
        self._link = link
        self._observe = observe
        self._names = list(names)
        self._max_age = max_age
        self._lock = threading.Lock()
        self._reading: Reading | None = None  # the newest angles (by when they were asked)
        self._stiffness: tuple[dict, float] | None = None  # the newest stiffnesses read, and when they were asked
        self._flight: _InFlight | None = None  # the newest reading asked for by follow()
        self._generation = 0  # readings asked before the last invalidate() are not kept
        self._warm_until = 0.0
        self._slow_until = 0.0
        self._slow_count = 0
        self._poller: threading.Thread | None = None
        self._closed = threading.Event()

    def read(self, names: Sequence[str], budget: float, fresh: bool = False) -> tuple[list, list]:
        """:meth:`read_timed` without the reading's times."""
        angles, stiffness, _ = self.read_timed(names, budget, fresh)
        return angles, stiffness

    def read_timed(
        self, names: Sequence[str], budget: float, fresh: bool = False, since: float = -math.inf
    ) -> tuple[list, list, Reading]:
        """The sensed angles and stiffnesses of ``names`` (cached if fresh enough and not ``fresh``, else read now),
        and the :class:`Reading` they come from (when it was asked for and answered).

        ``since``: a monotonic time the reading must have been asked after (a command sent then: the
        reading shows the arm moving toward it; ALMotion answers one connection's calls in order).

        Raises:
            RuntimeError: ALMotion unreachable, failing, or answering nonsense.
        """
        now = time.monotonic()
        with self._lock:
            reading = self._newest()
            self._warm_until = now + WARM
            flight = self._flight
        young = reading is not None and now - reading.stiffness_asked <= self._max_age
        if fresh or not young or reading.asked <= since:
            follow_up = flight is not None and flight.asked > since and now - flight.asked <= self._max_age
            if not fresh and young and follow_up:
                # Asked after the command, the stiffnesses it will take (these or newer) young enough: wait for it.
                reading = self._collect(flight, budget, shared=True)
            else:
                reading = self._fetch(budget)
        self._ensure_poller(now)
        return [reading.angles[n] for n in names], [reading.stiffness[n] for n in names], reading

    def follow(self, budget: float) -> None:
        """Ask for the angles now without waiting for them (after a command: the next call may need a
        reading asked after it, see the module docstring). A failure to send is left to the next reading.

        Args:
            budget: seconds the caller may spend getting ALMotion's proxy (its call's time left).
        """
        asked = time.monotonic()
        with self._lock:
            generation = self._generation
        try:
            angles = self._link.start("getAngles", self._names, True, budget=budget)
            commanded = self._link.start("getAngles", self._names, False, budget=budget)
        except RuntimeError:
            return
        # Not this call's to wait for: the call that collects it waits within its own budget, up to the link's.
        limit = self._link.timeout
        flight = _InFlight(asked, angles._replace(limit=limit), None, generation, commanded._replace(limit=limit))
        with self._lock:
            if self._flight is None or self._flight.asked < asked:  # another thread's may be newer
                self._flight = flight

    def invalidate(self) -> None:
        """Forget the cached reading (a new ALMotion, or a failure); readings asked before are not kept."""
        with self._lock:
            self._generation += 1
            self._reading = None
            self._stiffness = None
            self._flight = None

    def close(self) -> None:
        """Stop the polling."""
        self._closed.set()
        self.invalidate()

    def _start(self, budget: float) -> tuple[Pending, Pending, Pending]:
        """The three calls of a reading, all in flight: one round trip."""
        angles = self._link.start("getAngles", self._names, True, budget=budget)
        stiffness = self._link.start("getStiffnesses", self._names, budget=budget)
        return angles, stiffness, self._link.start("getAngles", self._names, False, budget=budget)

    def _newest(self) -> Reading | None:
        """The newest angles with the newest stiffnesses (call with the lock held; a kept reading's
        stiffnesses are among those :attr:`_stiffness` has held, so it is never None then, nor older)."""
        if self._reading is None:
            return None
        return self._reading._replace(stiffness=self._stiffness[0], stiffness_asked=self._stiffness[1])

    def _fetch(self, budget: float) -> Reading:
        asked = time.monotonic()
        with self._lock:
            generation = self._generation
        try:
            calls = self._start(budget)
        except RuntimeError:
            self.invalidate()
            raise
        angles, stiffness, commanded = calls
        return self._collect(_InFlight(asked, angles, stiffness, generation, commanded), budget)

    def _collect(self, flight: _InFlight, budget: float, shared: bool = False) -> Reading:
        """Wait (at most ``budget`` seconds from now) for a reading's answers; keep it if it is the newest.

        ``shared``: a :meth:`follow` reading other calls may wait for too: a caller whose budget runs out
        leaves it running (and the cache as it is); its failure drops the cache, like any reading's.
        """
        start = time.monotonic()
        asked = flight.asked
        try:
            n = len(self._names)
            cancel = not shared
            a = reply_numbers(self._link.result(flight.angles, budget, cancel), n, "ALMotion.getAngles")
            c = reply_numbers(self._link.result(flight.commanded, _left(start, budget), cancel), n,
                              "ALMotion.getAngles")  # fmt: skip
            if flight.stiffness is not None:
                stiff = self._link.result(flight.stiffness, _left(start, budget), cancel)
                s = dict(zip(self._names, reply_numbers(stiff, n, "ALMotion.getStiffnesses")))
        except RuntimeError:
            if not shared or _answered(flight):  # the robot failed (or answered nonsense), not this caller's patience
                self.invalidate()
            raise
        angles, commanded = dict(zip(self._names, a)), dict(zip(self._names, c))
        with self._lock:
            current = flight.generation == self._generation
            if flight.stiffness is not None:
                reading = Reading(asked, time.monotonic(), angles, s, asked, commanded)
                if current and (self._stiffness is None or self._stiffness[1] < asked):
                    self._stiffness = (s, asked)
            elif current and self._stiffness is not None:
                # A follow-up: the newest stiffnesses, no older than those read_timed checked (they only get newer
                # within a generation).
                reading = Reading(asked, time.monotonic(), angles, *self._stiffness, commanded)
            else:
                reading = None  # the cache was dropped meanwhile (a failure, a new ALMotion)
            newest = reading is not None and current and (self._reading is None or self._reading.asked < asked)
            if newest:
                self._reading = reading
        if reading is None:  # read them with the angles again, from the ALMotion there is now
            return self._fetch(_left(start, budget))
        if newest and self._observe is not None:
            self._observe(reading)
        if shared:  # its time includes the wait until a call came for it: not the robot's round trip
            return reading
        if time.monotonic() - asked > self._max_age:
            self._slow_count += 1
            if self._slow_count >= SLOW_COUNT:
                self._slow_until, self._slow_count = time.monotonic() + SLOW_PAUSE, 0
        else:
            self._slow_count = 0
        return reading

    def _ensure_poller(self, now: float) -> None:
        if self._closed.is_set() or now < self._slow_until:
            return
        with self._lock:
            if self._poller is not None and self._poller.is_alive():
                return
            self._poller = threading.Thread(target=self._poll, name="NaoArmIK-sensed", daemon=True)
            self._poller.start()

    def _poll(self) -> None:
        next_time = time.monotonic()
        while not self._closed.is_set():
            now = time.monotonic()
            with self._lock:
                if now > self._warm_until or now < self._slow_until:
                    self._poller = None
                    return
            try:
                self._fetch(self._link.timeout)
            except RuntimeError:  # the next call reads fresh and reports it
                with self._lock:
                    self._poller = None
                return
            next_time = max(next_time + CYCLE, time.monotonic())
            self._closed.wait(next_time - time.monotonic())


def _answered(flight: _InFlight) -> bool:
    """All calls of a reading have finished (answered, failed or cancelled)."""
    calls = (flight.angles, flight.commanded) + (() if flight.stiffness is None else (flight.stiffness,))
    return all(call.future.isFinished() for call in calls)


def _left(since: float, budget: float) -> float:
    return max(0.0, since + budget - time.monotonic())
