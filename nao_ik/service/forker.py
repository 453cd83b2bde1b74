"""``nao-ik serve``'s forker: a process that has done a worker's imports and forks a worker on the supervisor's word.

A worker's start is mostly its imports (numpy, libqi, the solvers: 0.26 s of CPU; 0.25 s of wall time on a quiet
two-core machine, 0.5 to 1.8 s on a loaded one); a fork of a process that has done them serves within tens of
milliseconds. The forker opens no qi session and starts no thread of its own, so no caller can reach it and a
fork copies no lock that another thread holds (numpy's OpenBLAS stops its threads around a fork itself).

It talks to the supervisor (:mod:`nao_ik.service.supervisor`) over its stdin, one end of a socket pair of
datagrams: it forks on :data:`~nao_ik.service.supervisor.FORK` and answers ``started <pid>``, and says
``exited <pid> <status>`` when a worker ends (the status as ``subprocess`` gives it: minus the signal's number
for a signal); a worker says ``registered <pid>`` itself (:func:`registered`), each time it registers. The
workers inherit that socket and never read it.

A signal to the whole process group (Ctrl-C's SIGINT, systemd's SIGTERM when it stops the unit) must not end the
forker before its worker, whose end it reports: it ignores SIGINT and SIGTERM, and ends when the supervisor closes
its end of the socket (after the worker ended), or dies. Each worker gets SIGTERM if the forker dies.
"""

from __future__ import annotations

import os
import select
import signal
import stat

from .supervisor import EXITED, FORK, REGISTERED, STARTED, die_with_parent, is_worker


def supervised() -> bool:
    """Whether this process was started by the supervisor (its stdin is the supervisor's socket)."""
    try:
        return is_worker() and stat.S_ISSOCK(os.fstat(0).st_mode)
    except OSError:
        return False


def forks() -> bool:
    """Fork a worker each time the supervisor asks: True in the worker, False once the supervisor is gone.

    True at once where no supervisor started this process (the process is the worker).
    """
    if not supervised():
        return True
    wake_read, wake_write = os.pipe()
    for fd in (wake_read, wake_write):
        os.set_blocking(fd, False)
    chld = signal.signal(signal.SIGCHLD, lambda _signum, _frame: None)  # the wakeup fd wakes the select
    ignored = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
    wakeup = signal.set_wakeup_fd(wake_write)
    try:
        while True:
            ready = select.select([0, wake_read], [], [])[0]
            if wake_read in ready:
                _drain(wake_read)
                _report_exits()
            if 0 in ready:
                word = os.read(0, 64)
                if not word:
                    return False  # the supervisor is gone
                if word == FORK:
                    pid = os.fork()
                    if pid == 0:
                        die_with_parent()
                        return True
                    _tell(STARTED, pid)
    finally:  # in the worker and in the forker alike: the process's own signals again
        signal.set_wakeup_fd(wakeup)
        signal.signal(signal.SIGCHLD, chld)
        for signum, handler in ignored.items():
            signal.signal(signum, handler)
        os.close(wake_read)
        os.close(wake_write)


def registered() -> None:
    """In a worker: tell the supervisor the service is registered (a crash from now on is answered at once)."""
    if supervised():
        _tell(REGISTERED, os.getpid())


def _report_exits() -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _tell(EXITED, pid, os.waitstatus_to_exitcode(status))


def _tell(word: bytes, *numbers: int) -> None:
    try:
        os.write(0, b" ".join([word, *(b"%d" % n for n in numbers)]))
    except OSError:
        pass  # the supervisor is gone: the forker learns it from its socket, a worker by SIGTERM


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 512):
            pass
    except BlockingIOError:
        pass
