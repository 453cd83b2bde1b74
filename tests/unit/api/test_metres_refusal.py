"""Millimetres sent for metres: the library refuses a target no arm reaches by over a metre, in the service's words.

A target farther from the nearer shoulder than the longest reach (about 0.22 m) plus 1 m is refused with a
one-line ValueError saying coordinates are metres (the message of :func:`nao_ik.model.arm_data.unit_slip`, which
the service sends too); a batch or a path names its offending rows. Targets within that range are answered as
before: out of reach, the closest pose (``reached`` False), no exception.
"""

import numpy as np
import pytest

import nao_ik
from nao_ik.model.arm_data import LONGEST_REACH, SHOULDER_OFFSET_Y, SHOULDER_OFFSET_Z, UNIT_SLIP, unit_slip
from nao_ik.recipes.grasp import plan_grasp
from nao_ik.recipes.reachability import is_reachable, nearest_reachable
from nao_ik.recipes.track import track_path

HINT = "beyond any arm's reach: coordinates are metres (FRAME_TORSO), not millimetres"
MM = [150.0, 100.0, 50.0]  # the README's example, millimetres by mistake


def _one_line(e):
    text = str(e.value)
    assert HINT in text and "\n" not in text
    return text


def test_solve_refuses_millimetres_with_the_services_message():
    with pytest.raises(ValueError) as e:
        nao_ik.solve(MM, "LArm")
    assert _one_line(e) == unit_slip(150.0, 100.0, 50.0, "target")  # the one message, the service's too
    assert "is 187 m from the shoulder, 186.8 m beyond" in str(e.value)


@pytest.mark.parametrize("method", ["analytic", "dls", "nn"])
def test_every_method_refuses_the_same(method):
    with pytest.raises(ValueError, match="coordinates are metres"):
        nao_ik.solve(MM, "RArm", method)


def test_the_line_is_one_metre_beyond_the_longest_reach_from_the_nearer_shoulder():
    """Straight ahead of the left shoulder: just inside the line answered (not reached), just beyond refused;
    the right arm is refused the same point (the nearer shoulder decides, whichever arm is asked)."""
    limit = LONGEST_REACH + UNIT_SLIP
    inside = [limit - 1e-6, SHOULDER_OFFSET_Y, SHOULDER_OFFSET_Z]
    beyond = [limit + 1e-6, SHOULDER_OFFSET_Y, SHOULDER_OFFSET_Z]
    sol = nao_ik.solve(inside, "LArm")
    assert not sol.reached and sol.reason == "out of reach" and sol.error > UNIT_SLIP - 1e-5
    for arm in ("LArm", "RArm"):
        with pytest.raises(ValueError, match="coordinates are metres"):
            nao_ik.solve(beyond, arm)


def test_a_far_target_within_the_line_is_still_answered():
    far = nao_ik.solve([0.5, 0.3, 0.2], "LArm")
    assert not far.reached and far.reason == "out of reach" and far.error > 0.2


def test_solve_batch_names_the_offending_rows():
    targets = np.array([[0.15, 0.10, 0.05]] * 12)
    bad = [1, 4, 5, 7, 8, 10, 11]
    targets[bad] = MM
    with pytest.raises(ValueError) as e:
        nao_ik.solve_batch(targets, "LArm")
    text = _one_line(e)
    assert text.startswith("targets[1] (150, 100, 50) is 187 m from the shoulder")
    assert text.endswith("rows that far off: 1, 4, 5, 7, 8, ... (7 of 12)")


def test_a_batch_with_one_row_off_names_it_alone():
    with pytest.raises(ValueError, match=r"rows that far off: 2 \(1 of 3\)$"):
        nao_ik.solve_batch([[0.15, 0.1, 0.05], [0.12, 0.12, 0.0], [0.0, 0.0, -5.0]], "RArm", "dls")


def test_a_batch_within_the_line_is_answered():
    b = nao_ik.solve_batch([[0.15, 0.1, 0.05], [0.5, 0.3, 0.2]], "LArm")
    assert b.reached.tolist() == [True, False]


def test_poses_refuse_a_position_that_counts():
    with pytest.raises(ValueError) as e:
        nao_ik.solve_pose(MM + [0.0, 0.0, 0.0], "LArm")
    assert _one_line(e).startswith("position6D (150, 100, 50) is 187 m")
    with pytest.raises(ValueError, match="coordinates are metres"):
        nao_ik.solve_pose(MM + [0.0, 0.0, 0.0], "LArm", axis_mask=7, method="dls")


def test_a_pose_whose_position_is_left_free_is_not_refused():
    """axisMask 56 (orientation only): the position does not count, whatever it holds."""
    sol = nao_ik.solve_pose(MM + [0.0, 0.0, 0.0], "LArm", axis_mask=56)
    assert np.isfinite(sol.angles).all()


def test_paths_name_the_offending_points():
    path = [[0.15, 0.10, 0.05], [0.16, 0.10, 0.05], MM]
    with pytest.raises(ValueError) as e:
        nao_ik.plan_path(path, "LArm")
    assert _one_line(e).startswith("points[2] (150, 100, 50)")
    with pytest.raises(ValueError, match=r"rows that far off: 2 \(1 of 3\)"):
        track_path(np.array(path), "LArm", "dls")


@pytest.mark.parametrize(
    "call",
    [
        lambda: nao_ik.solve_all(MM, "LArm"),
        lambda: is_reachable(MM, "LArm"),
        lambda: nearest_reachable(MM, "LArm"),
        lambda: plan_grasp(MM, [1.0, 0.0, 0.0], "LArm"),
    ],
    ids=["solve_all", "is_reachable", "nearest_reachable", "plan_grasp"],
)
def test_the_other_entry_points_refuse_too(call):
    with pytest.raises(ValueError, match="coordinates are metres"):
        call()
