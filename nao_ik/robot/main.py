# -*- coding: utf-8 -*-
# ruff: noqa: UP004, UP009, UP010, UP031  (the common subset of Python 2.7 and 3)
"""The executable the package's manifest declares: ``python2 nao_ik/robot/main.py --qi-url URL``.

Two processes. The one ServiceManager starts is a *supervisor*: it loads no libqi, starts the
*worker* (this file again, :data:`WORKER_ENV` set in its environment), and starts it again at once
when it dies from a signal. The worker connects to NAOqi, registers ``NaoArmIK``, serves until
SIGTERM / SIGINT and then unregisters it, as NAOqi's application standards ask.

Why: libqi decodes a call's arguments on its network thread, recursively, before any Python code
sees the call; a value nested some thousands of lists deep (a few kB, under any message cap; a
hand-written client can send it to any method, whatever its signature) overflows that thread's
stack and the process dies of SIGSEGV. Nothing inside the process can prevent it, and
ServiceManager stops restarting a service that crashes more than 5 times in 10 s: so the process it
watches is the supervisor, which does not crash, and the worker is back within about a second. After
BURST crashes within BURST_SECONDS the supervisor waits before the next start (BACKOFF_START
doubling up to BACKOFF_MAX seconds), so a worker that keeps dying does not spin.

Stopping: the supervisor forwards SIGTERM / SIGINT to the worker, waits for it (killed after
STOP_GRACE seconds) and exits 0. A worker whose supervisor disappears (killed with SIGKILL)
stops by itself within a second. If NAOqi goes away, the worker exits with status 1 and the
supervisor with it, and ServiceManager starts it again (an ``autorun`` service).

Message size: the worker sets libqi's ``QI_MAX_MESSAGE_PAYLOAD`` (unless the environment does) to
MAX_MESSAGE_BYTES before libqi's first socket read: libqi then drops the connection of a caller
whose message is larger, reading no more than its header, where it would otherwise convert the
whole argument to Python objects before the service could refuse it.
"""

from __future__ import division, print_function

import argparse
import os
import signal
import subprocess
import sys
import time

if __name__ == "__main__":  # run as a script: the package root (two folders up) on the path
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

NAME = "NaoArmIK"
#: Set in the worker's environment: the process is the worker, not the supervisor.
WORKER_ENV = "NAO_IK_ROBOT_WORKER"
#: The largest message libqi accepts in the worker. The runtime's largest legal call is tiny (a reach: six numbers
#: and two strings, well under 1 kB), but the worker's own incoming messages include the service directory's
#: answers and ALMotion's, the largest being ALMotion's metaObject when the proxy is made (its methods with their
#: descriptions). 2 MB leaves that a wide margin and keeps what a caller's message can cost while it is converted
#: small. Too small a cap drops the worker's own connections to NAOqi (it cannot even register): a robot whose
#: NAOqi answers more than 2 MB needs QI_MAX_MESSAGE_PAYLOAD set in the service's environment.
MAX_MESSAGE_BYTES = 2 << 20
#: Crashes within BURST_SECONDS after which the supervisor waits before starting the worker again.
BURST, BURST_SECONDS = 3, 10.0
BACKOFF_START, BACKOFF_MAX = 0.5, 10.0
#: Seconds the worker may take to stop after the forwarded signal before it is killed.
STOP_GRACE = 8.0
#: Seconds the worker retries registering (the service directory may still hold a crashed worker's service).
REGISTER_TIMEOUT = 10.0


def _say(message):
    print("%s supervisor: %s" % (NAME, message), file=sys.stderr)
    sys.stderr.flush()


def supervise(argv=None):
    # type: (list) -> int
    """Run the worker until a signal stops this process; start it again when it dies from a signal.

    Returns:
        The exit status: 0 once stopped by SIGTERM / SIGINT; the worker's when it exits by itself
        (1: NAOqi went away).
    """
    from nao_ik.robot.stop import StopFlag

    argv = list(sys.argv[1:] if argv is None else argv)
    stop = StopFlag()  # not threading.Event: the signal handler sets it (see nao_ik.robot.stop)
    stop.set_on_signals((signal.SIGTERM, signal.SIGINT))
    env = dict(os.environ)
    env[WORKER_ENV] = "1"
    command = [sys.executable, os.path.abspath(__file__)] + argv
    crashes = []
    backoff = BACKOFF_START
    while not stop.is_set():
        worker = subprocess.Popen(command, env=env, close_fds=True)
        while worker.poll() is None and not stop.wait(0.1):
            pass
        if stop.is_set():
            return _stop(worker)
        code = worker.returncode
        if code >= 0:
            return code
        t = time.time()
        crashes = [c for c in crashes if t - c < BURST_SECONDS] + [t]
        if len(crashes) > BURST:
            _say("the service process died of signal %d, %d times in %g s; starting it again in %g s"
                 % (-code, len(crashes), BURST_SECONDS, backoff))  # fmt: skip
            if stop.wait(backoff):
                break
            backoff = min(2 * backoff, BACKOFF_MAX)
        else:
            _say("the service process died of signal %d; starting it again" % -code)
            backoff = BACKOFF_START
    return 0


