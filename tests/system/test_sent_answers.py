"""Once a command went, the call answers what was sent and why the rest was not: never an error that hides that
the robot moved, never an answer that claims more than was sent. Sequences (legs, a path's way to its first
point) cut short by another call, the call's budget, an arm held short of a leg, or ALMotion not answering."""

import threading
import time

import pytest

import nao_ik
from nao_ik.model.arm import arm_model
from sim_stub.motion import StubMotion
from tests.qi_fixtures import Stack
from tests.system.test_service_arms import POSTURE
from tests.unit.geometry.test_motion_body import CROSSING_START, CROSSING_TARGET, _put

#: Both arms from the rest posture to these go in legs (their direct motions may meet).
BOTH_IN_LEGS = ([0.1676, 0.1886, 0.1954], [0.0673, -0.2965, 0.166])


def _after_first_command(robot, action) -> threading.Thread:
    """Run ``action`` in a thread once the robot receives its next command."""
    before = len(robot.stub.getRecordedCommands())

    def run():
        end = time.monotonic() + 10
        while len(robot.stub.getRecordedCommands()) <= before and time.monotonic() < end:
            time.sleep(0.001)
        action()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def _crossing_path() -> list:
    """Points from the crossing's answer on: the first reached in legs from the crossing's start."""
    model = arm_model("LArm")
    hand = nao_ik.forward(nao_ik.solve(CROSSING_TARGET, model, initial=CROSSING_START).angles, model)
    return [[float(x) for x in hand + [0.0, 0.0, 0.002 * k]] for k in range(5)]


@pytest.mark.parametrize("call", ["reach", "point", "path"])
def test_a_sequence_stopped_by_another_call_after_its_first_leg_says_so(awake, call):
    names = list(arm_model("LArm").names)
    _put(awake, names, CROSSING_START)
    before = len(awake.moves())
    stopper = _after_first_command(awake, lambda: awake.ik.stopPath("LArm"))
    if call == "reach":
        r = awake.ik.reachToWithSpeed("LArm", *CROSSING_TARGET, "analytic", 0.1)
        assert not r["reached"] and r["reason"] == "stopped by stopPath" and r["commands"] == 1, r
    elif call == "point":
        r = awake.ik.pointAtWithSpeed("LArm", 0.343, 0.138, 0.172, 0, 0.1)
        assert not r["pointed"] and r["reason"] == "stopped by stopPath" and r["commands"] == 1, r
    else:
        r = awake.ik.trackPathWithSpeed("LArm", _crossing_path(), "analytic", 0.1)
        assert r["sent"] == 0 and r["stopped"] == "stopped by stopPath" and not r["completed"], r
    stopper.join()
    assert [m["angles"] for m in awake.moves()[before:]] == r["via"] and len(r["via"]) == 1


def test_reach_both_stopped_by_another_call_after_its_first_leg_says_so(awake):
    awake.ik.setSpeed(1.0)
    before = len(awake.moves())
    stopper = _after_first_command(awake, lambda: awake.ik.stopPath("LArm"))
    r = awake.ik.reachBothWithSpeed(*BOTH_IN_LEGS, "", 0.1)
    stopper.join()
    assert not r["reached"] and r["stopped"] == "stopped by stopPath" and r["commands"] == 1, r
    assert [m["angles"] for m in awake.moves()[before:]] == r["via"]


def test_reach_both_whose_second_leg_almotion_does_not_answer_says_what_went():
    """setAngles hangs after the first leg: the answer (not an error) has the leg sent and why the rest did not
    go, that the unanswered one may still run."""
    s = Stack(motion_timeout=0.3)
    try:
        s.motion.wakeUp()
        s.ik.setSpeed(1.0)
        hang = _after_first_command(s, lambda: s.stub.setHang("setAngles", 1.0))
        r = s.ik.reachBothWithSpeed(*BOTH_IN_LEGS, "", 0.3)
        hang.join()
        # The unanswered second leg may run: counted with the first.
        assert not r["reached"] and r["commands"] == 2 and "did not answer" in r["stopped"], r
        assert "it may still run" in r["stopped"]
    finally:
        s.stub.setHang("setAngles", 0)
        s.close()


def test_a_path_whose_stream_almotion_does_not_answer_names_the_unanswered_point():
    """setAngles hangs after the path's first command: the point ALMotion did not answer may still run, so the
    answer counts it (sent, angles) and says why nothing followed; every command the robot got is named."""
    s = Stack(motion_timeout=0.3)
    try:
        s.motion.wakeUp()
        hand = nao_ik.forward(list(arm_model("LArm").neutral), "LArm")
        points = [[float(x) for x in hand + [0.0, 0.0, 0.002 * k]] for k in range(6)]
        s.ik.reachToWithArm("LArm", *points[0], "analytic")  # at the first point: the path streams from there
        s.wait_still(list(arm_model("LArm").names))
        before = len(s.moves())
        hang = _after_first_command(s, lambda: s.stub.setHang("setAngles", 1.0))
        r = s.ik.trackPath("LArm", points, "analytic")
        hang.join()
        s.stub.setHang("setAngles", 0)
        time.sleep(0.2)  # the hung command's turn
        sent = [m["angles"] for m in s.moves()[before:]]
        listed = r["via"] + r["angles"]
        assert r["sent"] == len(r["angles"]) >= 2 and not r["completed"] and "may still run" in r["stopped"], r
        assert sent == listed[: len(sent)] and len(sent) >= len(listed) - 1, (sent, r)
    finally:
        s.stub.setHang("setAngles", 0)
        s.close()


@pytest.mark.parametrize("sag", [0.0, 0.04])
def test_a_path_whose_budget_ends_on_the_way_to_its_first_point_answers_what_went(sag):
    """A slow first point, the call's budget shorter than its motion (and a sagging robot, where the arm rests
    short of the first point): the first point went, the answer says so and why the rest did not."""
    s = Stack(motion=StubMotion(sag=sag), call_budget=0.6)
    try:
        s.motion.wakeUp()
        hand = nao_ik.forward([0.3, 0.5, -1.2, -0.8, 0.0], "LArm")
        points = [[float(x) for x in hand + [0.0, 0.0, 0.002 * k]] for k in range(2)]
        r = s.ik.trackPathWithSpeed("LArm", points, "analytic", 0.05)
        sent = [m["angles"] for m in s.moves()]
        assert sent == r["via"] + r["angles"] and r["sent"] >= 1 and not r["completed"], r
        assert r["stopped"], r
    finally:
        s.close()


def test_a_grasp_whose_first_step_went_says_it_moved(awake):
    names = list(arm_model("LArm").names)
    awake.ik.setSpeed(1.0)
    target = nao_ik.forward(POSTURE["LArm"], "LArm")
    with awake.after_next_move(names) as held:
        r = awake.ik.grasp("LArm", *target.tolist(), [1.0, 0.0, 0.0])
    assert r["moved"] and r["failedStep"] == "preGrasp" and not r["completed"], r
    # The answer names every arm command the robot received from the service, step by step (the other one:
    # the client holding the arm).
    listed = [q for s in r["steps"] for q in s["via"] + ([s["angles"]] if s["angles"] else [])]
    sent = [m["angles"] for m in awake.moves() if m["names"] == names]
    assert listed and sorted(sent) == sorted(listed + held), r
