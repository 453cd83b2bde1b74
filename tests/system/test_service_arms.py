"""End to end over real libqi: frames, both arms, hands and grasp, pointAt, reachability."""

import time

import numpy as np
import pytest

import nao_ik
from nao_ik.kinematics import frames
from nao_ik.model.arm import arm_model
from nao_ik.recipes.grasp import APPROACH_DISTANCE, LIFT
from nao_ik.recipes.pointing import miss

POSTURE = {"LArm": [0.3, 0.4, -0.6, -0.9, 0.0], "RArm": [0.2, -0.5, 0.7, 1.0, 0.0]}
#: The torso moved in FRAME_WORLD: turned, tilted and shifted (not the standing identity pose).
MOVED = frames.torso_transform(0.42, -0.17, 0.29, yaw=0.8, pitch=0.15, roll=-0.07)


def hand(stack, arm, frame=0):
    return np.array(stack.motion.getPosition(arm, frame, True)[:3])


def test_frame_round_trip_with_a_moved_torso(awake):
    """A target in FRAME_WORLD (torso moved) and FRAME_ROBOT (standing) is reached where ALMotion's own
    getPosition in that frame says the hand is."""
    awake.stub.setTorsoTransform(frames.FRAME_WORLD, MOVED.ravel().tolist())
    awake.ik.setSpeed(1.0)
    for arm, frame in (("LArm", frames.FRAME_WORLD), ("RArm", frames.FRAME_ROBOT)):
        t = nao_ik.forward(POSTURE[arm], arm)
        torso = np.array(awake.motion.getTransform("Torso", frame, True)).reshape(4, 4)
        p = frames.point_from_torso(t, torso)
        assert np.linalg.norm(np.array(p) - t) > 0.2  # the frames differ
        r = awake.ik.reachToInFrame(arm, *p, frame, "")
        assert r["reached"] and r["frame"] == frame and r["targetInFrame"] == pytest.approx(list(p), abs=0)
        np.testing.assert_allclose(r["target"], t, atol=1e-12)
        awake.wait_still(r["names"])
        np.testing.assert_allclose(hand(awake, arm, frame), p, atol=1e-4)
        np.testing.assert_allclose(hand(awake, arm), t, atol=1e-4)
    # A pose in FRAME_WORLD: computed without moving, then reached; the hand's pose in that frame matches.
    # The service's readings may be two control cycles old: one from before the right arm arrived has it
    # still on its way, the way a conservative body, so wait until the service's reading is newer.
    time.sleep(0.1)
    pose = frames.pose_from_torso(nao_ik.forward_pose([0.1, 0.2, -0.4, -1.1, 0.3], "LArm"), MOVED)
    c = awake.ik.computePoseInFrame("LArm", list(pose), 1, 63, "")
    assert c["reached"] and not c["moved"], c["reason"]
    r = awake.ik.reachToPoseInFrame("LArm", list(pose), 1, 63, "")
    awake.wait_still(r["names"])
    got = frames.pose_to_torso(awake.motion.getPosition("LArm", 1, True), MOVED)
    np.testing.assert_allclose(got, nao_ik.forward_pose([0.1, 0.2, -0.4, -1.1, 0.3], "LArm"), atol=1e-4)
    assert awake.stub.getViolations() == []


def test_reach_both_sends_one_command_of_ten_joints(awake):
    awake.ik.setSpeed(1.0)
    left, right = nao_ik.forward(POSTURE["LArm"], "LArm"), nao_ik.forward(POSTURE["RArm"], "RArm")
    before = len(awake.moves())
    r = awake.ik.reachBoth(left.tolist(), right.tolist(), "")
    sent = awake.moves()[before:]
    # One command of ten joints, or legs of ten joints where the direct motions may meet at some timing.
    assert len(sent) == r["commands"] >= 1 and len(sent[-1]["names"]) == 10
    assert sent[-1]["angles"] == pytest.approx(r["angles"], abs=0) and [c["angles"] for c in sent[:-1]] == r["via"]
    assert sent[-1]["names"] == list(arm_model("LArm").names) + list(arm_model("RArm").names)
    assert r["reached"] and r["left"]["reached"] and r["right"]["reached"] and r["collision"] == ""
    awake.wait_still(r["names"])
    np.testing.assert_allclose(hand(awake, "LArm"), left, atol=1e-4)
    np.testing.assert_allclose(hand(awake, "RArm"), right, atol=1e-4)
    # A full pose for one arm, a position for the other.
    pose = nao_ik.forward_pose([0.5, 0.3, -0.2, -0.7, 0.4], "LArm")
    r = awake.ik.reachBoth(pose, right.tolist(), "")
    assert r["left"]["reached"] and r["left"]["orientationError"] < 1e-3 and r["moved"], r["collision"]
    assert awake.stub.getViolations() == []


