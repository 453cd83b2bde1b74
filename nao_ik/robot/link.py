# -*- coding: utf-8 -*-
# ruff: noqa: UP004, UP009, UP010, UP031, B904  (the common subset of Python 2.7 and 3: no "raise ... from")
"""The robot runtime's line to ALMotion: every call with a time limit, cancelled when it does not answer.

A hung ALMotion (or one that answers late) costs a call of the runtime at most
:data:`MOTION_TIMEOUT` seconds per ALMotion call, and never more than what is left of the
call's own budget: each call is sent with libqi's ``_async=True`` and waited for with
``future.wait(ms)``; one that does not answer in time is cancelled and the runtime's call
fails with a one-line error naming it. A proxy whose call failed is fetched again next time
(NAOqi may have restarted ALMotion).

Written in the common subset of Python 2.7 and 3 (the robot runtime).
"""

from __future__ import division

import threading

import qi

from .record import now

#: Seconds one ALMotion call may take (a getAngles on the robot takes milliseconds).
MOTION_TIMEOUT = 2.0


class Pending(object):
    """An ALMotion call on its way: :meth:`Link.result` waits for it."""

    __slots__ = ("future", "what", "proxy", "end")

    def __init__(self, future, what, proxy, end):
        self.future, self.what, self.proxy, self.end = future, what, proxy, end


class Link(object):
    """ALMotion through a session, each call bounded in time.

    Args:
        session: the qi session on the robot's NAOqi.
        timeout: seconds each ALMotion call may take (and finding the service).
    """

    def __init__(self, session, timeout=MOTION_TIMEOUT):
        self._session = session
        self.timeout = float(timeout)
        self._proxy = None
        self._lock = threading.Lock()

    def start(self, method, args, end):
        """Send ``ALMotion.method(*args)`` without waiting for its answer (:meth:`result` waits).

        Args:
            end: the calling call's deadline (:func:`now` seconds): the answer is waited for until
                ``min(now() + timeout, end)``.
        """
        end = min(now() + self.timeout, end)
        proxy = self._get(end)
        call = getattr(proxy, method, None)
        if call is None:  # an ALMotion without this method: the proxy itself is alive
            raise RuntimeError("ALMotion has no method %s" % method)
        try:
            fut = call(*args, _async=True)
        except Exception as e:  # a dead proxy fails at once
            self._drop(proxy)
            raise RuntimeError("ALMotion.%s failed: %s" % (method, first_line(e)))
        return Pending(fut, "ALMotion." + method, proxy, end)

    def result(self, pending):
        """The answer of a call :meth:`start` sent (see :meth:`call`)."""
        return self._wait(pending.future, pending.what, pending.end, pending.proxy)

    def _get(self, end):
        with self._lock:
            proxy = self._proxy
        if proxy is not None:
            return proxy
        try:
            fut = self._session.service("ALMotion", _async=True)
        except Exception as e:
            raise RuntimeError("ALMotion is not reachable on the robot: %s" % first_line(e))
        proxy = self._wait(fut, "ALMotion (finding the service)", end, None)
        with self._lock:
            if self._proxy is None:
                self._proxy = proxy
            return self._proxy

    def _wait(self, fut, what, end, proxy):
        left = end - now()
        state = fut.wait(max(int(left * 1000), 0))
        if state == qi.FutureState.Running:
            fut.cancel()
            if left < 0.005:  # the call's budget was spent before this wait began
                raise RuntimeError("%s was not waited for: the call's time budget was spent" % what)
            raise RuntimeError("%s did not answer within %.2f s (time budget)" % (what, max(left, 0.0)))
        if state == qi.FutureState.Canceled:
            raise RuntimeError("%s was cancelled before it answered" % what)
        if fut.hasError():
            self._drop(proxy)
            raise RuntimeError("%s failed: %s" % (what, first_line(fut.error())))
        return fut.value()

    def _drop(self, proxy):
        """Forget a proxy that failed (ALMotion restarted): fetched again by the next call."""
        with self._lock:
            if proxy is None or self._proxy is proxy:
                self._proxy = None


def first_line(e):
    """The first line of an error's text (libqi's errors may carry a server's stack)."""
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
