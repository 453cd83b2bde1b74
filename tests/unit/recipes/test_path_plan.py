"""plan_path: a known path planned whole keeps every step continuous where a continuous motion exists.

One definition of a jump (:func:`nao_ik.recipes.path_plan.jumps`, also ``nao-ik bench --paths``'s): a step whose largest
joint change is more than SMOOTH (0.05 rad) and whose two configurations no chain of configurations along the
hand's segment, inside the limits and clear, joins with links of at most SMOOTH; a step into or out of a point
not reached and larger than SMOOTH; a step whose motion the body check does not certify. The Cartesian paths
here are sampled every 3 mm or closer, so that a continuous motion's steps are small beside SMOOTH (about 0.02
to 0.04 rad in front of the chest) and a jump is not.
"""

import numpy as np
import pytest

import nao_ik
from nao_ik.api import position as api
from nao_ik.evidence.continuity import SLACK, joint_paths
from nao_ik.evidence.path_bench import shape
from nao_ik.geometry.collision import clearance_batch
from nao_ik.geometry.sweep import sweep
from nao_ik.kinematics.chain import forward_batch
from nao_ik.model.arm import arm_model
from nao_ik.model.body import MARGIN
from nao_ik.recipes.path_plan import SMOOTH, follow_or_refuse, jumps

#: Lines per arm and seed, and seeds of this test's own (the benchmark's are others): every seed tried is kept.
LINES = 12
SEEDS = {"LArm": (101, 303, 505, 606), "RArm": (202, 404, 505, 606)}


def _greedy(model, x, start):
    """Today's rule: each point solved from the previous answer."""
    prev, out = start, []
    for p in x:
        prev = np.asarray(api.solve(p, model, "analytic", initial=prev).angles)
        out.append(prev)
    return np.array(out)


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_joint_space_lines_have_no_step_beyond_their_own(arm):
    """On the hand positions of joint-space lines (limits alone) the plan never steps beyond the line's own
    largest step + SLACK and reaches every point; the greedy rule, on the same lines, steps beyond on some.
    The jump definition calls no step of a line itself a jump (a line is a continuous motion), and finds the
    greedy rule's jumps where it has some (each one a step beyond the line's own)."""
    model = arm_model(arm).bodiless()
    beyond, unreached, listed, greedy, false, found = [], 0, [], 0, [], []
    for seed in SEEDS[arm]:
        for i, path in enumerate(joint_paths(arm, LINES, seed=seed)):
            x = forward_batch(model, path)
            plan = nao_ik.plan_path(x, model, path[0])
            allowed = float(np.abs(np.diff(path, axis=0)).max()) + SLACK
            if (plan.steps[1:] > allowed).any():
                beyond.append((seed, i, float(plan.steps[1:].max() - allowed)))
            unreached += int((~plan.reached).sum())
            if plan.jumps:
                listed.append((seed, i, plan.jumps))
            if jumps(model, x, path):
                false.append((seed, i))
            q = np.vstack([path[:1], _greedy(model, x[1:], path[0])])
            steps = np.abs(np.diff(q, axis=0)).max(axis=1)
            over = set((np.flatnonzero(steps > allowed) + 1).tolist())
            greedy += len(over)
            if over:
                found += [(seed, i, k, k in over) for k, _ in jumps(model, x, q)]
    assert beyond == [] and unreached == 0 and listed == [] and false == []
    assert greedy > 0, "the point-by-point rule jumps on none of these lines: the test shows nothing"
    assert all(inside for *_, inside in found), found
    if arm == "LArm":  # the seeds' greedy jumps (RArm's: a fast continuous swing only, not a jump)
        assert found, "the jump definition finds none of the greedy rule's jumps"


def _denser(x, k=4):
    """The same path with k - 1 points between each two."""
    return np.concatenate([np.linspace(x[i], x[i + 1], k, endpoint=False) for i in range(len(x) - 1)] + [x[-1:]])


