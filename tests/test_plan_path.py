"""plan_path: a known path planned whole keeps every step continuous where a continuous motion exists."""

import numpy as np
import pytest

import nao_ik
from nao_ik import api
from nao_ik.body import MARGIN
from nao_ik.collision import clearance_batch
from nao_ik.continuity import SLACK, joint_paths
from nao_ik.kinematics import forward_batch
from nao_ik.model import arm_model
from nao_ik.path_plan import SMOOTH, follow_or_refuse

#: Lines per arm, and seeds of this test's own (the benchmark's are others).
LINES = 24
SEEDS = {"LArm": 101, "RArm": 202}


def _greedy_jumps(model, x, path):
    """Today's rule on one line: each point solved from the previous answer; steps beyond the line's own + SLACK."""
    allowed = float(np.abs(np.diff(path, axis=0)).max()) + SLACK
    prev, jumps = path[0], 0
    for p in x[1:]:
        q = np.asarray(api.solve(p, model, "analytic", initial=prev).angles)
        jumps += float(np.abs(q - prev).max()) > allowed
        prev = q
    return jumps


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_joint_space_lines_have_no_step_beyond_their_own(arm):
    """On the hand positions of joint-space lines (limits alone) the plan never steps beyond the line's own
    largest step + SLACK, and reaches every point; the greedy rule jumps on some of these lines."""
    model = arm_model(arm).bodiless()
    beyond, unreached, greedy = [], 0, 0
    for i, path in enumerate(joint_paths(arm, LINES, seed=SEEDS[arm])):
        x = forward_batch(model, path)
        plan = nao_ik.plan_path(x, model, path[0])
        allowed = float(np.abs(np.diff(path, axis=0)).max()) + SLACK
        if (plan.steps[1:] > allowed).any():
            beyond.append((i, float(plan.steps[1:].max() - allowed)))
        unreached += int((~plan.reached).sum())
        assert not plan.jumps, (i, plan.jumps)
        greedy += _greedy_jumps(model, x, path)
    assert beyond == [] and unreached == 0
    assert greedy > 0, "the point-by-point rule jumps on none of these lines: the test shows nothing"


def _shapes(arm):
    """Lines, circles and figure-eights 5-15 cm across at several heights and depths in front of the arm."""
    side = -1.0 if arm == "RArm" else 1.0
    s = np.linspace(0.0, 1.0, 60)
    th = 2.0 * np.pi * s
    out = []
    for depth, height, size in [(0.12, -0.02, 0.05), (0.16, 0.06, 0.10), (0.12, 0.12, 0.15), (0.16, -0.02, 0.15)]:
        c, r = np.array([depth, side * 0.1, height]), size / 2.0
        z = np.zeros_like(s)
        out += [c + np.stack([z, side * r * (2 * s - 1), r * (2 * s - 1)], axis=1),
                c + np.stack([z, r * np.cos(th), r * np.sin(th)], axis=1),
                c + np.stack([z, r * np.sin(th), 0.5 * r * np.sin(2 * th)], axis=1)]  # fmt: skip
    return out


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_cartesian_shapes_with_the_body_are_clear_and_say_where_they_jump(arm):
    """Every planned configuration is clear of the body; every step larger than a continuous motion makes
    here (0.15 rad) is reported as a jump; and paths that a clear continuous motion traces have none."""
    model = arm_model(arm)
    reported = 0
    for x in _shapes(arm):
        plan = nao_ik.plan_path(x, model)
        ok = plan.reached
        assert (clearance_batch(model, plan.angles[ok], model.body)[0] >= MARGIN - 1e-9).all()
        listed = {j.index for j in plan.jumps}
        silent = [k for k in np.flatnonzero(plan.steps > 0.15) if k and k not in listed]
        assert silent == [], (silent, plan.steps[silent])
        reported += len(listed)
    # Paths a clear continuous motion traces: the hand along joint-space lines whose every posture is clear.
    clear_lines = 0
    for path in joint_paths(arm, 40, seed=SEEDS[arm] + 1):
        fine = np.linspace(path[0], path[-1], 240)
        if (clearance_batch(model, fine, model.body)[0] < MARGIN + 0.005).any():
            continue
        plan = nao_ik.plan_path(forward_batch(model, path), model, path[0])
        assert plan.reached.all() and not plan.jumps, plan.jumps
        assert plan.steps[1:].max() <= float(np.abs(np.diff(path, axis=0)).max()) + SLACK
        clear_lines += 1
    assert clear_lines >= 5


def test_a_path_through_the_body_reports_its_jump_and_the_service_call_refuses_it():
    """A line from in front of the chest through the torso to the other side: the points inside are not
    reached, the steps around them are reported, and the service's call refuses the path unless jumps are
    allowed (saying where and how large)."""
    x = np.stack([np.full(40, 0.06), np.linspace(0.12, -0.02, 40), np.full(40, 0.0)], axis=1)
    plan, reason = follow_or_refuse(x, "LArm", None)
    assert not plan.reached.all()
    assert plan.jumps and all(j.radians > SMOOTH or j.reason != "no continuous solution" for j in plan.jumps)
    assert reason.startswith("the path needs a jump of") and "allow jumps" in reason
    _, allowed = follow_or_refuse(x, "LArm", None, allow_jumps=True)
    assert allowed == ""


def test_wrist_yaw_is_held_and_the_start_counts():
    """WristYaw stays at the start's (or the one given); the first point is the allowed one nearest the start."""
    model = arm_model("LArm")
    path = joint_paths("LArm", 1, seed=5)[0]
    x = forward_batch(model, path)
    plan = nao_ik.plan_path(x, model.bodiless(), path[0])
    assert np.allclose(plan.angles[:, 4], path[0][4])
    assert plan.steps[0] <= 0.05
    turned = nao_ik.plan_path(x[:5], model.bodiless(), path[0], wrist=0.3)
    assert np.allclose(turned.angles[:, 4], 0.3)
    with pytest.raises(ValueError):
        nao_ik.plan_path([[0.1, 0.1]], "LArm")
