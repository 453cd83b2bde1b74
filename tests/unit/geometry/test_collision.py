"""The batch clearance's screens (:mod:`nao_ik.geometry.collision`)."""

from __future__ import annotations

import numpy as np
import pytest

from nao_ik.geometry.collision import clearance_batch, hand_blocked, posture_body
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
