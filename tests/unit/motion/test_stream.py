"""The streamed step (nao_ik.motion.stream): the box it certifies holds (checked posture by posture with the numpy
clearance), an arm near the body never creeps into it, a reading dates itself, and a stream that gets nowhere sends
nothing."""

from __future__ import annotations

import numpy as np
import pytest

from nao_ik.api.position import solve
from nao_ik.geometry.collision import clearance
from nao_ik.model.arm import arm_model
from nao_ik.model.body import MARGIN
from nao_ik.motion.stream import NEED, Sent, horizon, recent, region, step

MODEL = arm_model("LArm")


def clear_postures(n: int, seed: int) -> list:
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        q = rng.uniform(MODEL.lower, MODEL.upper)
        if clearance(MODEL, q, MODEL.body).distance >= NEED:
            out.append(q.tolist())
    return out


def test_every_posture_of_a_certified_box_keeps_the_need():
    """Each command the step returns: 300 postures of its region (its corners among them) keep NEED from the body."""
    rng = np.random.default_rng(1)
    starts, goals = clear_postures(40, 2), clear_postures(40, 3)
    sent_any = 0
    for q0, goal in zip(starts, goals):
        s = step(MODEL, MODEL.body, q0, 0.0, goal, 0.6, [], MARGIN)
        if s.command is None:
            continue
        sent_any += 1
        lo, hi = np.array(s.box[0]), np.array(s.box[1])
        corners = np.array([[hi[j] if k >> j & 1 else lo[j] for j in range(5)] for k in range(32)])
        for q in np.concatenate([corners, rng.uniform(lo, hi, (268, 5))]):
            assert clearance(MODEL, q, MODEL.body).distance >= NEED - 1e-6, (q0, goal, q)
        assert all(abs(a - b) <= r + 1e-9 for a, b, r in zip(s.command, q0, horizon(MODEL, 0.6)))
    assert sent_any >= 30


def test_an_arm_streamed_toward_a_goal_inside_the_torso_never_comes_nearer_than_the_need():
    """The arm taken to each command it is sent (the reading its command): the clearance never drops below NEED
    (a step allowed a little nearer each cycle would creep in), and it stops short: nothing more is sent."""
    q = list(solve([0.15, 0.10, 0.05], MODEL, "analytic").angles)
    goal = list(solve([0.0, 0.05, 0.0], MODEL._replace(body=()), "analytic", initial=q).angles)  # in the torso
    sent, t, least, sends = [], 0.0, 1.0, []
    for _ in range(300):
        s = step(MODEL, MODEL.body, q, t, goal, 0.2, sent, MARGIN)
        t += 0.02
        sends.append(s.command is not None)
        if s.command is None:
            continue
        sent.append(Sent(s.command, s.fraction, t, s.box))
        sent[-1].answered = t
        q = s.command
        least = min(least, clearance(MODEL, q, MODEL.body).distance)
    assert least >= NEED - 1e-6
    assert not any(sends[-100:])  # stopped: nothing sent over its last 2 s
    assert NEED - 1e-6 <= clearance(MODEL, q, MODEL.body).distance <= MARGIN + 0.005  # at the margin


def test_a_reading_outside_the_earlier_boxes_shows_a_later_moment():
    """Commands 0.2 s apart, each answered 5 ms after it went; a reading asked at 0.85 s (LAG earlier: 0.35 s)."""
    sent = [Sent([k] * 5, 0.2, k * 0.2, ([k - 0.1] * 5, [k + 0.1] * 5)) for k in range(5)]
    for s in sent:
        s.answered = s.at + 0.005
    # Outside every box: from the LAG rule alone, command 1 (answered by 0.35 s) on, and command 0, whose successor's
    # answer came less than BRAKE x 0.2 before: all five.
    assert recent(sent, 0.85, [-5.0] * 5) == sent
    # In command 3's box, none before: the moment is 0.6 s or later; command 2 may still brake then (its successor's
    # answer came after), command 1 not (its successor's came 0.195 s before, over BRAKE x 0.2).
    assert recent(sent, 0.85, [3.0] * 5) == sent[2:]
    # Long after: the newest alone.
    assert recent(sent, 5.0, [3.0] * 5) == sent[4:]


def test_an_unanswered_successor_keeps_the_command_before_it():
    sent = [Sent([0.0] * 5, 0.2, 0.0, ([-0.1] * 5, [0.1] * 5)), Sent([1.0] * 5, 0.2, 5.0, ([0.9] * 5, [1.1] * 5))]
    sent[0].answered = 0.001
    assert recent(sent, 10.0, [1.0] * 5) == sent  # the newest's answer never came: ALMotion may not have taken it


@pytest.mark.parametrize("fraction", [0.2, 0.6])
def test_a_goal_nearer_than_the_horizon_is_sent_as_it_is_and_then_nothing(fraction):
    q0 = list(solve([0.15, 0.10, 0.05], MODEL, "analytic").angles)
    goal = [a + 0.01 for a in q0]
    s = step(MODEL, MODEL.body, q0, 0.0, goal, fraction, [], MARGIN)
    assert s.command == pytest.approx(goal)
    sent = [Sent(s.command, s.fraction, 0.0, s.box)]
    assert step(MODEL, MODEL.body, q0, 0.01, goal, fraction, sent, MARGIN).command is None
    lo, hi = region(MODEL, q0, sent, 0.01)
    assert all(a <= g <= b for a, g, b in zip(lo, goal, hi))
