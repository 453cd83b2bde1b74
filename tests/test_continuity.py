"""Continuity: along smooth joint-space paths, answers from the previous answer do not jump.

A jump (a joint moving more than the path's own step + 0.05 rad) is *forced*
when no solution of the target lies that close to the arm's current posture:
the arm followed another continuation of the solution set than the path did
(see :mod:`nao_ik.continuity`). Only avoidable jumps count against a method.
"""

import pytest

from nao_ik.continuity import joint_paths, measure


@pytest.mark.parametrize("method", ["analytic", "dls", "fabrik", "nn", "nn-modular"])
@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_consecutive_answers_do_not_jump_where_a_near_solution_exists(arm, method):
    paths = joint_paths(arm, 20, seed=1 if arm == "LArm" else 2)
    c = measure(method, arm, paths)
    avoidable = c.jumps - c.forced
    if method == "analytic":
        assert avoidable == 0, c
    else:
        assert avoidable <= max(1, 0.001 * c.steps), c
