"""NaoArmIK end to end over real libqi: robot session + stub ALMotion, service session, user session."""

import math
import time

import numpy as np
import pytest

import nao_ik
from nao_ik.geometry.collision import clearance_batch
from nao_ik.kinematics import chain as kinematics
from nao_ik.model.arm import arm_model
from nao_ik.solvers import ALIASES, ITERATIVE
from sim_stub.motion import StubMotion
from tests.qi_fixtures import Stack

METHODS = list(nao_ik.METHODS)
EXACT = set(ITERATIVE) | set(ALIASES)


def targets_for(arm, n, seed):
    model = arm_model(arm)
    rng = np.random.default_rng(seed)
    q = rng.uniform(model.lower, model.upper, (n, 5))
    q[:, 4] = 0.0  # the stub's standing WristYaw, which the service holds
    return kinematics.forward_batch(model, q)


@pytest.mark.parametrize("method", METHODS)
def test_reach_to_with_every_method_on_both_arms(awake, method):
    for arm, seed in (("LArm", 1), ("RArm", 2)):
        for target in targets_for(arm, 3, seed):
            before = len(awake.moves())
            r = awake.ik.reachTo(*target.tolist(), method)
            # The arm is chosen by the target's side.
            assert r["arm"] == ("LArm" if target[1] >= 0 else "RArm")
            if method in EXACT or method == "nn":
                assert r["reached"] and r["error"] <= 1e-4
            else:  # the paper's network: centimetres off, but a safe command all the same
                assert r["error"] < 0.3
            assert r["method"] == nao_ik.api.position.resolve_method(method)
            cmds = awake.moves()[before:]
            # One command, or the legs of a move whose direct box is not clear of the body (each after the last).
            assert len(cmds) == r["commands"] >= 1 and {c["method"] for c in cmds} == {"setAngles"}
            # Where the time went: the motion check always runs; legs wait for the arm at each one before.
            assert r["checkMs"] > 0.0 and r["waitMs"] >= 0.0 and (r["commands"] == 1 or r["waitMs"] > 0.0)
            cmd = cmds[-1]
            assert cmd["names"] == list(arm_model(r["arm"]).names)
            assert cmd["angles"] == pytest.approx(r["angles"], abs=0)
            assert cmd["speed"] == pytest.approx(0.2)
            # The commanded angles put the hand where the answer says.
            hand = kinematics.forward(arm_model(r["arm"]), cmd["angles"])
            assert np.linalg.norm(hand - target) == pytest.approx(r["error"], abs=1e-12)
    assert awake.stub.getViolations() == []


def test_the_simulated_hand_arrives_where_asked(awake):
    target = (0.15, 0.12, 0.08)
    awake.ik.setSpeed(1.0)
    r = awake.ik.reachToWithArm("LArm", *target, "fabrik")
    awake.wait_still(r["names"])
    hand = awake.motion.getPosition("LArm", 0, True)[:3]
    assert np.linalg.norm(np.subtract(hand, target)) <= 1e-4


def test_consecutive_reaches_start_from_the_current_posture(awake):
    awake.ik.setSpeed(1.0)
    first = awake.ik.reachTo(0.15, 0.12, 0.08, "dls")
    awake.wait_still(first["names"])
    # A target 5 mm away: a small correction, not a new branch.
    second = awake.ik.reachTo(0.155, 0.12, 0.08, "dls")
    jump = max(abs(a - b) for a, b in zip(first["angles"], second["angles"]))
    assert second["reached"] and jump < 0.15


def test_compute_angles_does_not_move_the_robot(awake):
    r = awake.ik.computeAngles("RArm", 0.15, -0.12, 0.08, "sdls")
    assert r["reached"] and r["moved"] is False
    assert awake.moves() == []


def test_unreachable_target_moves_as_close_as_possible(awake):
    r = awake.ik.reachTo(0.5, 0.1, 0.1, "dls")
    assert r["reached"] is False and r["shortfall"] == pytest.approx(0.0, abs=1e-6)
    assert r["error"] == pytest.approx(0.5 - 0.2204, abs=2e-3)
    assert all(math.isfinite(a) for a in r["angles"])
    assert awake.stub.getViolations() == []


