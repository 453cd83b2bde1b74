"""Long-running processes: the service on a robot (``serve``) and a simulated robot (``sim``).

``serve`` keeps ``NaoArmIK`` registered on a robot: it connects, registers,
watches the connection, and when the robot's session drops it reconnects
and registers again, waiting 0.5 s, 1 s, 2 s ... (at most 10 s) between tries.

It stops cleanly on SIGTERM or SIGINT in every state (connecting, waiting to
retry, serving, in the middle of a path): paths stop sending, running calls
finish or fail within their budget, the service is unregistered and the
session closed, and the process exits with status 0.

Message size: ``serve`` sets libqi's ``QI_MAX_MESSAGE_PAYLOAD`` (unless the
environment already does) to :data:`MAX_MESSAGE_BYTES`: libqi reads a
message's size from its header and drops the connection of a caller whose
message is larger, before reading it, where it would otherwise convert the
whole argument to Python objects before the service could refuse it (a
1,000,000-point path: about 600 MB and 40 s). A 2000-point path is 100 to
110 kB (measured: refused with a 100,000-byte cap, taken with 110,000).

A value nested thousands of lists deep is small and still crashes libqi as
it decodes it: :mod:`nao_ik.service.supervisor` restarts the service then.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
import threading
import time
from typing import Any, Callable, Union

import qi

from ..robot.stop import StopFlag
from .surface import DEFAULT_SPEED, register

#: What stops ``serve`` and ``run_sim``: a ``threading.Event`` or the signals' :class:`StopFlag`.
Stop = Union[threading.Event, StopFlag]

LOOPBACK = "tcp://127.0.0.1:0"
BACKOFF_START = 0.5
BACKOFF_MAX = 10.0
POLL = 0.2
#: Largest message libqi accepts in ``serve``: ten times the largest legal call (a 2000-point path, about
#: 110 kB), and several times ALMotion's method list, the largest message the robot sends (a robot whose
#: ALMotion sent more would fail to connect, libqi's log saying "maximum configured payload size": set
#: QI_MAX_MESSAGE_PAYLOAD higher there). A message costs the service up to about 15 times its size in memory
#: while libqi and qi-python convert it.
MAX_MESSAGE_BYTES = 1 << 20
#: Seconds ``serve`` waits for running calls when it stops.
STOP_TIMEOUT = 5.0
#: Seconds ``serve`` waits for the robot to unregister the service when it stops.
UNREGISTER_TIMEOUT = 2.0
#: Seconds ``serve`` may take to stop after a signal (STOP_TIMEOUT, then unregistering and closing).
STOP_DEADLINE = 12.0


def limit_message_size(max_bytes: int = MAX_MESSAGE_BYTES) -> None:
    """Set libqi's largest accepted message for this process, unless QI_MAX_MESSAGE_PAYLOAD is set already.

    libqi reads the variable once, when its first socket reads: call this before any session connects.
    """
    os.environ.setdefault("QI_MAX_MESSAGE_PAYLOAD", str(int(max_bytes)))


def stop_on_signals(deadline: float | None = None) -> StopFlag:
    """A stop flag set by SIGINT or SIGTERM (a :class:`~nao_ik.robot.stop.StopFlag`: the handler takes no lock).

    Args:
        deadline: seconds the process may take to stop after the first signal; past it, the
            threads' stacks go to stderr (what hung) and the process exits with status 1, as a
            supervisor would kill it. None: no deadline. The watchdog thread starts here, not in
            the handler (starting a thread takes locks too).
    """
    stop = StopFlag()
    stop.set_on_signals((signal.SIGINT, signal.SIGTERM))
    if deadline is not None:
        threading.Thread(target=_watchdog, args=(stop, deadline), name="nao-ik stop watchdog", daemon=True).start()
    return stop


def _watchdog(stop: StopFlag, deadline: float) -> None:
    """Once ``stop`` is set, give the process ``deadline`` seconds to exit, then :func:`_stuck`."""
    stop.wait()
    time.sleep(deadline)
    _stuck(deadline)


def _stuck(deadline: float) -> None:
    sys.stderr.write(f"nao-ik: still stopping {deadline:g} s after the signal; the threads were:\n")
    faulthandler.dump_traceback(sys.stderr, all_threads=True)
    sys.stderr.flush()
    os._exit(1)


class _Authenticator:
    """libqi client authenticator: the user and password NAOqi 2.9 asks for over tcps."""

    def __init__(self, user: str, password: str):
        self._data = {"user": user, "token": password}

    def initialAuthData(self) -> dict:  # noqa: N802 (libqi's name)
        return dict(self._data)


class AuthenticatorFactory:
    """What ``qi.Session.setClientAuthenticatorFactory`` takes."""

    def __init__(self, user: str, password: str):
        self._user, self._password = user, password

    def newAuthenticator(self) -> _Authenticator:  # noqa: N802 (libqi's name)
        return _Authenticator(self._user, self._password)


def serve(
    url: str,
    listen_url: str | None = None,
    speed: float = DEFAULT_SPEED,
    stop: Stop | None = None,
    on_registered: Callable[[str], None] | None = None,
    user: str | None = None,
    password: str | None = None,
    **options: float,
) -> None:
    """Keep ``NaoArmIK`` registered on the robot at ``url`` until ``stop`` is set.

    Args:
        url: the robot's (or simulated robot's) qi URL, e.g. ``tcp://192.168.1.12:9559``.
        listen_url: where this process listens for callers; needed when the
            service runs on another computer than the robot
            (``tcp://0.0.0.0:0``). Default: loopback only.
        speed: default fraction of maximum joint speed.
        stop: set it to end; default: SIGINT/SIGTERM.
        on_registered: called with the URL each time the service is (re)registered.
        user: login for robots that require one (NAOqi 2.9, ``tcps://...:9503``).
        password: its password.
        options: ``motion_timeout``, ``call_budget`` for the service.
    """
    log = qi.Logger("nao_ik.serve")
    stop = stop or stop_on_signals(STOP_DEADLINE)
    backoff = BACKOFF_START
    while not stop.is_set():
        session = qi.Session()
        if user is not None:
            session.setClientAuthenticatorFactory(AuthenticatorFactory(user, password or ""))
        service, sid = None, None
        try:
            _connect(session, url, stop)
            if stop.is_set():
                _close(session)
                break
            session.listen(listen_url or LOOPBACK)
            service, sid = register(session, speed, **options)
        except RuntimeError as e:
            log.warning(f"cannot register NaoArmIK on {url}: {str(e).strip().splitlines()[0]}; retry in {backoff:g} s")
            _shutdown(service, session, sid)
            stop.wait(backoff)
            backoff = min(backoff * 2, BACKOFF_MAX)
            continue
        backoff = BACKOFF_START
        log.info(f"NaoArmIK registered on {url} (service id {sid})")
        if on_registered:
            on_registered(url)
        while not stop.is_set() and session.isConnected():
            stop.wait(POLL)
        if not stop.is_set():
            log.warning(f"lost the connection to {url}; reconnecting")
        _shutdown(service, session, sid)
    log.info("stopped")


def _connect(session: qi.Session, url: str, stop: Stop) -> None:
    """``session.connect(url)``, given up when ``stop`` is set (a robot that does not answer can take minutes)."""
    fut = session.connect(url, _async=True)
    while not fut.isFinished():
        if stop.is_set():
            fut.cancel()
            return
        fut.wait(int(POLL * 1000))
    if fut.hasError():
        raise RuntimeError(fut.error())


def _shutdown(service: Any, session: qi.Session, sid: int | None) -> None:
    """Stop the service's paths and calls, unregister it, close the session."""
    if service is not None:
        service.close(STOP_TIMEOUT)
    if sid is not None:
        try:  # bounded: a robot that stopped answering must not hold the stop
            session.unregisterService(sid, _async=True).wait(int(UNREGISTER_TIMEOUT * 1000))
        except RuntimeError:
            pass  # the robot is gone already
    _close(session)


def _close(session: qi.Session) -> None:
    try:
        session.close()
    except RuntimeError:
        pass


def run_sim(
    listen: str,
    stop: Stop | None = None,
    ready: Callable[[str], None] | None = None,
    apps_dir: str | None = None,
    latency: float = 0.0,
    profile: str | None = None,
    cycle: float = 0.02,
    sag: float = 0.0,
) -> None:
    """Run a simulated robot (stub ALMotion, optionally a PackageManager) until ``stop``.

    ``latency``: seconds added to every ALMotion call, half each way (:mod:`sim_stub.latency`).
    ``profile``, ``cycle``, ``sag``: how the stub's joints move, its control cycle (seconds) and the sag of
    its still joints' sensed angles (radians): :class:`sim_stub.robot.SimulatedRobot`.
    """
    from sim_stub.robot import SimulatedRobot

    stop = stop or stop_on_signals()
    with SimulatedRobot(listen, apps_dir=apps_dir, latency=latency, profile=profile, cycle=cycle, sag=sag) as robot:
        if ready:
            ready(robot.url)
        while not stop.is_set():
            stop.wait(POLL)
