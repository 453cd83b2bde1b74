"""Over real libqi: a reach costs one robot round trip at most, and each call can bring its own speed."""

import os
import statistics
import time

import pytest

from sim_stub.motion import StubMotion
from sim_stub.profiles import PROFILES
from tests.qi_fixtures import Stack, profiles_here

#: Reaches per stub motion profile in the tests near the body (``make soak``: 60).
REACHES = 60 if os.environ.get("NAO_IK_SOAK") else 8

LATENCY = 0.01  # s: a slow robot link (a round trip dwarfs a solve), still quicker than MAX_AGE


class CountingMotion(StubMotion):
    """A stub that counts the readings it serves (their sensed angles: a reading asks the commanded ones too) and notes
    when each was asked."""

    def __init__(self):
        super().__init__()
        self._reads = ([],)  # in a tuple, as StubMotion keeps its data

    def getAngles(self, names, useSensors):
        if useSensors:
            self._reads[0].append(time.monotonic())
        return super().getAngles(names, useSensors)

    def reads(self) -> int:
        return len(self._reads[0])


@pytest.fixture(scope="module")
def slow():
    s = Stack(latency=LATENCY)
    s.motion.wakeUp()
    yield s
    s.close()


def test_a_reach_costs_one_robot_round_trip_at_most(slow):
    """Before: getStiffnesses, getAngles and setAngles one after the other, three round trips and more."""
    names = ["LShoulderPitch", "LShoulderRoll", "LElbowYaw", "LElbowRoll", "LWristYaw"]
    reach, plain = [], []
    for k in range(12):  # taking turns, so a slow spell falls on both
        t0 = time.perf_counter()
        slow.ik.reachTo(0.15, 0.12 + 0.01 * (k % 2), 0.08, "analytic")
        reach.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        slow.motion.getAngles(names, True)
        plain.append(time.perf_counter() - t0)
    ratio = statistics.median(reach) / statistics.median(plain)
    assert ratio < 1.8, (statistics.median(reach), statistics.median(plain))
    assert slow.stub.getViolations() == []


def test_the_readings_are_polled_at_50_hz_while_in_use_and_not_after(mocker):
    mocker.patch("nao_ik.service.sensed.WARM", 0.5)
    motion = CountingMotion()
    s = Stack(motion)
    try:
        s.motion.wakeUp()
        s.ik.computeAngles("LArm", 0.15, 0.12, 0.08, "analytic")  # the polling starts (the call proved the arms at
        first = motion.reads()  # rest meanwhile: a new service)
        time.sleep(0.4)
        assert 8 <= motion.reads() - first <= 30, motion.reads() - first  # about one per 20 ms cycle
        time.sleep(0.4)  # the warm time is over
        idle = motion.reads()
        time.sleep(0.3)
        assert motion.reads() == idle
    finally:
        s.close()


def test_reach_with_speed_uses_its_own_speed_and_leaves_the_default(slow):
    slow.ik.setSpeed(0.2)
    r = slow.ik.reachToWithSpeed("RArm", 0.15, -0.12, 0.08, "dls", 0.7)
    assert r["moved"] and r["reached"]
    cmd = slow.moves()[-1]
    assert cmd["speed"] == pytest.approx(0.7) and cmd["angles"] == r["angles"]
    assert slow.ik.getSpeed() == pytest.approx(0.2)
    pose = slow.ik.getPose("RArm")
    slow.ik.reachToPoseWithSpeed("RArm", pose, 7, "", 0.9)
    assert slow.moves()[-1]["speed"] == pytest.approx(0.9)
    # Once the right arm stopped: sent while it moved, its reach may still have it braking toward the first
    # command, where the left arm's path would be checked against that too.
    slow.wait_still(["RShoulderPitch", "RShoulderRoll", "RElbowYaw", "RElbowRoll", "RWristYaw"])
    end = time.monotonic() + 5.0  # and the service has seen it there (its readings tell it the command ended)
    while slow.ik.getArmState("RArm")["state"] == "moving" and time.monotonic() < end:
        time.sleep(0.02)
    t = slow.ik.trackPathWithSpeed("LArm", [[0.15, 0.12, 0.08], [0.15, 0.125, 0.08]], "", 0.4)
    assert t["sent"] == 2 and [m["speed"] for m in slow.moves()[-2:]] == [0.4, 0.4], t["stopped"]
    assert slow.ik.getSpeed() == pytest.approx(0.2)