def test_the_demos_out_of_reach_target_from_where_its_reaches_left_the_arms(awake):
    """The demo's sequence of reaches, for its default method and one whose answer there was the arm's own posture,
    283.7 mm from the target: the right arm on its way across the front (the demo's reach came while the service's
    reading had it short of its last command), nothing clear lay along the search's rays toward the closest pose.
    Now that reach ends at the closest clear pose; and with the arms at rest, at nearestReachable's point."""
    from nao_ik.tools.demo import TARGETS

    awake.ik.setSpeed(1.0)
    names = list(arm_model("LArm").names + arm_model("RArm").names)
    (*before, (_, far)) = TARGETS
    (_, front_right), (_, low_right) = before[-2:]
    for method in ("analytic", "nn-modular"):
        for _, target in before:
            awake.ik.reachTo(*target, method)
            awake.wait_still(names)
        awake.ik.reachTo(*front_right, method)
        awake.wait_still(names)
        awake.ik.reachTo(*low_right, method)  # and at once, the right arm on its way
        r = awake.ik.reachTo(*far, method)
        assert not r["reached"] and r["moved"] and r["error"] < 0.14, (method, r["error"], r["reason"])
        awake.wait_still(names)
        time.sleep(0.1)  # the service's readings are the arms at rest
        best = awake.ik.nearestReachable("LArm", *far, 0)
        r = awake.ik.computeAngles("LArm", *far, method)
        assert r["shortfall"] == pytest.approx(0.0, abs=1e-9) and r["error"] < 0.1197, method
        assert np.linalg.norm(nao_ik.forward(r["angles"], "LArm") - best["nearest"]) <= 1e-4, method
    assert awake.stub.getViolations() == []


def test_methods_and_speed(awake):
    assert set(awake.ik.getMethods()) == set(METHODS)
    assert awake.ik.getSpeed() == pytest.approx(0.2)
    awake.ik.setSpeed(0.55)
    assert awake.ik.getSpeed() == 0.55
    awake.ik.reachTo(0.15, 0.12, 0.08, "")  # "" means the default method
    assert awake.moves()[-1]["speed"] == 0.55


def test_limits_are_the_ones_the_robot_reports():
    narrow = {"LElbowYaw": (-0.4, 0.4), "LShoulderRoll": (0.0, 0.8)}
    s = Stack(StubMotion(limits=narrow))
    try:
        s.motion.wakeUp()
        model = arm_model("LArm").with_limits({k: [lo, hi, 8.0] for k, (lo, hi) in narrow.items()})
        rng = np.random.default_rng(4)
        q = rng.uniform(model.lower, model.upper, (40, 5))
        q[:, 4] = 0.0
        q = q[clearance_batch(model, q)[0] >= 0.03][:6]  # clear of the body: the limits alone decide
        answered = 0
        for target in kinematics.forward_batch(model, q):
            try:
                r = s.ik.reachToWithArm("LArm", *target.tolist(), "fabrik")
            except RuntimeError as e:  # no certified way there from where the arm is: nothing sent
                assert "motion:" in str(e) and "nothing" in str(e), e
                continue
            answered += 1
            assert r["reached"]
            assert -0.4 <= r["angles"][2] <= 0.4 and 0.0 <= r["angles"][1] <= 0.8
        assert answered >= 4
        # A target that needs ElbowYaw far outside the narrow range.
        full = kinematics.forward(arm_model("LArm"), [0.0, 1.2, 2.0, -1.4, 0.0])
        r = s.ik.reachToWithArm("LArm", *full.tolist(), "dls")
        assert -0.4 <= r["angles"][2] <= 0.4
        assert s.stub.getViolations() == []
    finally:
        s.close()


def test_motors_off_is_an_error_not_silence(stack):
    with pytest.raises(RuntimeError, match="LArm motors are off .*wakeUp"):
        stack.ik.reachTo(0.15, 0.12, 0.08, "dls")
    assert stack.moves() == []
    # computeAngles does not need motors.
    assert stack.ik.computeAngles("LArm", 0.15, 0.12, 0.08, "dls")["reached"]


