"""Every solver on reachable and unreachable targets of both arms, and bad input."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nao_ik
from nao_ik.evidence.protocol import sample_targets
from nao_ik.geometry import nearest as nearest_module
from nao_ik.geometry.recovery import recover_angles
from nao_ik.geometry.swivel import swivel_configurations
from nao_ik.kinematics import chain as kinematics
from nao_ik.kinematics.ops import ARRAY, SCALAR
from nao_ik.model.arm import arm_model
from nao_ik.solvers import ITERATIVE, SOLVERS

METHODS = list(ITERATIVE)  # the network methods have tests of their own (test_nn.py)
ARMS = ["LArm", "RArm"]


def unit_config(draw_fractions, arm, wrist=None):
    model = arm_model(arm)
    q = [lo + f * (hi - lo) for f, lo, hi in zip(draw_fractions, model.lower, model.upper)]
    q[4] = model.neutral[4] if wrist is None else wrist
    return model, q


fractions = st.lists(st.floats(0.0, 1.0), min_size=5, max_size=5)
# Strictly inside the limits: a configuration exactly on two limits at once is a
# single point of the swivel circle, tested apart below.
inner_fractions = st.lists(st.floats(0.005, 0.995), min_size=5, max_size=5)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("arm", ARMS)
@given(fr=inner_fractions)
def test_reachable_targets_are_reached_within_limits(method, arm, fr):
    model, q = unit_config(fr, arm)
    target = kinematics.forward(model, q)
    sol = nao_ik.solve(target, model._replace(body=()), method)  # the limits alone (the body: test_body.py)
    assert sol.reached, (q, sol)
    assert sol.error <= 1e-4
    assert model.within_limits(sol.angles)
    assert np.linalg.norm(kinematics.forward(model, sol.angles) - target) <= 1e-4
    assert sol.names == model.names and sol.arm == arm


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("arm", ARMS)
def test_batch_reaches_the_same_targets(method, arm):
    model = arm_model(arm)
    rng = np.random.default_rng(7)
    q = rng.uniform(model.lower, model.upper, (300, 5))
    q[:, 4] = model.neutral[4]
    targets = kinematics.forward_batch(model, q)
    b = nao_ik.solve_batch(targets, model._replace(body=()), method)  # the limits alone (the body: test_body.py)
    assert b.angles.shape == (300, 5)
    assert b.reached.all()
    assert np.all((b.angles >= model.lower) & (b.angles <= model.upper))
    np.testing.assert_allclose(kinematics.forward_batch(model, b.angles), targets, atol=1e-4)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("arm", ARMS)
# The slow property (each solve searches for the closest pose, about 50 ms): 10 targets per method and arm under make
# test, 20 under the soak profile.
@settings(max_examples=max(10, settings.default.max_examples // 100))
@given(
    direction=st.lists(st.floats(-1.0, 1.0), min_size=3, max_size=3).filter(lambda v: np.linalg.norm(v) > 0.1),
    distance=st.floats(0.23, 1.2),  # farther than any arm reaches by over a metre: refused (test_metres.py)
)
def test_unreachable_targets_give_closest_pose_not_exception(method, arm, direction, distance):
    model = arm_model(arm)
    d = np.asarray(direction) / np.linalg.norm(direction)
    target = np.asarray(model.shoulder) + distance * d
    sol = nao_ik.solve(target, arm, method)
    assert not sol.reached
    assert all(math.isfinite(a) for a in sol.angles)
    assert model.within_limits(sol.angles)
    # The arm reaches toward it: no farther than the target is from the shoulder
    # minus the arm's reach, give or take what the limits forbid.
    assert sol.error == pytest.approx(np.linalg.norm(kinematics.forward(model, sol.angles) - target))
    assert sol.error >= distance - 0.2205


@pytest.mark.parametrize("method", ["fabrik", "dls"])
def test_out_of_reach_target_straight_ahead_stretches_the_arm(method):
    model = arm_model("LArm")
    target = np.asarray(model.shoulder) + [1.0, 0.0, 0.0]
    sol = nao_ik.solve(target, "LArm", method)
    hand = kinematics.forward(model, sol.angles)
    # The hand ends within a few millimetres of the farthest point toward the
    # target (the stretched arm minus the 2 degree ElbowRoll stop).
    assert sol.error == pytest.approx(1.0 - np.linalg.norm(hand - model.shoulder), abs=2e-3)
    assert np.linalg.norm(hand - model.shoulder) > 0.219


@pytest.mark.parametrize("method", METHODS)
def test_initial_posture_is_a_start_not_a_constraint(method):
    model = arm_model("LArm")
    q = [0.4, 0.6, -0.8, -1.0, 0.5]
    target = kinematics.forward(model, q)
    # From the answer itself: nothing to do.
    sol = nao_ik.solve(target, "LArm", method, initial=q)
    assert sol.iterations == 0 and sol.reached
    np.testing.assert_allclose(sol.angles, q, atol=1e-12)
    # The wrist is held at its start value.
    near = kinematics.forward(model, [0.45, 0.55, -0.8, -1.0, 0.5])
    sol = nao_ik.solve(near, "LArm", method, initial=q)
    assert sol.reached and sol.angles[4] == 0.5


@pytest.mark.parametrize("method", METHODS)
def test_runtime_limits_are_respected(method):
    free = arm_model("LArm")._replace(body=())  # the limits alone (the body: test_body.py)
    tight = free.with_limits({"LElbowYaw": [-0.5, 0.5, 8.0], "LShoulderPitch": [-1.0, 1.0, 8.0]})
    rng = np.random.default_rng(5)
    q = rng.uniform(tight.lower, tight.upper, (40, 5))
    q[:, 4] = 0.0
    for qi in q:
        target = kinematics.forward(tight, qi)
        sol = nao_ik.solve(target, tight, method)
        assert tight.within_limits(sol.angles)
        assert sol.reached


def test_jacobian_alias_names_a_registered_method():
    assert "jacobian" in nao_ik.METHODS
    assert nao_ik.solve([0.15, 0.1, 0.1], "LArm", "jacobian").method in SOLVERS


# ------------------------------------------------------------- angle recovery


@pytest.mark.parametrize("arm", ARMS)
@given(fr=fractions)
def test_fabrik_angle_recovery_round_trip(arm, fr):
    model = arm_model(arm)
    q = [lo + f * (hi - lo) for f, lo, hi in zip(fr, model.lower, model.upper)]
    ch = kinematics.chain(model, q)
    back = recover_angles(model, ch.origins[2], ch.hand, q[4], SCALAR)
    again = kinematics.chain(model, back)
    np.testing.assert_allclose(again.origins[2], ch.origins[2], atol=1e-9)
    np.testing.assert_allclose(again.hand, ch.hand, atol=1e-9)
    assert model.within_limits(back, slack=1e-9)
    # With the elbow bent by more than ~14 degrees only one ElbowRoll root is in
    # the limits and the angles come back exactly. Nearer to straight, a turned
    # wrist (the 12.31 mm hand offset off the forearm axis) lets both roots
    # reach the same points: the recovery may return the other, equally right one.
    if abs(q[3]) >= 0.25:
        np.testing.assert_allclose(back, q, atol=1e-9)


@pytest.mark.parametrize("arm", ARMS)
def test_swivel_configurations_put_the_hand_on_the_target(arm):
    model = arm_model(arm)
    rng = np.random.default_rng(11)
    q = rng.uniform(model.lower, model.upper, (200, 5))
    targets = kinematics.forward_batch(model, q)
    sw = swivel_configurations(model, targets, q[:, 4], np.radians(np.arange(-180, 180, 10.0)))
    feasible = sw.violation == 0
    assert feasible.any(axis=1).mean() > 0.95
    hands = kinematics.forward_batch(model, sw.angles.reshape(-1, 5)).reshape(200, -1, 3)
    err = np.linalg.norm(hands - targets[:, None, :], axis=2)
    assert err[feasible].max() < 1e-9


def test_scalar_and_array_kernels_agree():
    # One definition, two backends: the same step to rounding, and the same
    # outcome. (Not the same angles after many iterations: the backends'
    # cos/sin differ by an ulp, and a pseudoinverse's cutoff and step halving
    # can turn that into another, equally good, answer.)
    model = arm_model("RArm")
    rng = np.random.default_rng(3)
    q = rng.uniform(model.lower, model.upper, (20, 5))
    targets = kinematics.forward_batch(model, rng.uniform(model.lower, model.upper, (20, 5)))
    for name, spec in SOLVERS.items():
        cols, starts = [targets[:, k] for k in range(3)], [q[:, i] for i in range(5)]
        step = spec.loop(model, cols, starts, 1e-4, 1, ARRAY)
        done = spec.loop(model, cols, starts, 1e-4, 30, ARRAY)
        for i in range(20):
            one = spec.loop(model, targets[i].tolist(), q[i].tolist(), 1e-4, 1, SCALAR)
            np.testing.assert_allclose(one.q, [c[i] for c in step.q], atol=1e-9, err_msg=name)
            end = spec.loop(model, targets[i].tolist(), q[i].tolist(), 1e-4, 30, SCALAR)
            assert (end.error <= 1e-4) == (np.broadcast_to(done.error, (20,))[i] <= 1e-4), name


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(target=[0.1, float("nan"), 0.1]), "target y"),
        (dict(target=[float("inf"), 0.1, 0.1]), "target x"),
        (dict(target=[0.1, 0.1, "0.1"]), "target z"),
        (dict(target=[0.1, 0.1]), "target must have 3 values"),
        (dict(target="0.1 0.1 0.1"), "target must be a sequence"),
        (dict(target=None), "target must be a sequence"),
        (dict(target=[0.1, True, 0.1]), "target y"),
        (dict(target=[0.1, 0.1, 1.3e154]), r"target z must be within \+-1e\+06 m"),
        (dict(arm="Head"), "unknown arm 'Head'"),
        (dict(method="ccd"), "unknown method 'ccd'"),
        (dict(tolerance=-1e-3), "tolerance must be >= 0"),
        (dict(tolerance=float("nan")), "tolerance"),
        (dict(max_iterations=0), "max_iterations"),
        (dict(max_iterations=2.5), "max_iterations"),
        (dict(initial=[0, 0, 0, 0]), "initial must have 5 values"),
        (dict(initial=[0, 0, float("nan"), 0, 0]), r"initial\[2\]"),
    ],
)
def test_bad_input_raises_value_error_naming_it(kwargs, message):
    args = dict(target=[0.15, 0.1, 0.1], arm="LArm", method="fabrik")
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        nao_ik.solve(**args)


@pytest.mark.parametrize(
    "targets, kwargs, message",
    [
        ([[0.1, 0.1, np.nan]], {}, r"targets\[0, 2\]"),
        ([[0.1, 0.1]], {}, r"shape \(N, 3\)"),
        ([["a", 0.1, 0.1]], {}, "targets must be an array of numbers"),
        ([[0.1, 0.1, 0.1]] * 3, dict(initial=np.zeros((2, 5))), "initial must be"),
        ([[0.1, 0.1, 0.1]], dict(method="nope"), "unknown method"),
    ],
)
def test_batch_bad_input(targets, kwargs, message):
    with pytest.raises(ValueError, match=message):
        nao_ik.solve_batch(targets, "LArm", **kwargs)


def test_batch_of_nothing():
    b = nao_ik.solve_batch(np.zeros((0, 3)), "LArm", "dls")
    assert b.angles.shape == (0, 5)


def test_shoulder_trigonometry_without_trigonometry_is_exact():
    from nao_ik.geometry.recovery import shoulder_solution
    from nao_ik.kinematics.ops import ARRAY

    model = arm_model("LArm")
    v = np.random.default_rng(5).normal(size=(1000, 3))
    v[0] = [0.0, 0.1, 0.0]  # straight out sideways: ShoulderPitch is atan2(0, 0) = 0
    q1, q2, trig = shoulder_solution(model, [v[:, k] for k in range(3)], ARRAY)
    np.testing.assert_allclose(np.stack(trig), [np.cos(q1), np.sin(q1), np.cos(q2), np.sin(q2)], atol=1e-15)


@pytest.mark.parametrize("method", ["nn", "nn-paper", "cells"])  # the one-shot methods, which run in blocks
def test_a_batch_in_blocks_equals_one_block(method, monkeypatch):
    from nao_ik.solvers import pipeline as driver

    model = arm_model("RArm")
    rng = np.random.default_rng(11)
    targets = kinematics.forward_batch(model, rng.uniform(model.lower, model.upper, (700, 5)))
    initial = rng.uniform(model.lower, model.upper, (700, 5))
    whole = nao_ik.solve_batch(targets, "RArm", method, initial=initial)
    monkeypatch.setattr(driver, "BLOCK", 128)
    blocks = nao_ik.solve_batch(targets, "RArm", method, initial=initial)
    for a, b in zip(whole, blocks):
        if isinstance(a, np.ndarray) and a.dtype.kind == "f":
            # The networks' float32 matrix products round differently at other
            # matrix sizes (OpenBLAS edge kernels, even on one thread: 1e-5
            # measured), which moves a predicted swivel by ~1e-6 rad.
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-5)
        elif isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("method", ["fabrik", "jacobian-transpose", "jacobian-pinv", "dls", "sdls", "nn-refined"])
def test_tolerance_zero_iterates_to_the_floor_and_stops(method):
    # Tolerance 0 ("to machine precision or the method's floor"): the loops end by their stall rule, well
    # before their cap, and the answer is at least as close as the default tolerance's.
    target = nao_ik.forward([0.4, 0.2, -0.6, -0.7, 0.0], "LArm").tolist()
    exact = nao_ik.solve(target, "LArm", method, tolerance=0.0, max_iterations=5000)
    assert exact.error <= nao_ik.solve(target, "LArm", method).error + 1e-12
    assert exact.error < 1e-6 and exact.iterations < 5000 * 21


def test_a_batch_solve_keeps_its_search_with_the_body_to_itself():
    """The body check recalls the start's search with the body within one batch solve only: none is left for the
    next call (another method on the same targets searches for itself, and a benchmark times each method's own
    work)."""
    t = sample_targets("LArm", 300, 4)
    batch = nao_ik.solve_batch(t, "LArm", "analytic")
    assert any(str(r).startswith("collision") for r in batch.reason)  # the body check ran and searched
    assert getattr(nearest_module._LAST, "batch", None) is None