def _checked(model, x):
    """The plan of x, with what every plan must hold: clear configurations, and each step certified by the
    motion check unless it is listed as a jump."""
    plan = nao_ik.plan_path(x, model)
    assert (clearance_batch(model, plan.angles, model.body)[0] >= MARGIN - 1e-9).all()
    listed = {j.index for j in plan.jumps}
    for k in range(1, len(x)):
        if k not in listed:
            assert sweep(model, plan.angles[k - 1], plan.angles[k]).clear, k
    return plan


#: In front of the chest (depth, height, size; y at the arm's side 0.10): every point reachable with the body.
CLEAR = [(0.15, 0.06, 0.05), (0.15, 0.12, 0.10), (0.18, 0.07, 0.10), (0.18, 0.12, 0.05), (0.15, 0.12, 0.15)]
#: Low in front of the hip: the path goes where only configurations through the body (or none) reach.
THROUGH = [(0.15, 0.0, 0.10, "line"), (0.18, 0.0, 0.05, "line")]


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_cartesian_shapes_with_the_body_are_clear_and_say_where_they_jump(arm):
    """Lines, circles and figure-eights in front of the chest are followed with no jump, every configuration
    clear and every step certified; the continuous motion is shown by the same path 4x denser, whose steps
    shrink with the spacing. Paths into the body report the points they do not reach (the hand as near as the
    body lets it) and every large step there as a jump, and so does the denser path."""
    model = arm_model(arm)
    side = -1.0 if arm == "RArm" else 1.0
    for depth, height, size in CLEAR:
        for kind in ("line", "circle", "eight"):
            x = shape(kind, (depth, side * 0.10, height), size, side)
            plan = _checked(model, x)
            assert plan.reached.all() and not plan.jumps, (kind, depth, height, size, plan.jumps)
            dense = nao_ik.plan_path(_denser(x), model)
            assert dense.reached.all() and not dense.jumps
            assert dense.steps[1:].max() <= 0.5 * plan.steps[1:].max() + 0.005, (kind, depth, height, size)
    for depth, height, size, kind in THROUGH:
        x = shape(kind, (depth, side * 0.10, height), size, side)
        plan = _checked(model, x)
        missed = ~plan.reached
        assert missed.any() and plan.errors[missed].min() > 0.0
        # Every step over SMOOTH into, out of or between the points not reached is a listed jump; the same
        # points stay unreached on the denser path.
        big = np.flatnonzero((plan.steps[1:] > SMOOTH) & (missed[1:] | missed[:-1])) + 1
        assert set(big.tolist()) <= {j.index for j in plan.jumps}
        dense = nao_ik.plan_path(_denser(x), model)
        assert (~dense.reached[::4] == missed).mean() > 0.9


def test_a_path_through_the_body_reports_its_jump_and_the_service_call_refuses_it():
    """A line from in front of the chest down into the hip: the points inside are not reached, the step into
    them is reported before anything moves, and the service's call refuses the path unless jumps are allowed
    (saying where and how large)."""
    x = np.linspace((0.16, 0.12, -0.02), (0.02, 0.03, -0.06), 58)
    plan, reason = follow_or_refuse(x, "LArm", None)
    assert plan.reached[:30].all() and not plan.reached[-10:].any()
    assert plan.jumps and max(j.radians for j in plan.jumps) > SMOOTH
    assert reason.startswith("the path needs a jump of") and "allow jumps" in reason
    _, allowed = follow_or_refuse(x, "LArm", None, allow_jumps=True)
    assert allowed == ""


def test_out_of_reach_points_are_answered_at_the_closest_attainable_point_without_a_jump():
    """A circle partly nearer the shoulder than the elbow's limits allow: those points are not reached, and
    the arm follows the closest attainable points there (the reach's boundary), no step a jump."""
    x = shape("circle", (0.14, 0.10, 0.06), 0.10, 1.0)
    plan = nao_ik.plan_path(x, "LArm")
    assert 0 < (~plan.reached).sum() < len(x) and not plan.jumps
    assert plan.errors.max() < 0.02 and plan.steps[1:].max() <= SMOOTH


