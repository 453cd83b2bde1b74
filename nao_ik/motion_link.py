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
from typing import Any, Callable, Sequence

import qi

#: Seconds one ALMotion call may take (``setAngles`` returns at once on a robot; a
#: ``getAngles`` over Wi-Fi takes milliseconds).
MOTION_TIMEOUT = 2.0


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
        limit = self.timeout if budget is None else max(0.0, min(self.timeout, budget))
        proxy = self._get(limit)
        try:
            fut = getattr(proxy, method)(*args, _async=True)
        except Exception as e:  # a dead proxy fails at once
            self._drop(proxy)
            raise RuntimeError(f"ALMotion.{method} failed: {_first_line(e)}") from None
        return self._wait(fut, f"ALMotion.{method}", limit, proxy)

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
            raise RuntimeError(f"ALMotion is not reachable on the robot: {_first_line(e)}") from None
        proxy = self._wait(fut, "ALMotion (finding the service)", limit, None, unreachable=True)
        with self._lock:
            if self._proxy is None:
                self._proxy = proxy
                if self._on_new:
                    self._on_new()
            return self._proxy

    def _wait(self, fut: Any, what: str, limit: float, proxy: Any, unreachable: bool = False) -> Any:
        if fut.wait(int(limit * 1000)) == qi.FutureState.Running:
            fut.cancel()
            raise RuntimeError(f"{what} did not answer within {limit:.2f} s (time budget); nothing more was sent")
        if fut.hasError():
            self._drop(proxy)
            if unreachable:
                raise RuntimeError(f"ALMotion is not reachable on the robot: {_first_line(fut.error())}")
            raise RuntimeError(f"{what} failed: {_first_line(fut.error())}")
        return fut.value()

    def _drop(self, proxy: Any) -> None:
        """Forget a proxy that failed (ALMotion restarted): fetch it again next call."""
        with self._lock:
            if proxy is None or self._proxy is proxy:
                self._proxy = None


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


def _first_line(e: Any) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
