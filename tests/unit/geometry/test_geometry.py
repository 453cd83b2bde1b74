"""The geometry layer: closed-form swivel intervals, the nearest exact solution, ``analytic``."""

import math

import numpy as np
import pytest

import nao_ik
from nao_ik.api.all_solutions import _violations
from nao_ik.evidence.nearest_bench import excess, far_pairs, near_pairs, over_sampled
from nao_ik.evidence.protocol import sample_targets
from nao_ik.geometry import nearest as nearest_module
from nao_ik.geometry.nearest import move_time
from nao_ik.geometry.scalar.intervals import all_intervals
from nao_ik.kinematics import chain as kinematics
from nao_ik.kinematics.ops import ARRAY
from nao_ik.kinematics.ops import SCALAR as _FLOAT
from nao_ik.model.arm import arm_model
from tests.oracle_intervals import GRID_STEP, grid_intervals


def _targets(arm: str, n: int, seed: int) -> tuple:
    """Hand targets of random configurations (some moved off, some at the +-pi seam), and their WristYaw."""
    model = arm_model(arm)
    rng = np.random.default_rng(seed)
    q = rng.uniform(model.lower, model.upper, (n, 5))
    t = kinematics.forward_batch(model, q)
    t[::4] += rng.normal(scale=0.03, size=t[::4].shape)  # some unreachable, some with empty intervals
    return model, t, q[:, 4]


def _allowed(model, t, wrist, branch, phis) -> np.ndarray:
    return _violations(model, t, wrist, np.asarray(phis, dtype=float), branch)[1] <= 1e-9


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_closed_form_intervals_equal_the_grid_oracle(arm):
    model, targets, wrists = _targets(arm, 120, 3)
    kinds = {"empty": 0, "whole or seam": 0, "narrower than the grid": 0, "compared": 0}
    for t, w in zip(targets, wrists):
        exact = all_intervals(model, t, float(w))
        for branch in (0, 1):
            oracle = grid_intervals(model, t, float(w), branch)
            wide = [iv for iv in exact[branch] if iv[1] - iv[0] > 2 * GRID_STEP]
            seen = [iv for iv in oracle if iv[1] - iv[0] > 2 * GRID_STEP]
            assert len(wide) == len(seen), (t, branch, exact[branch], oracle)
            for (a, b), (c, d) in zip(wide, seen):
                assert abs(a - c) < 1e-6 and abs(b - d) < 1e-6, (t, branch, exact[branch], oracle)
            kinds["compared"] += len(wide)
            kinds["empty"] += not exact[branch]
            kinds["whole or seam"] += any(abs(abs(x) - math.pi) < 1e-12 for iv in exact[branch] for x in iv)
            # What the oracle's grid cannot see must still be allowed (ends and middle),
            # and a hair beyond each end not (but at the +-pi seam).
            for lo, hi in exact[branch]:
                assert _allowed(model, t, float(w), branch, [lo, 0.5 * (lo + hi), hi]).all()
                kinds["narrower than the grid"] += hi - lo <= 2 * GRID_STEP
                for p, inner in ((lo - 1e-6, lo > -math.pi + 1e-9), (hi + 1e-6, hi < math.pi - 1e-9)):
                    if inner and not any(a <= p <= b for a, b in exact[branch]):
                        assert not _allowed(model, t, float(w), branch, [p])[0], (t, branch, p, exact[branch])
    assert all(kinds.values()), kinds  # every kind of case was met


def test_interval_assembly_from_arcs_and_points():
    """Runs of allowed arcs become intervals (split at +-pi); an allowed candidate between excluded arcs is a point."""
    from nao_ik.geometry.scalar.intervals import _assemble

    cands = [-3.0, -1.0, 0.5, 2.0, 3.0]
    # arc i runs from cands[i] to cands[i + 1]; the last wraps from 3.0 through pi to -3.0
    arcs = np.array([False, False, True, False, True])
    points = np.array([False, False, False, False, False])
    assert _assemble(cands, arcs, points) == [(-math.pi, -3.0), (0.5, 2.0), (3.0, math.pi)]
    points[1] = True  # -1.0: allowed, both neighbouring arcs excluded
    assert (-1.0, -1.0) in _assemble(cands, arcs, points)
    assert _assemble(cands, np.ones(5, bool), points) == [(-math.pi, math.pi)]


