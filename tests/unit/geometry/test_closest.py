"""Out of reach means as close as the arm can get: the closest attainable pose, for every method."""

import numpy as np
import pytest

import nao_ik
from nao_ik.evidence.bench import unreachable_targets
from nao_ik.geometry.closest import closest
from nao_ik.kinematics.chain import forward_batch
from nao_ik.model.arm import arm_model


def _unreachable(arm: str, per_kind: int, seed: int) -> dict:
    """The benchmark's unreachable targets by kind: beyond full stretch, inside the inner limit, behind the back."""
    t = unreachable_targets(arm, per_kind, seed)
    return {"beyond": t[0::3], "inside": t[1::3], "behind": t[2::3]}


def _oracle(model, step_counts=(49, 33, 49, 33)) -> np.ndarray:
    """Hand positions of a dense grid of configurations (WristYaw 0)."""
    g = [np.linspace(model.lower[i], model.upper[i], n) for i, n in enumerate(step_counts)]
    q = np.stack(np.meshgrid(*g, indexing="ij"), -1).reshape(-1, 4)
    return forward_batch(model, np.concatenate([q, np.zeros((len(q), 1))], axis=1))


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_no_sampled_pose_is_closer_than_the_closest(arm):
    model = arm_model(arm)._replace(body=())  # the limits alone: the sampled poses ignore the body too
    hands = _oracle(model)
    for kind, targets in _unreachable(arm, 6, 3).items():
        for t in targets:
            found = closest(model, t, model.neutral)
            assert model.within_limits(found.angles)
            assert found.distance == pytest.approx(np.linalg.norm(nao_ik.forward(found.angles, arm) - t), abs=1e-12)
            assert found.distance <= np.linalg.norm(hands - t, axis=1).min() + 1e-9, (kind, t)


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_every_method_ends_at_the_attainable_distance(arm):
    model = arm_model(arm)
    targets = [t for ts in _unreachable(arm, 2, 5).values() for t in ts]
    attainable = [closest(model, t, model.neutral).distance for t in targets]
    for method in nao_ik.METHODS:
        for t, best in zip(targets, attainable):
            sol = nao_ik.solve(t, arm, method)
            assert not sol.reached and model.within_limits(sol.angles)
            if method in ("nn-paper", "cells"):  # the papers' approximations keep their answers
                assert sol.shortfall is None and not sol.refined
                continue
            assert sol.error <= best + 1e-8, (method, t)  # 0.01 mm asked; the search gets to 1e-8 m
            assert sol.shortfall is not None and sol.shortfall <= 1e-6
    batch = nao_ik.solve_batch(np.array(targets), arm, "dls")
    assert (batch.error <= np.array(attainable) + 1e-8).all()
    assert np.isnan(nao_ik.solve_batch(np.array(targets), arm, "nn-paper").shortfall).all()


def test_a_far_target_in_front_is_pointed_at():
    """Stretched toward a far target the limits allow facing, the hand lies on the shoulder-target line."""
    model = arm_model("LArm")
    s = np.array(model.shoulder)
    for d in ([1.0, 0.2, 0.0], [1.0, 0.5, 0.3], [0.6, 0.6, -0.4]):
        t = s + 0.6 * np.asarray(d) / np.linalg.norm(d)
        sol = nao_ik.solve(t, "LArm")
        h = nao_ik.forward(sol.angles, "LArm") - s
        off = np.degrees(np.arccos(np.dot(h, t - s) / np.linalg.norm(h) / np.linalg.norm(t - s)))
        assert off < 0.01, (d, off)


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_where_only_the_body_is_in_the_way_no_answer_goes_through_it(arm):
    """The benchmark's targets that an exact solution within the limits reaches but the body keeps the hand from:
    the single solve answers the nearest clear pose toward each, or, where that search finds none, the start
    posture, as the batch does; never a pose through the body. (Without the body the target itself is the closest
    pose: no descent from many starts is needed to find it.)"""
    from nao_ik.evidence.protocol import sample_targets
    from nao_ik.geometry.collision import clearance
    from nao_ik.model.body import MARGIN

    model = arm_model(arm)
    targets = sample_targets(arm, 400, 5)
    batch = nao_ik.solve_batch(targets, arm)
    start = 0
    for i, t in enumerate(targets):
        got = nao_ik.solve(t, arm)
        if not got.reason.startswith("collision"):
            continue
        if list(got.angles) == list(model.neutral):  # nothing clear found toward it
            start += 1
            assert list(batch.angles[i]) == list(model.neutral)
        else:
            assert clearance(model, got.angles, model.body).distance >= MARGIN - 1e-9, (i, got)
    assert start >= 1


def test_where_only_the_body_is_in_the_way_closest_runs_no_descent(monkeypatch):
    """For those targets closest() goes straight to the nearest clear pose toward the target (no descent from many
    starts to find the closest pose without the body: the target itself), and answers as that search does."""
    import nao_ik.geometry.closest as module
    from nao_ik.evidence.protocol import sample_targets
    from nao_ik.geometry.clear import closest_clear

    def descent(*args):
        raise AssertionError("the descent ran")

    model = arm_model("LArm")
    blocked = [t for t in sample_targets("LArm", 200, 5) if nao_ik.solve(t, model).reason.startswith("collision")]
    assert len(blocked) >= 10
    monkeypatch.setattr(module, "_search", descent)
    for t in blocked:
        got, want = closest(model, t, model.neutral), closest_clear(model, t, model.neutral)
        assert got.angles == want.angles and got.distance == want.distance and not got.exact


def test_a_single_solves_second_search_with_the_body_is_its_first(monkeypatch):
    """nearest() with the body on one target (floats) keeps the thread's last search: the same model, target and
    start get its answer again (a fresh list: a caller's change does not reach it); another of them searches."""
    import nao_ik.geometry.nearest as module
    from nao_ik.kinematics.ops import SCALAR

    calls = []
    search = module.nearest_clear_scalar
    monkeypatch.setattr(module, "nearest_clear_scalar", lambda *a: calls.append(a) or search(*a))
    monkeypatch.setattr(module._LAST, "search", None, raising=False)
    model, other = arm_model("LArm"), arm_model("RArm")
    t, q0 = [0.12, 0.15, 0.05], list(model.neutral)
    first = module.nearest(model, t, q0, SCALAR)
    first.q[0] = 99.0
    again = module.nearest(model, list(t), tuple(q0), SCALAR)
    assert len(calls) == 1 and again.q[0] != 99.0 and again.seconds == first.seconds
    module.nearest(model, [0.12, 0.15, 0.06], q0, SCALAR)
    module.nearest(other, t, list(other.neutral), SCALAR)
    module.nearest(model._replace(body=model.body[:2]), t, q0, SCALAR)
    assert len(calls) == 4
