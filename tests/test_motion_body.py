"""The motion to an answer never crosses the body: the sweep check, the safe sequence, the other arm, paths."""

import time

import numpy as np
import pytest

import nao_ik
from nao_ik.body import OTHER_ARM, STUB_MARGIN
from nao_ik.collision import clearance, clearance_batch, posture_body
from nao_ik.kinematics import forward_batch
from nao_ik.model import arm_model
from nao_ik.nn.data import random_configurations
from nao_ik.sensed import CYCLE, MAX_AGE
from nao_ik.sweep import STEP, SWEEP_MARGIN, Motion, plan, sweep, sweep_along

#: A start with the forearm down beside the hip and a target in front of the chest (found by a search over
#: random postures): the direct setAngles motion to the answer takes the forearm through the torso.
CROSSING_START = [1.864, 0.259, 1.065, -1.446, 0.0]
CROSSING_TARGET = [0.125, -0.004, 0.156]


def test_the_motion_follows_setangles():
    """Each joint moves at its own speed: the postures along the motion, by summed joint change travelled."""
    m = arm_model("LArm")
    a, b = [0.5, 0.2, -1.0, -1.0, 0.3], [-0.5, 0.8, 0.4, -0.2, 0.3]
    path = Motion(m, a, b, 0.3)
    assert path.at(0.0) == a and np.allclose(path.at(path.length), b)
    speed = np.array([j.max_velocity for j in m.joints]) * 0.3
    for t in (0.05, 0.2, 0.4):  # a time: every joint moved min(|change|, speed t)
        q = np.array(a) + np.sign(np.subtract(b, a)) * np.minimum(np.abs(np.subtract(b, a)), speed * t)
        assert np.allclose(path.at(float(np.abs(q - a).sum())), q, atol=1e-12)
        assert path.travelled(t) == pytest.approx(float(np.abs(q - a).sum()), abs=1e-12)


def test_the_sweep_misses_no_contact():
    """Against a dense sampling (400 postures a motion) of 150 random motions between clear postures: every
    motion the sweep calls clear keeps SWEEP_MARGIN - STEP / 2; every one it refuses comes below SWEEP_MARGIN."""
    m = arm_model("LArm")
    q = random_configurations(m, 1200, np.random.default_rng(11), 0.0)
    q = q[clearance_batch(m, q)[0] >= 0.010]
    refused = 0
    for a, b in zip(q[:150], q[150:300]):
        path = Motion(m, a, b, 0.5)
        dense, _ = clearance_batch(m, np.array([path.at(s) for s in np.linspace(0.0, path.length, 400)]))
        got = sweep(m, a, b, 0.5)
        if got.clear:
            assert dense.min() >= SWEEP_MARGIN - STEP / 2 - 1e-9
        else:
            refused += 1
            assert dense.min() < SWEEP_MARGIN + 1e-9
        assert got.samples < 400
    assert refused  # the sample has motions through the body


def test_a_command_to_a_moving_arm_is_checked_from_every_start_on_its_way():
    """sweep_along: where it says clear, the motion to the goal from any of 25 postures on the arm's way (each
    sampled densely) keeps SWEEP_MARGIN - STEP / 2 (the guarantee of every checked motion); it refuses some."""
    m = arm_model("LArm")
    q = random_configurations(m, 1500, np.random.default_rng(12), 0.0)
    q = q[clearance_batch(m, q)[0] >= 0.010]
    short = q[:60] + np.random.default_rng(13).uniform(-0.15, 0.15, size=(60, 5))  # ways of about 0.4 rad
    short = np.clip(short, m.lower, m.upper)
    clear = refused = 0
    for a, b, g in zip(q[:40], short, q[100:140]):
        along = Motion(m, a, b, 1.0)
        if clearance(m, b, m.body).distance < 0.010:
            continue
        got = sweep_along(m, along, g, 0.5)
        if not got.clear:
            refused += 1
            continue
        clear += 1
        for s in np.linspace(0.0, along.length, 25):
            path = Motion(m, along.at(s), g, 0.5)
            dense, _ = clearance_batch(m, np.array([path.at(t) for t in np.linspace(0.0, path.length, 150)]))
            assert dense.min() >= SWEEP_MARGIN - STEP / 2 - 1e-9, (a, b, g, s)
    assert clear >= 10 and refused >= 1, (clear, refused)


def test_plan_goes_around_a_crossing():
    m = arm_model("LArm")
    sol = nao_ik.solve(CROSSING_TARGET, m, initial=CROSSING_START)
    assert sol.reached
    assert not sweep(m, CROSSING_START, sol.angles, 1.0).clear
    route = plan(m, CROSSING_START, sol.angles, 1.0)
    assert 2 <= len(route.commands) <= 3 and route.commands[-1] == list(sol.angles)
    legs = zip([CROSSING_START] + route.commands[:-1], route.commands)
    assert all(sweep(m, a, b, 1.0).clear for a, b in legs)


