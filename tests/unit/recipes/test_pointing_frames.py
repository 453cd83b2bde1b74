"""pointAt's closed form, the frame conversions and the grasp's plan, as library functions."""

import math

import numpy as np
import pytest

from nao_ik.kinematics import frames
from nao_ik.kinematics.chain import forward
from nao_ik.model.arm import arm_model
from nao_ik.recipes.grasp import APPROACH_DISTANCE, STEPS, plan_grasp
from nao_ik.recipes.pointing import ahead, miss, point_at


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_point_at_is_exact_for_the_directions_it_can_point(arm):
    model = arm_model(arm)
    rng = np.random.default_rng(5)
    d = rng.normal(size=(120, 3))
    d /= np.linalg.norm(d, axis=1)[:, None]
    found = 0
    for u in d:
        target = np.asarray(model.shoulder) + 2.0 * u
        p = point_at(target, model)
        if p.found:
            found += 1
            assert model.within_limits(p.angles) and p.miss < 1e-9 and miss(model, p.angles, target) == p.miss
            assert ahead(model, p.angles, target) > 0.1  # the target lies ahead of the forearm, not behind
        else:
            assert p.reason and p.angles == model.neutral
    print(f"\n{arm}: pointed exactly at {found} of {len(d)} random directions")
    assert found >= 0.9 * len(d)


def test_point_at_refuses_a_target_within_the_hand():
    p = point_at(arm_model("LArm").shoulder, "LArm")
    assert not p.found and "within the hand's reach" in p.reason


def test_frame_round_trips():
    torso = frames.torso_transform(0.3, -0.1, 0.32, yaw=1.1, pitch=-0.2, roll=0.3)
    p = (0.4, -0.7, 0.05)
    back = frames.point_from_torso(frames.point_to_torso(p, torso), torso)
    np.testing.assert_allclose(back, p, atol=1e-14)
    pose = (0.12, 0.1, 0.05, 0.3, -0.4, 1.2)
    np.testing.assert_allclose(frames.pose_to_torso(frames.pose_from_torso(pose, torso), torso), pose, atol=1e-12)
    # A point at the torso's origin in the frame is FRAME_TORSO's origin.
    np.testing.assert_allclose(frames.point_to_torso(torso[:3, 3], torso), (0, 0, 0), atol=1e-15)


@pytest.mark.parametrize("bad, message", [(3, "frame must be"), (True, "frame must be"), ("2", "frame must be"),
                                          (1.5, "frame must be")])  # fmt: skip
def test_bad_frames_are_refused(bad, message):
    with pytest.raises(ValueError, match=message):
        frames.check_frame(bad)
    assert frames.check_frame(2.0) == 2


def test_bad_transforms_are_refused():
    with pytest.raises(ValueError, match="16 values"):
        frames.check_transform([1.0] * 15)
    with pytest.raises(ValueError, match="rotation"):
        frames.check_transform([2.0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1])
    with pytest.raises(ValueError, match="finite"):
        frames.check_transform([math.nan] + [0.0] * 15)


def test_grasp_plan_steps_and_the_failed_step():
    model = arm_model("LArm")
    t = forward(model, [0.3, 0.4, -0.6, -0.9, 0.0])
    plan = plan_grasp(t, [0, 0, -2.0], model)  # from above: the pre-grasp point 4 cm higher
    assert plan.failed == "" and [s.name for s in plan.steps] == list(STEPS)
    np.testing.assert_allclose(plan.steps[0].target, t + [0, 0, APPROACH_DISTANCE])
    for s in plan.steps:
        if s.angles is not None:
            assert s.reached and np.linalg.norm(forward(model, s.angles) - s.target) <= 1e-4
    far = plan_grasp([0.5, 0.1, 0.0], [1, 0, 0], model)
    assert far.failed == "preGrasp" and len(far.steps) == 1 and "preGrasp" in far.reason
    with pytest.raises(ValueError, match="approach must be a direction"):
        plan_grasp(t, [0, 0, 0], model)
