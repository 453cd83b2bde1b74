"""Kim & Tarokh's cell lookup (``cells``): the table, its address formula, its accuracy."""

import numpy as np

import nao_ik
from nao_ik.geometry.swivel import swivel_of
from nao_ik.kinematics.chain import forward_batch
from nao_ik.model.arm import arm_model
from nao_ik.nn import cells
from nao_ik.nn.data import random_configurations


def test_a_small_table_is_addressed_as_the_paper_says():
    cm = cells.build(samples=200_000, divisions=(4, 4, 4, 6), min_samples=5, seed=1)
    assert np.all(np.diff(cm.addresses * 2 + cm.branches) > 0)  # sorted for the binary search
    d = cm.divisions
    k = np.array([[1, 2, 3, 4]])
    assert cells._address(d, k)[0] == ((1 * d[1] + 2) * d[2] + 3) * d[3] + 4
    # A configuration's own cell holds a model for its branch.
    model = arm_model("LArm")
    q = random_configurations(model, 50, np.random.default_rng(2))
    v, b = swivel_of(model, q)
    kk, _ = cells._indices(d, forward_batch(model, q) - np.asarray(model.shoulder), v)
    keys = set((cm.addresses * 2 + cm.branches).tolist())
    hits = np.mean([(int(a) * 2 + int(bb)) in keys for a, bb in zip(cells._address(d, kk), b)])
    assert hits > 0.9


def test_shipped_table_answers_within_millimetres():
    model = arm_model("LArm")
    q = random_configurations(model, 1000, np.random.default_rng(99))
    t = forward_batch(model, q)
    b = nao_ik.solve_batch(t, "LArm", "cells")
    assert np.all((b.angles >= model.lower) & (b.angles <= model.upper))
    err_mm = b.error * 1e3
    assert np.mean(err_mm) < 3.0 and np.percentile(err_mm, 99) < 15.0, (np.mean(err_mm), np.percentile(err_mm, 99))


def test_right_arm_by_mirror():
    t = forward_batch(arm_model("LArm"), random_configurations(arm_model("LArm"), 20, np.random.default_rng(3)))
    a = nao_ik.solve_batch(t, "LArm", "cells")
    r = nao_ik.solve_batch(t * [1, -1, 1], "RArm", "cells")
    np.testing.assert_allclose(r.angles, a.angles * [1, -1, -1, -1, 1], atol=1e-12)
    np.testing.assert_allclose(r.error, a.error, atol=1e-12)


def test_single_and_batch_agree_and_flag_clamping():
    t = [[0.15, 0.12, 0.08], [0.0, 0.098, 0.1], [0.6, 0.0, 0.0]]
    b = nao_ik.solve_batch(t, "LArm", "cells")
    for i, target in enumerate(t):
        s = nao_ik.solve(target, "LArm", "cells")
        np.testing.assert_allclose(s.angles, b.angles[i], atol=1e-12)
        assert set(s.clamped) == {n for n, c in zip(s.names, b.clamped[i]) if c}
    assert np.all(np.isfinite(b.error))


def test_quadratic_models_pay_off_where_cells_have_the_data(monkeypatch):
    # Same data, same cells: the products of the offsets cut the error at the query's own swivel.
    model = arm_model("LArm")
    q = random_configurations(model, 400, np.random.default_rng(8))
    t = forward_batch(model, q)
    v, b = swivel_of(model, q)
    mean = {}
    for degree in (1, 2):
        cm = cells.build(samples=600_000, divisions=(8, 8, 8, 8), seed=3, degree=degree)
        monkeypatch.setattr(cells, "load", lambda path=None, cm=cm: cm)
        errs = []
        for ti, vi, bi in zip(t, v, b):
            ans = cells.cell_solutions(model, ti[None, :], swivel=float(vi))
            k = np.flatnonzero(ans.branch == bi)[0]
            if ans.found[0, k]:
                qq = np.r_[np.clip(ans.angles[0, k], model.lower[:4], model.upper[:4]), 0.0]
                errs.append(np.linalg.norm(forward_batch(model, qq[None, :])[0] - ti))
        assert len(errs) >= 0.95 * len(t)
        mean[degree] = np.mean(errs)
    assert mean[2] < 0.6 * mean[1], mean
