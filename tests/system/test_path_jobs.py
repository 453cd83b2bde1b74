"""Over real libqi: a trackPath is a job on its arm; other callers are answered while it runs, and it can be stopped."""

import time

import numpy as np
import pytest

from nao_ik.service import CYCLE
from tests import report
from tests.qi_fixtures import Stack, qi


def line(a, b, n):
    return [list(map(float, p)) for p in np.linspace(a, b, n)]


LONG = line([0.15, 0.12, 0.08], [0.14, 0.14, 0.10], 2000)  # 40 s at 50 Hz
LEFT = LONG[:300]  # 6 s, stopped long before
RIGHT = line([0.15, -0.12, 0.08], [0.14, -0.14, 0.10], 300)


def sent_to(stack, arm):
    return [m for m in stack.moves() if m["names"][0].startswith(arm[0])]


def start_path(stack, arm, points, method="nn-paper"):
    """A path started and streaming (its computation done, the arm at its first point), as a qi future.

    ``nn-paper`` is the quickest to compute; ``analytic`` starts exactly at the path's first point (the
    network's first answer can be centimetres off, toward the other arm)."""
    before = len(sent_to(stack, arm))
    fut = stack.ik.trackPath(arm, points, method, _async=True)
    end = time.monotonic() + 20

    def streaming():  # three commands a step of the path apart, not legs of the way to its first point
        sent = sent_to(stack, arm)[before:]
        return len(sent) >= 3 and all(
            max(abs(x - y) for x, y in zip(a["angles"], b["angles"])) <= 0.02 for a, b in zip(sent[-3:], sent[-2:])
        )

    while not streaming():
        assert time.monotonic() < end and not fut.isFinished(), fut.error() if fut.hasError() else "no command"
        time.sleep(0.01)
    return fut


def other_client(stack):
    s = qi.Session()
    s.connect(stack.robot.url)
    return s, s.service("NaoArmIK")


def median_compute_seconds(ik):
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        assert ik.computeAngles("LArm", 0.15, 0.12, 0.08, "dls")["reached"]
        times.append(time.perf_counter() - t0)
    return sorted(times)[2]


def test_other_callers_are_answered_while_a_long_path_runs_and_stop_path_ends_it(awake):
    session, ik = other_client(awake)
    idle = median_compute_seconds(ik)  # the same calls with no path, on this machine now
    fut = start_path(awake, "LArm", LONG)
    try:
        busy = median_compute_seconds(ik)
        assert not fut.isFinished()
        report.lines.append(f"computeAngles during a 2000-point path: {busy * 1e3:.1f} ms (median of 5; "
                            f"{idle * 1e3:.1f} ms with no path)")  # fmt: skip
        assert busy < max(0.05, 3 * idle), (busy, idle)  # today's service made it wait for the path: 40 s
        ik.setSpeed(0.3)
        t0 = time.monotonic()
        assert ik.stopPath("LArm") is True
        stopped_at = time.monotonic()
        sent = len(awake.moves())
        time.sleep(3 * CYCLE)
        assert len(awake.moves()) == sent  # nothing after stopPath returned
        last = awake.moves()[-1]["time"]
        assert last - t0 <= CYCLE + 0.01 or last <= stopped_at  # within one cycle of the request
        r = fut.value(5000)
        assert r["completed"] is False and r["stopped"] == "stopped by stopPath"
        assert r["sent"] == sent - len(r["via"]) < 2000 and len(r["angles"]) == r["sent"]
        assert ik.stopPath("LArm") is False  # nothing runs any more
    finally:
        session.close()
    assert awake.stub.getViolations() == []


