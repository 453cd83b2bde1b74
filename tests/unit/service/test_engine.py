"""nao_ik.service.engine.Engine, single methods with ALMotion and the readings mocked."""

import threading
import time

import pytest

from nao_ik.model.arm import arm_model
from nao_ik.service.engine import CYCLE, STOPPED_CYCLES, Engine, NoAnswer

HERE = [0.0, 0.3, -1.0, -0.5, 0.0]
THERE = [0.5, 0.3, -1.0, -0.5, 0.0]  # its last command, far from where it stands


def _engine(mocker, readings, answered=True, sent_ago=1.0):
    ik = Engine.__new__(Engine)
    ik.sensed = mocker.Mock()
    ik.sensed.read.side_effect = [(list(r), 0.0) for r in readings]
    ik._sent = {"LArm": mocker.Mock()}
    ik._sent["LArm"].answered.return_value = answered
    ik.motion = mocker.Mock(timeout=1.0)
    ik.motion.call.return_value = "none"  # isCollision: the robot's protection does not hold it
    ik._lost = set()
    ik.aim = {"LArm": list(THERE)}
    ik._sent_at = {"LArm": time.monotonic() - sent_ago}
    return ik


def test_an_arm_is_at_rest_short_of_its_command_only_once_still_after_every_answer(mocker):
    """At rest: every command answered, the last sent long ago, and still over STOPPED_CYCLES cycles of readings
    taken after that; not where a command is unanswered or was lost (it may still set the arm off), was sent
    just now, where the readings show the arm setting off, or where the robot's protection holds it."""
    model, end = arm_model("LArm"), time.monotonic() + 5.0
    still = [HERE] * (STOPPED_CYCLES + 1)
    assert _engine(mocker, still).at_rest(model, HERE, end)
    assert not _engine(mocker, still, answered=False).at_rest(model, HERE, end)
    assert not _engine(mocker, still, sent_ago=CYCLE).at_rest(model, HERE, end)
    lost = _engine(mocker, still)
    lost._lost.add("LArm")
    assert not lost.at_rest(model, HERE, end)
    setting_off = [HERE] * STOPPED_CYCLES + [[0.002, 0.3, -1.0, -0.5, 0.0]]  # the last reading: it moves
    assert not _engine(mocker, setting_off).at_rest(model, HERE, end)
    held = _engine(mocker, still)  # the robot's protection holds it short: it may let go
    held.motion.call.return_value = "collision"
    assert not held.at_rest(model, HERE, end)
    # No command it may be on its way to: at rest at once, nothing read.
    none = _engine(mocker, [])
    none.aim = {}
    assert none.at_rest(model, HERE, end)


def test_a_command_without_an_answer_marks_its_arms_as_lost(mocker):
    """reachBoth's and a path's commands wait for ALMotion's answer: where none comes (timed out), the command
    may still run, so its arms are never taken as at rest again."""
    ik = Engine.__new__(Engine)
    ik.motion = mocker.Mock()
    ik.motion.result.side_effect = RuntimeError("ALMotion.setAngles did not answer within 2.00 s")
    ik.motion.failure.return_value = ""  # no answer, not an error: it may run
    ik._lost, ik.aim, ik._sent_at, ik._aim_speed = set(), {}, {}, {}
    ik._commit, ik._aims = threading.RLock(), 0
    with pytest.raises(NoAnswer):
        ik.call_aimed([("LArm", THERE), ("RArm", THERE)], [], THERE + THERE, 0.2, time.monotonic() + 5.0)
    assert ik._lost == {"LArm", "RArm"} and ik.aim["LArm"] == THERE