@pytest.mark.parametrize("sag", [0.0, 0.01])
def test_after_rest_and_wake_up_the_arm_tracks_and_reaches_again(sag):
    """A reach, then ALMotion.rest() and the motors on again from the user's program: the arm stands where rest() put
    it, by the thigh (the stub's isCollision says "collision" there), far from the service's last command. rest()
    moved ALMotion's command off that command's way, so the service's record of it is dropped and the reading is the
    state: a path and a reach go from where the arm is, the path's first command its own (no command to hold the arm
    where it stands: nothing of the old one may still run); the robot's protection stops nothing."""
    from nao_ik.service.arm_watch import HOLD_SPEED

    s = Stack(motion=StubMotion(sag=sag))  # with sag, the sensed angles of still joints are off their command
    try:
        s.motion.wakeUp()
        names = ["LShoulderPitch", "LShoulderRoll", "LElbowYaw", "LElbowRoll", "LWristYaw"]
        assert s.ik.reachTo(0.15, 0.10, 0.05, "")["moved"]
        time.sleep(1.5)
        s.motion.rest()
        s.motion.setStiffnesses("Body", 1.0)  # motors on where rest() left the arms (wakeUp would stand up)
        time.sleep(0.2)
        commanded = s.motion.getAngles(names, False)
        assert s.stub.isCollision("LArm") == "collision"  # the premise
        before = len(s.moves())
        wave = [[0.06, 0.16 + 0.05 * math.sin(2 * math.pi * k / 50), 0.26] for k in range(100)]
        got = s.ik.trackPath("LArm", wave, "dls")
        assert got["sent"] == 100 and got["stopped"] == "", got
        first = s.moves()[before]
        assert first["names"] == names and first["angles"] != commanded and first["speed"] != HOLD_SPEED, first
        assert first["angles"] == pytest.approx(got["angles"][0], abs=1e-12)
        time.sleep(1.0)
        assert s.ik.reachTo(0.15, 0.10, 0.05, "")["moved"]
        assert s.stub.getCollisionStops() == [] and s.stub.getViolations() == []
    finally:
        s.close()


def test_a_leg_another_client_rolled_out_is_part_of_the_body(awake):
    """Another client rolls the left leg out (LHipRoll 0.5): a reach low by the left hip keeps clear of the thigh
    where it is now (refused, or an answer clear of it); the robot's protection stops nothing."""
    s = awake
    s.motion.setAngles(["LHipRoll"], [0.5], 0.5)
    end = time.monotonic() + 5
    while abs(s.motion.getAngles(["LHipRoll"], True)[0] - 0.5) > 1e-3:
        assert time.monotonic() < end, "the leg did not get there"
        time.sleep(0.02)
    try:
        got = s.ik.reachTo(0.05, 0.12, -0.10, "")
    except RuntimeError as e:
        assert "thighs" in str(e) and "nothing sent" in str(e), e
    else:
        assert not got["reached"] or got["moved"], got
    s.wait_still(["LShoulderPitch", "LShoulderRoll", "LElbowYaw", "LElbowRoll", "LWristYaw"])
    assert s.stub.getCollisionStops() == [] and s.stub.getViolations() == []


# ---------------------------------------------------------------- bad input

GOOD = {"x": 0.15, "y": 0.12, "z": 0.08, "method": "dls", "arm": "LArm"}
BAD_NUMBERS = [("a string", "a string 'a string'"), (float("nan"), "nan"), (float("inf"), "inf"),
               (-float("inf"), "-inf"), (None, "None"), ([0.1], r"\[0.1\]")]  # fmt: skip
BAD_METHODS = [("ccd", "unknown method 'ccd'"), (5.0, "unknown method 5.0"), (None, "unknown method None")]
BAD_ARMS = [("Head", "unknown arm 'Head'"), ("larm", "unknown arm 'larm'"), (3.0, "unknown arm 3.0")]


def call(ik, name, **override):
    a = dict(GOOD, **override)
    if name == "reachTo":
        return ik.reachTo(a["x"], a["y"], a["z"], a["method"])
    return getattr(ik, name)(a["arm"], a["x"], a["y"], a["z"], a["method"])


@pytest.mark.parametrize("name", ["reachTo", "reachToWithArm", "computeAngles"])
@pytest.mark.parametrize("coord", ["x", "y", "z"])
@pytest.mark.parametrize("value, shown", BAD_NUMBERS)
def test_bad_coordinates_are_refused_and_nothing_is_sent(awake, name, coord, value, shown):
    with pytest.raises(RuntimeError, match=f"ValueError: target {coord} must be a finite number, got {shown}"):
        call(awake.ik, name, **{coord: value})
    assert awake.moves() == []


