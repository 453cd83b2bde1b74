# -*- coding: utf-8 -*-
# ruff: noqa: UP004, UP009, UP010, UP024  (the common subset of Python 2.7 and 3, see the docstring)
"""A stop flag that a signal handler may set: ``set``, ``is_set`` and ``wait`` like ``threading.Event``.

Why not ``threading.Event``: its ``set`` takes the lock its ``wait`` holds
between two waits. A signal handler runs in the main thread between two
bytecodes, so a SIGTERM that lands while the main thread is inside
``Event.wait`` holding that lock makes the handler's ``set`` wait for a lock
its own thread holds: the process hangs instead of stopping (``nao-ik serve``
did, about 1 SIGTERM in 6 when idle).

Here ``set`` takes no lock: it sets a flag and writes a byte to a pipe, and
``wait`` is a ``select`` on the pipe's other end (which a signal interrupts;
the byte then wakes it at once). The byte is never read, so every waiter,
now or later, wakes.

Written in the common subset of Python 2.7 and 3 (the robot runtime uses it).
"""

from __future__ import division

import os
import select
import signal
import time

try:  # the type comments' names (typing is not in every Python 2.7)
    from typing import Callable, Optional, Sequence  # noqa: F401
except ImportError:  # pragma: no cover
    pass

__all__ = ["StopFlag"]


class StopFlag(object):
    """A one-shot event for stopping a process, safe to set from a signal handler."""

    def __init__(self):
        # type: () -> None
        self._read, self._write = os.pipe()
        self._set = False

    def set(self):
        # type: () -> None
        """Set the flag and wake every waiter (no lock: safe in a signal handler)."""
        if not self._set:
            self._set = True
            try:
                os.write(self._write, b"x")
            except OSError:  # pragma: no cover  (closed at interpreter exit)
                pass

    def is_set(self):
        # type: () -> bool
        return self._set

    def set_on_signals(self, signums, also=None):
        # type: (Sequence[int], Optional[Callable[[], None]]) -> None
        """Set the flag on these signals (call from the main thread, as ``signal.signal`` requires).

        The signal may be delivered to any thread (libqi has several); Python runs
        the handler only when the main thread next runs bytecode. So the pipe is
        also the process's wakeup fd: the signal's arrival writes to it at once,
        which wakes a ``wait`` blocked in ``select``, and the handler runs right
        after.

        Args:
            signums: the signals, e.g. SIGTERM and SIGINT.
            also: called in the handler after the flag is set (it must take no lock either).
        """

        def handler(signum, frame):
            self.set()
            if also is not None:
                also()

        _nonblocking(self._write)
        signal.set_wakeup_fd(self._write)
        for signum in signums:
            signal.signal(signum, handler)

    def close(self):
        # type: () -> None
        """Close the pipe (a process's flag lives as long as the process; tests make many)."""
        for fd in (self._read, self._write):
            try:
                os.close(fd)
            except OSError:
                pass

    def wait(self, timeout=None):
        # type: (float) -> bool
        """Wait until the flag is set or ``timeout`` seconds pass (None: no limit); return the flag."""
        end = None if timeout is None else time.time() + max(timeout, 0.0)
        while not self._set:
            left = None if end is None else end - time.time()
            if left is not None and left <= 0:
                break
            try:
                select.select([self._read], [], [], left)
            except (OSError, select.error):  # Python 2: EINTR (select.error is no OSError there); 3 retries by itself
                pass
        return self._set


def _nonblocking(fd):
    # type: (int) -> None
    """O_NONBLOCK on fd (signal.set_wakeup_fd needs it)."""
    import fcntl

    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