def test_a_reach_preempts_the_path_on_its_arm_only(awake):
    left = start_path(awake, "LArm", LEFT)
    right = start_path(awake, "RArm", RIGHT, "analytic")
    session, ik = other_client(awake)
    try:
        t0 = time.monotonic()
        r = ik.reachToWithArm("LArm", 0.15, 0.10, 0.05, "dls")
        assert time.monotonic() - t0 < 1.0
        left_answer = left.value(5000)
        assert left_answer["stopped"] == "preempted by reachToWithArm" and not left_answer["completed"]
        time.sleep(5 * CYCLE)
        lefts = [m for m in awake.moves() if m["names"][0] == "LShoulderPitch"]
        assert lefts[-1]["angles"] == r["angles"]  # the reach's command is the arm's last: never interleaved
        assert lefts.count(lefts[-1]) == 1
        assert not right.isFinished()  # the other arm's path goes on
        rights = len([m for m in awake.moves() if m["names"][0] == "RShoulderPitch"])
        time.sleep(5 * CYCLE)
        assert len([m for m in awake.moves() if m["names"][0] == "RShoulderPitch"]) > rights
    finally:
        ik.stopPath("RArm")
        session.close()
    assert right.value(5000)["stopped"] == "stopped by stopPath"
    assert awake.stub.getViolations() == []


def test_a_new_path_preempts_the_old_one_and_a_caller_can_cancel_its_own(awake):
    first = start_path(awake, "LArm", LEFT)
    second = awake.ik.trackPath("LArm", LEFT[:50], "nn-paper", _async=True)
    assert first.value(5000)["stopped"] == "preempted by trackPath"
    assert second.value(5000)["completed"]
    third = start_path(awake, "LArm", LEFT)
    third.cancel()  # the caller gives up: the path stops sending
    time.sleep(0.1)
    sent = len(awake.moves())
    time.sleep(3 * CYCLE)
    assert len(awake.moves()) == sent and third.isCanceled()


# A slow path to compute: jacobian-transpose takes about 0.2 s a point here (100 s for 500 points).
SLOW = line([0.15, 0.12, 0.08], [0.10, 0.16, 0.14], 500)


def computing(stack, arm, method="jacobian-transpose", points=SLOW):
    """A path started and still being computed (nothing sent yet), as a qi future."""
    before = len(sent_to(stack, arm))
    fut = stack.ik.trackPath(arm, points, method, _async=True)
    time.sleep(0.5)
    assert not fut.isFinished() and len(sent_to(stack, arm)) == before
    return fut


def test_a_path_over_its_compute_budget_is_refused_at_the_budget_and_sends_nothing():
    """One budget from the call: 1 s + 4 ms per point for 500 points is 3 s to the first command."""
    s = Stack(call_budget=1.0, path_compute_budget=0.004)
    try:
        s.motion.wakeUp()
        t0 = time.monotonic()
        fut = s.ik.trackPath("LArm", SLOW, "jacobian-transpose", _async=True)
        fut.wait(20000)
        took = time.monotonic() - t0
        assert fut.hasError() and "computing the path took longer than its budget" in fut.error(), fut.error()
        # Refused at the first point computed past the budget (a point takes 0.2 s here, more on a busy machine).
        assert "nothing sent" in fut.error() and 3.0 <= took < 6.0, took
        assert s.moves() == []
        report.lines.append(f"500-point jacobian-transpose path, budget 3 s to its first command: refused after "
                            f"{took:.2f} s, 0 commands")  # fmt: skip
    finally:
        s.close()


def test_stop_path_ends_a_path_while_it_is_computed(awake):
    fut = computing(awake, "LArm")
    t0 = time.monotonic()
    assert awake.ik.stopPath("LArm") is True  # returns once the job let go of the arm
    took = time.monotonic() - t0
    r = fut.value(2000)
    assert took < 1.0 and r["stopped"] == "stopped by stopPath" and r["sent"] == 0 and not r["completed"]
    assert awake.ik.stopPath("LArm") is False and awake.moves() == []
    report.lines.append(f"stopPath during a 500-point path's computation: answered in {took * 1e3:.0f} ms")


def test_a_cancelled_path_stops_computing(awake):
    fut = computing(awake, "LArm")
    fut.cancel()
    end = time.monotonic() + 1.0
    while awake.service._engine.arms["LArm"]._current is not None:  # the job holds its arm while it computes
        assert time.monotonic() < end, "the cancelled path is still computing"
        time.sleep(0.01)
    fut.wait(1000)
    assert fut.isCanceled() and awake.moves() == []


