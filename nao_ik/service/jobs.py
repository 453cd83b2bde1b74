"""Who commands an arm: one job at a time per arm, and a running path can be stopped or preempted.

Every command to an arm is sent by the job that holds the arm's channel, so
commands to one arm never interleave. A reach or a path first asks the
current holder to stop (a path checks its stop flag before every command and
waits for its next cycle on that same flag, so it stops within one cycle),
then takes the channel. Jobs on different arms run side by side.
"""

from __future__ import annotations

import threading
import time


class Job:
    """One holder of an arm: a reach or a path.

    Attributes:
        name: what it is (``reachTo``, ``trackPath`` ...), for the messages.
        yields: while it waits for its arm, a newer job on that arm replaces it (a path: only the newest
            path is worth computing); else it waits its turn (a reach: each caller's command is sent).
        stop: set to ask the job to stop sending.
        reason: why it was asked to stop ("" while it runs).
    """

    def __init__(self, name: str, yields: bool = False):
        self.name = name
        self.yields = yields
        self.stop = threading.Event()
        self.reason = ""

    def cancel(self, reason: str) -> None:
        """Ask the job to stop before its next command."""
        if not self.stop.is_set():
            self.reason = reason
            self.stop.set()


class Stopped(RuntimeError):
    """A job was asked to stop before it sent anything (while it waited for its arm, or computed)."""


class ArmChannel:
    """The right to command one arm.

    Args:
        arm: ``"LArm"`` or ``"RArm"``.
    """

    def __init__(self, arm: str):
        self.arm = arm
        self._cond = threading.Condition()
        self._current: Job | None = None
        self._waiting: set[Job] = set()

    def take(self, job: Job, timeout: float) -> None:
        """Ask the current holder to stop, then hold the arm for ``job``.

        Waiting jobs that yield are stopped too, so many paths sent to one arm hold no threads while
        the holder finishes.

        Raises:
            Stopped: ``job`` yields and a newer job (or a stop request) came while it waited.
            RuntimeError: the arm was not free within ``timeout`` seconds.
        """
        end = time.monotonic() + timeout
        with self._cond:
            self._stop_waiting(f"preempted by {job.name}")
            self._waiting.add(job)
            try:
                self._wait_free(job, end)
            finally:
                self._waiting.discard(job)
            self._current = job

    def busy(self) -> bool:
        """Whether a job holds the arm now (a reach sending its legs, a path streaming)."""
        with self._cond:
            return self._current is not None

    def _stop_waiting(self, reason: str) -> None:
        for waiting in self._waiting:
            if waiting.yields:
                waiting.cancel(reason)
        self._cond.notify_all()

    def _wait_free(self, job: Job, end: float) -> None:
        while self._current is not None or job.yields and job.stop.is_set():
            if job.yields and job.stop.is_set():
                raise Stopped(f"{job.reason} while it waited for {self.arm}; nothing sent")
            self._current.cancel(f"preempted by {job.name}")
            remaining = end - time.monotonic()
            if remaining <= 0:
                raise RuntimeError(f"{self.arm} is busy: {self._current.name} did not let go of it within the budget")
            self._cond.wait(remaining)

    def release(self, job: Job) -> None:
        """Give the arm back (only by the job that holds it)."""
        with self._cond:
            if self._current is job:
                self._current = None
                self._cond.notify_all()

    def stop(self, reason: str, timeout: float) -> bool:
        """Ask the holder to stop and wait (at most ``timeout`` s) until it has let go of the arm.

        Returns:
            True if a job was holding the arm.
        """
        end = time.monotonic() + timeout
        with self._cond:
            job = self._current
            self._stop_waiting(reason)
            if job is None:
                return False
            job.cancel(reason)
            while self._current is job and time.monotonic() < end:
                self._cond.wait(end - time.monotonic())
            return True
