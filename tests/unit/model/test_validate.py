"""The library refuses values that only look like numbers or points: booleans, maps, sets, complex, strings."""

import numpy as np
import pytest

import nao_ik
from nao_ik.api import position as api
from nao_ik.model.arm import arm_model

NOT_POINTS = [
    ({1.0: "a", 2.0: "b", 3.0: "c"}, "a map"),
    ({0.15, 0.12, 0.08}, "a set"),
    ("abc", "'abc'"),
    (b"abc", "b'abc'"),
]
NOT_NUMBERS = [(True, "a boolean True"), (np.bool_(False), "a boolean"), (1 + 2j, r"a complex number \(1\+2j\)"),
               ("0.1", "a string '0.1'"), (None, "None"), (10**400, "an integer of 401 digits")]  # fmt: skip


@pytest.mark.parametrize("value, named", NOT_POINTS)
def test_solve_refuses_containers_that_are_not_points(value, named):
    with pytest.raises(ValueError, match=f"target must be a sequence of 3 numbers.*got {named}"):
        nao_ik.solve(value)


@pytest.mark.parametrize("value, named", NOT_NUMBERS)
def test_solve_refuses_coordinates_that_are_not_real_numbers(value, named):
    with pytest.raises(ValueError, match=f"target y must be a finite number, got {named}"):
        nao_ik.solve([0.15, value, 0.08])


@pytest.mark.parametrize(
    "targets, named",
    [(np.ones((2, 3), dtype=bool), "booleans"), (np.ones((2, 3), dtype=complex), "complex numbers"),
     ([["0.1", "0.1", "0.1"]], "strings"), ([[True, 0.1, 0.1]], "a boolean True"), ([[0.1, None, 0.1]], "objects"),
     ({1.0: 2.0}, "a map"), ({0.1, 0.2, 0.3}, "a set"), ("0.1 0.1 0.1", "'0.1 0.1 0.1'")],
)  # fmt: skip
def test_solve_batch_refuses_arrays_that_are_not_real_numbers(targets, named):
    with pytest.raises(ValueError, match=f"targets.* got {named}"):
        nao_ik.solve_batch(targets)


def test_solve_batch_works_in_bounded_blocks(monkeypatch):
    model = arm_model("LArm")
    rng = np.random.default_rng(3)
    from nao_ik.kinematics import chain as kinematics

    targets = kinematics.forward_batch(model, rng.uniform(model.lower, model.upper, (90, 5)))
    whole = nao_ik.solve_batch(targets, "LArm", "dls")
    starts = np.tile(model.neutral, (90, 1))
    whole_from = nao_ik.solve_batch(targets, "LArm", "dls", initial=starts)
    seen = []
    real = api.run_batch
    monkeypatch.setattr(api, "run_batch", lambda spec, m, t, *a, **k: seen.append(len(t)) or real(spec, m, t, *a, **k))
    monkeypatch.setattr(api, "BATCH_BLOCK", 40)
    blocks = nao_ik.solve_batch(targets, "LArm", "dls")
    blocks_from = nao_ik.solve_batch(targets, "LArm", "dls", initial=starts)
    assert seen == [40, 40, 10] * 2
    for a, b in [*zip(whole, blocks), *zip(whole_from, blocks_from)]:
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
        else:
            assert a == b


@pytest.mark.parametrize(
    "limits, message",
    [({"LShoulderpitch": [-1.0, 1.0, 8.0]}, "unknown joint 'LShoulderpitch' for LArm: expected one of LShoulderPitch"),
     ({"LShoulderpitch": [1.0, -1.0]}, "unknown joint 'LShoulderpitch'"),
     ({"RElbowYaw": [-1.0, 1.0]}, "unknown joint 'RElbowYaw' for LArm"),
     ({"LElbowYaw": ["a", "b"]}, r"limits of LElbowYaw must be a list \[min, max, \.\.\.\] of finite numbers"),
     ({"LElbowYaw": 1.0}, "limits of LElbowYaw must be a list"),
     ({"LElbowYaw": [True, 1.0]}, "limits of LElbowYaw must be"),
     ({"LElbowYaw": [-(10**400), 1.0]}, "limits of LElbowYaw must be finite numbers")],
)  # fmt: skip
def test_with_limits_refuses_unknown_names_and_names_the_joint(limits, message):
    with pytest.raises(ValueError, match=message):
        arm_model("LArm").with_limits(limits)


def test_speed_has_a_documented_minimum():
    from nao_ik.model import validate

    for tiny in (5e-324, 1e-300, 0.009):
        with pytest.raises(ValueError, match=r"speed must be in \[0.01, 1\]"):
            validate.speed(tiny)
    assert validate.speed(validate.MIN_SPEED) == 0.01
