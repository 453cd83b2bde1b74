"""nao_ik.service.answers: ``reached`` only where the answer reaches and its commands go, ``reason`` never ""
when not reached."""

import pytest

import nao_ik
from nao_ik.model.arm import arm_model
from nao_ik.recipes.both_arms import ArmAnswer, BothArms
from nao_ik.service import answers
from nao_ik.service.motions import Command

Q = [0.3, 0.4, -0.6, -0.9, 0.0]
NAMES = list(arm_model("LArm").names)
SENT = Command(Q, [], 0.1, 0.2, [Q])
NONE = Command(Q, [], 0.1, 0.2, [])  # no safe motion: nothing (to be) sent


def solution(reached=True, error=0.0, reason=""):
    return nao_ik.Solution(tuple(Q), tuple(NAMES), reached, error, 3, "dls", "LArm", reason=reason)


def reach(sol, command, stopped=""):
    return answers.reach("LArm", "dls", (0.1, 0.1, 0.1), NAMES, sol, 1.0, command, bool(command.commands), stopped)


def test_a_reach_is_reached_where_its_answer_reaches_and_its_commands_go():
    r = reach(solution(), SENT)
    assert r["reached"] and r["reason"] == "" and r["moved"]


def test_a_computation_without_a_safe_motion_is_not_reached():
    r = reach(solution(), NONE)
    assert not r["reached"] and r["reason"] == answers.NO_MOTION and r["commands"] == 0


def test_a_reach_stopped_on_its_way_is_not_reached_and_says_why():
    r = reach(solution(), SENT, "stopped by stopPath")
    assert not r["reached"] and r["reason"] == "stopped by stopPath"


@pytest.mark.parametrize(
    "sol, reason",
    [
        (solution(False, 0.0031), "position: 3.1 mm off"),  # a papers' approximation keeps its own answer
        (solution(False, 0.2, "out of reach"), "out of reach"),
    ],
)
def test_a_reach_not_reached_always_says_why(sol, reason):
    assert reach(sol, SENT)["reason"] == reason


def both(left, right, collision="", moved=True, stopped=""):
    legs = [(Q, Q), (Q, Q)]
    return answers.both(NAMES * 2, Q * 2, BothArms(left, right, collision), [SENT, SENT], collision, moved,
                        len(legs) if moved else 0, legs, stopped)  # fmt: skip


GOOD = ArmAnswer(tuple(Q), True, 0.0, 0.0, "analytic")


def test_reach_both_is_reached_only_where_both_arms_reach_and_the_move_went():
    r = both(GOOD, GOOD)
    assert r["reached"] and r["reason"] == "" and r["commands"] == 2 and r["via"] == [Q * 2]
    r = both(GOOD, GOOD, "collision: LArm other arm", moved=False)
    assert not r["reached"] and r["reason"] == "collision: LArm other arm" and r["commands"] == 0 and r["via"] == []
    assert not r["left"]["reached"] and r["right"]["reason"] == "collision: LArm other arm"
    r = both(GOOD, GOOD, stopped="the LArm stopped 0.20 rad short")
    assert not r["reached"] and r["reason"] == "the LArm stopped 0.20 rad short"
    short = ArmAnswer(tuple(Q), False, 0.0, 0.61, "analytic")  # a pose the arm cannot take
    r = both(GOOD, short)
    assert not r["reached"] and r["reason"] == "right: orientation: 35 degrees off", r
    assert r["left"]["reached"] and r["right"]["reason"] == "orientation: 35 degrees off"