def _put(robot, names: list, angles: list) -> None:
    """Put the simulated arm at ``angles`` (the stub's protection off for the move), protection back on.

    The move is made behind the service's back (as another client's would be): the service sees it in its
    readings, which may be up to two control cycles old (MAX_AGE), so the helper waits that long after the
    arm stopped."""
    robot.stub.setCollisionProtectionEnabled("Arms", False)
    robot.motion.setAngles(names, angles, 1.0)
    robot.wait_still(names)
    time.sleep(MAX_AGE + CYCLE)
    robot.stub.setCollisionProtectionEnabled("Arms", True)
    robot.stub.clearRecordedCommands()


def test_the_service_sends_the_safe_sequence(awake):
    """The constructed crossing over qi: the service swings the arm out first; the stub records no stop.
    Control: the direct command from the same start trips the stub's protection."""
    names = list(arm_model("LArm").names)
    _put(awake, names, CROSSING_START)
    awake.ik.setSpeed(1.0)
    r = awake.ik.reachToWithArm("LArm", *CROSSING_TARGET, "analytic")
    assert r["reached"] and r["commands"] >= 2
    awake.wait_still(names)
    assert awake.stub.getCollisionStops() == []
    assert len(awake.moves()) == r["commands"]
    assert np.allclose(awake.motion.getAngles(names, True), r["angles"], atol=1e-9)
    _put(awake, names, CROSSING_START)
    awake.motion.setAngles(names, r["angles"], 1.0)
    awake.wait_still(names)
    assert awake.stub.getCollisionStops()


def test_compute_angles_says_how_many_commands(awake):
    names = list(arm_model("LArm").names)
    _put(awake, names, CROSSING_START)
    assert awake.ik.computeAngles("LArm", *CROSSING_TARGET, "analytic")["commands"] >= 2
    assert awake.ik.computeAngles("LArm", 0.12, 0.12, 0.15, "analytic")["commands"] == 1
    assert awake.moves() == []


def test_the_other_arm_is_part_of_the_body(awake):
    """The right hand in front of the left chest: the left arm does not reach through it, and says why."""
    left, right = arm_model("LArm"), arm_model("RArm")
    q_right = list(nao_ik.solve([0.13, 0.03, 0.04], right).angles)
    _put(awake, list(right.names), q_right)
    target = [0.13, 0.05, 0.04]
    assert nao_ik.solve(target, left).reached  # without the other arm, reached (through it)
    r = awake.ik.reachToWithArm("LArm", *target, "analytic")
    assert not r["reached"] and r["reason"] == f"collision: {OTHER_ARM}"
    awake.wait_still(list(left.names))
    q_left = awake.motion.getAngles(list(left.names), True)
    body = posture_body(None, (right, awake.motion.getAngles(list(right.names), True)))
    assert clearance(left, q_left, body).distance >= STUB_MARGIN


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_a_path_into_the_torso_stops_before_it(awake, arm):
    """trackPath toward the chest's middle: the points the body leaves are sent, none inside; no stub stop."""
    s = 1.0 if arm == "LArm" else -1.0
    path = [[0.09, float(s * y), 0.05] for y in np.linspace(0.16, -0.02, 25)]
    awake.ik.setSpeed(1.0)
    awake.ik.reachToWithArm(arm, *path[0], "analytic")
    awake.wait_still(list(arm_model(arm).names))
    r = awake.ik.trackPath(arm, path, "analytic")
    awake.wait_still(list(arm_model(arm).names))
    assert awake.stub.getCollisionStops() == []
    hands = forward_batch(arm_model(arm), np.array(r["angles"]))
    assert np.all(s * hands[:, 1] > 0.0)  # never across the middle
    assert not r["completed"]


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_poses_through_the_body_are_not_reached(arm):
    """Full poses of random configurations: an answer within the body's margin is never `reached`; the poses of
    configurations inside it are answered with the part's name."""
    model = arm_model(arm)
    q = random_configurations(model, 600, np.random.default_rng(21), 0.0)
    q[:, 4] = np.random.default_rng(22).uniform(model.lower[4], model.upper[4], len(q))
    dist, _ = clearance_batch(model, q)
    inside = 0
    for x, d in zip(q, dist):
        sol = nao_ik.solve_pose(nao_ik.forward_pose(x, arm), arm, 63)
        gap = clearance(model, sol.angles, model.body).distance
        assert not sol.reached or gap >= 0.010 - 1e-9
        if d < -0.01:  # deep inside: no clear configuration has this pose
            inside += 1
            assert not sol.reached and sol.reason.startswith("collision: ")
    assert inside >= 10
