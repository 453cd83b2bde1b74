"""``nao-ik serve`` as a watchdog over its worker: a crash inside libqi keeps the service down for one fork.

libqi decodes a call's arguments on its event-loop thread, recursively: a
value nested some thousands of lists deep (about 3,350 with 8 MB stacks,
under 40 kB: far under any message cap) overflows that thread's stack and the process dies of SIGSEGV before any
Python code sees the call; no signature or check of the service can stop it.
So ``nao-ik serve`` runs the service in a worker process, and the caller that
sent the value loses its connection.

The workers come from a forker (:mod:`nao_ik.service.forker`): a process
that has done a worker's imports and forks a worker when told. When a
worker that had registered dies, the supervisor has a new one forked at
once: it connects and registers within tens of milliseconds, where a new
process would first spend its imports (0.26 s of CPU; 0.25 s of wall time
on a quiet two-core machine, 0.5 to 1.8 s on a loaded one). A crash a
caller causes never waits for a back-off.

The crash loop: one worker serves at a time, and forks are at least
:data:`FORK_GAP` seconds apart. A caller can crash only a worker that
registered, one per registration, and each costs one fork and a
registration (about 50 ms of CPU): so a caller that crashes every worker
as it registers costs at most that per FORK_GAP, and each crash's downtime
is at most FORK_GAP and a registration. A worker that dies without having
registered (it cannot start) counts as a failed start, as does a forker
that dies: after :data:`BURST` of those within :data:`BURST_SECONDS` the
next start waits, from :data:`BACKOFF_START` doubling to
:data:`BACKOFF_MAX` seconds; no caller can cause those.

The supervisor loads no libqi. It talks to the forker over the forker's
stdin, one end of a socket pair of datagrams (the words below). It forwards
SIGTERM and SIGINT to the serving worker, stops the forker after it, and
exits with the worker's status. The forker ends when the supervisor dies
(its socket closes; SIGTERM while it still imports, Linux
``PR_SET_PDEATHSIG``), and the workers get SIGTERM when the forker dies.
"""

from __future__ import annotations

import ctypes
import os
import select
import signal
import socket
import subprocess
import sys
import time
from typing import Callable, Sequence

#: Set in the worker's environment: the process is the forker (then the worker), not a supervisor.
WORKER_ENV = "NAO_IK_SERVE_WORKER"
#: A worker that stops with this status is not restarted (a usage error: it would fail again).
USAGE_ERROR = 2
#: Seconds the worker may take to stop after a forwarded signal: more than its own deadline
#: (:data:`nao_ik.service.serve.STOP_DEADLINE`), after which it prints its threads' stacks and exits.
STOP_GRACE = 15.0
#: Failed starts (a worker that died before it registered, or the forker) within BURST_SECONDS after which the
#: next start waits.
BURST, BURST_SECONDS = 3, 10.0
BACKOFF_START, BACKOFF_MAX = 0.5, 10.0
#: Seconds at least between two forks: what a caller that crashes every worker as it registers can cost, at most
#: one fork and one registration (about 50 ms of CPU, measured) per FORK_GAP; what it adds to a crash's downtime.
FORK_GAP = 0.25
#: Seconds between two looks at the forker where nothing woke the supervisor (a word from the forker does).
POLL = 0.1
#: The words between the supervisor and the forker: fork a worker; a worker was started, registered, exited.
FORK, STARTED, REGISTERED, EXITED = b"fork", b"started", b"registered", b"exited"
_PR_SET_PDEATHSIG = 1


def is_worker() -> bool:
    """Whether this process is the supervisor's forker or one of its workers."""
    return os.environ.get(WORKER_ENV) == "1"


