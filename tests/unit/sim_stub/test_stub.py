"""The stub ALMotion in-process, on a fake clock."""

import math

import numpy as np
import pytest

from nao_ik.kinematics import chain as kinematics
from nao_ik.kinematics import frames
from nao_ik.kinematics.hand_pose import forward_pose
from nao_ik.model.arm import arm_model
from sim_stub.body import CHAINS, JOINTS, STAND
from sim_stub.motion import CYCLE, StubMotion


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now

    def sleep(self, dt):
        self.now += dt


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def motion(clock):
    m = StubMotion(clock=clock, sleep=clock.sleep, profile="linear")  # the timings below are the linear profile's
    m.wakeUp()
    return m


def test_starts_standing_with_motors_off(clock):
    m = StubMotion(clock=clock, sleep=clock.sleep)
    assert m.getAngles("Body", True) == [STAND[n] for n in CHAINS["Body"]]
    assert m.getStiffnesses("Body") == [0.0] * 26
    assert not m.robotIsWakeUp()


def test_set_angles_moves_at_fraction_of_max_speed_in_cycles(motion, clock):
    start = motion.getAngles("LElbowYaw", True)[0]
    motion.setAngles("LElbowYaw", start + 0.5, 0.1)  # 0.1 x 8.26797 rad/s
    assert motion.getTargets("LElbowYaw") == [start + 0.5]
    assert motion.getAngles("LElbowYaw", False) == [start]  # this cycle's command: not moved yet
    assert motion.getAngles("LElbowYaw", True) == [start]
    clock.now += 0.3 + CYCLE / 2  # 15 cycles
    moved = motion.getAngles("LElbowYaw", True)[0] - start
    assert moved == pytest.approx(15 * CYCLE * 0.826797)
    clock.now += 1.0
    assert motion.getAngles("LElbowYaw", True)[0] == pytest.approx(start + 0.5)


def test_angle_interpolation_blocks_until_there(motion, clock):
    t0 = clock.now
    motion.angleInterpolationWithSpeed(["LShoulderPitch"], [0.4], 0.5)
    assert motion.getAngles("LShoulderPitch", True) == [0.4]
    assert clock.now - t0 == pytest.approx((1.40 - 0.4) / (0.5 * 8.26797) + CYCLE, rel=1e-6)


def test_chains_expand_like_almotion(motion):
    assert len(motion.getAngles("LArm", True)) == 6
    assert len(motion.getLimits("RArm")) == 6
    motion.setAngles("LArm", [0.1, 0.2, 0.3, -0.4, 0.5, 0.6], 0.2)
    assert motion.getTargets("LArm") == pytest.approx([0.1, 0.2, 0.3, -0.4, 0.5, 0.6])
    assert motion.getLimits("LElbowRoll") == [[-1.54462, -0.0349066, 7.19407, 1.532]]


@pytest.mark.parametrize(
    "names, angles, speed, message",
    [
        ("LElbo", 0.1, 0.2, "unknown joint or chain name 'LElbo'"),
        (["LElbowYaw", 7], [0.1, 0.1], 0.2, "names must be strings"),
        ("LArm", [0.1, 0.2], 0.2, "6 joints but 2 angles"),
        ("LElbowYaw", "0.1", 0.2, "angles must be a number or a list"),
        ("LElbowYaw", ["0.1"], 0.2, "angles must be numbers"),
        ("LElbowYaw", [None], 0.2, "angles must be numbers"),
        ("LElbowYaw", 0.1, 0.0, "fractionMaxSpeed must be in"),
        ("LElbowYaw", 0.1, 1.5, "fractionMaxSpeed must be in"),
        ("LElbowYaw", 0.1, "fast", "fractionMaxSpeed must be numbers"),
        ([], [], 0.2, "names must be"),
    ],
)
def test_rejects_what_almotion_rejects(motion, names, angles, speed, message):
    before = motion.getRecordedCommands()
    with pytest.raises(RuntimeError, match=message):
        motion.setAngles(names, angles, speed)
    assert motion.getRecordedCommands() == before


