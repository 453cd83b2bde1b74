"""Over real libqi: a slow robot, a caller or a robot that vanishes mid-path; no arm is left on a stale command."""

import threading
import time

import numpy as np
import pytest

from nao_ik.model.arm import arm_model
from tests.qi_fixtures import Stack, qi
from tests.system.test_reliability import _wait

PATH = [list(map(float, p)) for p in np.linspace([0.15, 0.12, 0.08], [0.14, 0.14, 0.10], 1000)]  # 20 s
NAMES = list(arm_model("LArm").names)


def setangles(stub) -> int:
    return sum(c["method"] == "setAngles" for c in stub.getRecordedCommands())


def wait_sending(stub, fut, at_least=3, timeout=20.0):
    end = time.monotonic() + timeout
    while setangles(stub) < at_least:
        assert time.monotonic() < end and not fut.isFinished(), fut.error() if fut.hasError() else "no command"
        time.sleep(0.01)


def assert_silent(stub, seconds=0.3):
    """No command arrives any more."""
    time.sleep(0.1)
    sent = setangles(stub)
    time.sleep(seconds)
    assert setangles(stub) == sent


def test_a_slow_robot_50_ms_each_call(mocker):
    s = Stack(latency=0.05)
    try:
        s.motion.wakeUp()
        s.ik.computeAngles("LArm", 0.15, 0.12, 0.08, "analytic")  # a new service first sees the arms at rest
        answers = []
        for y in (0.12, 0.13, 0.11, 0.12):  # consecutive reaches, none waiting for the arm to arrive
            t0 = time.monotonic()
            answers.append(s.ik.reachTo(0.15, y, 0.08, "analytic"))
            assert time.monotonic() - t0 < 0.5
        t = s.ik.trackPath("LArm", PATH[:5], "nn")
        assert t["sent"] == 5 and t["completed"]
        s.wait_still(NAMES)
        # The arm ends where the last command said, nothing older came after it.
        assert s.motion.getAngles(NAMES, False) == pytest.approx(t["angles"][-1], abs=1e-12)
        assert s.moves()[-1]["angles"] == t["angles"][-1]
        assert s.stub.getViolations() == []
    finally:
        s.close()


def test_a_caller_that_disconnects_does_not_cancel_its_path_in_libqi_3_1_5(awake):
    """What libqi does (measured): a caller's vanishing cancels nothing on the service's side.

    The path then runs to its end (at most MAX_POINTS, 40 s); a caller that wants it stopped
    cancels its future or calls stopPath before it goes. If a libqi release starts cancelling a
    vanished caller's calls, this test fails and the service stops the path (the cancel callback).
    """
    caller = qi.Session()
    caller.connect(awake.robot.url)
    fut = caller.service("NaoArmIK").trackPath("LArm", PATH, "nn-paper", _async=True)
    wait_sending(awake.stub, fut, at_least=12)  # streaming: past the first point's legs and the wait there
    caller.close()  # the caller vanishes mid-call
    time.sleep(0.2)
    sent = setangles(awake.stub)
    time.sleep(0.2)
    assert setangles(awake.stub) > sent  # still sending: libqi did not tell the service
    assert awake.ik.stopPath("LArm")
    assert_silent(awake.stub)
    assert awake.stub.getViolations() == []


def test_a_path_stops_when_almotion_goes_and_the_arm_is_served_when_it_is_back(awake):
    fut = awake.ik.trackPath("LArm", PATH, "nn-paper", _async=True)
    wait_sending(awake.stub, fut)
    awake.robot.unregister_motion()  # ALMotion crashes mid-path
    r = fut.value(5000)  # points went: the answer says how many and why the rest did not
    assert not r["completed"] and (r["sent"] or r["via"]) and "ALMotion" in r["stopped"], r
    awake.robot.register_motion()
    assert_silent(awake.stub)  # the path did not resume on the new ALMotion
    before = setangles(awake.stub)
    try:
        r = awake.ik.reachTo(0.15, 0.12, 0.08, "dls")
    except RuntimeError as e:
        # A point the path sent just before ALMotion went may fail after the path answered (when depends on the
        # motion profile's timing): its failure goes to the arm's next call, which sends nothing, once.
        assert "an earlier command to LArm failed, so this one was not sent" in str(e)
        assert_silent(awake.stub)
        assert setangles(awake.stub) == before
        r = awake.ik.reachTo(0.15, 0.12, 0.08, "dls")
    assert r["reached"]
    assert awake.stub.getViolations() == []


def test_a_path_stops_when_the_robot_session_goes_and_serve_recovers():
    from nao_ik.service.serve import serve
    from sim_stub.robot import SimulatedRobot
    from tests.unit.test_cli import free_port

    url = f"tcp://127.0.0.1:{free_port()}"
    robot = SimulatedRobot(url)
    stop = threading.Event()
    registered = []
    kwargs = dict(stop=stop, on_registered=registered.append)
    thread = threading.Thread(target=serve, args=(url,), kwargs=kwargs, daemon=True)
    thread.start()
    user = qi.Session()
    try:
        _wait(lambda: len(registered) == 1)
        user.connect(url)
        user.service("ALMotion").wakeUp()
        fut = user.service("NaoArmIK").trackPath("LArm", PATH, "nn-paper", _async=True)
        old = robot.motion
        wait_sending(old, fut)
        robot.close()  # the robot's NAOqi goes away mid-path...
        user.close()
        time.sleep(0.5)
        sent = setangles(old)
        robot = SimulatedRobot(url)  # ...and comes back on the same address
        _wait(lambda: len(registered) == 2, timeout=15)
        assert setangles(old) == sent and setangles(robot.motion) == 0  # the path sent nothing more
        user = qi.Session()
        user.connect(url)
        user.service("ALMotion").wakeUp()
        assert user.service("NaoArmIK").reachTo(0.15, 0.12, 0.08, "dls")["reached"]
        assert_silent(robot.motion)
        assert setangles(robot.motion) == 1 and robot.motion.getViolations() == []
    finally:
        user.close()
        stop.set()
        thread.join(timeout=10)
        robot.close()
