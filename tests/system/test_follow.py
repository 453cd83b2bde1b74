"""followTarget over qi against the simulated robot: a circle streamed at 50 Hz over a 5 ms link (steady, and with
jittered and bunched sends), a target streamed through the torso, a caller that stops sending or disconnects, and
the calls' refusals.

make test: the default profile and 6 s circles; ``NAO_IK_SOAK=1`` (make soak, every profile): 20 s circles.
"""

from __future__ import annotations

import math
import os
import random
import time

import numpy as np
import pytest

from nao_ik.evidence.follow_bench import RATE, circle
from nao_ik.geometry.collision import clearance, posture_body
from nao_ik.kinematics.chain import forward
from nao_ik.model.arm import arm_model
from nao_ik.model.body import MARGIN
from nao_ik.motion.stream import horizon
from nao_ik.service.follow import FOLLOW_TIMEOUT
from tests import report
from tests.qi_fixtures import Stack, qi

SOAK = bool(os.environ.get("NAO_IK_SOAK"))
#: Seconds the circle is streamed (the issue's 20 s under the soak).
SECONDS = 20.0 if SOAK else 6.0
LINK = 0.005
MODEL = arm_model("LArm")
NAMES = list(MODEL.names)


def stream(s: Stack, seconds: float, jitter: bool = False, seed: int = 0) -> list[float]:
    """Stream the circle at RATE for ``seconds`` (with ``jitter``: each send +-10 ms off its time, and three sends
    bunched at once every half second); the hand's tracking error (m) against the target sent last, after the
    first second, at every send."""
    rng = random.Random(seed)
    s.ik.reachToWithArm("LArm", *circle(0.0).tolist(), "")  # the hand at the circle's start, as a user would
    s.wait_still(NAMES)
    errors, last = [], None
    t0 = time.monotonic()
    k = 0
    while True:
        due = t0 + k / RATE + (rng.uniform(-0.01, 0.01) if jitter else 0.0)
        if jitter and k % int(RATE / 2) == 1:  # held back: this one and the next two go at once
            due = t0 + (k + 2) / RATE
        time.sleep(max(0.0, due - time.monotonic()))
        t = time.monotonic() - t0
        if t > seconds:
            return errors
        target = circle(t)
        s.ik.followTarget("LArm", *target.tolist(), 0)
        if last is not None and t > 1.0:
            errors.append(float(np.linalg.norm(forward(MODEL, s.stub.getAngles(NAMES, True)) - last)))
        last = target
        k += 1


@pytest.mark.parametrize("jitter", [False, True], ids=["steady", "jittered and bunched"])
def test_a_streamed_circle_is_tracked_within_10_mm_median_and_20_mm_at_the_95th(jitter):
    s = Stack(latency=LINK)
    try:
        s.motion.wakeUp()
        errors = np.array(stream(s, SECONDS, jitter)) * 1e3
        median, p95 = float(np.median(errors)), float(np.percentile(errors, 95))
        how = "jittered and bunched" if jitter else "steady"
        report.lines.append(f"followTarget, a circle at 50 Hz over a 5 ms link ({how}, {SECONDS:g} s): tracking error "
                            f"median {median:.1f} mm, 95th percentile {p95:.1f} mm")  # fmt: skip
        assert median <= 10.0 and p95 <= 20.0, (median, p95)
        assert s.stub.getCollisionStops() == [] and s.stub.getViolations() == []
        assert s.ik.getArmState("LArm")["following"]
    finally:
        s.close()


def test_a_target_streamed_through_the_torso_stops_the_arm_at_the_margin_and_slides_along_it():
    s = Stack(latency=LINK)
    try:
        s.motion.wakeUp()
        # In front of the chest, then straight through the torso to the other side and back.
        line = [np.array([0.15, 0.12, 0.05]) + (np.array([-0.20, -0.14, 0.0]) * min(1.0, k / 100)) for k in range(200)]
        held, least = set(), math.inf
        for target in line:
            s.ik.followTarget("LArm", *target.tolist(), 0)
            state = s.ik.getArmState("LArm")
            held.add(state["heldBack"])
            right = s.stub.getAngles(list(arm_model("RArm").names), True)
            body = posture_body(None, (arm_model("RArm"), right))
            least = min(least, clearance(MODEL._replace(body=body), s.stub.getAngles(NAMES, True), body).distance)
            time.sleep(1.0 / RATE)
        assert s.stub.getCollisionStops() == [] and s.stub.getViolations() == []
        assert any(h.startswith("the body") for h in held), held
        # The margin the motions keep (the stub's own body, not the library's, says so through its protection).
        assert least >= MARGIN - 0.005, least
        assert s.ik.getArmState("LArm")["following"]
    finally:
        s.close()


