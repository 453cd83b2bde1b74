"""The batch clearance's screens (:mod:`nao_ik.geometry.collision`)."""

from __future__ import annotations

import numpy as np
import pytest

from nao_ik.geometry.collision import clearance, clearance_batch, hand_blocked, posture_body
from nao_ik.geometry.scalar.clearance import CAP
from nao_ik.geometry.scalar.clearance import clearance as scalar_clearance
from nao_ik.kinematics.chain import forward_batch
from nao_ik.model.arm import arm_model
from nao_ik.model.body import MARGIN
from nao_ik.nn.data import random_configurations


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_a_hand_in_the_bodys_way_has_no_clear_configuration(arm):
    """hand_blocked is a certificate: every configuration whose hand is at a point it calls blocked is within the
    margin (random configurations, both WristYaw and the other arm varied); and it decides many of the points
    whose configurations are all within the margin (it is worth its cost)."""
    model = arm_model(arm)
    other = arm_model("RArm" if arm == "LArm" else "LArm")
    rng = np.random.default_rng(7)
    shapes = posture_body(None, (other, random_configurations(other, 1, rng, 0.0)[0].tolist()))
    q = random_configurations(model, 20000, rng, 0.0)
    q[:, 4] = rng.uniform(model.lower[4], model.upper[4], len(q))
    gap = clearance_batch(model, q, shapes)[0]
    blocked = hand_blocked(model, forward_batch(model, q), shapes)
    assert np.all(gap[blocked] < MARGIN)
    assert blocked.sum() > 0.2 * (gap < MARGIN).sum()
    assert not hand_blocked(model, forward_batch(model, q), ()).any()  # no body, no claim


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_a_streaming_arm_is_held_anywhere_the_rest_of_its_path_may_take_it(arm):
    """:func:`stream_body` of a path (the last command sent and those to come): every point of every link, at
    postures drawn in each box :func:`stream_regions` gives (where the arm may be as each command arrives, grown
    by its overshoot), lies within that link's capsule of some piece, grown radius less the link's own."""
    from nao_ik.geometry.scalar.clearance import link_points
    from nao_ik.geometry.scalar.swivel import arm as scalar_arm
    from nao_ik.geometry.sweep import STREAM_PIECES, stream_body, stream_regions
    from nao_ik.model.body_data import LINK_ROWS, OTHER_ARM, shoulder_row

    model = arm_model(arm)
    k = scalar_arm(model)
    rng = np.random.default_rng(5)
    for n in (1, 3, 30):
        ends = rng.uniform(model.lower, model.upper, (2, 5))
        path = (ends[0] + np.linspace(0.0, 1.0, n)[:, None] * (ends[1] - ends[0])).tolist()
        reading = np.clip(ends[0] + rng.uniform(-0.2, 0.2, 5), model.lower, model.upper).tolist()
        cover = stream_body(model, reading, path, 0.5, 0.02)
        assert len(cover) <= STREAM_PIECES * len(posture_body(None, (model, reading), path[0]))
        shoulder = shoulder_row(k.s, OTHER_ARM)
        assert tuple(cover[0]) == shoulder  # the arm's shoulder once, fixed to the torso; then the links' pieces
        cover = [c for c in cover if tuple(c) != shoulder]
        for postures, grow in stream_regions(model, reading, path, 0.5, 0.02):
            lo, hi = np.min(postures, axis=0) - grow, np.max(postures, axis=0) + grow
            for posture in rng.uniform(lo, hi, (10, 5)).tolist():
                pts = link_points(k, posture)
                for i, (_, first, last, _, radius) in enumerate(LINK_ROWS):
                    for t in np.linspace(0.0, 1.0, 5):
                        x = np.asarray(pts[first]) + t * (np.asarray(pts[last]) - np.asarray(pts[first]))
                        assert min(_beyond(x, c) + radius for c in cover[i :: len(LINK_ROWS)]) <= 1e-9


def _beyond(x, capsule):
    """How far the point ``x`` is outside ``capsule`` (negative inside)."""
    a, b = np.asarray(capsule.a), np.asarray(capsule.b)
    t = np.clip(np.dot(x - a, b - a) / max(float(np.dot(b - a, b - a)), 1e-18), 0.0, 1.0)
    return float(np.linalg.norm(x - (a + t * (b - a)))) - capsule.radius


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_a_clearance_asked_up_to_a_distance_is_exact_below_it(arm):
    """``cap`` leaves out the exact distances its bound settles: the answer is the full one capped at ``cap``
    (random configurations, many of them near the body)."""
    model = arm_model(arm)
    q = random_configurations(model, 5000, np.random.default_rng(11), 0.0)
    full, part = clearance_batch(model, q, model.body)
    assert (full < MARGIN).sum() > 500
    for cap in (0.0, MARGIN, 0.03):
        got, got_part = clearance_batch(model, q, model.body, cap)
        np.testing.assert_array_equal(got, np.minimum(full, cap))
        np.testing.assert_array_equal(got_part, np.where(full < cap, part, -1))
    # One configuration: asked again with another cap (its last answer is kept), the same as asked afresh, and the
    # cap at most CAP.
    for row in q[:40].tolist():
        alone = scalar_clearance(model, row, model.body)
        for cap in (MARGIN, 0.03, 1.0, MARGIN, CAP):
            got = clearance(model, row, model.body, cap)
            assert got.distance == min(cap, alone.distance)
            assert got.part == (alone.part if alone.distance < cap else "")


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_a_clearance_asked_with_a_floor_is_exact_from_it_up(arm):
    """``floor`` leaves a configuration as soon as one of its links is found nearer than it: from the floor up the
    distance is the full one, below it only below (many configurations, link by link; and few, all links at once,
    where it changes nothing)."""
    model = arm_model(arm)
    q = random_configurations(model, 5000, np.random.default_rng(12), 0.0)
    for rows in (q, q[:100]):
        full = clearance_batch(model, rows, model.body, MARGIN)[0]
        got = clearance_batch(model, rows, model.body, MARGIN, 0.5 * MARGIN)[0]
        above = full >= 0.5 * MARGIN
        assert 0 < above.sum() < len(rows)
        np.testing.assert_array_equal(got[above], full[above])
        assert np.all(got[~above] < 0.5 * MARGIN)


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_all_links_at_once_or_link_by_link_give_the_same_clearance(arm, monkeypatch):
    """Few configurations are measured all links in one pass, many link by link (the pairs farther than the
    nearest so far left to their bounds): the same distances and parts, bit for bit."""
    from nao_ik.geometry import collision

    model = arm_model(arm)
    q = random_configurations(model, 3000, np.random.default_rng(13), 0.0)
    for cap in (collision.CAP, MARGIN):
        monkeypatch.setattr(collision, "FUSED_ROWS", 0)
        by_link = clearance_batch(model, q, model.body, cap)
        monkeypatch.setattr(collision, "FUSED_ROWS", 10**6)
        at_once = clearance_batch(model, q, model.body, cap)
        for a, b in zip(by_link, at_once):
            np.testing.assert_array_equal(a, b)
