"""The robot is the truth: the service decides from the robot's readings when anything else moves NAO.

Other programs call ``rest()`` and ``wakeUp()``, move joints with ``setAngles`` and ``angleInterpolationWithSpeed``,
switch motors off; the service itself restarts. Each test here has such a user beside the service (a second
client of the simulated robot's ALMotion, over libqi), or a second service on the same robot, and checks that the
service neither wedges an arm, nor refuses what a fresh service on the same robot reaches, nor drives an arm into
one that is still moving.
"""

from __future__ import annotations

import time

import pytest

from nao_ik.geometry.collision import clearance, posture_body
from nao_ik.model.arm import arm_model
from nao_ik.model.body import MARGIN
from nao_ik.motion.truth import FOREIGN_WAIT, LAG
from tests.qi_fixtures import Stack, qi

MODELS = {arm: arm_model(arm) for arm in ("LArm", "RArm")}
NAMES = {arm: list(m.names) for arm, m in MODELS.items()}
OTHER = {"LArm": "RArm", "RArm": "LArm"}


def fresh_answer(robot_url: str, arm: str, target, method: str = "analytic") -> dict:
    """computeAngles of a service started now on the same robot: what a service that never saw the past answers."""
    from nao_ik.service.surface import NaoArmIK

    session = qi.Session()
    session.connect(robot_url)
    try:
        service = NaoArmIK(session)
        try:
            return service.computeAngles(arm, *target, method).value()
        finally:
            service.close()
    finally:
        session.close()


def wait_still(s: Stack, timeout: float = 20.0) -> None:
    """Until every arm joint is at its command's target and no call of the service still sends to an arm (a reach
    in legs sends the next once the arm got to the one before): the other client's moves and the service's done."""
    names = NAMES["LArm"] + NAMES["RArm"]
    end = time.monotonic() + timeout
    while s.motion.getAngles(names, True) != s.stub.getTargets(names) or any(
        s.service._engine.arms[arm].busy() for arm in ("LArm", "RArm")
    ):
        assert time.monotonic() < end, "the arms did not come to rest"
        time.sleep(0.02)


def arrives(s: Stack, arm: str, angles: list, timeout: float = 10.0) -> bool:
    """Whether the arm's sensed angles come within 1 mrad of ``angles``."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if max(abs(a - b) for a, b in zip(s.motion.getAngles(NAMES[arm], True), angles)) <= 1e-3:
            return True
        time.sleep(0.02)
    return False


def arrived(s: Stack, arm: str, timeout: float = 10.0) -> bool:
    """Whether getArmState says the arm arrived at the service's last command, asked until it says so or stops
    saying "moving"."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        state = s.ik.getArmState(arm)
        if state["state"] != "moving":
            return state["state"] == "arrived"
        time.sleep(0.05)
    return False


def test_a_reach_right_after_rest_never_wedges_the_arm():
    """A reach sent just after ``rest()`` returned meets motors that are off (its reading may predate them): it is
    refused, or sent and moves nothing. After ``wakeUp()`` the next reaches go at once and arrive; nothing waits for
    an arm to reach a command it will never run. Where the robot was read with the motors off after that command
    went, the first reach tells what became of it."""
    s = Stack()
    try:
        for k in range(3):
            s.motion.wakeUp()
            assert s.ik.reachTo(0.15, 0.10, 0.05, "")["moved"]
            time.sleep(0.3)
            s.motion.rest()
            t0 = time.monotonic()
            try:
                limp = s.ik.reachTo(0.15, 0.12, 0.08, "")
            except RuntimeError as e:
                assert "motors are off" in str(e), e
                limp = None
            assert time.monotonic() - t0 < 1.0
            if k:
                time.sleep(LAG + 0.2)  # read with the motors off, LAG after that command (a reading may be that late)
            s.motion.wakeUp()
            for j, y in enumerate((0.10, 0.12, 0.08)):
                t0 = time.monotonic()
                got = s.ik.reachTo(0.15, y, 0.05, "")
                assert time.monotonic() - t0 < 1.0, got
                assert got["moved"] and got["reached"], got
                if j == 0 and k and limp is not None and limp["moved"]:
                    assert "motors switched off" in got["previousCommand"], got
                assert j == 0 or got["previousCommand"] == "", got
                assert arrives(s, "LArm", got["angles"]), (k, j, got)
        assert s.stub.getCollisionStops() == [] and s.stub.getViolations() == []
    finally:
        s.close()