def test_reach_both_right_after_a_reach_waits_for_the_moving_arm_and_moves(awake):
    """reachBoth while an arm is still on its way to an earlier command, where the move is not certified from
    somewhere on that way: judged from where the arms stop, and made (not refused for a moving arm)."""
    right = nao_ik.forward(POSTURE["RArm"], "RArm")
    # (the left arm's earlier command, reachBoth's left pose): each move clear at any timing from a standing
    # arm, the second not from everywhere on the way of the first (the overshoot of a retarget included).
    pairs = [([-2.08, 1.28, -0.84, -1.07, 0.0], [1.08, 1.13, -1.66, -0.26, 0.0])]
    for earlier, goal in pairs:
        awake.ik.setSpeed(1.0)
        r = awake.ik.reachBoth(nao_ik.forward(POSTURE["LArm"], "LArm").tolist(), right.tolist(), "")
        assert r["moved"], r["collision"]
        awake.wait_still(r["names"])
        awake.ik.setSpeed(0.2)
        assert awake.ik.reachToPose("LArm", nao_ik.forward_pose(earlier, "LArm"), 63, "")["moved"]
        pose = nao_ik.forward_pose(goal, "LArm")
        r = awake.ik.reachBoth(pose, right.tolist(), "")
        assert r["moved"] and r["reached"] and r["collision"] == "", r["collision"]
        awake.wait_still(r["names"])
        np.testing.assert_allclose(awake.motion.getPosition("LArm", 0, True), pose, atol=1e-4)
    assert awake.stub.getViolations() == []


#: The right arm at the first posture, the left at the second; the right arm sent at full speed to the third and,
#: 0.3 s later, reachBoth with the left arm to the fourth and the right arm back to where it is then: the pair's
#: check, from where the arms were read, let the right arm on its way to the third go where the left arm went.
ON_ITS_WAY_BOTH = ([0.168, -1.0039, 1.0344, 1.3398, 0.0], [0.8661, 0.1589, -0.0714, -0.7709, 0.1913],
                   [0.0038, -0.0363, -0.068, 1.0759, 0.0], [0.6833, 0.0665, -0.562, -1.1557, 0.0])  # fmt: skip


def test_reach_both_while_an_arm_is_on_its_way_is_judged_from_where_it_stops(awake):
    """reachBoth while the right arm is still on its way to an earlier command (and braking toward it): the pair's
    check holds each arm where it starts, so both arms are judged from where they stop; the robot's protection
    stops nothing (it did where the pair was judged from the reading)."""
    right_at, left_at, right_goes, left_goal = ON_ITS_WAY_BOTH
    left, right = arm_model("LArm"), arm_model("RArm")
    names = list(left.names) + list(right.names)
    awake.ik.setSpeed(0.5)
    assert awake.ik.reachToPose("RArm", nao_ik.forward_pose(right_at, "RArm"), 63, "")["moved"]
    awake.wait_still(names[5:], 10)
    assert awake.ik.reachToPose("LArm", nao_ik.forward_pose(left_at, "LArm"), 63, "")["moved"]
    awake.wait_still(names, 10)
    t0 = time.monotonic()
    assert awake.ik.reachToPoseWithSpeed("RArm", nao_ik.forward_pose(right_goes, "RArm"), 63, "", 1.0)["moved"]
    time.sleep(max(0.0, t0 + 0.3 - time.monotonic()))
    back = nao_ik.forward_pose(awake.motion.getAngles(names[5:], True), "RArm")
    got = awake.ik.reachBothWithSpeed(nao_ik.forward_pose(left_goal, "LArm"), back, "", 1.0)
    awake.wait_still(names, 10)
    assert got["moved"] or got["collision"], got
    assert awake.stub.getCollisionStops() == [] and awake.stub.getViolations() == []


