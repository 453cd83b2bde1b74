"""Over real libqi: a hung ALMotion costs a caller its time budget, not forever, and other callers are answered."""

import threading
import time

import pytest

from sim_stub.motion import StubMotion
from tests.qi_fixtures import Stack, qi


@pytest.fixture
def budgeted():
    s = Stack(motion_timeout=0.5)
    s.motion.wakeUp()
    yield s
    s.close()


@pytest.mark.parametrize("method", ["getAngles", "getStiffnesses", "setAngles"])
def test_a_hung_almotion_call_is_a_clear_timeout_within_the_budget(budgeted, method):
    budgeted.stub.setHang(method, 5.0)
    answers = []

    def other_caller():  # another client, while the reach waits on ALMotion
        s = qi.Session()
        s.connect(budgeted.robot.url)
        ik = s.service("NaoArmIK")
        time.sleep(0.1)
        t0 = time.perf_counter()
        answers.append((ik.getMethods(), ik.getSpeed(), time.perf_counter() - t0))
        s.close()

    t = threading.Thread(target=other_caller)
    t.start()
    expected = method
    if method != "setAngles":  # the service reads both at once and the stub serves one call at a time: the
        expected = r"(getAngles|getStiffnesses)"  # call queued behind the hung one misses the budget too
    else:  # sent without waiting for its answer: the arm's next call hears of it
        budgeted.ik.reachTo(0.15, 0.12, 0.08, "dls")
        time.sleep(0.05)  # older than the cached reading may be: the next call reads the (stuck) stub
        expected = r"(setAngles|getAngles|getStiffnesses)"  # the stub serves one call at a time
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=rf"ALMotion.{expected} did not answer within 0.50 s"):
        budgeted.ik.reachTo(0.15, 0.12, 0.08, "dls")
    took = time.monotonic() - t0
    t.join()
    assert 0.5 <= took < 1.5, took
    assert answers and "dls" in answers[0][0] and answers[0][2] < 0.3, answers
    budgeted.stub.setHang(method, 0)
    if method != "setAngles":
        assert budgeted.moves() == []  # a hung read sends nothing
    assert budgeted.ik.reachTo(0.15, 0.12, 0.08, "dls")["reached"]  # and it recovers


def test_the_call_budget_caps_every_wait():
    s = Stack(motion_timeout=5.0, call_budget=0.4)
    try:
        s.motion.wakeUp()
        s.stub.setHang("getLimits", 5.0)
        t0 = time.monotonic()
        with pytest.raises(RuntimeError, match=r"ALMotion.getLimits did not answer within 0.[34]\d s"):
            s.ik.computeAngles("LArm", 0.15, 0.12, 0.08, "dls")
        assert time.monotonic() - t0 < 1.4
    finally:
        s.close()


class OddMotion(StubMotion):
    """An ALMotion whose replies have the wrong shape."""

    def __init__(self, reply: str):
        super().__init__()
        self._odd = (reply,)  # in a tuple, as StubMotion keeps its data

    def getLimits(self, name):
        if self._odd[0] == "flat limits":
            return [-1.0, 1.0, 5.0, 1.0] * 5
        return super().getLimits(name)

    def getStiffnesses(self, names):
        if self._odd[0] == "short stiffnesses":
            return [1.0, 1.0, 1.0]
        if self._odd[0] == "string stiffnesses":
            return ["on"] * len(names)
        return super().getStiffnesses(names)


@pytest.mark.parametrize(
    "reply, message",
    [("flat limits", r"ALMotion.getLimits returned 20 entries, expected one \[min, max, \.\.\.\] per joint \(5\)"),
     ("short stiffnesses", r"ALMotion.getStiffnesses returned 3 values, expected 18 \(one per joint\)"),
     ("string stiffnesses", "ALMotion.getStiffnesses returned 'on' at position 0, expected a finite number")],
)  # fmt: skip
def test_odd_almotion_replies_are_clear_errors_and_nothing_is_sent(reply, message):
    s = Stack(OddMotion(reply))
    try:
        s.motion.wakeUp()
        with pytest.raises(RuntimeError, match=message):
            s.ik.reachTo(0.15, 0.12, 0.08, "dls")
        assert s.moves() == []
    finally:
        s.close()
