"""solve_all: the allowed swivel intervals and every configuration, exact; and computeAllSolutions over qi."""

import math

import numpy as np
import pytest

import nao_ik
from nao_ik.api.all_solutions import _violations
from nao_ik.geometry.swivel import swivel_configurations
from nao_ik.kinematics import chain as kinematics
from nao_ik.model.arm import arm_model


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_every_solution_is_exact_and_within_limits(arm):
    model = arm_model(arm)
    rng = np.random.default_rng(21)
    for q in rng.uniform(model.lower, model.upper, (25, 5)):
        q[4] = 0.0
        t = kinematics.forward(model, q)
        found = nao_ik.solve_all(t, arm)
        assert found.reachable and found.solutions
        for s in found.solutions:
            assert s.error < 1e-9 and model.within_limits(s.angles)
            assert np.linalg.norm(kinematics.forward(model, s.angles) - t) < 1e-9


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_intervals_are_exact_and_contain_the_generating_configuration(arm):
    model = arm_model(arm)
    rng = np.random.default_rng(5)
    for q in rng.uniform(model.lower, model.upper, (15, 5)):
        q[4] = 0.0
        t = kinematics.forward(model, q)
        found = nao_ik.solve_all(t, arm)
        # The configuration the target came from has some swivel: find it on a fine grid
        # and check it lies in one of the intervals reported.
        grid = np.radians(np.arange(-180, 180, 0.25))
        sw = swivel_configurations(model, t[None, :], np.zeros(1), grid)
        k = np.argmin(np.abs(sw.angles[0] - q).max(axis=1))
        phi = grid[k]
        assert any(lo - 0.01 <= phi <= hi + 0.01 for _, lo, hi in found.intervals), (phi, found.intervals)
        # Each end is allowed, and a hair beyond it is not (unless it is the +-pi seam).
        for branch, lo, hi in found.intervals:
            ends = np.array([lo, hi])
            assert np.all(_violations(model, t, 0.0, ends, branch)[1] <= 1e-9)
            beyond = [(lo - 1e-5, lo > -math.pi + 1e-9), (hi + 1e-5, hi < math.pi - 1e-9)]
            for p, check in beyond:
                if check:
                    assert _violations(model, t, 0.0, np.array([p]), branch)[1][0] > 0


def test_a_given_swivel_gives_that_configuration():
    model = arm_model("LArm")
    found = nao_ik.solve_all([0.15, 0.12, 0.08], "LArm")
    s = found.solutions[len(found.solutions) // 2]
    again = nao_ik.solve_all([0.15, 0.12, 0.08], "LArm", swivel=s.swivel)
    assert any(np.allclose(a.angles, s.angles, atol=1e-12) for a in again.solutions)
    assert all(model.within_limits(a.angles) for a in again.solutions)


def test_near_full_stretch_with_a_turned_wrist_both_branches_fit():
    # Nearly straight, the wrist turned: the 12.31 mm hand offset off the
    # forearm axis lets both ElbowRoll roots reach the point.
    model = arm_model("RArm")
    q = [0.3, -0.5, 0.4, 0.08, -1.2]
    t = kinematics.forward(model, q)
    found = nao_ik.solve_all(t, "RArm", wrist=-1.2)
    assert {s.branch for s in found.solutions} == {0, 1}
    assert all(s.error < 1e-9 and model.within_limits(s.angles) for s in found.solutions)


def test_unreachable_targets_have_no_solutions():
    for t in ([0.0, 0.098, 0.1], [0.5, 0.1, 0.1], [-0.2, 0.1, 0.1]):
        found = nao_ik.solve_all(t, "LArm")
        assert not found.reachable and found.solutions == [] and found.intervals == []


def test_bad_input():
    with pytest.raises(ValueError, match="target y"):
        nao_ik.solve_all([0.1, float("nan"), 0.1])
    with pytest.raises(ValueError, match="swivel"):
        nao_ik.solve_all([0.15, 0.12, 0.08], swivel="up")
    with pytest.raises(ValueError, match="step_deg"):
        nao_ik.solve_all([0.15, 0.12, 0.08], step_deg=0)


def test_compute_all_solutions_over_qi(awake):
    r = awake.ik.computeAllSolutions("LArm", 0.15, 0.12, 0.08)
    assert r["reachable"] and r["names"][0] == "LShoulderPitch"
    assert r["intervals"] and all(lo < hi for _, lo, hi in r["intervals"])
    for s in r["solutions"]:
        assert s["error"] < 1e-9 and arm_model("LArm").within_limits(s["angles"])
    assert awake.moves() == []
    with pytest.raises(RuntimeError, match="unknown arm 'Head'"):
        awake.ik.computeAllSolutions("Head", 0.15, 0.12, 0.08)
    with pytest.raises(RuntimeError, match="target z must be a finite number"):
        awake.ik.computeAllSolutions("LArm", 0.15, 0.12, float("inf"))