def test_out_of_limit_and_nan_commands_are_flagged_and_not_executed(motion, clock):
    motion.setAngles(["LElbowRoll", "LElbowYaw"], [0.5, float("nan")], 1.0)
    v = motion.getViolations()
    assert len(v) == 1 and len(v[0]["violations"]) == 2
    assert "LElbowRoll=0.5 outside" in v[0]["violations"][0]
    clock.now += 2.0
    elbow_roll, elbow_yaw = motion.getAngles(["LElbowRoll", "LElbowYaw"], True)
    assert elbow_roll == JOINTS["LElbowRoll"].upper  # stopped at the limit
    assert elbow_yaw == STAND["LElbowYaw"]  # not sent to NaN
    motion.clearRecordedCommands()
    assert motion.getViolations() == []


def test_a_joint_without_stiffness_does_not_move(clock):
    m = StubMotion(clock=clock, sleep=clock.sleep)
    m.setCollisionProtectionEnabled("Arms", False)  # from the stand posture, this forearm turns into the thigh
    m.setAngles("RElbowYaw", 0.0, 1.0)
    clock.now += 1.0
    assert m.getAngles("RElbowYaw", True) == [STAND["RElbowYaw"]]
    m.setStiffnesses("RArm", 1.0)
    m.setAngles("RElbowYaw", 0.0, 1.0)
    clock.now += 1.0
    assert m.getAngles("RElbowYaw", True) == [0.0]


def test_rest_goes_limp(motion):
    motion.rest()
    assert not motion.robotIsWakeUp()
    assert motion.getStiffnesses("LArm") == [0.0] * 6


def test_get_position_is_the_forward_kinematics(motion, clock):
    q = [0.2, 0.3, -0.5, -0.8, 0.4]
    motion.setAngles(list(arm_model("LArm").names), q, 1.0)
    clock.now += 1.0
    pos = motion.getPosition("LArm", 0, True)
    np.testing.assert_allclose(pos, forward_pose(arm_model("LArm"), q))
    t = np.array(motion.getTransform("LArm", 0, True)).reshape(4, 4)
    np.testing.assert_allclose(t, kinematics.hand_transform(arm_model("LArm"), q), atol=1e-12)
    with pytest.raises(RuntimeError, match="unknown frame 3"):
        motion.getTransform("RArm", 3, True)
    with pytest.raises(RuntimeError, match="LArm, RArm and Torso"):
        motion.getPosition("Head", 0, True)


def test_the_torso_stands_and_can_be_moved(motion):
    """A standing robot: the torso upright above FRAME_ROBOT's origin; the hand's transform in a frame is the
    torso's there times the hand's in FRAME_TORSO."""
    torso = np.array(motion.getTransform("Torso", 2, True)).reshape(4, 4)
    np.testing.assert_allclose(torso[:3, :3], np.eye(3))
    assert 0.25 < torso[2, 3] < 0.40 and torso[0, 3] == torso[1, 3] == 0.0
    moved = frames.torso_transform(0.3, -0.2, 0.31, yaw=0.7, pitch=0.1, roll=-0.05)
    motion.setTorsoTransform(1, moved.ravel().tolist())
    np.testing.assert_allclose(np.array(motion.getTransform("Torso", 1, True)).reshape(4, 4), moved)
    hand = np.array(motion.getTransform("LArm", 0, True)).reshape(4, 4)
    np.testing.assert_allclose(np.array(motion.getTransform("LArm", 1, True)).reshape(4, 4), moved @ hand)
    with pytest.raises(RuntimeError, match="rigid"):
        motion.setTorsoTransform(1, [2.0] + [0.0] * 15)
    with pytest.raises(RuntimeError, match="frames 1 and 2"):
        motion.setTorsoTransform(0, moved.ravel().tolist())


def test_custom_limits_are_reported_and_enforced(clock):
    m = StubMotion(clock=clock, sleep=clock.sleep, limits={"LElbowYaw": (-0.5, 0.5)})
    assert m.getLimits("LElbowYaw")[0][:2] == [-0.5, 0.5]
    assert m.getAngles("LElbowYaw", True) == [-0.5]  # the standing posture, clamped
    m.setAngles("LElbowYaw", 0.7, 0.5)
    assert m.getViolations()[0]["names"] == ["LElbowYaw"]


def test_stiffness_values_are_checked(motion):
    with pytest.raises(RuntimeError, match="stiffness of LElbowYaw must be in"):
        motion.setStiffnesses("LElbowYaw", 2.0)
    with pytest.raises(RuntimeError, match="stiffness of LElbowYaw must be in"):
        motion.setStiffnesses("LElbowYaw", [math.nan])
    with pytest.raises(RuntimeError, match="stiffnesses must be numbers"):
        motion.setStiffnesses("LElbowYaw", ["x"])