def test_a_single_point_interval():
    """A target where a limit is tangent to the circle leaves one allowed swivel."""
    model = arm_model("LArm")
    # ShoulderRoll at its lower limit is the elbow's lowest reachable y: a configuration
    # there whose circle touches that bound from above has a one-point (or tiny) interval.
    q = np.array([0.3, model.lower[1], 0.0, -0.05, 0.0])
    t = kinematics.forward(model, q)
    ivs = all_intervals(model, t, 0.0)[0]
    assert ivs, "the generating configuration is allowed"
    assert _allowed(model, t, 0.0, 0, [ivs[0][0], ivs[0][1]]).all()


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_analytic_reaches_every_benchmark_target_exactly(arm):
    model = arm_model(arm)._replace(body=())  # the limits alone (with the body, see test_body.py)
    targets = sample_targets(arm, 10_000, seed=0)
    sol = nao_ik.solve_batch(targets, model, "analytic")
    assert sol.reached.all(), np.flatnonzero(~sol.reached)[:10]
    assert sol.error.max() < 1e-9
    assert (sol.iterations == 0).all()
    assert ((sol.angles >= np.array(model.lower)) & (sol.angles <= np.array(model.upper))).all()
    # single and batch agree on the answer's quality
    for t in targets[:200]:
        one = nao_ik.solve(t, model, "analytic")
        assert one.reached and one.error < 1e-9 and model.within_limits(one.angles)


#: far_pairs seeds on which the search without its closed-form proof (Search.beat) answers farther than
#: sampled: 4 of 400 (LArm), 5 of 400 (RArm, one by 0.1996 s of move, the worst of 25,600 pairs).
FAR_SEEDS = {"LArm": 15, "RArm": 8}


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_analytic_is_never_farther_than_any_sampled_solution(arm):
    """Random starts and targets (:func:`nao_ik.evidence.nearest_bench.far_pairs`): never farther than solve_all's
    0.5-degree samples, on a seed where the search alone was farther on 1 % of them."""
    worse = [excess(arm, start, t)[0] for start, t in far_pairs(arm, 400, FAR_SEEDS[arm])]
    # 1e-5 s: the precision to which the search places a swivel on a limit (about 1e-4 rad of a joint).
    assert max(worse) <= 1e-5, sorted(worse)[-5:]


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_faster_arcs_hold_exactly_the_shorter_moves(arm):
    """intervals.faster_arcs (the proof that an answer is nearest): on dense samples of both branches, every
    allowed swivel whose move is shorter than the bound lies in its intervals, and every swivel inside them is
    allowed and shorter; empty at the nearest answer's own move time."""
    from nao_ik.geometry.scalar.intervals import faster_arcs
    from nao_ik.geometry.scalar.swivel import arm as arm_of
    from nao_ik.geometry.scalar.swivel import circle

    model = arm_model(arm).bodiless()
    k = arm_of(model)
    phis = np.linspace(-math.pi, math.pi, 4001)
    kinds = {"empty": 0, "some": 0}
    for n, (start, t) in enumerate(far_pairs(arm, 60, 31) + near_pairs(arm, 60, 32)):
        c = circle(k, t, start[4])
        best = move_time(model, nao_ik.solve(t, model, "analytic", initial=start).angles, start, _FLOAT)
        assert faster_arcs(k, c, start, best - 1e-6) == ([], []), (start, t)
        bound = best * (1.0 + (n % 4))  # 1 to 4 times the nearest move: some swivels are shorter
        arcs = faster_arcs(k, c, start, bound)
        for branch in (0, 1):
            q, vio = _violations(model, np.asarray(t), start[4], phis, branch)
            sec = np.max(np.abs(q[:, :4] - start[:4]) / [j.max_velocity for j in model.joints[:4]], axis=1)
            inside = np.zeros(phis.size, bool)
            deep = np.zeros(phis.size, bool)
            for lo, hi in arcs[branch]:
                inside |= (phis >= lo - 1e-6) & (phis <= hi + 1e-6)
                deep |= (phis > lo + 1e-6) & (phis < hi - 1e-6)
            shorter = (vio <= 1e-9) & (sec < bound - 1e-9)
            assert not (shorter & ~inside).any(), (start, t, branch, phis[shorter & ~inside][:3], arcs)
            assert (vio[deep] <= 1e-9).all() and (sec[deep] <= bound + 1e-9).all(), (start, t, branch, arcs)
            kinds["some" if arcs[branch] else "empty"] += 1
    assert all(kinds.values()), kinds


