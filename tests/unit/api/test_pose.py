"""The hand's pose: position6D conversions against the URDF, the closed form, solve_pose's answers and compromises."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import nao_ik
from nao_ik.api.pose import DEFAULT_WEIGHTS, check_axis_mask
from nao_ik.geometry.collision import clearance, clearance_batch
from nao_ik.geometry.full_pose import pose_fast, pose_root
from nao_ik.kinematics.hand_pose import (
    angles_from_rotation,
    forward_pose,
    hand_frame,
    pose6d_to_transform,
    rotation_angle,
    rotation_from_angles,
    rotation_vector,
    transform_to_pose6d,
)
from nao_ik.model.arm import arm_model
from nao_ik.model.body import MARGIN
from nao_ik.solvers.pose_dls import PoseTarget, residual
from tests.urdf_chain import hand_transform, load_joints

JOINTS = load_joints()
RHAND_Z_DOC = -0.01231  # see test_kinematics: the URDF's RHand z is a typo
ARMS = ("LArm", "RArm")
DEG = math.pi / 180.0


def rx(a):
    return np.array([[1, 0, 0], [0, np.cos(a), -np.sin(a)], [0, np.sin(a), np.cos(a)]])


def ry(a):
    return np.array([[np.cos(a), 0, np.sin(a)], [0, 1, 0], [-np.sin(a), 0, np.cos(a)]])


def rz(a):
    return np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]])


def random_angles(model, seed, n):
    return np.random.default_rng(seed).uniform(model.lower, model.upper, size=(n, 5))


def rotate(pose6, axis, angle):
    """The pose turned by ``angle`` about a FRAME_TORSO axis (position kept)."""
    a = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    turn = np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k
    t = pose6d_to_transform(pose6)
    t[:3, :3] = turn @ t[:3, :3]
    return transform_to_pose6d(t)


# ------------------------------------------------------------------ conversions


@pytest.mark.parametrize("arm", ARMS)
def test_forward_pose_is_the_urdf_gripper_frame(arm):
    model = arm_model(arm)
    hand_z = RHAND_Z_DOC if arm == "RArm" else None
    for q in random_angles(model, 11, 300):
        ref = hand_transform(JOINTS, arm[0], q, hand_z)  # torso -> l_gripper / r_gripper
        pose = nao_ik.forward_pose(q.tolist(), arm)
        np.testing.assert_allclose(pose6d_to_transform(pose), ref, atol=1e-9)


@given(st.lists(st.floats(-3.0, 3.0), min_size=3, max_size=3))
def test_position6d_rotation_is_rz_ry_rx_and_round_trips(w):
    r = np.array(rotation_from_angles(*w))
    np.testing.assert_allclose(r, rz(w[2]) @ ry(w[1]) @ rx(w[0]), atol=1e-12)
    back = angles_from_rotation(r.tolist())
    np.testing.assert_allclose(rotation_from_angles(*back), r, atol=1e-9)
    assert -math.pi / 2 <= back[1] <= math.pi / 2


def test_gimbal_lock_still_round_trips():
    for wy in (math.pi / 2, -math.pi / 2):
        r = rotation_from_angles(0.7, wy, 0.2)
        np.testing.assert_allclose(rotation_from_angles(*angles_from_rotation(r)), r, atol=1e-12)
    t = pose6d_to_transform([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    np.testing.assert_allclose(transform_to_pose6d(t), [0.1, 0.2, 0.3, 0.4, 0.5, 0.6], atol=1e-12)


@given(st.lists(st.floats(-1.0, 1.0), min_size=3, max_size=3), st.floats(0.0, math.pi))
def test_rotation_vector_is_the_log_map(axis, angle):
    a = np.asarray(axis)
    if np.linalg.norm(a) < 1e-3:
        return
    a = a / np.linalg.norm(a)
    k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    turn = np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k
    r = np.array(rotation_from_angles(0.3, -0.2, 1.1))
    target = turn @ r
    v = np.array(rotation_vector(target.tolist(), r.tolist()))
    assert rotation_angle(target.tolist(), r.tolist()) == pytest.approx(angle, abs=1e-7)
    if angle < math.pi - 1e-3:
        np.testing.assert_allclose(v, angle * a, atol=1e-7)
    else:  # a half turn: either direction of the axis
        assert np.linalg.norm(v) == pytest.approx(angle, abs=1e-7)
        assert abs(abs(v @ a) - angle) < 1e-6


# ------------------------------------------------------------------ closed form


@pytest.mark.parametrize("arm", ARMS)
def test_closed_form_inverts_the_forward_kinematics(arm):
    model = arm_model(arm)
    for q in random_angles(model, 12, 300):
        pose = forward_pose(model, q)
        r = rotation_from_angles(*pose[3:])
        general = pose_root(model, pose[:3], r, 0)
        fast = pose_fast(model, pose[:3], r)
        np.testing.assert_allclose(general.q, q, atol=1e-9)
        np.testing.assert_allclose(fast.q, q, atol=1e-9)
        assert general.violation < 1e-9 and fast.violation < 1e-9 and not fast.outside
        # The fast path's errors are those of the chain's forward kinematics, here and off the answer.
        for target in (pose, np.add(pose, [0.01, -0.02, 0.005, 0.3, -0.2, 0.1])):
            rt = rotation_from_angles(*target[3:])
            f = pose_fast(model, target[:3], rt)
            hand, rot = hand_frame(model, f.q)
            assert f.position_error == pytest.approx(math.dist(hand, target[:3]), abs=1e-12)
            assert f.rotation_error == pytest.approx(rotation_angle(rt, rot), abs=1e-9)


@pytest.mark.parametrize("arm", ARMS)
def test_full_poses_of_random_configurations_are_reached(arm):
    """1,000 random in-limit configurations clear of the body, all five joints random: axisMask 63 within 0.1 mm
    and 0.1 degree (the poses only configurations through the body take: tests/unit/model/test_body.py)."""
    model = arm_model(arm)
    rng = np.random.default_rng(13)
    reached = out = 0
    pool = random_angles(model, 14, 1400)
    clear = [q for q in pool if clearance(model, q, model.body).distance >= MARGIN]
    assert len(clear) >= 1000
    for q in clear[:1000]:
        start = rng.uniform(model.lower, model.upper).tolist()
        sol = nao_ik.solve_pose(forward_pose(model, q), arm, 63, initial=start)
        hand, rot = hand_frame(model, sol.angles)
        target = pose6d_to_transform(forward_pose(model, q))
        # The errors the answer states are the answer's own.
        assert sol.position_error == pytest.approx(np.linalg.norm(np.subtract(hand, target[:3, 3])), abs=1e-12)
        assert sol.rotation_error == pytest.approx(rotation_angle(target[:3, :3].tolist(), rot), abs=1e-9)
        reached += sol.reached and sol.position_error <= 1e-4 and sol.rotation_error <= 0.1 * DEG
        out += not model.within_limits(sol.angles)
    assert reached >= 999
    assert out == 0


def test_with_elbow_roll_range_through_zero_both_roots_are_weighed_by_move_time():
    model = arm_model("LArm").with_limits({"LElbowRoll": [-1.5, 1.5]})
    q = [0.2, 0.3, 0.5, -0.6, 0.4]
    pose = forward_pose(model, q)
    assert pose_fast(model, pose[:3], rotation_from_angles(*pose[3:])) is None  # the general path
    sol = nao_ik.solve_pose(pose, model, 63, initial=q)
    assert sol.reached and sol.iterations == 0 and np.allclose(sol.angles, q, atol=1e-9)


# ------------------------------------------------------------------ masks and compromises


@pytest.mark.parametrize("method", ["analytic", "fabrik", "dls", "nn"])
def test_axis_mask_7_is_the_position_method(method):
    model = arm_model("RArm")
    rng = np.random.default_rng(15)
    for q in random_angles(model, 16, 10):
        start = rng.uniform(model.lower, model.upper).tolist()
        target = nao_ik.forward(q.tolist(), "RArm").tolist()
        pose = nao_ik.solve_pose(target + [0.3, -1.0, 2.0], "RArm", 7, initial=start, method=method)
        plain = nao_ik.solve(target, "RArm", method, initial=start)
        assert pose.angles == plain.angles and pose.reached == plain.reached
        assert pose.position_error == plain.error and pose.rotation_error == 0.0
        assert isinstance(pose, nao_ik.PoseSolution) and pose[:8] == tuple(plain)[:8]


def cost(model, pose6, q, weights=DEFAULT_WEIGHTS):
    target = PoseTarget(tuple(pose6[:3]), rotation_from_angles(*pose6[3:]), tuple(weights))
    res, _ = residual(model, target, list(q))
    return sum((w * r) ** 2 for w, r in zip(weights, res)), res


@pytest.mark.parametrize("arm", ARMS)
def test_inconsistent_poses_get_the_best_compromise_within_the_limits(arm):
    model = arm_model(arm)
    rng = np.random.default_rng(17)
    lo, hi = np.asarray(model.lower), np.asarray(model.upper)
    for q in random_angles(model, 18, 8):
        pose = rotate(forward_pose(model, q), rng.normal(size=3), rng.uniform(10, 40) * DEG)
        sol = nao_ik.solve_pose(pose, arm, 63)
        assert all(math.isfinite(a) for a in sol.angles) and model.within_limits(sol.angles)
        assert sol.reached is False
        best, res = cost(model, pose, sol.angles)
        # No worse than the configuration the pose was turned from, and no sampled neighbour does better.
        assert best <= cost(model, pose, q)[0] * (1 + 1e-9)
        assert sol.position_error == pytest.approx(np.linalg.norm(res[:3]), abs=1e-12)
        assert sol.rotation_error == pytest.approx(np.linalg.norm(res[3:]), abs=1e-9)
        for radius in (1e-3, 1e-2, 5e-2):
            near = np.clip(np.asarray(sol.angles) + rng.uniform(-radius, radius, (150, 5)), lo, hi)
            for other in near:
                c, r = cost(model, pose, other)
                assert c >= best * (1 - 1e-9)
                assert not (np.linalg.norm(r[:3]) < sol.position_error and np.linalg.norm(r[3:]) < sol.rotation_error)


def test_position_first_by_default_and_weights_change_the_compromise():
    model = arm_model("LArm")
    pose = rotate(forward_pose(model, [0.4, 0.3, -0.6, -1.0, 0.2]), [0, 0, 1], 30 * DEG)
    first = nao_ik.solve_pose(pose, "LArm")
    assert first.position_error <= 1e-4 and first.rotation_error > 0.1 * DEG  # the hand is where it was sent
    turn = nao_ik.solve_pose(pose, "LArm", weights=[1, 1, 1, 1, 1, 1])
    assert turn.rotation_error < first.rotation_error and turn.position_error > first.position_error
    assert not turn.reached


def test_out_of_reach_and_half_turns_are_finite_and_not_reached():
    model = arm_model("LArm")
    far = nao_ik.solve_pose([0.5, 0.4, 0.6, 0.3, -0.2, 1.0], "LArm")
    assert not far.reached and far.position_error > 0.2
    q = [0.4, 0.3, -0.6, -1.0, 0.2]
    half = rotate(forward_pose(model, q), [0.3, -1.0, 0.2], math.pi)  # the log map's singular point
    full = nao_ik.solve_pose(half, "LArm", 63, initial=q)
    assert not full.reached and full.position_error <= 1e-4  # position first
    # The orientation alone: another posture has it (one through the torso: the arm's limits alone here).
    turned = nao_ik.solve_pose(half, model._replace(body=()), 56, initial=q)
    assert turned.reached
    for sol in (far, full, turned):
        assert all(math.isfinite(a) for a in sol.angles) and model.within_limits(sol.angles)
        assert math.isfinite(sol.position_error) and math.isfinite(sol.rotation_error)


@pytest.mark.parametrize("mask", [56, 7 | 8, 7 | 32, 1 | 2 | 4 | 16 | 32, 8 | 16 | 32 | 4, 1 | 4 | 8 | 16])
def test_partial_masks_of_a_reachable_pose_are_reached(mask):
    """The components the mask leaves free do not count: garbage there, the rest of a reachable pose is reached.

    The orientation components are those of the rotation vector log(R* R^T) in FRAME_TORSO, so the target is
    turned about the free rotation axes only (its masked components stay reachable)."""
    model = arm_model("LArm")
    rng = np.random.default_rng(19)
    ok = 0
    qs = random_angles(model, 20, 40)
    qs = qs[clearance_batch(model, qs)[0] >= 0.02][:12]  # reachable clear of the body
    for q in qs:
        free = [i for i in range(6) if not mask >> i & 1]
        turn = np.zeros(3)
        turn[[i - 3 for i in free if i >= 3]] = rng.uniform(-0.5, 0.5, len([i for i in free if i >= 3]))
        pose = np.array(forward_pose(model, q))
        if turn.any():
            pose = np.array(rotate(pose.tolist(), turn, np.linalg.norm(turn)))
        pose[[i for i in free if i < 3]] = rng.uniform(-1, 1, len([i for i in free if i < 3]))
        sol = nao_ik.solve_pose(pose.tolist(), "LArm", mask)
        assert model.within_limits(sol.angles)
        # Turned about its free axes, a pose may need a configuration through the body: then it says so.
        ok += sol.reached or sol.reason.startswith("collision: ")
    assert ok >= len(qs) - 1


@pytest.mark.parametrize(
    "value, message",
    [(0, "1..63"), (64, "1..63"), (1.5, "whole number"), (True, "whole number"), ("63", "whole number")],
)
def test_bad_axis_masks_are_refused(value, message):
    with pytest.raises(ValueError, match=message):
        check_axis_mask(value)
    with pytest.raises(ValueError, match=message):
        nao_ik.solve_pose([0.15, 0.1, 0.1, 0, 0, 0], "LArm", value)


@pytest.mark.parametrize(
    "value, message",
    [
        ([0.1, 0.1, 0.1, 0, 0], "6 values"),
        ([0.1, 0.1, float("nan"), 0, 0, 0], "position6D z must be a finite number"),
        ([0.1, 0.1, 0.1, 0, float("inf"), 0], "position6D wy must be a finite number"),
        ([0.1, "a", 0.1, 0, 0, 0], "position6D y"),
        ("abcdef", "sequence"),
        ([2e6, 0, 0, 0, 0, 0], "within"),
        ([0.1, 0.1, 0.1, 0, 0, 90.0], r"position6D wz 90.0 is beyond 2 pi: angles are radians .*, not degrees"),
        ([0.1, 0.1, 0.1, -6.3, 0, 0], "position6D wx -6.3 is beyond 2 pi"),
    ],
)
def test_bad_position6d_is_refused(value, message):
    with pytest.raises(ValueError, match=message):
        nao_ik.solve_pose(value, "LArm")


def test_bad_weights_and_methods_are_refused():
    pose = [0.15, 0.1, 0.1, 0, 0, 0]
    with pytest.raises(ValueError, match=">= 0"):
        nao_ik.solve_pose(pose, "LArm", weights=[1, 1, 1, -1, 1, 1])
    with pytest.raises(ValueError, match="weight 0"):
        nao_ik.solve_pose(pose, "LArm", 56, weights=[1, 1, 1, 0, 0, 0])
    with pytest.raises(ValueError, match="pose method"):
        nao_ik.solve_pose(pose, "LArm", 63, method="fabrik")
    with pytest.raises(ValueError, match="unknown method"):
        nao_ik.solve_pose(pose, "LArm", 7, method="nope")


def test_a_pose_not_reached_says_what_is_left():
    pose = nao_ik.forward_pose([0.4, 0.5, -0.3, -0.9, 0.7], "LArm")
    pose[5] += 0.5  # turned about z: not a pose the arm can take with that position
    sol = nao_ik.solve_pose(pose, "LArm")
    assert not sol.reached and sol.reason == f"orientation: {math.degrees(sol.rotation_error):.3g} degrees off"
    assert nao_ik.solve_pose(pose, "LArm", 7).reason == ""  # the position alone is reached
    assert nao_ik.solve_pose(pose, "LArm", rotation_tolerance=1.0).reason == ""  # within a looser tolerance