@pytest.mark.parametrize("speed", [0.0, 1.5, float("nan"), True, "fast", None])
def test_a_bad_speed_is_refused_and_nothing_is_sent(slow, speed):
    before = len(slow.moves())
    with pytest.raises(RuntimeError, match="speed"):
        slow.ik.reachToWithSpeed("LArm", 0.15, 0.12, 0.08, "dls", speed)
    with pytest.raises(RuntimeError, match="speed"):
        slow.ik.reachToPoseWithSpeed("LArm", [0.15, 0.12, 0.08, 0, 0, 0], 7, "", speed)
    with pytest.raises(RuntimeError, match="speed"):
        slow.ik.trackPathWithSpeed("LArm", [[0.15, 0.12, 0.08]], "", speed)
    assert len(slow.moves()) == before


def test_the_latency_link_keeps_the_order_of_commands(slow):
    slow.stub.clearRecordedCommands()
    names = ["LElbowYaw"]
    futures = [slow.motion.setAngles(names, [-1.0 + 0.01 * k], 1.0, _async=True) for k in range(50)]
    for f in futures:
        f.value(5000)
    got = [c["angles"][0] for c in slow.stub.getRecordedCommands() if c["method"] == "setAngles"]
    assert got == [pytest.approx(-1.0 + 0.01 * k) for k in range(50)]


def test_the_body_checks_cost_on_the_round_trip_is_measured_like_for_like():
    """nao-ik loadtest --body-rounds: two services (with the body and motion checks, without) in turn."""
    import io
    import re

    from nao_ik.evidence.latency import print_body_cost

    out = io.StringIO()
    print_body_cost(20, out)
    row = re.search(r"\| ([\d,]+) µs \| ([\d,]+) µs \| ([\d,]+) µs \| (\d+\.\d\d) \|", out.getvalue())
    assert row, out.getvalue()
    body, none = (float(row.group(k).replace(",", "")) for k in (2, 3))
    assert float(row.group(4)) == pytest.approx(body / none, abs=0.006)


@pytest.mark.parametrize("profile", profiles_here())
def test_reaches_in_a_row_near_the_body_trip_no_protection(profile):
    """Back to back over the slow link, each reach right after the last command: random targets around the chest
    and the other arm, random methods and speeds. The stub's protection (like ALMotion's) stops nothing and no
    command is out of limits. An end-to-end check of the body checks (it fails without them); the moving-arm
    check alone it does not catch (the stub moves as the model says, and the sweep keeps 1.25 mm more than the
    stub's margin):
    tests/unit/geometry/test_motion_body.py tests that one. Against each of the stub's motion profiles, REACHES reaches
    each."""
    import random

    slow = Stack(latency=LATENCY, profile=profile)
    try:
        slow.motion.wakeUp()
        rng = random.Random(3 + PROFILES.index(profile))
        moved = refused = 0
        for _ in range(REACHES):
            arm = rng.choice(["LArm", "RArm"])
            side = 1.0 if arm == "LArm" else -1.0
            target = (rng.uniform(0.03, 0.18), side * rng.uniform(-0.06, 0.2), rng.uniform(-0.12, 0.15))
            method, speed = rng.choice(["analytic", "dls", "nn", "fabrik"]), rng.choice([0.2, 0.6, 1.0])
            try:
                moved += bool(slow.ik.reachToWithSpeed(arm, *target, method, speed)["moved"])
            except RuntimeError as e:  # a safety refusal (the body, the moving arm), not a timeout
                assert "nothing" in str(e) and ("collision:" in str(e) or "motion:" in str(e)), e
                refused += 1
        slow.wait_still(["LShoulderPitch", "LShoulderRoll", "LElbowYaw", "LElbowRoll", "RShoulderPitch",
                         "RShoulderRoll", "RElbowYaw", "RElbowRoll"])  # fmt: skip
        assert moved >= REACHES // 2, (moved, refused)
        assert slow.stub.getCollisionStops() == [] and slow.stub.getViolations() == []
    finally:
        slow.close()