#: A tracking step of the continuity protocol (LArm, joint_paths seed 1, line 16, point 59; the start as the
#: analytic answers before it left the arm) whose start's swivel is blocked near a fold: the search from the
#: boundaries nearest that swivel answered 0.0675 s away, the ring 0.0051 s.
BLOCKED_NEAR_FOLD = (
    [-1.2488269996543453, 0.5592298095181512, -0.7228199324087687, -0.10089184190699503, 1.2084044653989416],
    [0.054020711103350966, 0.22779049614064456, 0.26894659820444666],
)


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_analytic_is_never_farther_than_any_sampled_solution_on_small_moves(arm):
    """The search's near path (the start's hand within a centimetre of the target, as when tracking), half the
    starts with a nearly straight elbow (near a fold, where a blocked start's nearest swivel is not its nearest
    move), and the pinned case: never farther than solve_all's samples."""
    cases = near_pairs(arm, 200, 12, [BLOCKED_NEAR_FOLD] if arm == "LArm" else [])
    worse = [excess(arm, start, t)[0] for start, t in cases]  # on the limits alone, as solve_all samples
    assert max(worse) <= 1e-5, sorted(worse)[-5:]


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_the_fused_arc_judge_agrees_with_the_margins(arm):
    """intervals._judge is configurations + margins fused for speed: the same verdict at every swivel, including
    targets off the workspace, swivels at the candidates themselves, and wrists at and past their limits."""
    from nao_ik.geometry.scalar.intervals import _judge, boundary_swivels
    from nao_ik.geometry.scalar.swivel import SLACK, circle, configurations, margins
    from nao_ik.geometry.scalar.swivel import arm as arm_of

    model = arm_model(arm)
    k = arm_of(model)
    rng = np.random.default_rng(3)
    targets = sample_targets(arm, 300, 4) + rng.normal(scale=0.02, size=(300, 3))
    wl, wh = model.lower[4], model.upper[4]
    checked, seen = 0, set()
    for t, wrist in zip(targets, rng.choice([0.0, wl, wh, wl - 1e-9, wh + 1e-9, 0.7], size=300)):
        c = circle(k, [float(x) for x in t], float(wrist))
        phis = list(rng.uniform(-math.pi, math.pi, size=20)) + boundary_swivels(k, c)
        got = _judge(k, c, phis, [3] * len(phis))
        for i, phi in enumerate(phis):
            m0, m1 = margins(k, c, *configurations(k, c, phi))
            assert (got[0][i], got[1][i]) == (m0 >= -SLACK, m1 >= -SLACK), (t, wrist, phi)
            checked += 1
            seen |= {(0, got[0][i]), (1, got[1][i])}
    assert checked > 6000 and {(0, True), (0, False), (1, False)} <= seen  # (branch 1 is allowed only near a fold)


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_none_closer_agrees_with_dense_samples(arm):
    """nearest.none_closer (every joint weighted alike): False wherever a sampled allowed configuration changes
    every joint less than the bound, True where none does by a margin the samples' spacing cannot hide."""
    from nao_ik.geometry.nearest import none_closer

    model = arm_model(arm).bodiless()
    phis = np.linspace(-math.pi, math.pi, 4001)
    seen = {True: 0, False: 0}
    for start, t in far_pairs(arm, 40, 41) + near_pairs(arm, 40, 42):
        jumps = []
        for branch in (0, 1):
            q, vio = _violations(model, np.asarray(t), start[4], phis, branch)
            jumps.append(np.where(vio <= 1e-9, np.max(np.abs(q[:, :4] - start[:4]), axis=1), np.inf))
        least = float(np.min(jumps))
        if not math.isfinite(least):
            continue
        assert not none_closer(model, t, start, least + 1e-9), (start, t, least)
        below = none_closer(model, t, start, 0.5 * least - 1e-3)  # the samples are 1.6e-3 rad of swivel apart
        if below:  # none within a bound: none within a smaller one either
            assert none_closer(model, t, start, 0.25 * least), (start, t, least)
        seen[below] += 1
        assert none_closer(model, t, start, -1.0)
    assert seen[True] > 0, seen


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_the_batch_proof_agrees_with_faster_arcs(arm):
    """geometry.proof.shorter_exists (numpy, many targets) says 'some' exactly where intervals.faster_arcs (one
    target) has an interval: at the nearest answer's move time (less 1e-6 s: none) and at other bounds."""
    from nao_ik.geometry.proof import shorter_exists
    from nao_ik.geometry.scalar.intervals import faster_arcs
    from nao_ik.geometry.scalar.swivel import arm as arm_of
    from nao_ik.geometry.scalar.swivel import circle

    model = arm_model(arm).bodiless()
    k = arm_of(model)
    cases = far_pairs(arm, 150, 61) + near_pairs(arm, 150, 62)
    best = [move_time(model, nao_ik.solve(t, model, "analytic", initial=s).angles, s, _FLOAT) for s, t in cases]
    scale = np.tile([1.0, 1.5, 3.0, 0.5, 1.0], len(cases))[: len(cases)]
    sec = np.array(best) * scale - 1e-6
    starts, targets = np.array([s for s, _ in cases]), np.array([t for _, t in cases])
    got = shorter_exists(model, list(targets.T), list(starts.T), sec)
    want = [faster_arcs(k, circle(k, list(t), s[4]), list(s), float(x)) != ([], []) for (s, t), x in zip(cases, sec)]
    assert got.tolist() == want
    assert 0 < sum(want) < len(want)
    assert not got[scale == 1.0].any()  # the answers are the nearest


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_a_batch_with_starts_is_never_farther_than_any_sampled_solution(arm):
    """solve_batch with a start per target proves its answers like a single solve (before the proof: up to 19
    of 400 pairs farther, by up to 0.47 s, on bench-nearest's seeds)."""
    model = arm_model(arm).bodiless()
    cases = near_pairs(arm, 200, 202) + far_pairs(arm, 200, FAR_SEEDS[arm])
    sol = nao_ik.solve_batch([t for _, t in cases], model, "analytic", initial=[s for s, _ in cases])
    assert sol.reached.all()
    worse = [over_sampled(model, q, s, t) for q, (s, t) in zip(sol.angles, cases)]
    assert max(worse) <= 1e-5, sorted(worse)[-5:]


