"""solve_batch with NAO's body answers as well as the single solve: the same configuration, or one as clear
whose hand is no farther from the target and whose move is no longer.

The batch finds the nearest clear pose of the targets only configurations through the body reach with its
own search (:mod:`nao_ik.geometry.blocked`), not the single solve's one target at a time, so its floats may
differ there; the rule below is what they must keep. The targets: the golden file's batch targets
(``tests/unit/api/test_same_answers.py``) that are not the benchmark's: reachable only through the body, near it,
and out of reach, for both arms.
"""

from __future__ import annotations

import numpy as np
import pytest

import nao_ik
from nao_ik.geometry.collision import clearance_batch
from nao_ik.geometry.nearest import move_time
from nao_ik.kinematics.ops import ARRAY
from nao_ik.model.body import MARGIN
from tests.unit.api.test_same_answers import BATCH, starts, stored

#: Angles this close are the same configuration; distances (m) and move times (s) this close are equal.
SAME = 1e-9
#: The batch's nearest exact solution comes from the same search run on arrays, whose refinement stops a few
#: microseconds of move from the float search's (with or without the body): its move may be this much longer (s).
ROUNDING = 1e-5


def _seconds(model, q, q0):
    return move_time(model, [q[:, j] for j in range(5)], [q0[:, j] for j in range(5)], ARRAY)


def check(arm: str, method: str, start: bool) -> list:
    """The rows whose batch answer breaks the rule, with what the batch and the single solve answered."""
    model = nao_ik.arm_model(arm)
    t = stored()[f"targets/{arm}/batch"][BATCH // 2 :]
    q0 = starts(arm, len(t), 9) if start else np.tile(model.neutral, (len(t), 1))
    batch = nao_ik.solve_batch(t, arm, method, initial=q0 if start else None)
    single = [nao_ik.solve(x, arm, method, initial=q if start else None) for x, q in zip(t, q0)]
    sq, se = np.array([s.angles for s in single]), np.array([s.error for s in single])
    bad = []
    # As clear: keeps the margin, or is no closer to the body than the single answer (a start posture within
    # the margin, kept where nothing reaches farther).
    gap, single_gap = (clearance_batch(model, q, model.body)[0] for q in (batch.angles, sq))
    clear = gap >= np.minimum(MARGIN, single_gap) - SAME
    same = np.abs(batch.angles - sq).max(axis=1) <= SAME
    closer = batch.error < se - SAME
    level = np.abs(batch.error - se) <= SAME
    quicker = _seconds(model, batch.angles, q0) <= _seconds(model, sq, q0) + ROUNDING
    for i in range(len(t)):
        if not (same[i] or (clear[i] and (closer[i] or (level[i] and quicker[i])))):
            bad.append((i, batch.reason[i], float(batch.error[i]), single[i].reason, float(se[i])))
    return bad


@pytest.mark.parametrize("start", [False, True], ids=["neutral", "start"])
@pytest.mark.parametrize("arm", ["LArm", "RArm"])
@pytest.mark.parametrize("method", ["analytic", "nn", "dls"])
def test_batch_with_the_body_answers_as_well_as_the_single_solve(method, arm, start):
    assert check(arm, method, start) == []


def test_the_batch_pass_settles_the_targets_behind_the_body():
    """Of the benchmark's targets that only configurations through the body reach, none is left to the
    one-target search, and every answer keeps the margin."""
    from nao_ik.evidence.protocol import sample_targets

    model = nao_ik.arm_model("RArm")
    t = sample_targets("RArm", 600, 5)
    got = nao_ik.solve_batch(t, model, "nn")
    blocked = np.char.startswith(got.reason.astype(str), "collision")
    assert blocked.sum() > 30  # the set has them
    assert not got.searched.any()
    assert (clearance_batch(model, got.angles, model.body)[0] >= MARGIN - SAME).all()


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_the_batch_search_ends_where_the_single_search_does(arm):
    """clear_toward leaves out only what cannot change the answer: every target ends as far from its target as
    closest_clear_batch's search (to rounding), clear of the body, with a move no longer; nothing found, the start."""
    from nao_ik.geometry.blocked import clear_toward
    from nao_ik.geometry.clear import closest_clear_batch

    model = nao_ik.arm_model(arm)
    q = starts(arm, 3000, 21)
    inside = clearance_batch(model, q, model.body)[0] < 0.0
    t = np.array([nao_ik.forward(x, arm) for x in q[inside][:80]])
    q0 = starts(arm, len(t), 22)
    want_q, want_d, want_found = closest_clear_batch(model, t, q0)
    got_q, got_d, got_found = clear_toward(model, t, q0)
    assert (got_found == want_found).all() and want_found.any() and (~want_found).any()
    np.testing.assert_allclose(got_d, want_d, rtol=0, atol=SAME)
    assert (clearance_batch(model, got_q[got_found], model.body)[0] >= MARGIN).all()
    assert (got_q[~got_found] == q0[~got_found]).all()
    longer = _seconds(model, got_q, q0) > _seconds(model, want_q, q0) + SAME
    assert not (longer & (np.abs(got_d - want_d) <= SAME)).any()
