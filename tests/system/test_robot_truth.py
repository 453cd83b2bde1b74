"""The robot is the truth: the service decides from the robot's readings when anything else moves NAO.

Other programs call ``rest()`` and ``wakeUp()``, move joints with ``setAngles`` and ``angleInterpolationWithSpeed``,
switch motors off; the service itself restarts. Each test here has such a user beside the service (a second
client of the simulated robot's ALMotion, over libqi), or a second service on the same robot, and checks that the
service neither wedges an arm, nor refuses what a fresh service on the same robot reaches, nor drives an arm into
one that is still moving.
"""

from __future__ import annotations

import os
import random
import time

import numpy as np
import pytest

from nao_ik.geometry.collision import clearance, posture_body
from nao_ik.geometry.sweep import sweep
from nao_ik.kinematics.chain import forward
from nao_ik.model.arm import arm_model
from nao_ik.model.body import MARGIN
from nao_ik.motion.truth import FOREIGN_WAIT, LAG
from tests import report
from tests.qi_fixtures import Stack, qi

MODELS = {arm: arm_model(arm) for arm in ("LArm", "RArm")}
NAMES = {arm: list(m.names) for arm, m in MODELS.items()}
OTHER = {"LArm": "RArm", "RArm": "LArm"}
#: Rounds of the interleaving test: make test runs the default profile; make soak runs every profile and more.
ROUNDS = 120 if os.environ.get("NAO_IK_SOAK") else 30


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


# ---------------------------------------------------------------------------------- another ALMotion user


def _clear_posture(rng: random.Random, arm: str, other: list, start: list) -> list:
    """A random posture of ``arm`` clear of the body and of the other arm at ``other``, reached from ``start`` by a
    motion clear of both (another program's move that the robot's protection has no reason to bend)."""
    model = MODELS[arm]
    body = posture_body(None, (MODELS[OTHER[arm]], other))
    model = model._replace(body=body)
    while True:
        q = [rng.uniform(lo, hi) for lo, hi in zip(model.lower, model.upper)]
        q[4] = 0.0
        if clearance(model, q, body).distance >= 2 * MARGIN and sweep(model, start, q).clear:
            return q


def _target(rng: random.Random, arm: str) -> tuple:
    """A hand position of a random in-limit posture of ``arm`` on its side (the reference reaches most of them)."""
    model = MODELS[arm]
    side = 1.0 if arm == "LArm" else -1.0
    while True:
        q = [rng.uniform(lo, hi) for lo, hi in zip(model.lower, model.upper)]
        p = forward(model, q)
        if side * p[1] > 0.06 and p[0] > 0.08:
            return tuple(float(v) for v in np.round(p, 4))


KINDS = ("rest and wakeUp", "limp then stiff", "angleInterpolationWithSpeed", "setAngles", "reach then rest",
         "the other arm")  # fmt: skip


def _disturb(s: Stack, kind: str, arm: str, rng: random.Random) -> None:
    """What another ALMotion user (or the service's other arm) does before the round's reach."""
    other = OTHER[arm]
    if kind == "rest and wakeUp":
        s.motion.rest()
        s.motion.wakeUp()
    elif kind == "limp then stiff":
        s.motion.setStiffnesses(arm, 0.0)
        time.sleep(0.05)
        s.motion.setStiffnesses(arm, 1.0)
    elif kind in ("angleInterpolationWithSpeed", "setAngles"):
        mover = rng.choice((arm, other))
        here = {a: s.motion.getAngles(NAMES[a], True) for a in (arm, other)}
        q = _clear_posture(rng, mover, here[OTHER[mover]], here[mover])
        if kind == "setAngles":
            s.motion.setAngles(NAMES[mover], q, 0.4)
        else:
            s.motion.angleInterpolationWithSpeed(NAMES[mover], q, 0.6)
    elif kind == "reach then rest":
        try:
            s.ik.reachToWithArm(arm, *_target(rng, arm), "analytic")
        except RuntimeError:
            pass
        s.motion.rest()
        try:  # refused (the motors off, or the body where rest() put it), or sent to motors that are off
            s.ik.reachToWithArm(arm, *_target(rng, arm), "analytic")
        except RuntimeError:
            pass
        s.motion.wakeUp()
    else:
        try:
            s.ik.reachToWithArm(other, *_target(rng, other), "analytic")
        except RuntimeError:
            pass


def test_another_almotion_user_between_reaches():
    """A seeded interleaving of another ALMotion client's rest()+wakeUp(), setStiffnesses 0 then 1,
    angleInterpolationWithSpeed and setAngles to other clear postures, a reach followed at once by rest() and
    another reach, and reaches of the other arm. After each, once the arms are still and the motors on, a reach's
    answer equals computeAngles of a service started then on the same robot (reached, reason, angles within
    1e-6 rad), a reached target arrives, no call runs over its budget, and the robot's protection stops nothing."""
    profile = os.environ.get("NAO_IK_STUB_PROFILE", "smooth")
    s = Stack()
    rng = random.Random(52)
    differ, stuck, over, reached, counts, worst = [], [], 0, 0, dict.fromkeys(KINDS, 0), 0.0
    try:
        s.motion.wakeUp()
        for k in range(ROUNDS):
            kind = KINDS[k % len(KINDS)]
            arm = rng.choice(("LArm", "RArm"))
            _disturb(s, kind, arm, rng)
            counts[kind] += 1
            wait_still(s)
            target = _target(rng, arm)
            want = fresh_answer(s.robot.url, arm, target)
            t0 = time.monotonic()
            try:
                got = s.ik.reachToWithArm(arm, *target, "analytic")
            except RuntimeError as e:  # refused where a service that never saw the past answers
                got = {"reached": False, "reason": str(e).splitlines()[0], "angles": []}
            took = time.monotonic() - t0
            worst = max(worst, took)
            over += took > 10.0
            same = (got["reached"] == want["reached"] and got["reason"] == want["reason"]
                    and np.allclose(got["angles"], want["angles"], atol=1e-6, rtol=0.0))  # fmt: skip
            if not same:
                differ.append((k, kind, arm, target, got["reason"], want["reason"], got["angles"], want["angles"],
                               got.get("otherSolution"), want.get("otherSolution")))  # fmt: skip
            if want["reached"]:
                reached += 1
            if got["reached"] and not arrives(s, arm, got["angles"]):
                stuck.append((k, kind, arm, target))
        stops = s.stub.getCollisionStops()
    finally:
        s.close()
    report.lines.append(
        f"another ALMotion user ({profile}): {ROUNDS} rounds ({', '.join(f'{v} {k}' for k, v in counts.items())}): "
        f"{len(differ)} differing answers, {over} calls over budget, {len(stops)} collision stops, {len(stuck)} "
        f"reached targets not arrived; the reference reached {reached}; slowest reach {worst * 1e3:.0f} ms"
    )
    assert reached >= 0.9 * ROUNDS, reached
    assert differ == [] and over == 0 and stops == [] and stuck == [], (differ, stops, stuck)


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
        ik = s.user.service("NaoArmIK")
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