def test_after_rest_and_wake_up_the_other_arm_is_not_on_its_way():
    """A reach of the right arm, ``rest()`` and ``wakeUp()``: the right arm stands, nothing of its old command runs.
    The left arm's calls answer as a service started now does, at once."""
    s = Stack()
    try:
        s.motion.wakeUp()
        for target in ((0.15, 0.03, 0.05), (0.12, 0.05, 0.0), (0.16, 0.02, 0.08)):
            assert s.ik.reachTo(0.15, -0.05, 0.05, "")["moved"]
            time.sleep(0.2)  # on its way
            s.motion.rest()
            s.motion.wakeUp()
            want = fresh_answer(s.robot.url, "LArm", target)
            assert want["reached"], want
            t0 = time.monotonic()
            for got in (s.ik.computeAngles("LArm", *target, "analytic"), s.ik.reachTo(*target, "")):
                assert got["reached"] == want["reached"] and got["reason"] == want["reason"], (got, want)
                assert got["angles"] == pytest.approx(want["angles"], abs=1e-6)
            assert time.monotonic() - t0 < 1.0
            s.wait_still(NAMES["LArm"])
        assert s.stub.getCollisionStops() == []
    finally:
        s.close()


def _second_service(s: Stack, kind: str):
    """A NaoArmIK that did not send the right arm's command: the same service after a restart (a new object on a new
    session, as the supervisor's new worker or ``nao-ik serve``'s reconnection makes), or a second instance
    registered under another name. Returns (its reachToWithArm, a closer)."""
    from nao_ik.service.surface import NaoArmIK

    session = qi.Session()
    session.connect(s.robot.url)
    service = NaoArmIK(session)
    if kind == "second instance":
        session.listen("tcp://127.0.0.1:0")
        session.registerService("NaoArmIK2", service)
        user = qi.Session()
        user.connect(s.robot.url)
        proxy = user.service("NaoArmIK2")

        def close() -> None:
            service.close()
            user.close()
            session.close()

        return proxy.reachToWithArm, close

    def close() -> None:
        service.close()
        session.close()

    return (lambda *args: service.reachToWithArm(*args).value()), close


@pytest.mark.parametrize("kind", ["restarted", "second instance", "direct setAngles"])
def test_an_arm_moving_under_another_command_is_anywhere_until_seen_at_rest(kind):
    """The right arm on a slow motion toward the midline (15 s at fraction 0.01), sent by the service before it
    restarted, by another instance, or by a program through ALMotion.setAngles directly; then the left arm is sent
    toward the same region. The service that did not send the right arm's command takes it as anywhere in its range
    until it is seen at rest: the left reach is refused in one line (nothing sent) or sent clear of all of it; the
    robot's protection stops nothing (it is off: the arms would overlap); once the right arm has stopped, the same
    reach is reached."""
    s = Stack()
    try:
        s.motion.wakeUp()
        s.stub.setCollisionProtectionEnabled("Arms", False)  # an overlap would go unbent: the gaps below tell
        right = fresh_answer(s.robot.url, "RArm", (0.13, -0.04, 0.04))
        assert right["reached"], right
        if kind == "direct setAngles":
            s.motion.setAngles(NAMES["RArm"], right["angles"], 0.01)
            reach, close = (lambda *args: s.ik.reachToWithArm(*args)), (lambda: None)
        else:
            assert s.ik.reachToWithSpeed("RArm", 0.13, -0.04, 0.04, "analytic", 0.01)["moved"]
            reach, close = _second_service(s, kind)
        time.sleep(0.3)  # under way, seen moving
        target = (0.13, 0.06, 0.0)
        try:
            refused = 0
            for _ in range(4):
                try:
                    got = reach("LArm", *target, "analytic")
                except RuntimeError as e:
                    assert "RArm keeps moving under commands this service did not send" in str(e), e
                    assert "\n" not in str(e).strip()
                    refused += 1
                else:
                    assert got["reached"] is False or not got["moved"] or _clear_of(s, got["angles"]), got
                    break
            assert refused, "a reach toward a moving arm that the service did not command went at once"
            s.wait_still(NAMES["RArm"], timeout=20.0)
            time.sleep(0.2)
            got = reach("LArm", *target, "analytic")
            assert got["reached"] and got["moved"], (got["reason"], got["angles"])
            assert arrives(s, "LArm", got["angles"])
            gaps = _closest_gap(s)
            assert gaps >= MARGIN - 1e-3, gaps
        finally:
            close()
        assert s.stub.getViolations() == []
    finally:
        s.close()


