"""The callers' session that reconnects: after `nao-ik serve` drops a caller's oversize message, libqi 3.1.5 keeps
that caller's session failing ("Socket is not connected") while it says it is connected; the nao-ik session opens a
new one and sends the call again."""

import os
import signal
import subprocess
import sys
import time

import pytest

from nao_ik.service.client import NOT_SENT, Session
from nao_ik.service.supervisor import process_tree
from sim_stub.robot import SimulatedRobot
from tests.qi_fixtures import qi

#: Over serve's 1 MB cap (a 2000-point path is about 110 kB).
OVERSIZE = [[0.15, 0.12, 0.08]] * 30000


@pytest.fixture(scope="module")
def served():
    with SimulatedRobot() as robot:
        serve = subprocess.Popen([sys.executable, "-m", "nao_ik.cli", "serve", "--qi-url", robot.url],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        try:
            assert "registered" in serve.stdout.readline()
            robot.serve = serve
            yield robot
        finally:
            serve.terminate()
            serve.communicate(timeout=20)


def _drop(ik):
    with pytest.raises(RuntimeError, match="Socket Disconnected"):  # sent once: it may have run
        ik.trackPath("LArm", OVERSIZE, "")


def test_a_plain_session_keeps_failing_after_its_oversize_message_and_says_it_is_connected(served):
    session = qi.Session()
    session.connect(served.url)
    try:
        ik = session.service("NaoArmIK")
        _drop(ik)
        for proxy in (ik, session.service("NaoArmIK")):
            with pytest.raises(RuntimeError, match=NOT_SENT):
                proxy.getSpeed()
        assert session.isConnected()
        assert session.service("ALMotion").getAngles("LArm", False)  # the robot's own services still answer
    finally:
        session.close()
    fresh = qi.Session()
    fresh.connect(served.url)
    assert fresh.service("NaoArmIK").getSpeed() > 0
    fresh.close()


def test_the_nao_ik_session_opens_a_new_one_and_sends_the_call_again(served):
    with Session(served.url) as session:
        ik = session.service("NaoArmIK")
        _drop(ik)
        first = session.current()[1]
        assert ik.getSpeed() > 0  # found the old session's connection closed, sent again on a new one
        assert session.current()[1] == first + 1
        assert ik.computeAngles("LArm", 0.15, 0.12, 0.08)["reached"]
        assert session.service("ALMotion").getAngles("LArm", False)
        assert session.current()[1] == first + 1  # renewed once
        assert ik.getSpeed(_async=True).value() > 0


def test_other_errors_are_the_callers_and_not_sent_again(served):
    with Session(served.url) as session:
        with pytest.raises(RuntimeError, match="unknown arm"):
            session.service("NaoArmIK").computeAngles("Leg", 0.15, 0.12, 0.08)
        assert session.current()[1] == 0


def test_a_service_held_across_a_crash_of_serve_answers_once_it_is_back(served):
    with Session(served.url) as session:
        ik = session.service("NaoArmIK")
        assert ik.getSpeed() > 0
        os.kill(process_tree(served.serve.pid)[-1], signal.SIGSEGV)  # the worker: a new one is forked
        while True:  # libqi's notices first, maybe
            line = served.serve.stdout.readline()
            assert line, "nao-ik serve ended before its worker registered again"
            if "NaoArmIK registered" in line:
                break
        end = time.monotonic() + 10
        while True:  # the old registration may still be listed for a moment
            try:
                assert ik.getSpeed() > 0  # the held proxy's connection is closed: a new session, sent again
                break
            except RuntimeError:
                assert time.monotonic() < end
                time.sleep(0.05)
