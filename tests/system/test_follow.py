"""followTarget over qi against the simulated robot: a circle streamed at 50 Hz over a 5 ms link (steady, and with
jittered and bunched sends), a target streamed through the torso, a caller that stops sending or disconnects, and
the calls' refusals.

make test: the default profile and 6 s circles; make soak: the other two profiles (6 s), and 20 s circles under the
default one (``NAO_IK_SOAK=1``).
"""

from __future__ import annotations

import math
import os
import time

import numpy as np
import pytest

from nao_ik.evidence.follow_bench import RATE, circle
from nao_ik.evidence.follow_bench import stream as follow_stream
from nao_ik.geometry.collision import clearance, posture_body
from nao_ik.geometry.scalar.sweep import CYCLE, overshoot
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


@pytest.fixture
def linked():
    """The simulated robot over a 5 ms link, the service on it, the motors on."""
    s = Stack(latency=LINK)
    s.motion.wakeUp()
    yield s
    s.close()


def stream(s: Stack, seconds: float, jitter: bool = False) -> tuple[list[float], float, list]:
    """The circle streamed (:func:`nao_ik.evidence.follow_bench.stream`), the stub's LArm angles read."""
    return follow_stream(s.ik, lambda sensed: s.stub.getAngles(NAMES, sensed), seconds, jitter)


@pytest.mark.parametrize("jitter", [False, True], ids=["steady", "jittered and bunched"])
def test_a_streamed_circle_is_tracked_within_10_mm_median_and_20_mm_at_the_95th(linked, jitter):
    errors = np.array(stream(linked, SECONDS, jitter)[0]) * 1e3
    median, p95 = float(np.median(errors)), float(np.percentile(errors, 95))
    how = "jittered and bunched" if jitter else "steady"
    report.lines.append(f"followTarget, a circle at 50 Hz over a 5 ms link ({how}, {SECONDS:g} s): tracking error "
                        f"median {median:.1f} mm, 95th percentile {p95:.1f} mm")  # fmt: skip
    assert median <= 10.0 and p95 <= 20.0, (median, p95)
    assert linked.stub.getCollisionStops() == [] and linked.stub.getViolations() == []
    assert linked.ik.getArmState("LArm")["following"]


def test_a_target_streamed_through_the_torso_stops_the_arm_at_the_margin_and_slides_along_it(linked):
    s = linked
    # In front of the chest, straight through the torso to the other side, and back.
    start, through = np.array([0.15, 0.12, 0.05]), np.array([-0.20, -0.14, 0.0])
    line = [start + through * (1.0 - abs(1.0 - k / 100)) for k in range(200)]
    least, held_hands = math.inf, []
    right_model = arm_model("RArm")
    for target in line:
        s.ik.followTarget("LArm", *target.tolist(), 0)
        state = s.ik.getArmState("LArm")
        body = posture_body(None, (right_model, s.stub.getAngles(list(right_model.names), True)))
        sensed = s.stub.getAngles(NAMES, True)
        least = min(least, clearance(MODEL._replace(body=body), sensed, body).distance)
        if state["heldBack"].startswith("the body"):
            held_hands.append(forward(MODEL, sensed))
        time.sleep(1.0 / RATE)
    assert s.stub.getCollisionStops() == [] and s.stub.getViolations() == []
    # It came to the margin (the library's), and no nearer than the certified motions' margin.
    assert MARGIN - 0.0025 <= least <= MARGIN + 0.01, least
    # Held back by the body, the hand kept moving (along the margin), not frozen where it met it.
    assert held_hands and float(np.ptp(np.array(held_hands), axis=0).max()) > 0.005, len(held_hands)
    assert s.ik.getArmState("LArm")["following"]