def test_reach_both_after_an_arm_stopped_short_of_its_command_moves_from_where_it_rests(awake):
    """reachBoth once an arm rests far short of its last command (something held it where it was, long enough
    ago that it will not set off again): judged from where it rests, and made, where the motion from anywhere
    on its way to that command would not be certified."""
    right = nao_ik.forward(POSTURE["RArm"], "RArm").tolist()
    # (where the left arm rests, the command it stops short of, reachBoth's left pose): each move clear at any
    # timing from a standing arm, the third not from everywhere on the way of the second.
    start, earlier, goal = [-1.968, 0.985, 1.358, -1.083, 0.0], [-2.016, 1.294, -2.035, -0.841, 0.0], [
        -0.605, 1.214, 1.594, -1.361, 0.0]  # fmt: skip
    names = list(arm_model("LArm").names)
    awake.ik.setSpeed(1.0)
    assert awake.ik.reachBoth(nao_ik.forward_pose(start, "LArm"), right, "")["moved"]
    awake.wait_still(names)
    with awake.after_next_move(names) as held:
        assert awake.ik.reachToPose("LArm", nao_ik.forward_pose(earlier, "LArm"), 63, "")["commands"] == 1
    time.sleep(0.3)  # the arm rests where it was held, ALMotion has taken both commands
    assert max(abs(a - b) for a, b in zip(held[0], earlier)) > 1.0  # far short of the command
    pose = nao_ik.forward_pose(goal, "LArm")
    r = awake.ik.reachBoth(pose, right, "")
    assert r["moved"] and r["reached"] and r["collision"] == "", r["collision"]
    awake.wait_still(r["names"])
    np.testing.assert_allclose(awake.motion.getPosition("LArm", 0, True), pose, atol=1e-4)
    assert awake.stub.getViolations() == [] and awake.stub.getCollisionStops() == []


def test_reach_both_in_legs_whose_arms_stay_short_of_a_leg_answers_with_the_legs_sent_and_why(awake):
    """reachBoth whose direct motions may meet goes in legs; both arms held after the first: the answer says
    not reached, why, and the one leg sent (not an error that hides that the arms moved)."""
    names = list(arm_model("LArm").names) + list(arm_model("RArm").names)
    awake.ik.setSpeed(1.0)
    left, right = [0.1676, 0.1886, 0.1954], [0.0673, -0.2965, 0.166]  # from the rest posture: in legs
    before = len(awake.moves())
    with awake.after_next_move(names) as held:
        r = awake.ik.reachBothWithSpeed(left, right, "", 0.3)
    assert r["moved"] and not r["reached"] and r["commands"] == 1 and len(r["via"]) >= 1, r
    assert r["stopped"].startswith("the LArm stopped") and r["stopped"].endswith("nothing more sent"), r["stopped"]
    sent = [m["angles"] for m in awake.moves()[before:]]
    assert sent == [r["via"][0], held[0]]
    assert awake.stub.getCollisionStops() == [] and awake.stub.getViolations() == []


def test_grasp_steps_in_order_and_ends_closed_at_the_target(awake):
    awake.ik.setSpeed(1.0)
    target = nao_ik.forward(POSTURE["LArm"], "LArm")
    before = len(awake.moves())
    r = awake.ik.grasp("LArm", *target.tolist(), [1.0, 0.0, 0.0])
    assert r["completed"] and r["failedStep"] == "" and r["moved"]
    assert [s["step"] for s in r["steps"]] == ["preGrasp", "open", "approach", "close", "lift"]
    sent = awake.moves()[before:]
    kinds = ["hand" if c["names"] == ["LHand"] else "arm" for c in sent]
    # An arm step near the body may go in legs (several arm commands in a row): each step ends at its posture.
    steps = [k for i, k in enumerate(kinds) if i + 1 == len(kinds) or kinds[i + 1] != k]
    ends = [c for i, c in enumerate(sent) if i + 1 == len(sent) or kinds[i + 1] != kinds[i]]
    assert steps == ["arm", "hand", "arm", "hand", "arm"], kinds
    assert [c["angles"] for c in sent if c["names"] == ["LHand"]] == [[1.0], [0.0]]
    # The answer names each arm command, the legs of a step in its via.
    listed = [q for s in r["steps"] for q in s["via"] + ([s["angles"]] if s["angles"] else [])]
    assert [c["angles"] for c in sent if c["names"] != ["LHand"]] == listed, r["steps"]
    model = arm_model("LArm")
    pre, at, lift = (nao_ik.forward(c["angles"], model) for c in ends if c["names"] != ["LHand"])
    np.testing.assert_allclose(pre, target - [APPROACH_DISTANCE, 0, 0], atol=1e-4)
    np.testing.assert_allclose(at, target, atol=1e-4)  # where the hand closed
    np.testing.assert_allclose(lift, target + [0, 0, LIFT], atol=1e-4)
    assert awake.motion.getAngles("LHand", True) == [0.0]  # closed, and it got there
    np.testing.assert_allclose(hand(awake, "LArm"), target + [0, 0, LIFT], atol=1e-4)
    assert awake.stub.getViolations() == []


