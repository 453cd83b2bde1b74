"""Oyama & Tachi's learning during tracking control (their sections 3 and 4.3) on NAO's arm, from an untrained model.

Every learning trial is a tracking trial: a random straight path (21 points,
the step scaled to NAO), the expert chosen for it as in section 3 step (1)
(the experts in increasing order of predicted error on the path's ends, the
first whose answer the reaching motion takes to the first point; if none,
random postures, the first success founding a new expert as in section 2.4),
then equations (6)-(9) along the path. The chosen expert learns
Phi(x_d(k)) = theta(k) at every point where theta(k) is "precise enough":
within the paper's 5 mm precision scaled to NAO's reach. The learning curve
is measured on held-out paths and targets, starting at zero paths (untrained).
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

from ...kinematics.chain import forward_batch
from ...model.arm import ArmModel
from ...nn.data import random_configurations
from ...nn.modular import answers, predicted_errors
from ...recipes.track import follow
from ...training.modular_learning import PASSES, RANDOM_TRIES, _Learner, _new_expert
from .ot import NAO_STEP, PA10_REACH, model_alone_mm, nao_reach, track_model

#: The paper's precision (5 mm on the PA-10) scaled to NAO's reach.
PAPER_PRECISE = 0.005


class TrackCurve(NamedTuple):
    """One row of the learning-during-tracking curve."""

    paths: int  # learning paths so far
    samples: int  # points learned so far
    experts: int
    rms_mm: float  # model alone, held-out targets
    paper_rule: float  # held-out paths completed (given up at 5 cm)
    scaled_rule: float  # completed within the scaled give-up distance
    tracking_rms_mm: float


def _choose(run: _Learner, path: np.ndarray) -> tuple[int, np.ndarray]:
    """Section 3 step (1) for one path: (expert index, precise theta(0)); founds an expert if none reaches."""
    mod = run.modular()
    ends = path[[0, -1]]
    outs = answers(run.model, mod, ends, 0.0)
    order = np.argsort(predicted_errors(run.model, ends, outs).sum(axis=1), kind="stable")
    starts = outs[order, 0]
    q, ok = run.reach(np.repeat(path[:1], len(order), axis=0), starts)
    if ok.any():
        k = int(np.flatnonzero(ok)[0])
        return int(order[k]), q[k]
    rand = random_configurations(run.model, RANDOM_TRIES, run.rng)
    q, ok = run.reach(np.repeat(path[:1], RANDOM_TRIES, axis=0), rand)
    if not ok.any():
        return -1, q[0]
    ex, opt = _new_expert(q[int(np.flatnonzero(ok)[0])], run.rng, run.shoulder)
    run.experts.append(ex)
    run.opts.append(opt)
    run.buffers.append([])
    return len(run.experts) - 1, q[int(np.flatnonzero(ok)[0])]


def lines(model: ArmModel, count: int, seed: int, points: int = 21, step: float = NAO_STEP) -> list[np.ndarray]:
    """:func:`~nao_ik.recipes.track.random_lines`' paths (a random in-limit start, a normal step, every point
    reachable), drawn in bulk, every point checked by the exact reachability test (a solve per path costs 0.5 s
    here)."""
    from ...recipes.reachability import reachable_batch

    rng = np.random.default_rng(seed)
    s = np.linspace(0.0, 1.0, points)[None, :, None]
    out: list[np.ndarray] = []
    while len(out) < count:
        n = 2 * (count - len(out)) + 8
        q = random_configurations(model, n, rng, model.neutral[4])
        cand = forward_batch(model, q)[:, None, :] + s * rng.normal(0.0, step, (n, 1, 3))
        ok = reachable_batch(cand.reshape(-1, 3), model, model.neutral[4])[0].reshape(n, points).all(axis=1)
        out += list(cand[ok])
    return out[:count]


def learn_tracking(
    paths: int, batch: int = 50, every: int | None = None, evaluations: int = 1000, eval_paths: int = 100,
    seed: int = 21,
) -> list[TrackCurve]:  # fmt: skip
    """Learn from scratch by tracking ``paths`` random paths; the curve on held-out targets and paths.

    Args:
        paths: learning paths (trials).
        batch: paths tracked before the experts learn their points.
        every: evaluate after this many paths (default: a quarter of ``paths``).
        evaluations: held-out targets for the model-alone error.
        eval_paths: held-out paths for the tracking figures.
        seed: everything derives from it.

    Returns:
        The curve, its first row the untrained model.
    """
    every = every or max(paths // 4, batch)
    run = _Learner(seed, PASSES, None)
    model = run.model
    precise = PAPER_PRECISE * nao_reach() / PA10_REACH
    held = forward_batch(model, random_configurations(model, evaluations, np.random.default_rng(seed + 1)))
    held_paths = lines(model, eval_paths, seed + 2)
    train_paths = lines(model, paths, seed + 3)
    samples = 0

    def row(done: int) -> TrackCurve:
        mod = run.modular()
        tr = track_model(mod, held_paths)
        return TrackCurve(done, samples, len(mod.experts), model_alone_mm(mod, held)[0], tr.paper_rule,
                          tr.scaled_rule, tr.rms_mm)  # fmt: skip

    curve = [row(0)]
    for start in range(0, paths, batch):
        learned: dict[int, list] = {}
        for path in train_paths[start : start + batch]:
            i, theta = _choose(run, path)
            if i < 0:
                continue
            net = run.experts[i].net

            def phi(target: np.ndarray, previous: np.ndarray | None = None, net=net) -> np.ndarray:
                return np.clip(np.r_[net(np.asarray(target)[None])[0], 0.0], model.lower, model.upper)

            tr = follow(model, path, theta, phi)
            good = tr.errors <= precise
            n = len(tr.angles)
            learned.setdefault(i, []).append((path[:n][good], tr.angles[good, :4]))
        for i, parts in learned.items():
            x = np.concatenate([p for p, _ in parts])
            if x.shape[0]:
                run.learn(i, x, np.concatenate([a for _, a in parts]))
                samples += x.shape[0]
        done = min(start + batch, paths)
        if done % every == 0 or done == paths:
            curve.append(row(done))
    return curve


def curve_table(curve: Sequence[TrackCurve], reach: float) -> str:
    """The curve as markdown, errors also as fractions of the reach."""
    lines = [
        "| learning paths | points learned | experts | model alone RMS | paths tracked (5 cm) | paths tracked "
        "(scaled rule) | RMS tracking error |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in curve:
        lines.append(
            f"| {c.paths:,} | {c.samples:,} | {c.experts} | {c.rms_mm:.1f} mm ({100 * c.rms_mm / (reach * 1e3):.1f} %"
            f" of reach) | {100 * c.paper_rule:.1f} % | {100 * c.scaled_rule:.1f} % | {c.tracking_rms_mm:.2f} mm |"
        )
    return "\n".join(lines)


def text(curve: Sequence[TrackCurve], reach: float) -> str:
    """The curve and what it shows beside the paper's Figure 8."""
    first, last = curve[0], curve[-1]
    precise = PAPER_PRECISE * reach / PA10_REACH
    return "\n".join(
        [
            curve_table(curve, reach),
            "",
            f"Learning from tracking alone, from the untrained model: {last.paths:,} paths taught "
            f"{last.samples:,} points (a point is learned where the tracking error is within {precise * 1e3:.1f} mm, "
            f"the paper's 5 mm scaled to NAO's reach; the first point of a path qualifies, the reaching "
            "motion solves it to 0.1 mm, the others only where the model already tracks well). "
            "The model-alone error went from "
            f"{first.rms_mm:.1f} mm to {last.rms_mm:.1f} mm, paths tracked under the scaled rule from "
            f"{100 * first.scaled_rule:.1f} % to {100 * last.scaled_rule:.1f} % (under the paper's 5 cm rule from "
            f"{100 * first.paper_rule:.1f} % to {100 * last.paper_rule:.1f} %), the RMS tracking error from "
            f"{first.tracking_rms_mm:.2f} mm to {last.tracking_rms_mm:.2f} mm. The paper's Figure 8: more than 98 % "
            "of paths after 10^6 learning trials (its trials mix reaching and tracking; here every trial is a "
            "tracking trial, and far fewer are run).",
        ]
    )