def _stop(worker):
    """Forward SIGTERM to the worker, wait for it (killed after STOP_GRACE s); 0."""
    if worker.poll() is None:
        try:
            worker.send_signal(signal.SIGTERM)
        except OSError:  # gone meanwhile
            pass
    end = time.time() + STOP_GRACE
    while worker.poll() is None and time.time() < end:
        time.sleep(0.05)
    if worker.poll() is None:
        _say("the service process did not stop %g s after SIGTERM; killed it" % STOP_GRACE)
        worker.kill()
        worker.wait()
    return 0


def _connect(qi, url, timeout):
    """A session connected to NAOqi, retried once a second for ``timeout`` seconds.

    At boot NAOqi may come up after this service; failing at once would spend ServiceManager's
    restarts (it stops restarting a service that crashes more than 5 times in 10 s).
    """
    end = time.time() + timeout
    while True:
        session = qi.Session()
        try:
            session.connect(url)
            return session
        except RuntimeError as e:
            if time.time() >= end:
                print("%s: cannot connect to NAOqi at %s: %s" % (NAME, url, e), file=sys.stderr)
                raise
            time.sleep(1.0)


def _register(session, service):
    """``registerService``, retried for REGISTER_TIMEOUT s: after a crash the service directory may still hold the
    dead worker's NaoArmIK for a moment."""
    end = time.time() + REGISTER_TIMEOUT
    while True:
        try:
            return session.registerService(NAME, service)
        except RuntimeError:
            if time.time() >= end:
                raise
            time.sleep(0.2)


def serve(args):
    # type: (argparse.Namespace) -> int
    """The worker: serve NaoArmIK on the NAOqi at --qi-url until stopped; the exit status."""
    os.environ.setdefault("QI_MAX_MESSAGE_PAYLOAD", str(MAX_MESSAGE_BYTES))  # before libqi's first socket reads
    import qi

    from nao_ik.robot.service import NaoArmIK
    from nao_ik.robot.stop import StopFlag

    parent = os.getppid()
    session = _connect(qi, args.qi_url, args.connect_timeout)
    times = dict((k, v) for k, v in (("call_budget", args.call_budget), ("motion_timeout", args.motion_timeout))
                 if v is not None)  # fmt: skip
    service = NaoArmIK(session, args.speed, name=NAME, **times)
    sid = _register(session, service)
    print("%s registered on %s (service id %d, process %d)" % (NAME, args.qi_url, sid, os.getpid()))
    sys.stdout.flush()
    done = StopFlag()  # not threading.Event: the signal handler below sets it (see nao_ik.robot.stop)
    status = [0]

    def lost(*_):
        if not done.is_set():  # NAOqi went away (not our own close below): exit 1, ServiceManager restarts us
            status[0] = 1
            done.set()

    session.disconnected.connect(lost)
    done.set_on_signals((signal.SIGTERM, signal.SIGINT))
    while not done.wait(0.5):  # bounded waits: Python 2 too runs a handler only between bytecodes
        if os.getppid() != parent:  # the supervisor is gone (killed): stop as if it had forwarded SIGTERM
            done.set()
    if status[0] == 0:
        try:
            session.unregisterService(sid)
            print("%s unregistered" % NAME)
        except RuntimeError as e:
            print("%s: unregistering failed: %s" % (NAME, e), file=sys.stderr)
    sys.stdout.flush()
    session.close()
    return status[0]


def main(argv=None):
    # type: (list) -> int
    """The supervisor, or in the process it starts (:data:`WORKER_ENV`) the worker; the exit status."""
    parser = argparse.ArgumentParser(description="The NaoArmIK service on the robot (nao-ik's robot runtime).")
    parser.add_argument("--qi-url", default="tcp://127.0.0.1:9559", help="NAOqi's address (the last one given wins)")
    parser.add_argument("--speed", type=float, default=0.2, help="default fractionMaxSpeed")
    parser.add_argument("--connect-timeout", type=float, default=60.0, help="seconds to wait for NAOqi (at boot)")
    parser.add_argument("--call-budget", type=float, help="seconds each call may take")
    parser.add_argument("--motion-timeout", type=float, help="seconds each ALMotion call may take")
    args, _ = parser.parse_known_args(argv)  # ServiceManager may add options of its own
    if os.environ.get(WORKER_ENV) == "1":
        return serve(args)
    return supervise(argv)


if __name__ == "__main__":
    sys.exit(main())
