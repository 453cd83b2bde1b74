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
the byte then wakes it at once). A set flag's byte stays, so every waiter,
now or later, wakes; bytes that set nothing (other signals' wakeups, see
:meth:`StopFlag.set_on_signals`) are drained, so ``wait`` never spins.

Written in the common subset of Python 2.7 and 3 (the robot runtime uses it).
"""

from __future__ import division

import errno
import os
import select
import signal
import time

try:  # the type comments' names (typing is not in every Python 2.7)
    from typing import Optional, Sequence, Tuple  # noqa: F401
except ImportError:  # pragma: no cover
    pass

__all__ = ["StopFlag"]


class StopFlag(object):
    """A one-shot event for stopping a process, safe to set from a signal handler."""

    def __init__(self):
        # type: () -> None
        self._read, self._write = os.pipe()
        _nonblocking(self._read)
        _nonblocking(self._write)
        self._set = False
        self._restore = None  # type: Optional[Tuple[int, dict]]

    def set(self):
        # type: () -> None
        """Set the flag and wake every waiter (no lock: safe in a signal handler).

        The flag is set before the byte is written: a waiter that sees the byte sees the flag.
        """
        if not self._set:
            self._set = True
            self._poke()

    def is_set(self):
        # type: () -> bool
        return self._set

    def set_on_signals(self, signums):
        # type: (Sequence[int]) -> None
        """Set the flag on these signals (call from the main thread, as ``signal.signal`` requires).

        The signal may be delivered to any thread (libqi has several); Python runs
        the handler only when the main thread next runs bytecode. So the pipe is
        also the process's wakeup fd: the signal's arrival writes to it at once,
        which wakes a ``wait`` blocked in ``select``, and the handler runs right
        after. A signal that does not set the flag (another handler's) leaves a
        byte there too: ``wait`` drains it. :meth:`close` puts the previous
        handlers and wakeup fd back.

        Args:
            signums: the signals, e.g. SIGTERM and SIGINT.
        """

        def handler(signum, frame):
            self.set()

        previous = dict((signum, signal.getsignal(signum)) for signum in signums)
        for signum in signums:
            signal.signal(signum, handler)
        self._restore = (signal.set_wakeup_fd(self._write), previous)

    def close(self):
        # type: () -> None
        """Put back what :meth:`set_on_signals` replaced (from the main thread) and close the pipe (a process's
        flag lives as long as the process; tests make many). A closed flag's ``wait`` does not block."""
        if self._restore is not None:
            fd, previous = self._restore
            signal.set_wakeup_fd(fd)
            for signum, handler in previous.items():
                signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
            self._restore = None
        fds, self._read, self._write = (self._read, self._write), -1, -1
        for fd in fds:
            if fd >= 0:
                os.close(fd)

    def wait(self, timeout=None):
        # type: (Optional[float]) -> bool
        """Wait until the flag is set or ``timeout`` seconds pass (None: no limit); return the flag."""
        end = None if timeout is None else _now() + max(timeout, 0.0)
        while not self._set and self._read >= 0:
            left = None if end is None else end - _now()
            if left is not None and left <= 0:
                break
            try:
                ready = select.select([self._read], [], [], left)[0]
            except (OSError, select.error) as e:  # select.error is no OSError in Python 2
                if _errno(e) != errno.EINTR:  # Python 2 (3 retries EINTR by itself)
                    raise
                continue
            if ready and not self._set:
                self._drain()
        return self._set

    def _drain(self):
        # type: () -> None
        """Empty the pipe of bytes that set nothing (other signals' wakeups), so ``wait`` blocks again; if the
        flag was set meanwhile, its byte may have gone with them: write it again for the other waiters."""
        try:
            while os.read(self._read, 512):
                pass
        except OSError as e:
            if e.errno not in (errno.EAGAIN, errno.EWOULDBLOCK):
                raise
        if self._set:
            self._poke()

    def _poke(self):
        # type: () -> None
        try:
            os.write(self._write, b"x")
        except OSError:  # full (every waiter wakes anyway) or closed
            pass


#: Monotonic seconds where the Python has them (3), else the wall clock (2.7).
_now = getattr(time, "monotonic", time.time)


def _errno(e):
    # type: (BaseException) -> int
    """The errno of an OSError, or of Python 2's select.error (a tuple-like (errno, text))."""
    code = getattr(e, "errno", None)
    if code is None and getattr(e, "args", None):
        code = e.args[0]
    return code if isinstance(code, int) else -1


def _nonblocking(fd):
    # type: (int) -> None
    """O_NONBLOCK on fd (signal.set_wakeup_fd needs it on the write end; the drain on the read end)."""
    import fcntl

    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