@pytest.mark.parametrize("name", ["reachTo", "reachToWithArm", "computeAngles"])
@pytest.mark.parametrize("value, message", BAD_METHODS)
def test_bad_methods_are_refused(awake, name, value, message):
    with pytest.raises(RuntimeError, match=message):
        call(awake.ik, name, method=value)
    assert awake.moves() == []


@pytest.mark.parametrize("name", ["reachToWithArm", "computeAngles"])
@pytest.mark.parametrize("value, message", BAD_ARMS)
def test_bad_arms_are_refused(awake, name, value, message):
    with pytest.raises(RuntimeError, match=message):
        call(awake.ik, name, arm=value)
    assert awake.moves() == []


@pytest.mark.parametrize(
    "value, message",
    [(0.0, "speed must be in \\[0.01, 1\\]"), (-0.5, "speed must be in"), (1.5, "speed must be in"),
     (float("nan"), "speed must be a finite number"), ("fast", "speed must be a finite number, got a string 'fast'")],
)  # fmt: skip
def test_bad_speeds_are_refused(awake, value, message):
    with pytest.raises(RuntimeError, match=message):
        awake.ik.setSpeed(value)
    assert awake.ik.getSpeed() == pytest.approx(0.2)
    awake.ik.reachTo(0.15, 0.12, 0.08, "dls")
    assert awake.moves()[-1]["speed"] == pytest.approx(0.2)


@pytest.mark.parametrize(
    "name, args, message",
    [("reachTo", (0.1, 0.1), "reachTo takes 3 or 4 arguments (x, y, z[, method]), got 2"),
     ("reachToInFrame", ("LArm", 0.1, 0.1, 0.1, 0, "", 1), "reachToInFrame takes 4 to 6 arguments "
                                                          "(arm, x, y, z[, frame[, method]]), got 7"),
     ("reachToWithSpeed", ("LArm", 0.15, 0.12, 0.08, ""), "reachToWithSpeed takes 6 arguments "
                                                          "(arm, x, y, z, method, fractionMaxSpeed), got 5"),
     ("stopPath", (), "stopPath takes 1 argument (arm), got 0"),
     ("getMethods", ("LArm",), "getMethods takes no arguments, got 1")],
)  # fmt: skip
def test_a_wrong_number_of_arguments_is_refused_in_one_line(awake, name, args, message):
    with pytest.raises(RuntimeError) as refused:
        getattr(awake.ik, name)(*args)
    assert str(refused.value) == "TypeError: " + message
    assert awake.moves() == []


def test_the_method_and_the_frame_may_be_left_out(awake):
    r = awake.ik.reachTo(0.15, 0.12, 0.08)
    assert r["reached"] and r["method"] == "analytic"
    assert awake.ik.computeAngles("LArm", 0.15, 0.12, 0.08)["method"] == "analytic"
    assert awake.ik.reachToInFrame("LArm", 0.15, 0.12, 0.08)["frame"] == 0
    assert awake.ik.isReachable("LArm", 0.15, 0.12, 0.08)["reachable"]
    assert awake.ik.nearestReachable("RArm", 0.15, -0.12, 0.08)["reachable"]
    assert awake.ik.pointAt("LArm", 1.0, 0.5, 0.3)["frame"] == 0  # far away: pointing is not reaching


@pytest.mark.parametrize(
    "name, args",
    [("reachTo", (150, 120, 80)), ("reachToWithArm", ("LArm", 150, 120, 80)), ("computeAngles", ("LArm", 0, 0, 1.5)),
     ("trackPath", ("LArm", [[0.15, 0.1, 0.05], [150.0, 100.0, 50.0]])), ("isReachable", ("RArm", -200, 0, 0)),
     ("reachToPose", ("LArm", [150, 120, 80, 0, 0, 0], 7, "")), ("grasp", ("LArm", 150, 120, 80, [1, 0, 0])),
     ("reachBoth", ([150, 120, 80], [0.15, -0.1, 0.05]))],
)  # fmt: skip
def test_millimetres_for_metres_are_refused_in_one_line(awake, name, args):
    with pytest.raises(RuntimeError) as e:
        getattr(awake.ik, name)(*args)
    assert str(e.value).startswith("ValueError: ")
    assert "beyond any arm's reach: coordinates are metres" in str(e.value)
    assert "\n" not in str(e.value)  # one line: no server stack
    assert awake.moves() == []


