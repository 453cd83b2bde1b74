# -*- coding: utf-8 -*-
# ruff: noqa: UP004, UP009, UP010, UP031  (the common subset of Python 2.7 and 3)
"""The executable the package's manifest declares: ``python2 nao_ik/robot/main.py --qi-url URL``.

Connects to NAOqi, registers ``NaoArmIK``, serves until SIGTERM / SIGINT (ServiceManager's
stop) and then unregisters it, as NAOqi's application standards ask. If NAOqi goes away, it
exits with status 1, and ServiceManager starts it again (an ``autorun`` service).
"""

from __future__ import division, print_function

import argparse
import os
import signal
import sys
import time

if __name__ == "__main__":  # run as a script: the package root (two folders up) on the path
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

NAME = "NaoArmIK"


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


def main(argv=None):
    # type: (list) -> int
    """Serve NaoArmIK on the NAOqi at --qi-url until stopped; the exit status."""
    parser = argparse.ArgumentParser(description="The NaoArmIK service on the robot (nao-ik's robot runtime).")
    parser.add_argument("--qi-url", default="tcp://127.0.0.1:9559", help="NAOqi's address (the last one given wins)")
    parser.add_argument("--speed", type=float, default=0.2, help="default fractionMaxSpeed")
    parser.add_argument("--connect-timeout", type=float, default=60.0, help="seconds to wait for NAOqi (at boot)")
    args, _ = parser.parse_known_args(argv)  # ServiceManager may add options of its own

    import qi

    from nao_ik.robot.service import NaoArmIK
    from nao_ik.robot.stop import StopFlag

    session = _connect(qi, args.qi_url, args.connect_timeout)
    service = NaoArmIK(session, args.speed)
    sid = session.registerService(NAME, service)
    print("%s registered on %s (service id %d)" % (NAME, args.qi_url, sid))
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
        pass
    if status[0] == 0:
        try:
            session.unregisterService(sid)
            print("%s unregistered" % NAME)
        except RuntimeError as e:
            print("%s: unregistering failed: %s" % (NAME, e), file=sys.stderr)
    session.close()
    return status[0]


if __name__ == "__main__":
    sys.exit(main())