def test_grasp_fails_with_the_named_step_and_sends_nothing(awake):
    # The target reachable, the pre-grasp point 4 cm further out is not.
    model = arm_model("LArm")
    out = np.array([0.0, 1.0, 0.0])
    target = nao_ik.forward([0.0, 1.3, 0.0, -0.0349, 0.0], model)
    assert nao_ik.solve(target, model).reached
    assert not nao_ik.solve(target + APPROACH_DISTANCE * out, model).reached
    before = len(awake.moves())
    r = awake.ik.grasp("LArm", *target.tolist(), (-out).tolist())
    assert not r["completed"] and r["failedStep"] == "preGrasp" and "preGrasp" in r["reason"]
    assert not r["moved"] and len(awake.moves()) == before


def test_point_at_puts_the_forearm_line_through_the_target(awake):
    awake.ik.setSpeed(1.0)
    rng = np.random.default_rng(7)
    pointed = 0
    for arm in ("LArm", "RArm"):
        model = arm_model(arm)
        for _ in range(4):
            d = rng.normal(size=3)
            d[0] = abs(d[0]) + 0.3  # in front of the robot
            d[1] = abs(d[1]) * (1.0 if arm == "LArm" else -1.0)  # on the arm's side (across: through the body)
            d /= np.linalg.norm(d)
            target = np.array(model.shoulder) + 1.5 * d
            robot = frames.point_from_torso(target, np.array(awake.motion.getTransform("Torso", 2, True)).reshape(4, 4))
            r = awake.ik.pointAt(arm, *robot, frames.FRAME_ROBOT)
            assert r["pointed"] and r["moved"] and r["miss"] < 1e-3, r
            awake.wait_still(r["names"])
            sensed = awake.motion.getAngles(list(model.names), True)
            assert miss(model, sensed, target) < 1e-3  # the robot's forearm line, within 1 mm
            pointed += 1
    assert pointed == 8
    assert awake.stub.getViolations() == []
    # Down and across the body: the forearm would go through the torso; refused with the part, nothing sent.
    before = len(awake.moves())
    r = awake.ik.pointAt("LArm", 1.106, -0.324, -0.821, frames.FRAME_TORSO)
    assert not r["pointed"] and not r["moved"] and r["reason"].startswith("collision: ")
    assert len(awake.moves()) == before


def test_reachability_over_qi(awake):
    t = nao_ik.forward(POSTURE["LArm"], "LArm")
    r = awake.ik.isReachable("LArm", *t.tolist(), 0)
    assert r["reachable"] and r["dexterity"] > 0 and r["intervals"]
    far = awake.ik.nearestReachable("LArm", 0.6, 0.4, 0.3, 0)
    assert not far["reachable"] and far["distance"] > 0.2 and len(far["angles"]) == 5
    np.testing.assert_allclose(nao_ik.forward(far["angles"], "LArm"), far["nearest"], atol=1e-9)
    # In FRAME_ROBOT the same point, the answer's nearest in FRAME_ROBOT.
    torso = np.array(awake.motion.getTransform("Torso", 2, True)).reshape(4, 4)
    p = frames.point_from_torso([0.6, 0.4, 0.3], torso)
    far2 = awake.ik.nearestReachable("LArm", *p, 2)
    np.testing.assert_allclose(far2["nearest"], frames.point_from_torso(far["nearest"], torso), atol=1e-9)
    assert awake.moves() == []


