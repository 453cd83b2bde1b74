"""solve_batch in blocks (more than BATCH_BLOCK targets) answers like one batch."""

import numpy as np
import pytest

import nao_ik
from nao_ik.evidence.protocol import sample_targets


@pytest.mark.parametrize("method", ["nn", "nn-paper", "cells", "dls", "analytic"])
def test_blocks_answer_like_one_batch(mocker, method):
    """A method with no iterations (the networks, the cells) once failed past the block size."""
    targets = sample_targets("LArm", 25, 3)
    whole = nao_ik.solve_batch(targets, "LArm", method)
    mocker.patch("nao_ik.api.position.BATCH_BLOCK", 10)
    blocks = nao_ik.solve_batch(targets, "LArm", method)
    # The networks run in float32: a block's size may change the last bits (1e-7 rad), nothing more.
    np.testing.assert_allclose(blocks.angles, whole.angles, rtol=0, atol=1e-5)
    np.testing.assert_allclose(blocks.error, whole.error, rtol=0, atol=1e-5)


@pytest.mark.parametrize("method", ["analytic", "dls"])
def test_blocks_with_a_start_per_target_answer_like_one_batch(mocker, method):
    """With starts (the continuity rule, and analytic's proof of its batch answers) blocks answer alike too."""
    targets = sample_targets("RArm", 25, 4)
    model = nao_ik.api.position.resolve_arm("RArm")
    starts = np.random.default_rng(4).uniform(model.lower, model.upper, (25, 5))
    whole = nao_ik.solve_batch(targets, "RArm", method, initial=starts)
    mocker.patch("nao_ik.api.position.BATCH_BLOCK", 7)
    blocks = nao_ik.solve_batch(targets, "RArm", method, initial=starts)
    np.testing.assert_allclose(blocks.angles, whole.angles, rtol=0, atol=1e-9)
    assert (blocks.reached == whole.reached).all()
