"""Learning ``nn-modular`` on-line (Oyama & Tachi 2001, section 2), and its learning curves.

Each learning trial is a target, drawn like the paper's (the hand position of
a uniformly random in-limit posture), solved by the extended feedback
controller of :mod:`nao_ik.nn.modular`; the solution trains the expert it
started from, or founds a new expert when only random postures found it.
Trials run in batches (all of a batch's reaching motions in one vectorised
call); every expert then takes Adam steps on its recent solutions and is
pinned to its representative posture again (their equation 1).
"""

from __future__ import annotations

import time
from typing import Callable, NamedTuple, Sequence

import numpy as np

from ..kinematics.chain import forward_batch
from ..model.arm import arm_model
from ..nn.data import random_configurations
from ..nn.modular import PRECISE, R_SIM, REACH_ITERATIONS, Expert, Modular, path_inverse, select
from ..recipes.track import TrackFigures, follow, random_lines, reach, track_figures, track_path
from .fit import Adam, gradients, init_mlp

#: Random postures tried per target in the global search (step 4).
RANDOM_TRIES = 8
HIDDEN = (32, 32)
#: Adam's step size, decayed geometrically to LR_END over the trials.
LR, LR_END = 3e-3, 3e-4
#: Adam steps per learning batch: PASSES x (new samples) / 128, on samples
#: drawn from the expert's buffer. RMS of the model alone, measured with
#: ``nao-ik train --which nn-modular --trials T --passes P --out DIR``:
#: P 20, T 100,000: 17.7 mm; P 100, T 40,000: 12.2 mm; P 300, T 100,000: 11.5 mm.
PASSES = 300
#: Learning trials of the shipped model.
TRIALS = 100_000
#: Samples an expert keeps for learning (the most recent).
BUFFER = 20_000
#: Held-out straight paths of the learning curve and of the page.
PATHS = 200
#: Section 2.5's discontinuity check: where the selected expert's
#: |d Phi / d x| (Frobenius, rad/m) exceeds this, its solution founds a new
#: expert. Off (None): it never helped here. RMS of the model alone / experts
#: after ``nao-ik train --which nn-modular --trials 30000 [--r-jiz R]``: off
#: 14.2 mm / 4; R 30: 14.9 mm / 62 (more experts, no gain), because the damped
#: feedback keeps each expert's solutions continuous already.
R_JIZ: float | None = None


class Curve(NamedTuple):
    """The paper's Figures 2 and 8 for the NAO arm, one row per evaluation.

    Attributes:
        trials: learning trials so far.
        experts: number of experts.
        rms_mm: RMS hand error of the model alone (the selected expert's answer, clamped).
        median_mm: its median.
        first_selection: fraction of evaluation targets that the reaching
            motion from the first selected expert's answer solves.
        tracking: fraction of the evaluation paths tracked to the end
            (the paper's rule: given up when 5 cm off).
        tracking_1cm: fraction tracked within 1 cm throughout.
        tracking_rms_mm: RMS tracking error over the completed paths.
    """

    trials: int
    experts: int
    rms_mm: float
    median_mm: float
    first_selection: float
    tracking: float
    tracking_1cm: float
    tracking_rms_mm: float


def tracking(mod: Modular, paths: Sequence[np.ndarray]) -> TrackFigures:
    """The paper's Figure 8(b, c) for the left arm: tracking with equations (6)-(9) and this model.

    Returns:
        :class:`~nao_ik.recipes.track.TrackFigures`.
    """
    model = arm_model("LArm")
    return track_figures([follow(model, path, *path_inverse(model, mod, path, reach)) for path in paths])


def _new_expert(posture: np.ndarray, rng: np.random.Generator, shoulder: np.ndarray) -> tuple[Expert, Adam]:
    """An expert that answers its representative posture everywhere until it learns."""
    sizes = [3, *HIDDEN, 4]
    net = init_mlp(sizes, ["tanh"] * len(HIDDEN) + ["linear"], rng, shoulder, np.full(3, 4.0),
                   posture[:4].copy(), np.ones(4))  # fmt: skip
    net.weights[-1][...] *= 0.01
    ex = Expert(net, posture.copy())
    _pin(ex, shoulder)
    return ex, Adam(list(net.weights) + list(net.biases), lr=LR)


def _pin(ex: Expert, shoulder: np.ndarray) -> None:
    """Equation 1: shift the output bias so that Phi(x_r) = theta_r exactly."""
    x_r = forward_batch(arm_model("LArm"), ex.posture[None])
    miss = ex.posture[:4] - ex.net(x_r)[0]
    ex.net.biases[-1][...] += miss / ex.net.out_scale


