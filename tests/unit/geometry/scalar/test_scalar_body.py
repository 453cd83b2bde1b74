"""The body check's Python 2/3 modules (nao_ik.model.body_data, nao_ik.geometry.scalar.clearance / scalar_sweep).

The library's types are built from the same rows, and the float clearance (the robot runtime's and the
library's per-configuration check) equals the numpy batch.
"""

from __future__ import annotations

import numpy as np
import pytest

from nao_ik.geometry.collision import clearance, clearance_batch
from nao_ik.geometry.scalar import clearance as scalar_clearance
from nao_ik.model import body_data
from nao_ik.model.arm import arm_model
from nao_ik.model.body import BODY, LINKS, Link, body
from nao_ik.robot.arms import MODELS


def test_the_librarys_body_is_built_from_the_rows():
    assert BODY == body_data.body_rows()
    assert [type(c).__name__ for c in BODY] == ["Box"] * 6 + ["Capsule"] + ["Box"] * 4  # torso, head, legs
    assert body(-0.2, 0.3) == body_data.body_rows(-0.2, 0.3)
    assert LINKS == body_data.LINK_ROWS and all(isinstance(ln, Link) for ln in LINKS)


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_the_float_clearance_equals_the_batch(arm):
    """1000 random configurations (standing body, and a crouched one): distance to 1e-12, the same part."""
    model = arm_model(arm)
    rng = np.random.default_rng(5)
    q = rng.uniform(model.lower, model.upper, (1000, 5))
    for pitches in ((), (-1.2, 0.4)):
        shapes, rows = body(*pitches), body_data.body_rows(*pitches)
        dist, part = clearance_batch(model, q, shapes)
        near = 0
        for x, d, p in zip(q.tolist(), dist, part):
            got = scalar_clearance.clearance(model, x, rows)  # the rows, as the robot runtime passes them
            assert abs(got.distance - d) <= 1e-12, x
            assert got == clearance(model, x, shapes)  # the library's is this code
            if d < scalar_clearance.CAP - 1e-9:
                assert got.part == body_data.NAMES[p]
                near += 1
            # The robot runtime's model (plain tuples) gives the same numbers.
            assert scalar_clearance.clearance(MODELS[arm], x, rows) == got
        assert near > 500


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_a_boxs_links_stay_within_the_growth_its_centre_gives(arm):
    """The motion check's bound (link_reach_at, box_growth): every point of each link, anywhere in a box of
    joint angles, stays within the growth of where it is at the box's centre; the posture's bound is never
    looser than the one for every posture (link_reach). 3000 random boxes, up to a joint's whole range wide, 8
    postures in each (corners among them: a joint at either end), five points along each link's whole segment
    (the upper arm from its root: the other arm's region takes it whole)."""
    from nao_ik.geometry.scalar.swivel import arm as scalar_arm

    model = arm_model(arm)
    k = scalar_arm(model)
    rng = np.random.default_rng(11)
    lo, hi = np.array(model.lower), np.array(model.upper)
    overall = scalar_clearance.link_reach(k)
    rows = [(start, end) for _, start, end, _, _ in body_data.LINK_ROWS]
    worst = 0.0
    for n in range(3000):
        width = 0.5 if n % 2 else 0.5 * (hi - lo)  # half the boxes small, half up to the whole range
        half = rng.uniform(0.0, 1.0, 5) * width * rng.integers(0, 2, 5)  # some joints fixed, as in a real box
        centre = rng.uniform(lo + half, hi - half)
        reach = scalar_clearance.link_reach_at(k, centre.tolist())
        assert all(r <= g + 1e-12 for row, top in zip(reach, overall) for r, g in zip(row, top))
        growth = scalar_clearance.box_growth(reach, half.tolist())
        at_centre = scalar_clearance.link_points(k, centre.tolist())
        for q in centre + half * rng.choice([-1.0, 1.0], (8, 5)) * rng.uniform(0.0, 1.0, (8, 5)) ** 0.3:
            pts = scalar_clearance.link_points(k, q.tolist())
            for (start, end), g in zip(rows, growth):
                for t in np.linspace(0.0, 1.0, 5):
                    here = np.add(pts[start], np.multiply(t, np.subtract(pts[end], pts[start])))
                    there = np.add(at_centre[start], np.multiply(t, np.subtract(at_centre[end], at_centre[start])))
                    moved = np.linalg.norm(here - there)
                    assert moved <= g + 1e-12, (centre, q, moved, g)
                    worst = max(worst, moved / g if g > 0 else 0.0)
    assert worst > 0.5  # the bound is not loose everywhere: some points come near it