def test_hands_open_and_close(awake):
    awake.ik.setSpeed(1.0)
    r = awake.ik.openHand("RArm")
    assert r["hand"] == "RHand" and r["opening"] == 1.0
    awake.wait_still(["RHand"])
    assert awake.motion.getAngles("RHand", True) == [1.0]
    awake.ik.closeHand("RArm")
    awake.wait_still(["RHand"])
    assert awake.motion.getAngles("RHand", True) == [0.0]
    half = awake.ik.setHandWithSpeed("RArm", 0.5, 0.5)
    assert half["opening"] == 0.5 and awake.moves()[-1]["speed"] == 0.5
    awake.wait_still(["RHand"])
    assert awake.motion.getAngles("RHand", True) == [0.5]


@pytest.mark.parametrize(
    "call, args, message",
    [
        ("reachToInFrame", ("LArm", 0.1, 0.1, 0.0, 3, ""), "frame must be 0"),
        ("reachToInFrame", ("LArm", 0.1, 0.1, 0.0, True, ""), "frame must be 0"),
        ("isReachable", ("LArm", 0.1, float("nan"), 0.0, 0), "target y"),
        ("reachBoth", ([0.1, 0.1, 0.0, 0.0], [0.1, -0.1, 0.0], ""), "left must be a list"),
        ("reachBoth", ([0.1, 0.1, 0.0], [0.1, -0.1, float("inf")], ""), "target z"),
        ("grasp", ("LArm", 0.1, 0.1, 0.0, [0.0, 0.0, 0.0]), "approach must be a direction"),
        ("pointAt", ("Head", 1.0, 0.0, 0.0, 0), "unknown arm"),
        ("openHand", ("LHand",), "unknown arm"),
        ("setHandWithSpeed", ("LArm", 1.5, 0.5), "opening must be in"),
        ("setHandWithSpeed", ("LArm", "open", 0.5), "opening must be a finite number"),
        ("setHandWithSpeed", ("LArm", 1.0, 0.0), "speed must be"),
        ("graspWithSpeed", ("LArm", 0.1, 0.1, 0.0, [1.0, 0.0, 0.0], 2.0), "speed must be in"),
        ("pointAtWithSpeed", ("LArm", 1.0, 0.0, 0.0, 0, float("nan")), "speed must be a finite"),
        ("reachBothWithSpeed", ([0.1, 0.1, 0.0], [0.1, -0.1, 0.0], "", "fast"), "speed must be a finite"),
    ],
)
def test_bad_arguments_are_refused_and_nothing_is_sent(awake, call, args, message):
    with pytest.raises(RuntimeError, match=message):
        getattr(awake.ik, call)(*args)
    assert awake.moves() == []


def test_motors_off_refuse_the_hand_and_both_arms(stack):
    with pytest.raises(RuntimeError, match="motors are off"):
        stack.ik.openHand("LArm")
    with pytest.raises(RuntimeError, match="motors are off"):
        stack.ik.reachBoth([0.1, 0.15, 0.0], [0.1, -0.15, 0.0], "")
    assert stack.moves() == []


def test_readme_recipes_run(awake):
    """The recipes of docs/service.md: a point in FRAME_ROBOT (where a detection would be) picked up; a wave."""
    import math

    ik = awake.ik
    torso = np.array(awake.motion.getTransform("Torso", 2, True)).reshape(4, 4)
    x, y, z = frames.point_from_torso(nao_ik.forward(POSTURE["LArm"], "LArm"), torso)  # as ALTracker would give it
    arm = "LArm" if ik.isReachable("LArm", x, y, z, 2)["reachable"] else "RArm"
    r = ik.nearestReachable(arm, x, y, z, 2)
    assert arm == "LArm" and r["reachable"]
    g = ik.graspWithSpeed(arm, *r["targetTorso"], [1.0, 0.0, 0.0], 1.0)
    assert g["completed"] and g["failedStep"] == ""
    assert {m["speed"] for m in awake.moves()} == {1.0} and ik.getSpeed() == pytest.approx(0.2)  # the default untouched
    ik.setSpeed(1.0)
    wave = [[0.06, 0.16 + 0.05 * math.sin(2 * math.pi * k / 50), 0.26] for k in range(100)]
    t = ik.trackPath("LArm", wave, "dls")
    assert t["completed"] and t["rmsError"] < 1e-4
    assert awake.stub.getViolations() == []
