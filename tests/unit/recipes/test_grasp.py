"""The grasp's approach direction: one check for the library's plan_grasp and the service's decoder."""

import math

import numpy as np
import pytest

from nao_ik.kinematics.chain import forward
from nao_ik.model.arm import arm_model
from nao_ik.recipes.grasp import APPROACH_DISTANCE, MIN_APPROACH_LENGTH, STEPS, approach_direction, plan_grasp
from nao_ik.service.args import decode

HALF = 1 / math.sqrt(2)


def reachable_target():
    return forward(arm_model("LArm"), [0.3, 0.4, -0.6, -0.9, 0.0])


@pytest.mark.parametrize(
    "approach, unit",
    [
        ([1e200, 1e200, 0.0], (HALF, HALF, 0.0)),  # the squares overflow to inf
        ([-1e308, 0.0, 1e308], (-HALF, 0.0, HALF)),  # the largest floats
        ([1.7976931348623157e308] * 3, (1 / math.sqrt(3),) * 3),  # even the length overflows
        ([0.0, 3e-9, -4e-9], (0.0, 0.6, -0.8)),  # small but longer than the floor
        ([0.0, 0.0, -2.0], (0.0, 0.0, -1.0)),
    ],
)
def test_any_finite_length_is_a_unit_direction(approach, unit):
    a = approach_direction(approach)
    np.testing.assert_allclose(a, unit, rtol=0, atol=1e-15)
    assert math.isclose(math.hypot(*a), 1.0, abs_tol=1e-15)


def test_random_magnitudes_give_unit_directions_of_the_same_sense():
    rng = np.random.default_rng(7)
    for _ in range(2000):
        v = rng.normal(size=3) * 10.0 ** rng.integers(-8, 308)
        a = approach_direction(list(v))
        assert all(math.isfinite(x) for x in a) and math.isclose(math.hypot(*a), 1.0, abs_tol=1e-12)
        assert np.all(np.sign(a) == np.sign(v))


@pytest.mark.parametrize(
    "approach, message",
    [
        ([0.0, 0.0, 0.0], "approach must be a direction"),
        ([-0.0, 0.0, -0.0], "approach must be a direction"),
        ([1e-10, 0.0, 0.0], "approach must be a direction"),  # under a nanometre
        ([5e-324, 5e-324, 0.0], "approach must be a direction"),  # denormals
        ([math.inf, 0.0, 0.0], "approach x must be a finite number"),
        ([1.0, math.nan, 0.0], "approach y must be a finite number"),
        ([1.0, 0.0, -math.inf], "approach z must be a finite number"),
        ([10**400, 0, 0], "approach x must be a finite number"),  # no float holds it
        ([1.0, 0.0], "approach must have 3 values"),
    ],
)
def test_degenerate_or_non_finite_approaches_are_refused_by_both(approach, message):
    with pytest.raises(ValueError, match=message):
        approach_direction(approach)
    with pytest.raises(ValueError, match=message):  # the library
        plan_grasp(reachable_target(), approach, "LArm")
    with pytest.raises(ValueError, match=message):  # the service's decoder
        decode("grasp", ("LArm", 0.1, 0.1, 0.0, approach))


def test_the_floor_is_the_length_not_a_component():
    assert MIN_APPROACH_LENGTH == 1e-9
    approach_direction([8e-10, 8e-10, 0.0])  # each component under the floor, the length above it
    with pytest.raises(ValueError, match="approach must be a direction"):
        approach_direction([6e-10, 6e-10, 0.0])


def test_a_huge_approach_plans_the_same_grasp_as_its_direction():
    t = reachable_target()
    model = arm_model("LArm")
    huge = plan_grasp(t, [1e200, 1e200, 0.0], model)
    plain = plan_grasp(t, [1.0, 1.0, 0.0], model)
    pre = np.asarray(huge.steps[0].target)
    assert huge.steps[0].name == "preGrasp"
    # The pre-grasp point is APPROACH_DISTANCE before the target, not on it (a zero direction would put it there).
    np.testing.assert_allclose(pre, t - APPROACH_DISTANCE * np.array([HALF, HALF, 0.0]), atol=1e-15)
    assert np.linalg.norm(pre - t) == pytest.approx(APPROACH_DISTANCE, abs=1e-12)
    assert [s.name for s in huge.steps] == [s.name for s in plain.steps] and huge.failed == plain.failed
    for a, b in zip(huge.steps, plain.steps):
        assert a.target == b.target and a.angles == b.angles
    if not huge.failed:
        assert [s.name for s in huge.steps] == list(STEPS)


def test_the_service_decodes_a_huge_approach_to_the_same_unit_direction():
    a = decode("grasp", ("LArm", 0.1, 0.1, 0.0, [1e200, 1e200, 0.0]))
    assert a["approach"] == approach_direction([1.0, 1.0, 0.0])
    np.testing.assert_allclose(a["approach"], (HALF, HALF, 0.0), atol=1e-15)
