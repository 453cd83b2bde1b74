"""A slow link to the stub ALMotion: every call crosses a simulated network, both ways, in order.

``nao-ik sim --latency-ms N`` registers :func:`latent` (the stub behind a link
of N ms round trip) as ``ALMotion`` instead of the stub itself: a call reaches
the stub N/2 ms after it was sent, and its answer reaches the caller N/2 ms
after the stub gave it. Like a TCP connection, the link keeps the calls in the
order they were sent and the answers in the order they were given, and it
does not make callers wait for each other beyond what the stub itself does
(it serves one call at a time, as it does over a plain qi registration): a
reader at 50 Hz and a command can both be in flight on it.

The in-process stub (``SimulatedRobot.motion``) stays instant, for the tests to
inspect what it received.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from typing import Any, Callable

import qi

from .motion import StubMotion

#: The stub methods reachable over qi (everything public on StubMotion).
PUBLIC = tuple(n for n in dir(StubMotion) if not n.startswith("_") and callable(getattr(StubMotion, n)))


class _Lane:
    """One direction of the link: runs each item at its due time, in the order the items were put."""

    def __init__(self, name: str):
        self._cond = threading.Condition()
        self._items: list = []
        self._order = itertools.count()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def put(self, due: float, action: Callable[[], None]) -> None:
        with self._cond:
            heapq.heappush(self._items, (next(self._order), due, action))
            self._cond.notify()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._items and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                _, due, action = self._items[0]
                wait = due - time.monotonic()
                if wait > 0:  # the first in line is due first: the same delay for every item
                    self._cond.wait(wait)
                    continue
                heapq.heappop(self._items)
            action()


class LatentMotion:
    """The stub ALMotion behind a link of ``latency`` seconds round trip (half each way).

    Args:
        stub: the stub whose methods are served.
        latency: seconds added to every call, from its sending to its answer.
    """

    def __init__(self, stub: StubMotion, latency: float):
        self._target = (stub, latency / 2.0)  # a tuple: qi publishes callable attributes
        self._lanes = (_Lane("stub-link-request"), _Lane("stub-link-answer"))

    @qi.nobind
    def _relay(self, method: str, args: tuple) -> Any:
        stub, half = self._target
        promise = qi.Promise()
        request, answer = self._lanes

        def execute() -> None:
            try:
                value, error = getattr(stub, method)(*args), None
            except Exception as e:  # the caller gets the stub's error, as over qi
                value, error = None, f"{type(e).__name__}: {e}"
            answer.put(time.monotonic() + half, lambda: _settle(promise, value, error))

        request.put(time.monotonic() + half, execute)
        return promise.future()

    @qi.nobind
    def close(self) -> None:
        """Stop the link's threads (unanswered calls stay unanswered)."""
        for lane in self._lanes:
            lane.close()


def _settle(promise: Any, value: Any, error: str | None) -> None:
    if error is None:
        promise.setValue(value)
    else:
        promise.setError(error)


def _relayed(name: str) -> Callable:
    def method(self: LatentMotion, *args: Any) -> Any:
        return self._relay(name, args)

    method.__name__ = name
    method.__doc__ = getattr(StubMotion, name).__doc__
    return method


for _name in PUBLIC:
    setattr(LatentMotion, _name, _relayed(_name))
