"""NaoArmIK's pose calls end to end over real libqi: reachToPose, computePose, getPose on the simulated robot."""

import math

import numpy as np
import pytest

import nao_ik
from nao_ik.kinematics.hand_pose import pose6d_to_transform, rotation_angle
from nao_ik.model.arm import arm_model

POSES = {
    "LArm": [0.4, 0.5, -0.3, -0.9, 0.7],
    "RArm": [0.1, -0.4, 0.6, 1.1, -0.5],
}


def pose_error(a, b):
    ta, tb = pose6d_to_transform(a), pose6d_to_transform(b)
    return float(np.linalg.norm(ta[:3, 3] - tb[:3, 3])), rotation_angle(ta[:3, :3].tolist(), tb[:3, :3].tolist())


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_reach_to_pose_then_get_pose_returns_the_pose(awake, arm):
    target = nao_ik.forward_pose(POSES[arm], arm)
    awake.ik.setSpeed(1.0)
    r = awake.ik.reachToPose(arm, target, 63, "")
    assert r["reached"] and r["method"] == "analytic" and r["axisMask"] == 63
    assert r["positionError"] <= 1e-4 and r["orientationError"] <= math.radians(0.1)
    cmd = awake.moves()[-1]
    assert cmd["method"] == "setAngles" and cmd["angles"] == pytest.approx(r["angles"], abs=0)
    awake.wait_still(r["names"])
    got = awake.ik.getPose(arm)
    # The robot's own effector pose (ALMotion.getPosition) agrees with the service's.
    np.testing.assert_allclose(got, awake.motion.getPosition(arm, 0, True), atol=1e-12)
    pos, rot = pose_error(got, target)
    assert pos <= 1e-4 and rot <= math.radians(0.1)
    assert awake.stub.getViolations() == []


def test_compute_pose_does_not_move_and_reports_a_compromise(awake):
    target = nao_ik.forward_pose(POSES["LArm"], "LArm")
    target[5] += 0.5  # turned about z: not a pose the 5-joint arm can take with that position
    r = awake.ik.computePose("LArm", target, 63, "analytic")
    assert r["moved"] is False and awake.moves() == []
    assert r["reached"] is False and r["positionError"] <= 1e-4 and r["orientationError"] > 0.01
    assert arm_model("LArm").within_limits(r["angles"])


def test_axis_mask_7_is_reach_to_with_arm(awake):
    target = nao_ik.forward_pose(POSES["LArm"], "LArm")
    pose = awake.ik.computePose("LArm", target, 7, "fabrik")
    plain = awake.ik.computeAngles("LArm", *target[:3], "fabrik")
    assert pose["angles"] == plain["angles"] and pose["orientationError"] == 0.0


@pytest.mark.parametrize(
    "args, message",
    [
        (("LArm", [0.1, 0.1, 0.1, 0.0, 0.0], 63, ""), "6 values"),
        (("LArm", [0.1, 0.1, float("nan"), 0.0, 0.0, 0.0], 63, ""), "position6D z must be a finite number"),
        (("LArm", [0.1, "x", 0.1, 0.0, 0.0, 0.0], 63, ""), "position6D y"),
        (("LArm", "pose", 63, ""), "sequence"),
        (("LArm", [0.1, 0.1, 0.1, 0.0, 0.0, 0.0], 0, ""), "1..63"),
        (("LArm", [0.1, 0.1, 0.1, 0.0, 0.0, 0.0], 64, ""), "1..63"),
        (("LArm", [0.1, 0.1, 0.1, 0.0, 0.0, 0.0], "63", ""), "whole number"),
        (("LArm", [0.1, 0.1, 0.1, 0.0, 0.0, 0.0], 63, "fabrik"), "pose method"),
        (("Head", [0.1, 0.1, 0.1, 0.0, 0.0, 0.0], 63, ""), "unknown arm"),
    ],
)
def test_bad_pose_arguments_are_refused_and_nothing_is_sent(awake, args, message):
    with pytest.raises(RuntimeError, match=message):
        awake.ik.reachToPose(*args)
    assert awake.moves() == []
    with pytest.raises(RuntimeError, match="unknown arm"):
        awake.ik.getPose("Leg")
