"""Expert selection with a learned forward model against the exact one (Oyama & Tachi's selector)."""

import numpy as np

from nao_ik.evidence.report import ot_fm as report_ot_fm
from nao_ik.kinematics.chain import forward_batch
from nao_ik.model.arm import arm_model
from nao_ik.nn.data import random_configurations


def test_the_forward_network_learns_the_arm():
    fm = report_ot_fm.learn_forward(3000, seed=1, epochs=30)
    model = arm_model("LArm")._replace(body=())
    q = random_configurations(model, 500, np.random.default_rng(2))
    err = np.linalg.norm(fm(q[:, :4]) - forward_batch(model, q), axis=1)
    assert np.sqrt(np.mean(err**2)) < 0.05  # a quarter of the 0.22 m reach (untrained: more than the reach)


def test_the_exact_selector_is_never_beaten_on_true_error():
    s = report_ot_fm.compare(3000, 60, seed=3, epochs=20)
    exact, learned = s.rms_mm["exact forward kinematics"], s.rms_mm["learned forward model"]
    assert exact <= learned  # the exact selector picks the smallest true error per target
    assert 0.0 < s.same <= 1.0 and all(0.0 <= f <= 1.0 for f in s.first.values())
    assert "| learned forward model |" in report_ot_fm.text(s)
