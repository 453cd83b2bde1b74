"""The service's line to ALMotion: every call with a time budget, every reply checked.

A hung ALMotion (or a network that stopped answering) costs a caller at most
``timeout`` seconds per call, and the error says which call did not answer;
an odd reply (a flat list where a list per joint was expected, strings where
numbers were) is an error that names the call and what was wrong, never a
``TypeError`` from deep inside a solver.
"""

from __future__ import annotations

import math
import numbers
import threading
import time
from collections import deque
from typing import Any, Callable, NamedTuple, Sequence

import qi

#: Seconds one ALMotion call may take (``setAngles`` returns at once on a robot; a
#: ``getAngles`` over Wi-Fi takes milliseconds).
MOTION_TIMEOUT = 2.0


class Pending(NamedTuple):
    """An ALMotion call in flight (:meth:`MotionLink.start`); :meth:`MotionLink.result` gets its answer."""

    future: Any
    what: str
    limit: float
    proxy: Any


class MotionLink:
    """ALMotion through a session, fetched lazily, fetched again after a failure.

    Args:
        session: the qi session on the robot's service directory.
        timeout: seconds for each call (and for finding the service).
        on_new: called when a new ALMotion proxy is fetched (cached limits are stale then).
    """

    def __init__(self, session: Any, timeout: float = MOTION_TIMEOUT, on_new: Callable[[], None] | None = None):
        self._session = session
        self.timeout = timeout
        self._on_new = on_new
        self._proxy: Any = None
        self._lock = threading.Lock()

    def call(self, method: str, *args: Any, budget: float | None = None) -> Any:
        """``ALMotion.method(*args)``, waiting at most ``min(timeout, budget)`` seconds.

        Raises:
            RuntimeError: ALMotion unreachable, the call failed, or no answer in time.
        """
        return self.result(self.start(method, *args, budget=budget))

    def start(self, method: str, *args: Any, budget: float | None = None) -> Pending:
        """Send ``ALMotion.method(*args)`` without waiting for its answer (several can be in flight at once).

        Raises:
            RuntimeError: ALMotion unreachable, or the call could not be sent.
        """
        limit = self.timeout if budget is None else max(0.0, min(self.timeout, budget))
        proxy = self._get(limit)
        call = getattr(proxy, method, None)
        if call is None:  # an ALMotion without this method: the proxy itself is alive
            raise RuntimeError(f"ALMotion has no method {method}")
        try:
            fut = call(*args, _async=True)
        except Exception as e:  # a dead proxy fails at once
            self._drop(proxy)
            raise RuntimeError(f"ALMotion.{method} failed: {first_line(e)}") from None
        return Pending(fut, f"ALMotion.{method}", limit, proxy)

    def result(self, pending: Pending, limit: float | None = None, cancel: bool = True) -> Any:
        """The answer of a call :meth:`start` sent, waiting at most its limit (or ``limit``) seconds from now.

        ``cancel``: cancel the call when no answer came in time (False where other threads may wait for it too).

        Raises:
            RuntimeError: the call failed, was cancelled, or no answer in time.
        """
        wait = pending.limit if limit is None else max(0.0, min(pending.limit, limit))
        return self._wait(pending.future, pending.what, wait, pending.proxy, cancel=cancel)

    def failure(self, pending: Pending) -> str:
        """Why a finished call failed ("" if it succeeded or has not answered yet); never waits."""
        fut = pending.future
        if fut.isFinished() and fut.hasError():
            self._drop(pending.proxy)
            return f"{pending.what} failed: {first_line(fut.error())}"
        return ""

    def numbers(self, method: str, *args: Any, count: int, budget: float | None = None) -> list[float]:
        """A call whose reply must be ``count`` finite real numbers (one per joint)."""
        reply = self.call(method, *args, budget=budget)
        return reply_numbers(reply, count, f"ALMotion.{method}")

    def _get(self, limit: float) -> Any:
        with self._lock:
            proxy = self._proxy
        if proxy is not None:
            return proxy
        try:
            fut = self._session.service("ALMotion", _async=True)
        except Exception as e:
            raise RuntimeError(f"ALMotion is not reachable on the robot: {first_line(e)}") from None
        proxy = self._wait(fut, "ALMotion (finding the service)", limit, None, unreachable=True)
        with self._lock:
            if self._proxy is None:
                self._proxy = proxy
                if self._on_new:
                    self._on_new()
            return self._proxy

    def _wait(self, fut: Any, what: str, limit: float, proxy: Any, unreachable: bool = False,
              cancel: bool = True) -> Any:  # fmt: skip
        state = fut.wait(int(limit * 1000))
        if state == qi.FutureState.Running:
            if cancel:
                fut.cancel()
            if limit < 0.005:  # the call's budget was spent before this wait began
                raise RuntimeError(f"{what} was not waited for: the call's time budget was spent (it may still "
                                   "run); nothing more was sent")  # fmt: skip
            raise RuntimeError(f"{what} did not answer within {limit:.2f} s (time budget; it may still run); "
                               "nothing more was sent")  # fmt: skip
        if state == qi.FutureState.Canceled:
            raise RuntimeError(f"{what} was cancelled before it answered")
        if fut.hasError():
            self._drop(proxy)
            if unreachable:
                raise RuntimeError(f"ALMotion is not reachable on the robot: {first_line(fut.error())}")
            raise RuntimeError(f"{what} failed: {first_line(fut.error())}")
        return fut.value()

    def _drop(self, proxy: Any) -> None:
        """Forget a proxy that failed (ALMotion restarted): fetch it again next call."""
        with self._lock:
            if proxy is None or self._proxy is proxy:
                self._proxy = None


