"""Oyama & Tachi's learning during tracking on NAO: paths as the paper draws them, and learning that shows."""

import numpy as np

from nao_ik.evidence.report import ot_track as report_ot_track
from nao_ik.model.arm import arm_model
from nao_ik.recipes.reachability import reachable_batch


def test_paths_are_straight_and_reachable_everywhere():
    model = arm_model("LArm")._replace(body=())
    paths = report_ot_track.lines(model, 5, seed=3)
    assert len(paths) == 5
    for p in paths:
        assert p.shape == (21, 3)
        steps = np.diff(p, axis=0)
        assert np.allclose(steps, steps[0])  # evenly spaced on a line
        assert reachable_batch(p, model, model.neutral[4])[0].all()


def test_tracking_teaches_the_untrained_model():
    curve = report_ot_track.learn_tracking(60, batch=20, every=60, evaluations=100, eval_paths=4, seed=4)
    first, last = curve[0], curve[-1]
    assert (first.paths, first.samples) == (0, 0) and last.paths == 60
    assert last.samples >= 60  # at least the first point of every path, which the reaching motion solves
    assert last.rms_mm < 0.5 * first.rms_mm  # the untrained expert answers one posture everywhere
    assert "| learning paths |" in report_ot_track.text(curve, 0.22)