class _Learner:
    """The state of a learning run: experts, their optimisers and sample buffers."""

    def __init__(self, seed: int, passes: int, r_jiz: float | None):
        self.passes, self.r_jiz = passes, r_jiz
        # The arm's inverse kinematics alone: the body is checked when a method answers.
        self.model = arm_model("LArm")._replace(body=())
        self.rng = np.random.default_rng(seed)
        self.shoulder = np.asarray(self.model.shoulder)
        zero = np.clip(np.zeros(5), self.model.lower, self.model.upper)  # the paper's first expert: (0, 0)
        ex, opt = _new_expert(zero, self.rng, self.shoulder)
        self.experts, self.opts = [ex], [opt]
        self.buffers: list[list[np.ndarray]] = [[]]

    def modular(self, record: dict | None = None) -> Modular:
        return Modular(tuple(self.experts), record or {})

    def reach(self, targets: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The reaching motion (error feedback) from each start: (angles, solved)."""
        from ..solvers import SOLVERS
        from ..solvers.pipeline import run_batch

        if targets.shape[0] == 0:
            return np.zeros((0, 5)), np.zeros(0, dtype=bool)
        spec = SOLVERS["dls"]._replace(restarts=False)
        run = run_batch(spec, self.model, targets, starts, PRECISE, REACH_ITERATIONS, continuous=False)
        return run.q, run.error <= PRECISE

    def trial_batch(self, x: np.ndarray) -> dict:
        """One batch of learning trials; returns counts of how the targets were solved."""
        n = x.shape[0]
        mod = self.modular()
        outs, p, order = select(self.model, mod, x, 0.0)
        solved = np.zeros(n, dtype=bool)
        theta = np.zeros((n, 5))
        owner = np.full(n, -1)
        counts = {"first": 0, "other": 0, "posture": 0, "new": 0, "split": 0, "unsolved": 0}
        cols = np.arange(n)
        for rank in range(len(self.experts)):  # steps (1) and (2)
            who = order[rank]
            rows = np.flatnonzero(~solved & ((rank == 0) | (p[who, cols] < R_SIM)))
            if rows.size == 0:
                continue
            q, ok = self.reach(x[rows], outs[who[rows], rows])
            done = rows[ok]
            theta[done], owner[done], solved[done] = q[ok], who[done], True
            counts["first" if rank == 0 else "other"] += int(ok.sum())
        if self.r_jiz is not None:
            counts["split"] = self.split(x, order[0], owner, theta)
        for i in self.rng.permutation(len(self.experts)):  # step (3)
            rows = np.flatnonzero(~solved)
            if rows.size == 0:
                break
            q, ok = self.reach(x[rows], np.tile(self.experts[i].posture, (rows.size, 1)))
            done = rows[ok]
            theta[done], owner[done], solved[done] = q[ok], i, True
            counts["posture"] += int(ok.sum())
        rows = np.flatnonzero(~solved)  # step (4): random postures; the first success founds an expert
        if rows.size:
            k = RANDOM_TRIES
            starts = random_configurations(self.model, rows.size * k, self.rng)
            q, ok = self.reach(np.repeat(x[rows], k, axis=0), starts)
            hits = np.flatnonzero(ok)
            if hits.size:
                ex, opt = _new_expert(q[hits[0]], self.rng, self.shoulder)
                self.experts.append(ex)
                self.opts.append(opt)
                self.buffers.append([])
                counts["new"] += 1
            counts["unsolved"] = int(rows.size - (hits.size > 0))
        for i in range(len(self.experts)):  # on-line learning of each expert from its solutions
            mine = np.flatnonzero(owner == i)
            if mine.size:
                self.learn(i, x[mine], theta[mine, :4])
        return counts

    def split(self, x: np.ndarray, first: np.ndarray, owner: np.ndarray, theta: np.ndarray) -> int:
        """Section 2.5: the first target solved by its selected expert where that expert's
        |d Phi / d x| exceeds the threshold founds a new expert (returns 1 if one did)."""
        h = 1e-3
        for i in np.unique(first):
            rows = np.flatnonzero((owner == i) & (first == i))
            if rows.size == 0:
                continue
            net, xr = self.experts[i].net, x[rows]
            d = [(net(xr + h * e) - net(xr - h * e)) / (2 * h) for e in np.eye(3)]
            norm = np.sqrt(sum(np.sum(c * c, axis=1) for c in d))
            steep = rows[norm > self.r_jiz]
            if steep.size:
                ex, opt = _new_expert(theta[steep[0]], self.rng, self.shoulder)
                self.experts.append(ex)
                self.opts.append(opt)
                self.buffers.append([])
                owner[steep[0]] = len(self.experts) - 1
                return 1
        return 0

    def learn(self, i: int, x: np.ndarray, y: np.ndarray, batch: int = 128) -> None:
        """Add samples to expert i's buffer and take Adam steps on recent samples."""
        buf = self.buffers[i]
        buf.append(np.concatenate([x, y], axis=1))
        data = np.concatenate(buf)[-BUFFER:]
        self.buffers[i] = [data]
        ex = self.experts[i]
        net = ex.net
        steps = max(1, self.passes * x.shape[0] // batch)
        xs = (data[:, :3] - net.in_offset) * net.in_scale
        ys = (data[:, 3:] - net.out_offset) / net.out_scale
        for _ in range(steps):
            pick = self.rng.integers(0, data.shape[0], min(batch, data.shape[0]))
            _, gw, gb = gradients(net, xs[pick], ys[pick])
            self.opts[i].update(gw + gb)
        _pin(ex, self.shoulder)


def evaluate(mod: Modular, targets: np.ndarray, reach: Callable, paths: Sequence[np.ndarray], trials: int) -> Curve:
    """One row of the learning curve: the model on held-out targets and paths."""
    model = arm_model("LArm")
    n = targets.shape[0]
    outs, p, order = select(model, mod, targets, 0.0)
    alone = p[order[0], np.arange(n)] * 1e3
    _, ok = reach(targets, outs[order[0], np.arange(n)])
    tracked = tracking(mod, paths) if paths else (float("nan"),) * 3
    return Curve(trials, len(mod.experts), float(np.sqrt(np.mean(alone**2))), float(np.median(alone)),
                 float(ok.mean()), *tracked)  # fmt: skip


def learn(
    trials: int = TRIALS,
    batch: int = 500,
    seed: int = 5,
    evaluations: int = 1000,
    every: int = 10_000,
    paths: int | None = None,
    progress: Callable[[int, int, int], None] | None = None,
    passes: int | None = None,
    r_jiz: float | None = None,
) -> tuple[Modular, list[Curve]]:
    """Learn the modular model from scratch, deterministically from ``seed``.

    Targets are drawn as in the paper: the hand positions of uniformly random
    in-limit configurations; 1,000 more, and ``paths`` random straight
    paths (:func:`~nao_ik.recipes.track.random_lines`), are held out for the curve.

    Returns:
        (the model, its learning curve). ``paths``, ``passes`` and ``r_jiz``
        default to :data:`PATHS`, :data:`PASSES` and :data:`R_JIZ`.
    """
    passes = PASSES if passes is None else passes
    r_jiz = R_JIZ if r_jiz is None else r_jiz
    run = _Learner(seed, passes, r_jiz)
    model = run.model
    eval_targets = forward_batch(model, random_configurations(model, evaluations, np.random.default_rng(seed + 1)))
    paths = PATHS if paths is None else paths
    eval_paths = evaluation_paths(seed, paths) if paths else []
    curve = [evaluate(run.modular(), eval_targets, run.reach, eval_paths, 0)]
    totals = {"first": 0, "other": 0, "posture": 0, "new": 0, "split": 0, "unsolved": 0}
    t0 = time.perf_counter()
    done = 0
    while done < trials:
        x = forward_batch(model, random_configurations(model, batch, run.rng))
        for opt in run.opts:
            opt.lr = LR * (LR_END / LR) ** (done / trials)
        for k, v in run.trial_batch(x).items():
            totals[k] += v
        done += batch
        if done % every == 0 or done >= trials:
            curve.append(evaluate(run.modular(), eval_targets, run.reach, eval_paths, done))
        if progress:
            progress(done, trials, len(run.experts))
    record = {
        "method": "nn-modular",
        "seed": seed,
        "trials": done,
        "batch": batch,
        "hidden": list(HIDDEN),
        "lr": [LR, LR_END],
        "r_sim_m": R_SIM,
        "precise_m": PRECISE,
        "reach_iterations": REACH_ITERATIONS,
        "passes": passes,
        "random_tries": RANDOM_TRIES,
        "r_jiz": r_jiz,
        "how_solved": totals,
        "train_seconds": round(time.perf_counter() - t0, 1),
        "curve": [c._asdict() for c in curve],
    }
    return Modular(tuple(run.experts), record), curve


def curve_table(curve: Sequence[Curve]) -> str:
    """The learning curve as markdown."""
    lines = [
        "| learning trials | experts | model alone: RMS / median error (mm) | successful first selection | "
        "paths tracked (5 cm rule) | paths within 1 cm | RMS tracking error (mm) |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in curve:
        lines.append(
            f"| {c.trials:,} | {c.experts} | {c.rms_mm:.1f} / {c.median_mm:.1f} | {100 * c.first_selection:.1f} % | "
            f"{100 * c.tracking:.1f} % | {100 * c.tracking_1cm:.1f} % | {c.tracking_rms_mm:.2f} |"
        )
    return "\n".join(lines)


#: The paper's own figures (Oyama & Tachi 2001, sections 4-5), for the table.
PAPER_FIGURES = (
    ("experts", "3 (2-DOF arm, Fig. 2d); 5 or 6 (PA-10, Fig. 6); 4 or 5 in the tracking runs (Fig. 8)"),
    ("RMS error of the model alone", "1.50 mm after 5x10^7 trials (2-DOF); 12.0 mm after 10^7 trials (PA-10)"),
    ("successful first selection", "always after 10^5 trials (2-DOF, Fig. 2c)"),
    ("paths tracked", "more than 98 % after 10^6 trials (PA-10, Fig. 8b); a single network: under 95 %"),
    ("RMS tracking error", "'much smaller than the RMS error of the inverse kinematics model' (Fig. 8c, no figure)"),
)


def evaluation_paths(seed: int, count: int = PATHS) -> list[np.ndarray]:
    """The held-out straight paths of a learning run with this seed."""
    return random_lines("LArm", count, 21, seed + 2)


def page(mod: Modular) -> str:
    """docs/nn-modular.md: the learning curve from the record, the paper's figures, and tracking by method
    on the run's evaluation paths."""
    paths = evaluation_paths(mod.record["seed"], PATHS)
    curve = [Curve(**c) for c in mod.record["curve"]]
    last = curve[-1]
    rows = ["| method used as Phi | paths tracked (5 cm rule) | paths within 1 cm | RMS tracking error (mm) |",
            "|---|---|---|---|"]  # fmt: skip
    for method in ("nn-modular", "nn-paper", "nn", "dls"):
        if method == "nn-modular":  # measured on these paths at the end of the learning run
            fig = (last.tracking, last.tracking_1cm, last.tracking_rms_mm)
        else:
            fig = track_figures([track_path(p, "LArm", method) for p in paths])
        rows.append(f"| {method} | {100 * fig[0]:.1f} % | {100 * fig[1]:.1f} % | {fig[2]:.2f} |")
    ours = {
        "experts": f"{last.experts} after {last.trials:,} trials",
        "RMS error of the model alone": f"{last.rms_mm:.1f} mm (median {last.median_mm:.1f} mm)",
        "successful first selection": f"{100 * last.first_selection:.1f} %",
        "paths tracked": f"{100 * last.tracking:.1f} % ({100 * last.tracking_1cm:.1f} % within 1 cm throughout)",
        "RMS tracking error": f"{last.tracking_rms_mm:.2f} mm, {last.rms_mm / last.tracking_rms_mm:.1f}x smaller",
    }
    side = ["| figure | the paper | nao-ik, NAO left arm |", "|---|---|---|"]
    side += [f"| {name} | {paper} | {ours[name]} |" for name, paper in PAPER_FIGURES]
    rec = mod.record
    return "\n".join(
        [
            "# nn-modular: Oyama & Tachi's modular experts on the NAO arm",
            "",
            f"Learned by `nao-ik train --which nn-modular` (seed {rec['seed']}, {rec['trials']:,} trials in batches of "
            f"{rec['batch']}, experts {'-'.join(map(str, [3, *rec['hidden'], 4]))} tanh, {rec['train_seconds']} s of "
            "learning on the development machine); this page by `nao-ik train --which nn-modular --table "
            f"docs/nn-modular.md`. Evaluation on 1,000 held-out targets and {PATHS} held-out straight paths "
            "(21 points, a normally distributed 5 cm step: the paper's 0.2 m is for a 1.3 m arm).",
            "",
            "## Next to the paper",
            "",
            *side,
            "",
            "The reaching motion here is damped least squares, which reaches from almost any posture of this",
            "4-joint arm, so the first selection succeeds almost always from the start; the paper's",
            "pseudoinverse RMRC on its arms needed 10^5 trials for that. The forward model is NAO's exact",
            "kinematics (the paper learns one; its 'correct forward model' case).",
            "",
            "## Learning curve (the paper's Figures 2 and 8)",
            "",
            curve_table(curve),
            "",
            f"How the {rec['trials']:,} learning targets were solved: {rec['how_solved']}",
            "(first: from the selected expert; other: from another expert's answer; posture: from an",
            "expert's representative posture; new: founded a new expert; split: founded by the discontinuity check",
            "of section 2.5, off by default; unsolved: nothing reached it).",
            "",
            "## Tracking by method (equations 6-9, the same 200 paths)",
            "",
            *rows,
            "",
        ]
    )