def _ended_after_last_update(s: Stack, last: float) -> None:
    """No command after the timeout plus one cycle from the last update, and the arm at rest within the stated
    horizon of where it was commanded when the last command went."""
    time.sleep(FOLLOW_TIMEOUT + 1.0)
    commands = [c for c in s.stub.getRecordedCommands() if c["method"] == "setAngles" and c["names"] == NAMES]
    assert commands
    after = commands[-1]["time"] - last
    assert after <= FOLLOW_TIMEOUT + 0.02 + 0.01, after  # one cycle, and the loop's scheduling
    state = s.ik.getArmState("LArm")
    assert not state["following"] and state["followEnded"].startswith("no target came"), state
    reach = horizon(MODEL, 0.2)
    final = s.stub.getAngles(NAMES, False)
    assert all(abs(a - b) <= r + 1e-6 for a, b, r in zip(final, commands[-1]["angles"], reach))


def test_a_caller_that_stops_sending_leaves_no_command_after_the_timeout():
    s = Stack(latency=LINK)
    try:
        s.motion.wakeUp()
        stream(s, 1.5)
        _ended_after_last_update(s, time.monotonic())
    finally:
        s.close()


def test_a_caller_that_disconnects_leaves_no_command_after_the_timeout():
    s = Stack(latency=LINK)
    try:
        s.motion.wakeUp()
        caller = qi.Session()
        caller.connect(s.robot.url)
        ik = caller.service("NaoArmIK")
        t0 = time.monotonic()
        while time.monotonic() - t0 < 1.5:
            ik.followTarget("LArm", *circle(time.monotonic() - t0).tolist(), 0)
            time.sleep(1.0 / RATE)
        last = time.monotonic()
        caller.close()
        _ended_after_last_update(s, last)
    finally:
        s.close()


def test_stop_following_and_a_reach_end_it_and_bad_input_is_refused_in_one_line_with_nothing_sent():
    s = Stack(latency=LINK)
    try:
        s.motion.wakeUp()
        s.ik.followTarget("LArm", 0.15, 0.12, 0.05, 0)
        time.sleep(0.2)
        assert s.ik.stopFollowing("LArm") is True
        assert s.ik.getArmState("LArm")["followEnded"] == "stopped by stopFollowing"
        assert s.ik.stopFollowing("LArm") is False
        s.ik.followTarget("LArm", 0.15, 0.12, 0.05, 0)
        time.sleep(0.1)
        assert s.ik.reachToWithArm("LArm", 0.12, 0.15, 0.08, "")["moved"]
        assert not s.ik.getArmState("LArm")["following"]
        s.flush()
        before = len(s.stub.getRecordedCommands())
        for args, what in [(("LArm", math.nan, 0.1, 0.0, 0), "target x"), (("LArm", 150.0, 100.0, 50.0, 0), "metres"),
                           (("Head", 0.15, 0.1, 0.05, 0), "arm"), (("LArm", 0.15, 0.1, 0.05, 7), "frame")]:  # fmt: skip
            with pytest.raises(RuntimeError) as e:
                s.ik.followTarget(*args)
            assert what in str(e.value) and "\n" not in str(e.value).strip(), str(e.value)
        with pytest.raises(RuntimeError, match="seconds"):
            s.ik.setFollowTimeout(0.0)
        with pytest.raises(RuntimeError, match="follow timeout"):
            s.ik.setFollowTimeout(60.0)
        s.flush()
        assert len(s.stub.getRecordedCommands()) == before
        s.ik.setFollowTimeout(0.25)
        assert s.ik.getFollowTimeout() == 0.25
    finally:
        s.close()
