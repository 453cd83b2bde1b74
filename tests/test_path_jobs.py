"""Over real libqi: a trackPath is a job on its arm; other callers are answered while it runs, and it can be stopped."""

import time

import numpy as np

from nao_ik.service import CYCLE
from tests import report
from tests.qi_fixtures import qi


def line(a, b, n):
    return [list(map(float, p)) for p in np.linspace(a, b, n)]


LONG = line([0.15, 0.12, 0.08], [0.14, 0.14, 0.10], 2000)  # 40 s at 50 Hz
LEFT = LONG[:300]  # 6 s, stopped long before
RIGHT = line([0.15, -0.12, 0.08], [0.14, -0.14, 0.10], 300)


def sent_to(stack, arm):
    return [m for m in stack.moves() if m["names"][0].startswith(arm[0])]


def start_path(stack, arm, points):
    """A path started and streaming (its computation done, the arm at its first point), as a qi future."""
    before = len(sent_to(stack, arm))
    fut = stack.ik.trackPath(arm, points, "nn-paper", _async=True)  # the quickest path to compute
    end = time.monotonic() + 20

    def streaming():  # two commands a cycle apart: the path's, not the way to its first point
        sent = sent_to(stack, arm)[before:]
        return len(sent) >= 2 and sent[-1]["time"] - sent[-2]["time"] <= 3 * CYCLE

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
    right = start_path(awake, "RArm", RIGHT)
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