def test_a_path_command_that_timed_out_still_counts_as_sent():
    """trackPath's setAngles that ALMotion does not answer may still reach the robot and run, so the service
    keeps it as the arm's last command (later commands are checked from the arm's way toward it), and the answer
    counts it as sent and says why the rest was not."""
    s = Stack(motion_timeout=0.3)
    try:
        s.motion.wakeUp()
        s.stub.setHang("setAngles", 1.0)
        r = s.ik.trackPath("LArm", [[0.15, 0.12, 0.08], [0.15, 0.125, 0.08]], "analytic")
        assert r["sent"] >= 1 and not r["completed"] and r["stopped"], r
        s.stub.setHang("setAngles", 0)
        s.wait_still(["LShoulderPitch", "LShoulderRoll", "LElbowYaw", "LElbowRoll", "LWristYaw"])
        ran = [c["angles"] for c in s.stub.getRecordedCommands() if c["method"] == "setAngles"]
        assert ran and s.service._engine.aim["LArm"] == pytest.approx(ran[-1])  # the robot ran it: the service knows
    finally:
        s.close()


@pytest.mark.parametrize("answered", [True, False])
def test_a_command_is_kept_as_the_arms_last_only_where_it_may_have_run(mocker, answered):
    """call_aimed (trackPath, reachBoth): a setAngles that ALMotion answered with an error did not run, so the arm's
    last command stays what it was; one with no answer in time may have run, so it becomes the last command."""
    s = Stack()
    try:
        svc = s.service._engine
        before = list(svc.aim.get("LArm") or [])
        mocker.patch.object(svc.motion, "result", side_effect=RuntimeError("ALMotion.setAngles failed or timed out"))
        refused = "ALMotion.setAngles failed: refused" if answered else ""
        mocker.patch.object(svc.motion, "failure", return_value=refused)
        q = [0.1, 0.2, -0.3, -0.4, 0.0]
        with pytest.raises(RuntimeError):
            svc.call_aimed([("LArm", q)], ["LShoulderPitch", "LShoulderRoll", "LElbowYaw", "LElbowRoll", "LWristYaw"],
                            q, 0.2, time.monotonic() + 2)  # fmt: skip
        assert list(svc.aim.get("LArm") or []) == (before if answered else q)
    finally:
        s.close()


@pytest.mark.parametrize("profile", profiles_here())
def test_a_reach_held_up_between_its_check_and_its_command_does_not_fail(mocker, profile):
    """Reaches back to back over the slow link, around the chest and the other arm, each one held up 0.1 s between
    its motion check and its first command (as a busy machine may hold a thread) while the arm still moves toward
    the previous command. The check covers the arm anywhere on its way, whenever the command arrives: no reach
    fails for the delay, and nothing enters the body. Against each of the stub's motion profiles, REACHES reaches
    each."""
    import random

    from nao_ik.service.engine import Engine

    real = Engine.send
    held = []

    def held_up(self, arm, names, angles, speed, end):
        if not held:  # the reach's first command
            held.append(arm)
            time.sleep(0.1)
        return real(self, arm, names, angles, speed, end)

    mocker.patch.object(Engine, "send", held_up)
    s = Stack(latency=0.005, profile=profile)
    try:
        s.motion.wakeUp()
        rng = random.Random(3 + PROFILES.index(profile))
        moved = 0
        for _ in range(REACHES):
            arm = rng.choice(["LArm", "RArm"])
            side = 1.0 if arm == "LArm" else -1.0
            target = (rng.uniform(0.03, 0.18), side * rng.uniform(-0.06, 0.2), rng.uniform(-0.12, 0.15))
            held.clear()
            try:
                moved += bool(s.ik.reachToWithSpeed(arm, *target, "", 1.0)["moved"])
            except RuntimeError as e:  # a real obstacle only: the target's posture or every way to it
                assert "still moving" not in str(e) and ("collision:" in str(e) or "motion:" in str(e)), e
        s.flush()
        assert moved >= REACHES // 2, moved
        assert s.stub.getCollisionStops() == [] and s.stub.getViolations() == []
    finally:
        s.close()


def test_read_then_reach_times_both_programs(capsys):
    """``nao-ik loadtest --read-reach N``: a program that reads its arm and then reaches, with the arm moving and
    with the arm still; each reach is timed and counted as sent at once, after waiting for the arm, in legs, or
    refused."""
    from nao_ik.evidence.latency import print_read_then_reach

    print_read_then_reach(1, 0.002, seed=1)
    out = capsys.readouterr().out.splitlines()
    rows = [line.split(" | ") for line in out if line.startswith("| ") and " ms |" in line]
    assert [r[0] for r in rows] == ["| reads and reaches at once", "| waits until the arm stopped, then reads"]
    assert all(int(r[4]) + int(r[5]) + int(r[6]) + int(r[7]) == 1 for r in rows)
    assert all(int(r[8]) <= int(r[4]) + int(r[5]) for r in rows)  # another solution: sent as one command
