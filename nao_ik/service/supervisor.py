"""``nao-ik serve`` as a watchdog over its worker process: a crash inside libqi is followed by a restart at once.

libqi decodes a call's arguments on its network thread, recursively: a value
nested some thousands of lists deep (about 40 kB, far under any message cap)
overflows that thread's stack and the process dies of SIGSEGV before any
Python code sees the call; no signature or check of the service can stop it.
So ``nao-ik serve`` runs the service in a worker process and restarts it when
it dies: the service is back, registered anew, within about a second, and the
caller that sent the value loses its connection.

The supervisor loads neither libqi nor numpy. It forwards SIGTERM and SIGINT
to the worker and exits with the worker's status once it stopped; the worker
gets SIGTERM if the supervisor dies (Linux ``PR_SET_PDEATHSIG``). After
:data:`BURST` crashes within :data:`BURST_SECONDS` it waits before the next
start, from :data:`BACKOFF_START` doubling to :data:`BACKOFF_MAX` seconds, so
a service that cannot start does not spin.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Callable, Sequence

#: Set in the worker's environment: the process is the worker, not a supervisor.
WORKER_ENV = "NAO_IK_SERVE_WORKER"
#: A worker that stops with this status is not restarted (a usage error: it would fail again).
USAGE_ERROR = 2
#: Seconds the worker may take to stop after a forwarded signal: more than its own deadline
#: (:data:`nao_ik.service.serve.STOP_DEADLINE`), after which it prints its threads' stacks and exits.
STOP_GRACE = 15.0
BURST, BURST_SECONDS = 3, 10.0
BACKOFF_START, BACKOFF_MAX = 0.5, 10.0
POLL = 0.1
_PR_SET_PDEATHSIG = 1


def is_worker() -> bool:
    """Whether this process is a supervised worker."""
    return os.environ.get(WORKER_ENV) == "1"


def _die_with_parent() -> None:  # pragma: no cover (runs in the child between fork and exec)
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass  # not Linux: the worker outlives a killed supervisor


def _say(message: str) -> None:
    print(f"nao-ik serve: {message}", file=sys.stderr, flush=True)


def supervise(command: Sequence[str], stop_deadline: float = STOP_GRACE,
              on_start: Callable[[int], None] | None = None) -> int:  # fmt: skip
    """Run ``command`` as the worker until it stops by itself or a signal stops this process; restart it on a crash.

    Args:
        command: the worker's command line.
        stop_deadline: seconds the worker may take to stop after the signal is forwarded; then it is killed.
        on_start: called with each worker's pid.

    Returns:
        The exit status: the worker's when it stopped (0 for a clean stop, or where the forwarded signal ended
        it), 1 if it had to be killed.
    """
    stop = threading.Event()
    received: list[int] = []

    def forward(signum: int, _frame: object) -> None:
        received.append(signum)
        stop.set()

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, forward)
    env = dict(os.environ, **{WORKER_ENV: "1"})
    crashes: list[float] = []
    backoff = BACKOFF_START
    while True:
        worker = subprocess.Popen(list(command), env=env, preexec_fn=_die_with_parent)
        if on_start:
            on_start(worker.pid)
        while worker.poll() is None and not stop.is_set():
            stop.wait(POLL)
        if stop.is_set():
            return _stop(worker, received[0] if received else signal.SIGTERM, stop_deadline)
        code = worker.returncode
        if code in (0, USAGE_ERROR):
            return code
        what = f"signal {-code} ({signal.Signals(-code).name})" if code < 0 else f"status {code}"
        now = time.monotonic()
        crashes = [t for t in crashes if now - t < BURST_SECONDS] + [now]
        if len(crashes) > BURST:
            _say(f"the service process died ({what}), {len(crashes)} times in {BURST_SECONDS:g} s; "
                 f"restarting it in {backoff:g} s")  # fmt: skip
            if stop.wait(backoff):
                return 0
            backoff = min(2 * backoff, BACKOFF_MAX)
        else:
            _say(f"the service process died ({what}); restarting it")
            backoff = BACKOFF_START


def _stop(worker: subprocess.Popen, signum: int, deadline: float) -> int:
    """Forward ``signum`` to the worker and wait for it (killed after ``deadline`` s): its status, 0 where the
    signal itself ended it (a worker still starting, before its handlers are set, stops as asked)."""
    if worker.poll() is None:
        worker.send_signal(signum)
    try:
        code = worker.wait(deadline)
        return 0 if code == -signum else code
    except subprocess.TimeoutExpired:
        _say(f"the service process did not stop {deadline:g} s after the signal; killed it")
        worker.kill()
        worker.wait()
        return 1


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
