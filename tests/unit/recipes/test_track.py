"""Path tracking (Oyama & Tachi's equations 6-9): library and trackPath over qi."""

import functools
import time

import numpy as np
import pytest

from nao_ik.kinematics import chain as kinematics
from nao_ik.model.arm import arm_model
from nao_ik.recipes.track import random_lines as paths
from nao_ik.recipes.track import track_path


def line(a, b, n=21):
    a, b = np.asarray(a), np.asarray(b)
    return [(a + (b - a) * s).tolist() for s in np.linspace(0, 1, n)]


def random_lines(arm, count, seed):
    return [p.tolist() for p in paths(arm, count, 21, seed)]


@functools.cache
def _lines(count: int, seed: int) -> tuple:
    """random_lines, made once per test session (the three methods below track the same lines)."""
    return tuple(random_lines("LArm", count, seed))


@pytest.mark.parametrize("method", ["nn", "dls", "fabrik"])
def test_tracking_follows_reachable_lines(method):
    paths = _lines(30, 3)
    tracks = [track_path(p, "LArm", method) for p in paths]
    model = arm_model("LArm")
    for p, tr in zip(paths, tracks):
        assert tr.angles.shape[1] == 5 and np.all(np.isfinite(tr.angles))
        assert all(model.within_limits(q) for q in tr.angles)
        # The errors reported are the real ones.
        hands = kinematics.forward_batch(model, tr.angles)
        np.testing.assert_allclose(np.linalg.norm(hands - np.asarray(p)[: len(hands)], axis=1), tr.errors, atol=1e-12)
    done = [tr for tr in tracks if tr.completed]
    assert len(done) >= 0.9 * len(tracks)
    rms = np.sqrt(np.mean(np.concatenate([tr.errors for tr in done]) ** 2))
    assert rms < 1e-3, rms


def test_feedback_makes_the_papers_network_track_better_than_it_answers():
    # Equations (6)-(9) correct the model's error along the path, as the paper shows.
    from nao_ik.api.position import solve

    paths = random_lines("LArm", 20, 9)
    tracked, alone = [], []
    for p in paths:
        tr = track_path(p, "LArm", "nn-paper")
        tracked.extend(tr.errors[1:])
        alone.extend(solve(x, "LArm", "nn-paper").error for x in p[1 : len(tr.errors)])
    assert np.sqrt(np.mean(np.square(tracked))) < 0.5 * np.sqrt(np.mean(np.square(alone)))


def test_bad_paths_are_refused():
    with pytest.raises(ValueError, match="points must be a list"):
        track_path("0.1 0.1 0.1")
    with pytest.raises(ValueError, match=r"points\[1\]: target y must be a finite number"):
        track_path([[0.15, 0.12, 0.08], [0.15, float("nan"), 0.08]])
    with pytest.raises(ValueError, match="points must hold 1 to 2000"):
        track_path([])
    with pytest.raises(ValueError, match="alpha"):
        track_path([[0.15, 0.12, 0.08]], alpha=1.5)


def test_track_path_over_qi(awake):
    path = line([0.15, 0.12, 0.08], [0.12, 0.20, 0.15], 26)
    t0 = time.monotonic()
    r = awake.ik.trackPath("LArm", path, "nn")
    elapsed = time.monotonic() - t0
    assert r["completed"] and r["rmsError"] < 1e-4 and len(r["errors"]) == 26
    moves = awake.moves()
    assert len(moves) == 26 and [m["angles"] for m in moves] == r["angles"]
    stamps = [m["time"] for m in moves]
    assert min(np.diff(stamps)) >= 0.015 and elapsed >= 25 * 0.02  # one command per 20 ms cycle
    assert awake.stub.getViolations() == []


def test_track_path_refuses_bad_input_and_sends_nothing(awake):
    for points, message in (
        ([[0.15, 0.12, 0.08], [0.1, "x", 0.1]], r"points\[1\]: target y"),
        ("path", "points must be a list"),
        ([], "points must hold"),
    ):
        with pytest.raises(RuntimeError, match=message):
            awake.ik.trackPath("LArm", points, "nn")
    with pytest.raises(RuntimeError, match="unknown arm"):
        awake.ik.trackPath("Legs", [[0.15, 0.12, 0.08]], "nn")
    with pytest.raises(RuntimeError, match="unknown method"):
        awake.ik.trackPath("LArm", [[0.15, 0.12, 0.08]], "ccd")
    assert awake.moves() == []


def test_track_path_with_motors_off(stack):
    with pytest.raises(RuntimeError, match="motors are off"):
        stack.ik.trackPath("RArm", [[0.15, -0.12, 0.08]], "dls")
    assert stack.moves() == []