def die_with_parent() -> None:
    """Have this process get SIGTERM when its parent dies (Linux; elsewhere nothing)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass  # not Linux: the process outlives its parent


def _say(message: str) -> None:
    print(f"nao-ik serve: {message}", file=sys.stderr, flush=True)


def supervise(command: Sequence[str], stop_deadline: float = STOP_GRACE,
              on_start: Callable[[int], None] | None = None) -> int:  # fmt: skip
    """Run ``command`` as the forker and serve through its workers until one stops by itself or a signal stops this
    process; fork a new worker when one crashes.

    Args:
        command: the forker's command line (:func:`nao_ik.service.forker.forks` returns in each worker).
        stop_deadline: seconds the worker may take to stop after the signal is forwarded; then it is killed.
        on_start: called with each worker's pid.

    Returns:
        The exit status: the worker's when it stopped (0 for a clean stop, or where the forwarded signal ended
        it), 1 if it had to be killed.
    """
    received: list[int] = []
    wake_read, wake_write = os.pipe()
    for fd in (wake_read, wake_write):
        os.set_blocking(fd, False)
    signums = (signal.SIGTERM, signal.SIGINT)
    previous = {s: signal.signal(s, lambda signum, _frame: received.append(signum)) for s in signums}
    previous_fd = signal.set_wakeup_fd(wake_write)  # a signal wakes the select at once
    try:
        return _Supervisor(command, on_start, wake_read).run(received, stop_deadline)
    finally:
        signal.set_wakeup_fd(previous_fd)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        os.close(wake_read)
        os.close(wake_write)


class _Forker:
    """The forker process and the supervisor's end of its socket."""

    def __init__(self, command: Sequence[str], env: dict):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with theirs:
            self.process = subprocess.Popen(list(command), env=env, stdin=theirs, preexec_fn=die_with_parent)
        ours.setblocking(False)
        self.socket = ours

    def ask(self) -> None:
        try:
            self.socket.send(FORK)
        except OSError:
            pass  # it died: its status says so

    def words(self) -> list[tuple[bytes, int, int]]:
        """What the forker and its workers said: (word, pid, status)."""
        out = []
        while True:
            try:
                data = self.socket.recv(64)
            except (BlockingIOError, OSError):
                return out
            if not data:
                return out
            word, *numbers = data.split()
            out.append((word, int(numbers[0]), int(numbers[1]) if len(numbers) > 1 else 0))

    def stop(self) -> None:
        """End the forker (at once: it holds nothing). Waiting for the word, it ends when its socket closes (it
        ignores SIGTERM there); still importing, SIGTERM ends it."""
        self.socket.close()
        if self.process.poll() is None:
            self.process.terminate()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class _Supervisor:
    """The forker, the serving worker, and the failed starts."""

    def __init__(self, command: Sequence[str], on_start: Callable[[int], None] | None, wake: int):
        self._command, self._on_start, self._wake = list(command), on_start, wake
        self._env = dict(os.environ, **{WORKER_ENV: "1"})
        self._failed: list[float] = []  # when workers (or the forker) died before registering
        self._backoff = BACKOFF_START
        self._next_start = 0.0  # monotonic time before which nothing starts (the back-off, FORK_GAP)
        self._forker: _Forker | None = None
        self._serving: int | None = None  # the worker's pid
        self._registered = False
        self._told_registered: set[int] = set()  # pids that said so (a worker may say it before the forker's word)
        self._asked = False  # a fork asked for, its pid not yet told
        self._exits: dict[int, int] = {}  # the workers' statuses, as the forker told them

    def run(self, received: list[int], stop_deadline: float) -> int:
        try:
            while True:
                now = time.monotonic()
                if self._forker is None and now >= self._next_start:
                    self._forker = _Forker(self._command, self._env)
                if self._forker and self._serving is None and not self._asked and now >= self._next_start:
                    self._forker.ask()
                    self._asked, self._next_start = True, now + FORK_GAP
                self._wait()
                if received:
                    return self._stop(received[0], stop_deadline)
                code = self._check()
                if code is not None:
                    return code
        finally:
            if self._forker is not None:
                self._forker.stop()

    def _wait(self) -> None:
        """Until a signal, a word from the forker, POLL s or the back-off's end; then take the forker's words."""
        left = self._next_start - time.monotonic()
        timeout = POLL if left <= 0 else min(POLL, left)
        sockets = [self._forker.socket] if self._forker else []
        ready = select.select([self._wake, *sockets], [], [], timeout)[0]
        if self._wake in ready:
            try:
                while os.read(self._wake, 512):
                    pass
            except BlockingIOError:
                pass
        self._take()

    def _take(self) -> None:
        if self._forker is None:
            return
        for word, pid, status in self._forker.words():
            if word == STARTED:
                self._serving, self._registered, self._asked = pid, pid in self._told_registered, False
                if self._on_start:
                    self._on_start(pid)
            elif word == REGISTERED:
                self._told_registered.add(pid)
                if pid == self._serving:
                    self._registered, self._backoff = True, BACKOFF_START
            elif word == EXITED:
                self._exits[pid] = status

    def _check(self) -> int | None:
        """Handle a worker or a forker that ended: the status to exit with, or None to go on."""
        if self._serving is not None and self._serving in self._exits:
            code = self._exits.pop(self._serving)
            self._told_registered.discard(self._serving)
            self._serving = None
            if code in (0, USAGE_ERROR):
                return code
            if self._registered:
                _say(f"the service process died ({_status(code)}); a new one is forked")
            else:
                self._failed_start(_status(code))
        if self._forker is not None and self._forker.process.poll() is not None:
            code = self._forker.process.returncode
            self._forker.socket.close()
            self._forker, self._serving, self._asked = None, None, False  # its worker ends with it
            if code == USAGE_ERROR:
                return code
            self._failed_start(f"the forker, {_status(code)}")
        return None

    def _failed_start(self, what: str) -> None:
        """A worker (or the forker) died before it registered: after BURST such in BURST_SECONDS, starts wait."""
        now = time.monotonic()
        self._failed = [t for t in self._failed if now - t < BURST_SECONDS] + [now]
        if len(self._failed) > BURST:
            _say(f"the service process died before it registered ({what}), {len(self._failed)} times in "
                 f"{BURST_SECONDS:g} s; starting it again in {self._backoff:g} s")  # fmt: skip
            self._next_start = now + self._backoff
            self._backoff = min(2 * self._backoff, BACKOFF_MAX)
        else:
            _say(f"the service process died before it registered ({what}); starting it again")

    def _stop(self, signum: int, deadline: float) -> int:
        """Forward ``signum`` to the worker and wait for it (killed after ``deadline`` s): its status, 0 where the
        signal itself ended it (a worker still starting, before its handlers are set, stops as asked)."""
        pid = self._serving
        if pid is None:  # none yet: the forker is ended as it is (it holds nothing)
            return 0
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass  # ended meanwhile: the forker tells its status
        code = self._exit_of(pid, deadline)
        if code is None:
            _say(f"the service process did not stop {deadline:g} s after the signal; killed it")
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._exit_of(pid, 5.0)
            return 1
        return 0 if code == -signum else code

    def _exit_of(self, pid: int, timeout: float) -> int | None:
        """The worker's status once the forker tells it, within ``timeout`` s (None: not by then)."""
        end = time.monotonic() + timeout
        while pid not in self._exits and time.monotonic() < end and self._forker is not None:
            if select.select([self._forker.socket], [], [], min(POLL, end - time.monotonic()))[0]:
                self._take()
            if self._forker.process.poll() is not None:  # the forker died: its worker got SIGTERM
                self._take()
                break
        return self._exits.pop(pid, None)


def _status(code: int) -> str:
    return f"signal {-code} ({signal.Signals(-code).name})" if code < 0 else f"status {code}"


def process_tree(pid: int) -> list[int]:
    """``pid`` and its descendants (Linux /proc): a supervised service's processes."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children", encoding="ascii") as fh:
                    todo.extend(int(c) for c in fh.read().split())
        except OSError:
            pass  # gone meanwhile
    return out