def test_wrist_yaw_is_held_and_the_start_counts():
    """WristYaw stays at the start's (or the one given); the first point's configuration is the start itself
    when the start is on the path (a fold of the solution set included), and the nearest one otherwise."""
    model = arm_model("LArm").bodiless()
    for seed in (5, 6, 7, 8):
        path = joint_paths("LArm", 1, seed=seed)[0]
        x = forward_batch(model, path)
        plan = nao_ik.plan_path(x, model, path[0])
        assert np.allclose(plan.angles[:, 4], path[0][4])
        assert plan.steps[0] <= 1e-6, (seed, plan.steps[0])
    turned = nao_ik.plan_path(x[:5], model, path[0], wrist=0.3)
    assert np.allclose(turned.angles[:, 4], 0.3)
    with pytest.raises(ValueError):
        nao_ik.plan_path([[0.1, 0.1]], "LArm")


def test_track_path_over_qi_plans_the_path_whole(awake):
    """The service's trackPath (analytic, the default) sends the planned angles: a 6 cm figure-eight in front of
    the chest, every point reached, no jump, each sent step continuous, the plan's time in the answer; options
    are checked by name, and a wrong one is refused in one line before anything moves."""
    arm = "LArm"
    x = shape("eight", (0.15, 0.10, 0.06), 0.06, 1.0)
    names = list(arm_model(arm).names)
    awake.ik.reachToWithArm(arm, *x[0].tolist(), "")
    awake.wait_still(names)
    r = awake.ik.trackPath(arm, x.tolist(), "")
    assert r["planned"] and r["planMs"] > 0.0 and r["jumps"] == [] and r["completed"], r["stopped"]
    sent = np.array(r["angles"])
    assert len(sent) == len(x) and np.abs(np.diff(sent, axis=0)).max() <= SMOOTH
    np.testing.assert_allclose(forward_batch(arm_model(arm), sent), x, atol=1e-4)
    assert not awake.ik.trackPath(arm, x[:3].tolist(), "dls")["planned"]  # an iterative method: point by point
    before = len(awake.moves())
    for options, word in (({"allowJumps": 1}, "allowJumps must be true or false"),
                          ({"speed": 0.5}, "unknown path option"), ([1], "options must be a map")):  # fmt: skip
        with pytest.raises(RuntimeError, match=word) as e:
            awake.ik.trackPathWithOptions(arm, x.tolist(), options)
        assert "\n" not in str(e.value)
    assert len(awake.moves()) == before


#: Two places whose motion between them may cross the head, and two whose motion is certified clear (LArm; as
#: tests/system/test_path_cost.py's).
PLACES_CROSSING = ([0.10, 0.25, 0.00], [0.05, 0.10, 0.25])
PLACES_CLEAR = ([0.112, 0.27, 0.037], [0.012, 0.301, 0.181])


def test_an_alternation_between_two_places_costs_its_distinct_motions(monkeypatch):
    """2000 points alternating between two places 15-25 cm apart (via points): every point is planned (a layer
    each, nothing filled across), and each distinct motion is certified once for the plan's rounds and its jumps
    (a dozen certifications, where each step was certified five times); between two places whose motion may
    cross the head every step is a listed jump, between two whose motion is clear none is."""
    from nao_ik.recipes import path_plan

    calls = []
    certify = path_plan.sweep
    monkeypatch.setattr(path_plan, "sweep", lambda *a, **k: calls.append(a) or certify(*a, **k))
    for (a, b), crossing in ((PLACES_CROSSING, True), (PLACES_CLEAR, False)):
        calls.clear()
        plan = nao_ik.plan_path([a, b] * 1000, "LArm")
        assert plan.reached.all()
        assert len(calls) <= 20, len(calls)
        if crossing:
            assert [j.index for j in plan.jumps] == list(range(1, 2000))
            assert all(j.reason.startswith("motion may cross the") for j in plan.jumps)
        else:
            assert plan.jumps == ()