def test_a_pose_position_its_axis_mask_leaves_free_is_not_refused(awake):
    """The library's rule (nao_ik.api.pose.check_pose_metres): orientation only, the position may hold anything."""
    r = awake.ik.computePose("LArm", [150.0, 120.0, 80.0, 0.0, 0.0, 0.0], 56, "")
    assert r["arm"] == "LArm" and len(r["angles"]) == 5


def test_a_refusal_is_one_line_without_the_servers_stack(awake):
    with pytest.raises(RuntimeError) as e:
        awake.ik.reachToWithArm("Head", 0.15, 0.12, 0.08, "")
    assert str(e.value) == "ValueError: unknown arm 'Head': expected one of LArm, RArm"


# ------------------------------------------------------------------- faults


def test_almotion_gone_then_back(awake):
    awake.robot.unregister_motion()
    with pytest.raises(RuntimeError, match="ALMotion"):
        awake.ik.reachTo(0.15, 0.12, 0.08, "dls")
    awake.robot.register_motion()
    r = awake.ik.reachTo(0.15, 0.12, 0.08, "dls")
    assert r["reached"]
    assert awake.stub.getViolations() == []


def test_a_solver_exception_leaves_the_service_serving(awake, mocker):
    mocker.patch("nao_ik.service.reach.solve", side_effect=ZeroDivisionError("boom"))
    with pytest.raises(RuntimeError, match="ZeroDivisionError: boom"):
        awake.ik.reachTo(0.15, 0.12, 0.08, "dls")
    assert awake.moves() == []
    mocker.stopall()
    assert awake.ik.reachTo(0.15, 0.12, 0.08, "dls")["reached"]


def test_a_non_finite_answer_is_never_sent(awake, mocker):
    bad = nao_ik.Solution((0.1, float("nan"), 0.0, -0.5, 0.0), arm_model("LArm").names, True, 0.0, 1, "dls", "LArm")
    mocker.patch("nao_ik.service.reach.solve", return_value=bad)
    with pytest.raises(RuntimeError, match="non-finite angle"):
        awake.ik.reachTo(0.15, 0.12, 0.08, "dls")
    assert awake.moves() == []


def test_an_out_of_limit_answer_is_clamped_and_reported(awake, mocker):
    # Not reached (a reached answer whose motion needs legs may give way to another solution of the target).
    over = nao_ik.Solution((0.1, 0.2, 3.0, -0.5, 0.0), arm_model("LArm").names, False, 0.0, 1, "dls", "LArm")
    mocker.patch("nao_ik.service.reach.solve", return_value=over)
    r = awake.ik.reachTo(0.15, 0.12, 0.08, "dls")
    assert r["clamped"] == ["LElbowYaw"]
    assert awake.moves()[-1]["angles"][2] == pytest.approx(arm_model("LArm").upper[2])
    assert awake.stub.getViolations() == []


def test_the_answer_says_what_the_arm_will_do(awake):
    awake.ik.setSpeed(0.5)
    start = awake.motion.getAngles(list(arm_model("LArm").names), True)
    plan = awake.ik.computeAngles("LArm", 0.15, 0.12, 0.08, "")
    assert plan["method"] == "analytic" and plan["reached"] and plan["error"] < 1e-9
    model = arm_model("LArm")
    change = max(abs(a - b) for a, b in zip(plan["angles"], start))
    seconds = max(abs(a - b) / j.max_velocity for a, b, j in zip(plan["angles"], start, model.joints)) / 0.5
    assert plan["jointChange"] == pytest.approx(change, abs=1e-9)
    assert plan["moveSeconds"] == pytest.approx(seconds, abs=1e-9)
    done = awake.ik.reachToWithArm("LArm", 0.15, 0.12, 0.08, "")
    assert done["angles"] == pytest.approx(plan["angles"], abs=1e-12) and done["moveSeconds"] > 0