def right_compute_seconds(ik):
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        assert ik.computeAngles("RArm", 0.15, -0.12, 0.08, "analytic")["reached"]
        times.append(time.perf_counter() - t0)
    return sorted(times)[2]


def test_many_long_computations_on_one_arm_leave_the_other_arm_served(awake):
    """Each new path on an arm preempts the one computing there, so they hold no threads; the one that
    computes hands Python's lock over often enough that the other arm's calls stay quick."""
    idle = right_compute_seconds(awake.ik)
    futures = [awake.ik.trackPath("LArm", SLOW, "jacobian-transpose", _async=True) for _ in range(8)]
    time.sleep(0.5)
    busy = right_compute_seconds(awake.ik)
    try:
        assert busy < max(0.15, 10 * idle), (busy, idle)
        # The calls reach the service in any order: the one to arrive last computes, the seven others give way.
        end = time.monotonic() + 10.0
        while sum(f.isFinished() for f in futures) < 7:
            assert time.monotonic() < end, [f.isFinished() for f in futures]
            time.sleep(0.05)
        done = [f for f in futures if f.isFinished()]
        assert [f.value()["stopped"] for f in done] == ["preempted by trackPath"] * 7
        (last,) = [f for f in futures if not f.isFinished()]  # the newest still computes
    finally:
        awake.ik.stopPath("LArm")
    assert last.value(5000)["stopped"] == "stopped by stopPath" and awake.moves() == []
    report.lines.append(f"computeAngles on RArm while 8 long paths were sent to LArm: {busy * 1e3:.0f} ms "
                        f"(median of 5; {idle * 1e3:.1f} ms with none)")  # fmt: skip


def test_a_path_whose_arm_stays_short_of_its_first_point_stops_there_at_once_and_says_why(awake):
    """The arm held where it is right after the path's first point was sent (another client's command): the path
    stops there within a second, its answer naming where the arm stays, instead of waiting out its budget."""
    names = [f"L{j}" for j in ("ShoulderPitch", "ShoulderRoll", "ElbowYaw", "ElbowRoll", "WristYaw")]
    awake.ik.setSpeed(0.3)
    before = len(awake.moves())
    with awake.after_next_move(names) as held:
        t0 = time.monotonic()
        r = awake.ik.trackPath("LArm", LEFT[:50], "analytic")
    took = time.monotonic() - t0
    assert r["sent"] == 1 and not r["completed"], r["stopped"]
    assert "LArm stopped" in r["stopped"] and "short of the posture it was sent to" in r["stopped"], r["stopped"]
    assert took < 3.0, took  # the path's budget is over 10 s
    assert [m["angles"] for m in awake.moves()[before:]][1:] == held  # the first point, then the hold: no more


@pytest.mark.parametrize("after, head_speed", [(0.3, 0.3), (2.2, 1.0)])
def test_a_path_stops_where_the_head_another_client_moved_would_be_in_its_way(awake, after, head_speed):
    """A path streamed up in front of the face; another ALMotion client pitches the head down, into the path's
    later points: early on, or late, with the hand near the face. The path, checked against the head where it
    was, is checked again against the body now (at every point; once the head moved, wherever it may go)
    and stops before the head; the robot's protection stops nothing."""
    left = ["LShoulderPitch", "LShoulderRoll", "LElbowYaw", "LElbowRoll", "LWristYaw"]
    points = [[0.14, 0.02, float(z)] for z in np.linspace(0.08, 0.24, 120)]
    awake.ik.setSpeed(0.5)
    awake.ik.reachToWithArm("LArm", *points[0], "")
    awake.wait_still(left)
    job = awake.ik.trackPathWithSpeed("LArm", points, "analytic", 0.5, _async=True)
    time.sleep(after)
    awake.motion.setAngles(["HeadYaw", "HeadPitch"], [0.0, 0.5], head_speed)  # another client looks down
    answer = job.value(30000)
    assert 0 < answer["sent"] < len(points) and not answer["completed"], answer
    assert answer["stopped"].startswith("collision: the head or the hips moved while the path streamed"), answer
    assert awake.stub.getCollisionStops() == [] and awake.stub.getViolations() == []
