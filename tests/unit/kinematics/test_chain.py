"""The arm model and forward kinematics against the URDF, and the Jacobian against finite differences."""

import numpy as np
import pytest

import nao_ik
from nao_ik.kinematics import chain as kinematics
from nao_ik.model.arm import arm_model
from tests.urdf_chain import hand_transform, load_joints

JOINTS = load_joints()
# ros-naoqi's URDF gives RHand z = -0.01213, a transposition of the -0.01231 of
# Aldebaran's documentation and of its own LHand; nao_ik uses -0.01231.
RHAND_Z_DOC = -0.01231


def random_angles(model, rng, n):
    return rng.uniform(model.lower, model.upper, size=(n, 5))


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_model_matches_urdf_limits_and_names(arm):
    model = arm_model(arm)
    for j in model.joints:
        u = JOINTS[j.name]
        assert j.lower == pytest.approx(u["lower"], abs=1e-6)
        assert j.upper == pytest.approx(u["upper"], abs=1e-6)
        assert j.max_velocity == pytest.approx(u["velocity"], abs=1e-4)


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_forward_kinematics_equals_urdf_chain(arm):
    model = arm_model(arm)
    rng = np.random.default_rng(1)
    hand_z = RHAND_Z_DOC if arm == "RArm" else None
    for q in random_angles(model, rng, 300):
        ref = hand_transform(JOINTS, arm[0], q, hand_z)
        ours = kinematics.hand_transform(model, q)
        np.testing.assert_allclose(ours[:3, 3], ref[:3, 3], atol=1e-9)
        np.testing.assert_allclose(ours[:3, :3], ref[:3, :3], atol=1e-9)


def test_urdf_right_hand_typo_is_the_only_difference():
    model = arm_model("RArm")
    q = np.array([0.3, -0.5, 0.7, 0.9, -0.4])
    ours = kinematics.hand_transform(model, q)[:3, 3]
    as_printed = hand_transform(JOINTS, "R", q)[:3, 3]
    wrist_z_axis = kinematics.hand_transform(model, q)[:3, 2]
    # The two differ by exactly 0.18 mm along the wrist's z axis.
    np.testing.assert_allclose(ours - as_printed, (RHAND_Z_DOC + 0.01213) * wrist_z_axis, atol=1e-12)


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_batch_forward_equals_single(arm):
    model = arm_model(arm)
    q = random_angles(model, np.random.default_rng(2), 200)
    batch = kinematics.forward_batch(model, q)
    single = np.array([kinematics.forward(model, row) for row in q])
    np.testing.assert_allclose(batch, single, atol=1e-15)
    np.testing.assert_allclose(nao_ik.forward(q[0], arm), single[0], atol=1e-15)


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_jacobian_matches_finite_differences(arm):
    model = arm_model(arm)
    h = 1e-6
    for q in random_angles(model, np.random.default_rng(3), 50):
        j = kinematics.jacobian(model, q)
        fd = np.empty((3, 5))
        for i in range(5):
            dq = np.zeros(5)
            dq[i] = h
            fd[:, i] = (kinematics.forward(model, q + dq) - kinematics.forward(model, q - dq)) / (2 * h)
        np.testing.assert_allclose(j, fd, atol=1e-8)


def test_zero_pose_is_arm_stretched_forward():
    # At the zero pose every joint frame has the torso's orientation.
    pos = kinematics.joint_positions(arm_model("LArm"), [0, 0, 0, 0, 0])
    np.testing.assert_allclose(pos["shoulder"], [0, 0.098, 0.1])
    np.testing.assert_allclose(pos["elbow"], [0.105, 0.113, 0.1])
    np.testing.assert_allclose(pos["wrist"], [0.16095, 0.113, 0.1])
    np.testing.assert_allclose(pos["hand"], [0.2187, 0.113, 0.1 - 0.01231])


def test_runtime_limits_replace_documented_ones():
    model = arm_model("LArm").with_limits({"LElbowYaw": [-1.0, 1.0, 5.0, 1.2]})
    j = model.joints[2]
    assert (j.lower, j.upper, j.max_velocity) == (-1.0, 1.0, 5.0)
    assert model.joints[0] == arm_model("LArm").joints[0]
    with pytest.raises(ValueError, match="LElbowYaw"):
        arm_model("LArm").with_limits({"LElbowYaw": [1.0, -1.0, 5.0]})
    with pytest.raises(ValueError, match="LElbowYaw"):
        arm_model("LArm").with_limits({"LElbowYaw": [float("nan"), 1.0, 5.0]})


def test_cos_sin_of_both_backends_match_numpy():
    # The kernel's cos/sin come from tan(x / 2); they must be as good as
    # np.cos and np.sin (joint angles, swivels plus offsets, and beyond).
    from nao_ik.kinematics.ops import ARRAY, SCALAR

    x = np.concatenate([np.random.default_rng(0).uniform(-7.0, 7.0, 100_000), [0.0, np.pi, -np.pi, 2 * np.pi]])
    c, s = ARRAY.cos_sin(x)
    assert np.abs(c - np.cos(x)).max() <= 4e-16 and np.abs(s - np.sin(x)).max() <= 4e-16
    for v in x[:200].tolist() + [np.pi, -np.pi]:
        cs, ss = SCALAR.cos_sin(v)
        assert abs(cs - np.cos(v)) <= 4e-16 and abs(ss - np.sin(v)) <= 4e-16
