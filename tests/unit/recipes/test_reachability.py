"""isReachable / nearestReachable against solving: exact answers from the swivel intervals."""

import numpy as np
import pytest

from nao_ik.kinematics.chain import forward
from nao_ik.model.arm import arm_model
from nao_ik.recipes.reachability import is_reachable, nearest_reachable, reachable_batch
from nao_ik.solvers import SOLVERS
from nao_ik.solvers.pipeline import _batch

TOL = 1e-4  # solve's default success distance


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_agrees_with_solving_on_10000_random_points(arm):
    """dls (its own answer, from the neutral posture and every restart seed, no closest-pose fallback) against
    the closed-form answer: every point it reaches is reachable, except within TOL of the boundary. The arm's
    limits alone (dls's own answer knows no body; the body's part: test_body.py, test_service_arms.py)."""
    model = arm_model(arm)._replace(body=())
    rng = np.random.default_rng(19 if arm == "LArm" else 20)
    pts = np.asarray(model.shoulder) + rng.uniform(-0.24, 0.24, size=(10_000 if arm == "LArm" else 2_000, 3))
    ok, dex = reachable_batch(pts, model)
    spec = SOLVERS["dls"]
    run = _batch(spec, model, pts, np.tile(model.neutral, (len(pts), 1)), TOL, spec.max_iterations, False)
    solved = np.asarray(run.error) <= TOL
    missed = np.flatnonzero(ok & ~solved)  # reachable, but the solver did not get there
    extra = np.flatnonzero(~ok & solved)  # solved within TOL, but not exactly reachable
    print(
        f"\n{arm}: {len(pts)} points, reachable {ok.sum()}, solved {solved.sum()}, reachable-not-solved "
        f"{missed.size}, solved-not-reachable {extra.size} (all within {TOL * 1e3:g} mm)"
    )
    assert ok.sum() > 0.1 * len(pts)
    assert missed.size == 0
    assert extra.size <= 0.002 * len(pts)
    for i in extra:  # on the boundary: the nearest reachable point is within the solver's tolerance
        assert nearest_reachable(pts[i], model).distance <= TOL
    assert np.all(dex[ok] >= 0.0) and np.all(dex[~ok] == 0.0)


def test_reachable_answer_carries_a_configuration_on_the_target():
    model = arm_model("LArm")
    rng = np.random.default_rng(3)
    q = rng.uniform(model.lower, model.upper, size=(200, 5))
    q[:, 4] = 0.0
    for qi in q:
        t = forward(model, qi)
        r = is_reachable(t, model)
        assert r.reachable and r.distance == 0.0 and r.dexterity >= 0.0
        assert model.within_limits(r.angles, 1e-9)
        assert np.linalg.norm(forward(model, r.angles) - t) < 1e-9


def test_nearest_reachable_of_an_unreachable_point():
    model = arm_model("LArm")
    far = (0.5, 0.3, 0.2)
    r = nearest_reachable(far, model)
    assert not r.reachable and r.dexterity == 0.0
    assert np.linalg.norm(forward(model, r.angles) - np.asarray(r.nearest)) < 1e-9
    assert abs(np.linalg.norm(np.asarray(r.nearest) - far) - r.distance) < 1e-9
    assert is_reachable(r.nearest, model).reachable or r.distance > 0
    assert not is_reachable(far, model).reachable and is_reachable(far, model).nearest is None


def test_the_body_check_plugs_in():
    """A check that refuses every configuration makes every point unreachable; one that allows all changes
    nothing (dexterity within the sampling step)."""
    model = arm_model("LArm")
    t = forward(model, model.neutral)
    free = is_reachable(t, model)
    assert is_reachable(t, model, clear=lambda m, q: np.ones(len(q), bool)).dexterity == pytest.approx(
        free.dexterity, abs=1e-9)  # fmt: skip
    assert not is_reachable(t, model, clear=lambda m, q: np.zeros(len(q), bool)).reachable


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="target y"):
        is_reachable([0.1, float("nan"), 0.0])
    with pytest.raises(ValueError, match="unknown arm"):
        nearest_reachable([0.1, 0.1, 0.0], "Leg")


def test_the_arms_are_mirror_images():
    """RArm's answer at a point mirrored through the torso's x-z plane is LArm's (the workspace's volumes match)."""
    left, right = arm_model("LArm"), arm_model("RArm")
    pts = np.asarray(left.shoulder) + np.random.default_rng(4).uniform(-0.24, 0.24, size=(2000, 3))
    a, da = reachable_batch(pts, left)
    b, db = reachable_batch(pts * [1.0, -1.0, 1.0], right)
    assert a.sum() > 200 and np.array_equal(a, b) and np.allclose(da, db, atol=1e-9)