def _ended_after_last_update(s: Stack, last: float, commanded: list, timeout: float = FOLLOW_TIMEOUT) -> None:
    """The following ended for want of updates, its last command no later than the timeout plus a cycle (and the
    loop's own cycle of work) after the last update, none after; the arm at rest within the stated horizon plus its
    braking of where it was commanded at the last update."""
    end = time.monotonic() + timeout + 3.0
    while s.ik.getArmState("LArm")["following"]:
        assert time.monotonic() < end, "the following did not end"
        time.sleep(CYCLE)
    state = s.ik.getArmState("LArm")
    assert state["followEnded"].startswith("no target came"), state
    s.flush()
    count = len(s.stub.getRecordedCommands())
    s.wait_still(NAMES)
    commands = [c for c in s.stub.getRecordedCommands() if c["method"] == "setAngles" and c["names"] == NAMES]
    assert len(s.stub.getRecordedCommands()) == count  # nothing once it ended
    after = commands[-1]["time"] - last
    assert after <= timeout + CYCLE + 0.05, after
    final = s.stub.getAngles(NAMES, True)
    bound = [r + o for r, o in zip(horizon(MODEL, 0.2), overshoot(MODEL, 0.2))]
    moved = [abs(a - b) for a, b in zip(final, commanded)]
    report.lines.append(f"followTarget, the caller stopped: last command {after * 1e3:.0f} ms after its last update "
                        f"(timeout {timeout * 1e3:.0f} ms); the arm then moved on by at most {max(moved):.3f} rad a "
                        f"joint (bound {max(bound):.3f})")  # fmt: skip
    assert all(m <= b + 1e-6 for m, b in zip(moved, bound)), (moved, bound)


def test_a_caller_that_stops_sending_leaves_no_command_after_the_timeout(linked):
    _, last, commanded = stream(linked, 1.5)
    _ended_after_last_update(linked, last, commanded)


def test_a_caller_that_disconnects_leaves_no_command_after_the_timeout(linked):
    caller = qi.Session()
    caller.connect(linked.robot.url)
    ik = caller.service("NaoArmIK")
    t0 = time.monotonic()
    while time.monotonic() - t0 < 1.5:
        ik.followTarget("LArm", *circle(time.monotonic() - t0).tolist(), 0)
        last, commanded = time.monotonic(), linked.stub.getAngles(NAMES, False)
        time.sleep(1.0 / RATE)
    caller.close()
    _ended_after_last_update(linked, last, commanded)


def test_stop_following_and_a_reach_end_it_and_bad_input_is_refused_in_one_line_with_nothing_sent(linked):
    s = linked
    s.ik.followTarget("LArm", 0.15, 0.12, 0.05, 0)
    assert s.ik.getArmState("LArm")["following"]
    assert s.ik.stopFollowing("LArm") is True
    assert s.ik.getArmState("LArm")["followEnded"] == "stopped by stopFollowing"
    assert s.ik.stopFollowing("LArm") is False
    s.ik.followTarget("LArm", 0.15, 0.12, 0.05, 0)
    assert s.ik.reachToWithArm("LArm", 0.12, 0.15, 0.08, "")["moved"]
    state = s.ik.getArmState("LArm")
    assert not state["following"] and state["followEnded"] == "preempted by reachToWithArm", state
    s.flush()
    before = len(s.stub.getRecordedCommands())
    refusals = [(("LArm", math.nan, 0.1, 0.0, 0), "target x"), (("LArm", 150.0, 100.0, 50.0, 0), "metres"),
                (("Head", 0.15, 0.1, 0.05, 0), "unknown arm"), (("LArm", 0.15, 0.1, 0.05, 7), "frame")]  # fmt: skip
    for args, what in refusals:
        with pytest.raises(RuntimeError) as e:
            s.ik.followTarget(*args)
        assert what in str(e.value) and "\n" not in str(e.value).strip(), str(e.value)
    with pytest.raises(RuntimeError, match="seconds"):
        s.ik.setFollowTimeout(0.0)
    with pytest.raises(RuntimeError, match="follow timeout"):
        s.ik.setFollowTimeout(60.0)
    s.flush()
    assert len(s.stub.getRecordedCommands()) == before
    # A shorter timeout ends a following sooner.
    s.ik.setFollowTimeout(0.25)
    assert s.ik.getFollowTimeout() == 0.25
    _, last, commanded = stream(s, 1.2)
    _ended_after_last_update(s, last, commanded, 0.25)