def test_a_batch_search_with_the_body_asked_again_for_some_of_its_rows_recalls_them():
    """Within one batch solve (:func:`~nao_ik.geometry.nearest.kept_searches`) the body check asks :func:`nearest`
    again for the answers inside the body, and the reasons its search on the limits alone: those rows are recalled
    (the start's answers, bit for bit), and a fresh search of them alone ends at the same answers to the search's
    resolution (its boundary steps finish in floats where few rows are left); a row it did not search is
    searched; outside, nothing is kept."""
    model = arm_model("LArm")
    t = sample_targets("LArm", 400, 3)
    q0 = [np.full(len(t), x) for x in model.neutral]
    rows = np.arange(5, 400, 7)
    cols, starts = [t[rows, k] for k in range(3)], [x[rows] for x in q0]
    with nearest_module.kept_searches():
        whole = nearest_module.nearest(model, [t[:, k] for k in range(3)], q0, ARRAY)
        again = nearest_module.nearest(model, cols, starts, ARRAY)
        kept = nearest_module._LAST.batch
        assert set(kept) == {id(model), id(model.bodiless())}
        free = nearest_module.nearest(model.bodiless(), cols, starts, ARRAY)
        assert kept[id(model.bodiless())][3] is not None  # recalled, not searched again
        moved = t[:3] + 0.001
        nearest_module.nearest(model, [moved[:, k] for k in range(3)], [x[:3] for x in q0], ARRAY)
        assert kept[id(model)][1].shape[0] == 3  # searched, and now the one kept
    assert nearest_module._LAST.batch is None
    for a, b in zip((*again.q, again.swivel, again.seconds, again.found), (*whole.q, whole.swivel, whole.seconds,
                                                                         whole.found)):  # fmt: skip
        np.testing.assert_array_equal(np.broadcast_to(a, rows.shape), np.broadcast_to(b, t.shape[:1])[rows])
    # A fresh search ends as near (two configurations can be equally near: then either).
    fresh = nearest_module.nearest(model, cols, starts, ARRAY)
    np.testing.assert_array_equal(again.found, fresh.found)
    assert again.found.any()
    np.testing.assert_allclose(again.seconds, fresh.seconds, rtol=0, atol=1e-5)
    alone = nearest_module.nearest(model.bodiless(), cols, starts, ARRAY)
    np.testing.assert_allclose(free.seconds, alone.seconds, rtol=0, atol=1e-5)
    # Neither another start nor another model is recalled.
    other = [x + 0.01 if j == 0 else x for j, x in enumerate(starts)]
    with nearest_module.kept_searches():
        nearest_module.nearest(model, cols, starts, ARRAY)
        nearest_module.nearest(model, cols, other, ARRAY)
        assert nearest_module._LAST.batch[id(model)][3] is None  # searched: its rows never recalled
        right = arm_model("RArm")
        nearest_module.nearest(right, cols, starts, ARRAY)
        assert nearest_module._LAST.batch[id(right)][3] is None