#: Commands one arm may have unanswered before the next one waits for the oldest answer.
MAX_UNANSWERED = 16


class Unanswered:
    """Commands sent without waiting for ALMotion's answer, checked by the next call (one per arm).

    Args:
        link: the line they were sent on.
    """

    def __init__(self, link: MotionLink):
        self._link = link
        self._sent: deque = deque()  # (monotonic time sent, Pending), oldest first

    def add(self, pending: Pending) -> None:
        """A command just sent."""
        self._sent.append((time.monotonic(), pending))

    def answered(self) -> bool:
        """Whether ALMotion has answered every command sent (each one taken: the arm is on its way, or stopped)."""
        return all(p.future.isFinished() for _, p in self._sent)

    def check(self, budget: float) -> None:
        """Forget the answered commands; raise the first failure, or a command unanswered past its limit.

        Waits only for a command older than its time limit (or the oldest when too many are
        unanswered), at most ``budget`` seconds. After a failure the list is empty.

        Raises:
            RuntimeError: naming the failed command.
        """
        try:
            for t, p in list(self._sent):
                late = time.monotonic() - t >= p.limit or len(self._sent) > MAX_UNANSWERED
                if p.future.isFinished() or late:
                    self._link.result(p, budget)  # raises its failure or its timeout
                    self._sent.popleft()
                else:
                    break
        except RuntimeError:
            self._sent.clear()
            raise
        for _, p in self._sent:  # answered later than a younger one (the stub keeps order, a robot may not)
            failed = self._link.failure(p)
            if failed:
                self._sent.clear()
                raise RuntimeError(failed)


def reply_numbers(reply: Any, count: int, what: str) -> list[float]:
    """``count`` finite real numbers from an ALMotion reply, or an error naming what came instead."""
    if not isinstance(reply, (list, tuple)):
        raise RuntimeError(f"{what} returned {_show(reply)}, expected a list of {count} numbers")
    if len(reply) != count:
        raise RuntimeError(f"{what} returned {len(reply)} values, expected {count} (one per joint)")
    out = []
    for i, v in enumerate(reply):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(float(v)):
            raise RuntimeError(f"{what} returned {_show(v)} at position {i}, expected a finite number")
        out.append(float(v))
    return out


def reply_limits(reply: Any, names: Sequence[str]) -> dict[str, list]:
    """``getLimits``' reply as joint name -> ``[min, max, maxVelocity, ...]``, checked for shape."""
    if not isinstance(reply, (list, tuple)) or len(reply) != len(names):
        size = f"{len(reply)} entries" if isinstance(reply, (list, tuple)) else _show(reply)
        raise RuntimeError(f"ALMotion.getLimits returned {size}, expected one [min, max, ...] per joint ({len(names)})")
    for name, item in zip(names, reply):
        if not isinstance(item, (list, tuple)):
            raise RuntimeError(f"ALMotion.getLimits returned {_show(item)} for {name}, expected [min, max, ...]")
    return dict(zip(names, (list(item) for item in reply)))


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def first_line(e: Any) -> str:
    """An exception's message's first line (its type's name where it has none): a one-line reason."""
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def about(what: str, e: Any) -> str:
    """``"<what>: <first line of e>"``, ``what`` once: the engine's messages may start with it already."""
    line = first_line(e)
    return line if line.startswith(f"{what}: ") else f"{what}: {line}"