def _clear_of(s: Stack, left: list) -> bool:
    """Whether the left arm at ``left`` keeps the margin from the right arm where it is now."""
    right = s.motion.getAngles(NAMES["RArm"], True)
    body = posture_body(None, (MODELS["RArm"], right))
    return clearance(MODELS["LArm"]._replace(body=body), left, body).distance >= MARGIN - 1e-6


def _closest_gap(s: Stack) -> float:
    """The gap between the arms where they stand (metres)."""
    right = s.motion.getAngles(NAMES["RArm"], True)
    left = s.motion.getAngles(NAMES["LArm"], True)
    body = posture_body(None, (MODELS["RArm"], right))
    return clearance(MODELS["LArm"]._replace(body=body), left, body).distance


def _fresh(session, name: str, seconds: float = 5.0):
    """The service ``name`` as registered now: a proxy that answers (libqi may hand out the unregistered one's for a
    moment: "The call request could not be handled")."""
    end = time.monotonic() + seconds
    while True:
        ik = session.service(name)
        try:
            ik.getSpeed()
            return ik
        except RuntimeError:
            if time.monotonic() > end:
                raise
            time.sleep(0.05)


def test_a_restarted_service_keeps_the_speed_a_caller_set():
    """setSpeed holds across a restart of the service on the same robot (a new service object, as a new worker or a
    reconnection makes) and its commands go at it; a second instance under another name keeps its own."""
    from nao_ik.service import register

    s = Stack()
    try:
        s.motion.wakeUp()
        s.ik.setSpeed(0.05)
        s.service.close()
        s.server.unregisterService(s.service_id)
        s.service, s.service_id = register(s.server)  # the service again, on the same robot
        ik = _fresh(s.user, "NaoArmIK")
        assert ik.getSpeed() == 0.05
        assert ik.reachTo(0.15, 0.12, 0.08, "")["moved"] and s.moves()[-1]["speed"] == 0.05
        other, _ = register(s.server, name="NaoArmIK2")
        assert s.user.service("NaoArmIK2").getSpeed() == 0.2
        other.close()
    finally:
        s.close()


def test_an_arm_that_breathes_is_refused_with_a_hint_and_served_once_breathing_is_off():
    """ALMotion's breathing (which ALAutonomousLife's background movement switches on) moves the arms forever: the
    service never sees them at rest, so it refuses in one line naming it, within a few seconds and sending
    nothing; with breathing off it serves again. Idle motion that resumes on an arm the service commanded drops
    the service's record of that command: the next reach is refused the same way, and told why."""
    s = Stack()
    try:
        s.motion.wakeUp()
        s.motion.setBreathEnabled("Arms", True)
        time.sleep(0.8)  # breathing has taken over
        before = len(s.moves())
        for call in (
            lambda: s.ik.reachTo(0.15, 0.12, 0.08, ""),
            lambda: s.ik.computeAngles("LArm", 0.15, 0.12, 0.08, ""),
        ):
            t0 = time.monotonic()
            with pytest.raises(RuntimeError, match="keeps moving under commands this service did not send") as e:
                call()
            assert "setBreathEnabled" in str(e.value) and "ALAutonomousLife" in str(e.value)
            assert time.monotonic() - t0 < FOREIGN_WAIT + 1.0
        assert len(s.moves()) == before
        assert s.ik.getArmState("LArm")["state"] == "moving"
        s.motion.setBreathEnabled("Arms", False)
        got = s.ik.reachTo(0.15, 0.12, 0.08, "")
        assert got["reached"] and got["moved"], got
        assert arrived(s, "LArm")
        s.motion.setBreathEnabled("LArm", True)  # idle motion resumes on the arm the service commanded
        time.sleep(1.0)
        state = s.ik.getArmState("LArm")
        assert state["state"] == "moving" and "did not send" in state["reason"], state
        with pytest.raises(RuntimeError, match="keeps moving under commands this service did not send"):
            s.ik.reachTo(0.15, 0.10, 0.05, "")
        s.motion.setBreathEnabled("LArm", False)
        got = s.ik.reachTo(0.15, 0.10, 0.05, "")
        assert got["moved"] and "another command moved the arm" in got["previousCommand"], got
        assert s.stub.getCollisionStops() == [] and s.stub.getViolations() == []
    finally:
        s.close()
