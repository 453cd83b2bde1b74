"""Kim & Tarokh's whole-posture pieces: the per-cell networks (eqs. 8-12) and the posture coordinates."""

import math

import numpy as np

from nao_ik.evidence.report import kt_net as report_kt_net
from nao_ik.evidence.report import kt_pose as report_kt_pose
from nao_ik.kinematics.hand_pose import angles_from_rotation
from nao_ik.model.arm import arm_model


def test_each_cell_network_learns_its_own_cells_function():
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (400, 2))
    groups = np.repeat([0, 1], 200)
    slopes = np.array([[1.0, -0.5], [-2.0, 0.3]])
    y = np.einsum("sd,sd->s", x, slopes[groups])[:, None] + 3.0 * groups[:, None]
    nets = report_kt_net.train(*report_kt_net.pad(groups, x, y, cap=256), hidden=5, epochs=1500)
    test = rng.uniform(-0.9, 0.9, (50, 2))
    for g in (0, 1):
        want = test @ slopes[g] + 3.0 * g
        own = report_kt_net.evaluate(nets, np.full(50, g), test)[:, 0]
        other = report_kt_net.evaluate(nets, np.full(50, 1 - g), test)[:, 0]
        assert np.max(np.abs(own - want)) < 0.05  # outputs span about 6
        assert np.mean(np.abs(other - want)) > 1.0  # the answer comes from the query's own cell


def test_posture_coordinates():
    model = arm_model("LArm")
    rng = np.random.default_rng(1)
    q = rng.uniform(model.lower, model.upper, (200, 5))
    p = report_kt_pose.postures(q)
    for r, e in zip(p.rotation[:20], p.euler[:20]):
        assert np.allclose(angles_from_rotation(r.tolist()), e)
    turned = q.copy()
    turned[:, 4] = rng.uniform(model.lower[4], model.upper[4], 200)
    moved = report_kt_pose.postures(turned)
    assert np.allclose(moved.wrist, p.wrist) and np.allclose(moved.swivel, p.swivel)  # the wrist point ignores WristYaw
    assert not np.allclose(moved.euler, p.euler)
    key, off = report_kt_pose.orient_cells(q[:, :4], p.euler)
    assert np.all(np.abs(off) <= 0.5 + 1e-9) and key.min() >= 0
    assert np.prod(report_kt_pose._orient_div()) > key.max()


def test_eq7_recovers_a_function_of_its_own_form():
    rng = np.random.default_rng(2)
    q4, off = rng.uniform(-1, 1, (60, 4)), rng.uniform(-0.5, 0.5, (60, 7))
    a = report_kt_pose.eq7_features(q4, off)
    true = rng.normal(size=14)
    coefs, ok = report_kt_pose._lstsq(np.zeros(60, dtype=int), a, (a @ true)[:, None], 1, report_kt_pose.MIN_ORIENT)
    assert ok[0] and np.allclose(coefs[0, :, 0], true)
    assert math.isclose(report_kt_pose._rotation_error(np.eye(3)[None], np.eye(3)[None])[0], 0.0, abs_tol=1e-6)
