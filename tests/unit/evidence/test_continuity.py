"""Continuity: along smooth joint-space paths, answers from the previous answer do not jump.

A jump (a joint moving more than the path's own step + 0.05 rad) is *forced*
when no solution of the target lies that close to the arm's current posture:
the arm followed another continuation of the solution set than the path did
(see :mod:`nao_ik.evidence.continuity`). Only avoidable jumps count against a method.
"""

import os

import numpy as np
import pytest

import nao_ik
from nao_ik.evidence.continuity import joint_paths, measure
from nao_ik.evidence.nearest_bench import far_pairs
from nao_ik.solvers import pipeline as driver

#: Joint-space paths per arm and method (60 points each): make soak runs four times as many.
PATHS = 40 if os.environ.get("NAO_IK_SOAK") else 10


@pytest.mark.parametrize("method", ["analytic", "dls", "fabrik", "nn", "nn-modular"])
@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_consecutive_answers_do_not_jump_where_a_near_solution_exists(arm, method):
    paths = joint_paths(arm, PATHS, seed=1 if arm == "LArm" else 2)
    c = measure(method, arm, paths)
    avoidable = c.jumps - c.forced
    if method == "analytic":
        assert avoidable == 0, c
    else:
        assert avoidable <= max(1, 0.001 * c.steps), c


@pytest.mark.parametrize("method", ["dls", "fabrik", "jacobian-pinv"])
def test_the_shortcut_keeps_every_answer(method, monkeypatch):
    """With nearest.none_closer answering 'some is closer' every time (the search for the nearest always runs),
    every answer is the same as with it: the shortcut only skips a comparison that would keep the answer."""
    cases = [(arm, s, t) for arm in ("LArm", "RArm") for s, t in far_pairs(arm, 40, 51)]
    real, skipped = driver.none_closer, []
    monkeypatch.setattr(driver, "none_closer", lambda *a: skipped.append(real(*a)) or skipped[-1])
    fast = [nao_ik.solve(t, arm, method, initial=s) for arm, s, t in cases]
    assert sum(skipped) > 0, "the shortcut was taken"
    calls = []
    monkeypatch.setattr(driver, "none_closer", lambda *a: calls.append(a) and False)
    slow = [nao_ik.solve(t, arm, method, initial=s) for arm, s, t in cases]
    assert calls, "the check ran"
    for a, b in zip(fast, slow):
        assert np.array_equal(a.angles, b.angles) and a.reached == b.reached
