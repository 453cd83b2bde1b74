"""The closest clear pose: no sampled clear configuration is nearer, and the body's margin binds there."""

import numpy as np
import pytest

from nao_ik.geometry.clear_search import SHIFT, clear_search
from nao_ik.geometry.collision import clear_of_body, clearance_batch
from nao_ik.kinematics.chain import forward_batch
from nao_ik.model.arm import arm_model
from nao_ik.model.body import MARGIN
from tests.unit.geometry.test_closest import DEMO_TARGET, FAR, demo_moment


def _sampled(model, target, n: int = 200_000, seed: int = 5) -> float:
    """The nearest hand to ``target`` among ``n`` random clear configurations (WristYaw 0)."""
    rng = np.random.default_rng(seed)
    q = rng.uniform(model.lower, model.upper, (n, 5))
    q[:, 4] = 0.0
    d = np.linalg.norm(forward_batch(model, q) - np.asarray(target), axis=1)
    order = np.argsort(d)
    for at in range(0, n, 5000):  # nearest first, until one is clear
        rows = order[at : at + 5000]
        clear = rows[clear_of_body(model, q[rows])]
        if clear.size:
            return float(d[clear].min())
    return np.inf


CASES = [("the demo's", *demo_moment()[:1], DEMO_TARGET)] + [(f"{arm} {t}", arm_model(arm), t) for arm, t in FAR]


@pytest.mark.parametrize("name, model, target", CASES, ids=[c[0] for c in CASES])
def test_no_sampled_clear_pose_is_nearer(name, model, target):
    found = clear_search(model, target, 0.0)
    assert found.distances.size and np.all(np.diff(found.distances) >= 0.0)
    assert np.all(clearance_batch(model, found.angles, model.body)[0] >= MARGIN)
    assert found.distances[0] == pytest.approx(np.linalg.norm(forward_batch(model, found.angles[:1])[0] - target))
    assert found.distances[0] <= _sampled(model, target) + 1e-9, name
    # The closest pose without the body goes through it: the margin binds at the answer, within about SHIFT.
    assert clearance_batch(model, found.angles[:1], model.body)[0][0] <= MARGIN + 2 * SHIFT


def test_a_search_is_remembered_and_its_arrays_are_the_callers():
    model, _ = demo_moment()
    first = clear_search(model, DEMO_TARGET, 0.0)
    first.angles[0, 0] = 99.0
    again = clear_search(model, list(DEMO_TARGET), 0)
    assert again.angles[0, 0] != 99.0 and np.array_equal(again.distances, first.distances)
