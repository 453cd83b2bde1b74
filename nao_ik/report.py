"""``nao-ik report``: the paper's experiments reproduced and the alternatives compared, in one page.

Writes ``report.md`` and PNG figures into a folder. Every figure is measured in
the same run on the same targets; timings are medians over repeated runs of
single ``solve`` calls. ``--quick`` shrinks every experiment (about a minute).
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import time
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Callable, NamedTuple, Sequence

import numpy as np

from . import (
    api,
    report_alone,
    report_fig3,
    report_kt,
    report_kt_pose,
    report_ot,
    report_ot_fm,
    report_ot_track,
    report_peers,
    report_planar,
    report_sec53,
)
from .bench import interleaved_times, machine, sample_targets
from .kinematics import forward, forward_batch, jacobian
from .model import arm_model
from .nn.data import random_configurations
from .nn.networks import DATA_DIR
from .track import random_lines

ARM = "LArm"
#: The paper's problem is the arm's kinematics alone (ikpy and the pseudoinverse know no body): nao-ik's
#: methods run here without the body; `nao-ik bench` counts answers through it.
KINEMATICS = arm_model(ARM)._replace(body=())
OURS = ["fabrik", "jacobian-transpose", "jacobian-pinv", "dls", "sdls", "nn-paper", "nn", "nn-refined", "nn-modular",
        "cells"]  # fmt: skip
ITERATIVE = ["fabrik", "jacobian-transpose", "jacobian-pinv", "dls", "sdls", "nn-refined", "nn-modular"]
ALMOTION = "ALMotion-style pinv"
IKPY = "ikpy"

#: Table 1 of Poddighe (2013): method -> (ms per solve, mean iterations, std of iterations).
PAPER_TABLE1 = {
    "fabrik": (0.78, 7.26, 7.38),
    "jacobian-pinv": (2.21, 9.99, 10.02),
    "jacobian-transpose": (27.65, 141.8, 176.4),
    "nn-paper": (0.002771, None, None),
}


class Size(NamedTuple):
    targets: int  # Table 1 targets
    timed: int  # of those, timed as single calls
    repeats: int  # timing repeats (median of medians)
    ikpy: int  # targets for ikpy (slow)
    figure3: int  # targets per tolerance in Figure 3
    grid: int  # workspace slice resolution
    paths: int  # continuity paths
    path_points: int
    peers: int  # targets for TRAC-IK, pinocchio and nao-ik side by side
    ot_targets: int  # Oyama & Tachi: held-out targets, paths, learning trials of the fresh run
    ot_paths: int
    ot_trials: int
    kt_queries: int  # Kim & Tarokh lookups timed
    sec53: int  # configurations of the section 5.3 check
    alone: int  # targets of the algorithm-alone tables and the tests (the first ``timed`` of them timed)
    planar: int  # learning trials of the planar 2-DOF arm (Oyama & Tachi section 4.1)
    kt_pose: int  # Kim & Tarokh's full posture (eq. 7, eqs. 8-12): queries,
    kt_samples: int  # random configurations per fit,
    kt_epochs: int  # and the cell networks' training steps
    ot_track: int  # Oyama & Tachi: learning paths of the learning-during-tracking run
    ot_fm: int  # configurations the learned forward model (expert selection) learns from


FULL = Size(
    10_000, 1000, 3, 300, 300, 45, 40, 40, 2000, 1000, 200, 10_000, 10_000, 10_000, 10_000, 50_000,
    1000, 4_000_000, 1500, 4000, 100_000,
)  # fmt: skip
QUICK = Size(200, 40, 1, 10, 6, 4, 3, 10, 30, 100, 6, 400, 500, 1000, 60, 600, 100, 300_000, 200, 60, 3000)


# ------------------------------------------------------------- alternatives


def almotion_pinv(
    target: Sequence[float], tol: float = 1e-4, max_iter: int = 100, start: Sequence[float] | None = None
) -> tuple[np.ndarray, float, int]:
    """A pseudoinverse solver as ALMotion's documentation describes its Cartesian control.

    Moore-Penrose pseudoinverse of the position Jacobian, full steps, no step
    control and no joint limits in the loop (the four position joints; WristYaw
    held). The answer is what it is: the report counts out-of-limit answers.
    """
    model = arm_model(ARM)
    q = np.array(model.neutral if start is None else start, dtype=float)
    t = np.asarray(target, dtype=float)
    err = np.inf
    for it in range(max_iter + 1):
        e = t - forward(model, q)
        err = float(np.linalg.norm(e))
        if err <= tol or not np.isfinite(err) or it == max_iter:
            return q, err, it
        q[:4] += np.linalg.pinv(jacobian(model, q)[:, :4]) @ e
    return q, err, max_iter


class IkpyArm:
    """ikpy on the URDF nao-ik ships (the arm's joints only), or None without ikpy."""

    def __init__(self):
        from ikpy.chain import Chain

        src = ET.parse(DATA_DIR / "naoV50_arms.urdf").getroot()
        robot = ET.Element("robot", {"name": "nao_" + ARM})
        links = set()
        for j in src.findall("joint"):
            if j.get("name").startswith(ARM[0]):
                robot.append(j)
                links |= {j.find("parent").get("link"), j.find("child").get("link")}
        for name in sorted(links):
            ET.SubElement(robot, "link", {"name": name})
        path = Path(os.environ.get("TMPDIR", "/tmp")) / f"nao_ik_{os.getpid()}_{ARM}.urdf"
        path.write_text(ET.tostring(robot, encoding="unicode"))
        model = arm_model(ARM)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            names = [link.name for link in Chain.from_urdf_file(str(path), base_elements=["torso"]).links]
            mask = [n in model.names[:4] for n in names]
            self.chain = Chain.from_urdf_file(str(path), base_elements=["torso"], active_links_mask=mask)
        path.unlink()
        self.index = [names.index(n) for n in model.names]
        self.start = np.zeros(len(names))
        self.start[self.index] = model.neutral

    def solve(self, target: Sequence[float], start: Sequence[float] | None = None) -> np.ndarray:
        initial = self.start.copy()
        if start is not None:
            initial[self.index] = start
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            full = self.chain.inverse_kinematics(np.asarray(target), initial_position=initial)
        return np.asarray(full)[self.index]


def _ikpy() -> IkpyArm | None:
    try:
        return IkpyArm()
    except ImportError:
        return None


# ------------------------------------------------------------------ helpers


class Row(NamedTuple):
    method: str
    targets: int
    success: float
    median_ms: float
    p99_ms: float
    iter_mean: float | None
    iter_std: float | None
    mean_err_mm: float
    max_err_mm: float
    out_of_limits: int


def _turns(calls: dict, targets: np.ndarray, size: Size) -> dict[str, tuple[float, float]]:
    """Median and p99 (ms) of single calls, the methods taking turns over ``size.repeats`` passes of the targets."""
    times = interleaved_times(calls, np.tile(targets, (size.repeats, 1)), rounds=10 * size.repeats)
    return {m: (float(np.median(t) * 1e3), float(np.percentile(t, 99) * 1e3)) for m, t in times.items()}


def _oob(angles: np.ndarray) -> int:
    model = arm_model(ARM)
    lo, hi = np.asarray(model.lower), np.asarray(model.upper)
    return int(np.sum(np.any((angles < lo - 1e-12) | (angles > hi + 1e-12) | ~np.isfinite(angles), axis=1)))


def _calls(methods: Sequence[str], tol: float) -> dict[str, Callable[[np.ndarray], object]]:
    """One call on one target per method, and the ALMotion-style baseline, at tolerance ``tol``."""
    calls: dict[str, Callable[[np.ndarray], object]] = {
        m: (lambda t, m=m: api.solve(t.tolist(), KINEMATICS, m, tolerance=tol)) for m in methods
    }
    calls[ALMOTION] = lambda t: almotion_pinv(t, tol)
    return calls


def ours_row(method: str, targets: np.ndarray, tol: float, timing: tuple[float, float]) -> Row:
    b = api.solve_batch(targets, KINEMATICS, method, tolerance=tol)
    med, p99 = timing
    iterative = method in ITERATIVE
    return Row(
        method, len(targets), float(b.reached.mean()), med, p99,
        float(b.iterations.mean()) if iterative else None, float(b.iterations.std()) if iterative else None,
        float(b.error.mean() * 1e3), float(b.error.max() * 1e3), _oob(b.angles),
    )  # fmt: skip


def almotion_row(targets: np.ndarray, tol: float, timing: tuple[float, float]) -> Row:
    res = [almotion_pinv(t, tol) for t in targets]
    angles = np.array([r[0] for r in res])
    err = np.array([r[1] for r in res])
    its = np.array([r[2] for r in res], dtype=float)
    med, p99 = timing
    err_f = np.where(np.isfinite(err), err, np.nan)
    return Row(ALMOTION, len(targets), float(np.mean(err <= tol)), med, p99, float(its.mean()), float(its.std()),
               float(np.nanmean(err_f) * 1e3), float(np.nanmax(err_f) * 1e3), _oob(angles))  # fmt: skip


def ikpy_row(ik: IkpyArm, targets: np.ndarray, tol: float, size: Size) -> Row:
    model = arm_model(ARM)
    sub = targets[: size.ikpy]
    times, angles = [], []
    for t in sub:
        t0 = time.perf_counter()
        angles.append(ik.solve(t))
        times.append(time.perf_counter() - t0)
    angles = np.array(angles)
    err = np.linalg.norm(forward_batch(model, angles) - sub, axis=1)
    return Row(IKPY, len(sub), float(np.mean(err <= tol)), float(np.median(times) * 1e3),
               float(np.percentile(times, 99) * 1e3), None, None, float(err.mean() * 1e3), float(err.max() * 1e3),
               _oob(angles))  # fmt: skip


def _fmt(x: float | None, spec: str) -> str:
    return "n/a" if x is None else format(x, spec)


def table1(rows: list[Row], tol_mm: float) -> str:
    """Table 1's protocol for every method (production variants: the paper's figures are beside the alone rows)."""
    lines = [
        f"| method | targets | success ({tol_mm:g} mm) | median ms | p99 ms | iterations | mean err (mm) | "
        "max err (mm) | out of limits |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        its = "n/a" if r.iter_mean is None else f"{r.iter_mean:.2f} ± {r.iter_std:.2f}"
        lines.append(
            f"| {r.method} | {r.targets} | {100 * r.success:.2f} % | {r.median_ms:.3f} | {r.p99_ms:.3f} | {its} | "
            f"{r.mean_err_mm:.4f} | {r.max_err_mm:.4f} | {r.out_of_limits} |"
        )
    return "\n".join(lines)


# ------------------------------------------------------------------ figures


def workspace(size: Size, out: Path) -> None:
    """Horizontal slices of the torso frame coloured by each method's error."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    model = arm_model(ARM)
    zs = [model.shoulder[2] - 0.1, model.shoulder[2], model.shoulder[2] + 0.1]
    xs = np.linspace(-0.2, 0.3, size.grid)
    ys = np.linspace(-0.15, 0.35, size.grid)
    methods = ["fabrik", "dls", "nn-paper", "nn", "nn-refined", ALMOTION]
    fig, axes = plt.subplots(len(zs), len(methods), figsize=(2.6 * len(methods), 2.5 * len(zs)), squeeze=False)
    image = None
    for i, z in enumerate(zs):
        gx, gy = np.meshgrid(xs, ys)
        pts = np.stack([gx.ravel(), gy.ravel(), np.full(gx.size, z)], axis=1)
        for j, method in enumerate(methods):
            if method == ALMOTION:
                # Where it reaches by leaving the joint limits, the robot would
                # stop at the limits: the error of the clamped answer counts.
                q = np.array([almotion_pinv(p)[0] for p in pts])
                q = np.where(np.isfinite(q), q, 0.0).clip(model.lower, model.upper)
                err = np.linalg.norm(forward_batch(model, q) - pts, axis=1)
            else:
                err = api.solve_batch(pts, KINEMATICS, method).error
            err_mm = np.where(np.isfinite(err), err * 1e3, 1e3)
            ax = axes[i][j]
            image = ax.imshow(np.log10(np.maximum(err_mm, 1e-4)).reshape(gx.shape), origin="lower", cmap="viridis",
                              extent=(xs[0], xs[-1], ys[0], ys[-1]), vmin=-4, vmax=2, aspect="equal")  # fmt: skip
            ax.plot(model.shoulder[0], model.shoulder[1], "r+")
            ax.contour(gx, gy, _inside_body(pts).reshape(gx.shape), levels=[0.5], colors="w", linewidths=0.8)
            ax.set_xticks([])
            ax.set_yticks([])
            if i == 0:
                ax.set_title(method, fontsize=9)
            if j == 0:
                ax.set_ylabel(f"z = {z:.2f} m", fontsize=9)
    fig.colorbar(image, ax=axes, shrink=0.6, label="log10(error / mm)")
    fig.suptitle(f"Where each method misses: {ARM}, slices of FRAME_TORSO (x right, y up; + is the shoulder, "
                 "white: NAO's body)")  # fmt: skip
    fig.savefig(out / "workspace.png", dpi=80)
    plt.close(fig)


def _inside_body(pts: np.ndarray) -> np.ndarray:
    """(N,) True where a point lies inside one of the body's capsules (:data:`nao_ik.body.BODY`)."""
    from .body import BODY

    inside = np.zeros(len(pts), dtype=bool)
    for c in BODY:
        a, d = np.asarray(c.a), np.subtract(c.b, c.a)
        dd = float(d @ d)
        u = np.zeros(len(pts)) if dd == 0.0 else np.clip((pts - a) @ d / dd, 0.0, 1.0)
        inside |= np.linalg.norm(pts - (a + u[:, None] * d), axis=1) < c.radius
    return inside


def continuity(size: Size, ik: IkpyArm | None, seed: int) -> str:
    """Largest joint jump between consecutive answers along reachable straight paths, each from the previous."""
    model = arm_model(ARM)
    paths = random_lines(ARM, size.paths, size.path_points, seed + 7)
    methods = ["analytic", "fabrik", "jacobian-pinv", "dls", "sdls", "nn", "nn-refined", "nn-modular", ALMOTION]
    methods += [IKPY] if ik else []
    lines = ["| method | paths | median of the largest jump (rad) | worst jump (rad) | paths with a jump > 0.5 rad | "
             "points reached |", "|---|---|---|---|---|---|"]  # fmt: skip
    for method in methods:
        n_paths = min(size.paths, 8) if method == IKPY else size.paths
        worst, reached, total = [], 0, 0
        for path in paths[:n_paths]:
            prev = np.asarray(api.solve(path[0].tolist(), KINEMATICS, "dls").angles)
            jumps = []
            for p in path:
                if method == ALMOTION:
                    q, err, _ = almotion_pinv(p, start=prev)
                    ok = err <= 1e-4
                elif method == IKPY:
                    q = ik.solve(p, prev)
                    ok = np.linalg.norm(forward(model, q) - p) <= 1e-4
                else:
                    sol = api.solve(p.tolist(), KINEMATICS, method, initial=prev.tolist())
                    q, ok = np.asarray(sol.angles), sol.reached
                q = np.asarray(q, dtype=float)
                jumps.append(float(np.max(np.abs(q - prev))) if np.all(np.isfinite(q)) else float("inf"))
                prev = q if np.all(np.isfinite(q)) else prev
                reached += bool(ok)
                total += 1
            worst.append(max(jumps[1:]))
        worst = np.array(worst)
        lines.append(f"| {method} | {n_paths} | {np.median(worst):.3f} | {worst.max():.3f} | "
                     f"{int(np.sum(worst > 0.5))} | {100 * reached / total:.1f} % |")  # fmt: skip
    return "\n".join(lines)


# ------------------------------------------------------------- the evidence


def evidence(targets: np.ndarray, size: Size, out: Path, seed: int, step: Callable[[str], None]) -> dict[str, str]:
    """The sections that judge each algorithm on its own and test the papers' claims (markdown by name)."""
    ev: dict[str, str] = {}
    measured = {}
    for tol_mm in (1.0, 0.1):
        step(f"each algorithm alone at {tol_mm:g} mm")
        measured[tol_mm] = report_alone.measure(targets[: size.alone], size.timed, size.repeats, tol_mm * 1e-3, ARM)
        ev[f"alone {tol_mm:g}"] = report_alone.table1(measured[tol_mm], tol_mm)
        rows = report_alone.compare(measured[tol_mm], reps=2000 if size is FULL else 200)
        ev[f"tests {tol_mm:g}"] = report_alone.significance_table(rows)
        ev[f"claims {tol_mm:g}"] = report_alone.claims(rows)
    its = {(t, v): measured[t][("fabrik", v)].iterations for t in (1.0, 0.1) for v in ("alone", "production")}
    ev["fabrik its"] = (
        f"plain FABRIK with the joint limits needs {its[1.0, 'alone'].mean():.2f} ± {its[1.0, 'alone'].std():.2f} "
        f"iterations at 1 mm and {its[0.1, 'alone'].mean():.2f} ± {its[0.1, 'alone'].std():.2f} at 0.1 mm, from "
        f"the neutral start, failures included; with nao-ik's Aitken extrapolation (not FABRIK) and restarts, "
        f"{its[1.0, 'production'].mean():.2f} ± {its[1.0, 'production'].std():.2f} and "
        f"{its[0.1, 'production'].mean():.2f} ± {its[0.1, 'production'].std():.2f}. The paper's start postures, "
        "unit and stopping rule are not given, so which of these its figure corresponds to cannot be settled"
    )
    step("Figure 3 (alone and production, down to tolerance 0)")
    tolerances = report_fig3.TOLERANCES_MM if size is FULL else [10, 0.01, 0]
    fig3 = report_fig3.measure(targets[: size.figure3], 1, ARM, tolerances)
    report_fig3.plot(fig3, out, size.figure3)
    ev["fig3"] = report_fig3.table(fig3)
    ev["fig3 iterations"] = report_fig3.iterations_table(fig3)
    ev["fig3 explain"] = report_fig3.explain(fig3)
    step("section 5.3")
    ev["sec53"] = sec53_text(report_sec53.check(size.sec53, seed))
    step("peers")
    model = arm_model(ARM)
    configs = random_configurations(model, size.peers, np.random.default_rng(seed), model.neutral[4])
    peer_rows, missing = report_peers.measure(forward_batch(model, configs), configs, 1e-4)
    ev["peers"] = report_peers.table(peer_rows, 0.1)
    ev["peers missing"] = (
        f"Missing here (not installed or not importable; `pip install .[compare]`): {', '.join(missing)}."
        if missing
        else "Both peers ran."
    )
    step("Oyama & Tachi at NAO's scale")
    ot = report_ot.measure(size.ot_targets, size.ot_paths, size.ot_trials, seed + 11)
    ev["ot scale"] = report_ot.scale_table(ot)
    ev["ot tracking"] = report_ot.tracking_table(ot)
    ev["ot curve"] = report_ot.curve_table(ot.curve, ot.reach)
    ev["ot adds"] = report_ot.learning_adds(ot)
    ev["ot controller"] = report_ot.controller_differences()
    ev["ot trials"] = f"{ot.curve_trials:,}"
    ev["ot ratios"] = f"{report_ot.TWO_DOF_REACH / ot.reach:.1f} and about {report_ot.PA10_REACH / ot.reach:.1f}"
    ev["ot paths"] = f"{size.ot_paths}"
    step("Oyama & Tachi: learning during tracking")
    track_curve = report_ot_track.learn_tracking(size.ot_track, batch=min(50, size.ot_track),
                                                 evaluations=size.ot_targets, eval_paths=size.ot_paths,
                                                 seed=seed + 21)  # fmt: skip
    ev["ot track"] = report_ot_track.text(track_curve, ot.reach)
    step("Oyama & Tachi: a learned forward model for expert selection")
    ev["ot fm"] = report_ot_fm.text(report_ot_fm.compare(size.ot_fm, size.ot_targets, seed + 31))
    step("Oyama & Tachi's planar 2-DOF arm")
    planar_args = dict(batch=200 if size is FULL else 100, evaluations=1000 if size is FULL else 200)
    rows, postures = report_planar.learn(size.planar, **planar_args)
    learned_fm, _ = report_planar.learn(size.planar, learned_fm=True, **planar_args)
    report_planar.plot(rows, postures, out)
    ev["planar"] = report_planar.table(rows, learned_fm)
    last = rows[-1]
    planar_reach_mm = (report_planar.L1 + report_planar.L2) * 1e3
    ev["planar note"] = (
        f"After {last.trials:,} trials (the paper ran 5x10^7): {last.experts} experts, model alone "
        f"{last.rms_mm:.1f} mm RMS ({100 * last.rms_mm / planar_reach_mm:.1f} % of the reach; the paper's "
        f"1.50 mm is 0.27 %), first selection {100 * last.first:.1f} % (from {100 * rows[0].first:.1f} % "
        f"untrained), Jordan's single network {last.single_rms_mm:.1f} mm. The paper's end point is "
        f"{5e7 / max(last.trials, 1):,.0f} times more trials than this run, beyond a report's budget, so 1.50 mm is "
        "not reproduced here."
        + (
            ""
            if last.experts == 3
            else f" Nor are the paper's 3 experts ({last.experts} here): the discontinuity check and the failure of "
            "a reaching motion at a singularity or a joint limit found them, and the paper does not say how often "
            "either fired."
        )
    )
    step("Kim & Tarokh: the lookup alone")
    ev["kt"] = report_kt.text(report_kt.measure(size.kt_queries, seed + 99))
    step("Kim & Tarokh: the whole posture, polynomial and network cells")
    ev["kt pose"] = report_kt_pose.text(report_kt_pose.measure(size.kt_samples, size.kt_pose, seed + 7, size.kt_epochs))
    return ev


def sec53_text(c: report_sec53.Check) -> str:
    """Section 5.3 stated precisely, with the measured check."""
    return "\n".join(
        [
            "| check, on the paper's chain with NAO's limits | measured |",
            "|---|---|",
            f"| configurations | {c.n:,} (uniform in the limits of ShoulderPitch, ShoulderRoll, ElbowYaw, ElbowRoll) |",
            f"| eq. 16 as printed gives the wrong elbow point | {100 * c.eq16_wrong:.1f} % of configurations |",
            "| eqs. 17, 18, 23, 24 as printed (the result divided): median worst-angle error | "
            f"{c.printed_median:.1f} rad ({100 * c.printed_within:.1f} % within 0.01 rad, "
            f"{100 * c.printed_nan:.1f} % NaN) |",
            f"| the same with the argument divided and eq. 16 fixed (arcsin kept): median worst-angle error | "
            f"{c.corrected_median:.1e} rad ({100 * c.corrected_within:.1f} % within 0.01 rad) |",
            f"| configurations with ShoulderPitch or ElbowYaw past 90 degrees | {100 * c.past90:.1f} % |",
            "| of those, recovered within 0.01 rad by the corrected arcsin | "
            f"{100 * c.corrected_within_past90:.1f} % |",
            f"| atan2 recovery (quadrant kept): worst angle error | {c.exact_worst:.1e} rad |",
        ]
    )


# ------------------------------------------------------------------- report


def run_report(out_dir: str | Path, quick: bool = False, seed: int = 0, log=sys.stderr) -> Path:
    """Measure everything and write ``report.md`` and its figures into ``out_dir``."""
    size = QUICK if quick else FULL
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    t_start = time.monotonic()

    def step(text: str) -> None:
        log.write(f"[{time.monotonic() - t_start:6.1f} s] {text}\n")
        log.flush()

    targets = sample_targets(ARM, size.targets, seed)
    ik = _ikpy()
    sections = []
    tables = {}
    for tol_mm in (1.0, 0.1):
        step(f"Table 1 at {tol_mm:g} mm")
        tol = tol_mm * 1e-3
        timing = _turns(_calls(OURS, tol), targets[: size.timed], size)
        rows = [ours_row(m, targets, tol, timing[m]) for m in OURS]
        rows.append(almotion_row(targets, tol, timing[ALMOTION]))
        if ik:
            rows.append(ikpy_row(ik, targets, tol_mm * 1e-3, size))
        tables[tol_mm] = rows
    ev = evidence(targets, size, out, seed, step)
    step("workspace slices")
    workspace(size, out)
    step("continuity")
    cont = continuity(size, ik, seed)
    step("writing")

    rows01 = {r.method: r for r in tables[0.1]}
    ref = rows01.get(IKPY)
    head = [
        "| method | success (0.1 mm) | median time | mean error (mm) | out-of-limit answers | speed-up against ikpy |",
        "|---|---|---|---|---|---|",
    ]
    for name in ["nn-refined", "nn", "nn-modular", "dls", "fabrik", "sdls", "jacobian-pinv", "jacobian-transpose",
                 "nn-paper", "cells", ALMOTION, IKPY]:  # fmt: skip
        r = rows01.get(name)
        if r is None:
            continue
        speed = f"{ref.median_ms / r.median_ms:,.0f} x" if ref else "ikpy not installed"
        head.append(f"| {name} | {100 * r.success:.2f} % | {r.median_ms * 1e3:,.0f} µs | {r.mean_err_mm:.4f} | "
                    f"{r.out_of_limits} | {speed} |")  # fmt: skip
    sweep = Path(__file__).resolve().parent.parent / "docs" / "nn-sweep.md"
    sweep_text = sweep.read_text() if sweep.exists() else "(run `nao-ik train --which sweep --table docs/nn-sweep.md`)"
    ikpy_note = (
        f"ikpy {__import__('ikpy').__version__} on the URDF nao-ik ships ({ik and size.ikpy} targets, from the "
        "neutral posture; it holds WristYaw at 0 like the others)"
        if ik
        else "ikpy is not installed (`pip install .[compare]`), so it is missing from the tables"
    )
    sections.append(f"""# nao-ik report{" (quick)" if quick else ""}

Generated by `nao-ik report{" --quick" if quick else ""}` on {datetime.date.today().isoformat()}; machine: {machine()}.
Arm: {ARM} (the right arm is its mirror image). Targets: hand positions of uniformly random in-limit
configurations (WristYaw at the neutral value), seed {seed}; every solve starts from the neutral posture unless
said otherwise. Times are medians of single `solve` calls ({size.repeats} pass(es) over {size.timed}
targets, the methods taking turns in {10 * size.repeats} rounds so that a slow spell of a busy machine
falls on all of them alike); success and errors are over all {size.targets} targets. {ikpy_note}. "{ALMOTION}" is a
Moore-Penrose pseudoinverse with full steps and no step control or limits, as ALMotion's documentation
describes its Cartesian control: the stand-in for the robot's built-in.

## Headline

nao-ik's production variants (restarts included; each algorithm alone is in Table 1 below):

{chr(10).join(head)}

## Table 1 of the paper: each algorithm alone, beside the paper's row

"Alone" is the algorithm's own iterations from the neutral posture: no restarts, and no extrapolation that is not
in its paper (FABRIK without nao-ik's Aitken step of the elbow). The paper's row stands beside the alone row
only. "Production" is what `nao_ik.solve` runs: a failed first start restarts from the elbow-swivel
configurations nearest the limits (exact closed-form solutions) and fixed joint-space seeds, so its 100 % is
nao-ik's, not the algorithm's; its iterations include the restarts', and its time the driver's other rules
(the exact nearest solution where an answer jumps, the closest attainable pose), which the alone variant runs
without (`driver.run_loop`). The variants are timed in turns ({size.repeats} pass(es) over {size.timed}
targets); success and iterations are over all {size.alone} targets ("solved": over the targets the variant
reached).

The paper's tolerance is "0.1" without a unit; read as centimetres it is 1 mm:

{ev["alone 1"]}

At 0.1 mm (nao-ik's default):

{ev["alone 0.1"]}

## The paper's claim tested: FABRIK against the Jacobian methods, each alone

The paper concludes that FABRIK outperforms the Jacobian transpose and pseudoinverse "in terms of calculation
time and number of iterations" and asks (its research question 2) whether the differences are significant; it
reports means and standard deviations only. Here every method runs alone on the same targets, so each
comparison is paired. Times and iterations are skewed and heavy-tailed: the test is the Wilcoxon signed-rank
test on the per-target differences (normal approximation with the ties correction; a target's time is its
median over the passes), and the interval a 95 % percentile bootstrap over targets (of the median paired
difference for time, of the mean for iterations). Success is compared with the exact McNemar test on the
targets where exactly one of the two succeeds, and the bootstrap interval of the difference of rates.
`dls` and `sdls`, which the paper did not test, are included. A verdict says "better" or "worse" only where
the test is significant (p < 0.05) and the interval excludes 0 on the same side; otherwise "no clear
difference" (for iterations the two can disagree: FABRIK needs fewer iterations on most targets but, with its
long tail, more on average).

At 1 mm (the paper's tolerance read as centimetres):

{ev["tests 1"]}

{ev["claims 1"]}

At 0.1 mm:

{ev["tests 0.1"]}

{ev["claims 0.1"]}

## Table 1 with every nao-ik method (production variants)

The same protocol through the public API (`nao_ik.solve`, validation and flags included), every method in its
production variant, with the ALMotion-style baseline and ikpy. The paper's figures are not repeated here: they
compare with the alone rows above, not with these. The paper's network figure is 0.0028 ms per target. At 1 mm:

{table1(tables[1.0], 1.0)}

At 0.1 mm:

{table1(tables[0.1], 0.1)}

The paper's network figure (0.0028 ms) is for a batch of 10 million; `nn-paper`'s is a single call through the full API
(validation, limits, flags). The batch throughput is in [bench.md](../bench.md).

## Figure 3 of the paper, down to tolerance 0

![time against tolerance](figure3.png)

{size.figure3} targets, each algorithm alone (solid) and in production (dashed), single calls in turns (one
pass; success, iterations and errors are the timed calls'). Tolerance 0 means "to machine precision or the
method's floor": the loop runs until its stall rule ends it, and the cell gives the median error it ends at
instead of a success rate. Median time per solve (success in brackets):

{ev["fig3"]}

Mean iterations per solve:

{ev["fig3 iterations"]}

{ev["fig3 explain"]}

## Section 5.3 of the paper, checked

The paper recovers the joint angles from FABRIK's points with eqs. 16-18 and 22-24. Its own model has no offsets
(both links along y), so "dropping the offsets" is not what goes wrong. What goes wrong, on its own chain (eqs.
12-15, 21: l1 = 105 mm, l2 = 113.7 mm, each angle in the limits of the NAO joint it stands for, lengths in
metres; in millimetres the printed arcsin's argument leaves [-1, 1]):

- eq. 16 is wrong for every configuration: from p1 = Rx(th1) Rz(th2) (0, l1, 0) it should read
  y1 = l1 cos th1 cos th2 and z1 = +l1 sin th1 cos th2 (printed: l1 cos th2 sin th1 and -l1 cos th2 sin th1);
- eqs. 17, 18, 23 and 24 divide the arcsin/arccos *result* by the link length instead of its argument
  (th2 = -arcsin(x1) / l1 where -arcsin(x1 / l1) is meant);
- even corrected, arcsin returns angles in [-90, 90] degrees: ShoulderPitch and ElbowYaw range over
  +-119.5 degrees, and past 90 degrees the quadrant is lost (atan2 of two coordinates keeps it).

Measured by `nao_ik/report_sec53.py` (the equations as printed, as corrected, and with atan2, on random
configurations; angle errors not wrapped, since a joint told -13 rad is not at -13 + 4 pi):

{ev["sec53"]}

nao-ik's FABRIK does not use these equations: `nao_ik/solvers/fabrik.py` recovers the angles of NAO's real
chain (with its offsets) by atan2, tested to 1e-9 rad on the round trip.

## Table 2 of the paper: hidden units of `nn-paper`

The paper's errors are Encog's: the mean squared error of the outputs normalised to [0, 1]. Ours are computed
the same way; the hand errors show what they mean at the end effector.

{sweep_text}

## Peers: TRAC-IK and pinocchio on the same targets

{size.peers} targets (the hand positions of random in-limit configurations, the same protocol), every solver
from the neutral posture, taking turns over 10 slices of the targets in the same run, success judged on the
position by nao-ik's forward kinematics (0.1 mm). Both peers load the URDF nao-ik ships
(`nao_ik/data/naoV50_arms.urdf`). pinocchio runs its damped least squares (the CLIK loop of its documentation:
damping {report_peers.PIN_DAMP:g}, full steps, at most {report_peers.PIN_IT_MAX} iterations, clamped to the limits
every step) on the position with the four position joints, like nao-ik. **TRAC-IK solves a different problem**:
the full 6-D pose (position and orientation) of torso -> l_gripper of the configuration that made the target,
with all six joints of that chain free (WristYaw and the hand's joint too), timeout
{report_peers.TRAC_TIMEOUT * 1e3:g} ms (trac_ik_python's default), epsilon {report_peers.TRAC_EPS:g}; its "pose
success" is its own test, and "no answer" is a timeout. Its timeout is wall-clock and it runs two solver threads
at once (KDL's and an SQP), so where other work shares the machine's cores its success and times depend on the load. A
pose fixes the arm's redundancy, so TRAC-IK has less freedom and more to satisfy; nao-ik cannot take an
orientation at all. nao-ik's rows are production variants through `nao_ik.solve`. The last column is each
solver's median time over nao-ik `dls`'s (above 1: slower than nao-ik).

{ev["peers"]}

{ev["peers missing"]}

## Oyama & Tachi at NAO's scale

The paper's arms are {ev["ot ratios"]} times longer than NAO's, so millimetre figures do not compare: every
figure below is also a fraction of the arm's reach. The paths keep the project's 5 cm step (a quarter of the
paper's 0.2 m, about the same fraction of the reach), and the tracking's give-up distance is scaled the same way,
to {report_ot.SCALED_GIVE_UP * 1e3:.1f} mm (the paper's 5 cm would be a quarter of NAO's reach and would give
up almost never).

{ev["ot scale"]}

Tracking (equations 6-9) on {ev["ot paths"]} held-out straight paths of 21 points, under both rules, and the
model-alone error on {size.ot_targets} held-out targets:

{ev["ot tracking"]}

A learning run from scratch in this report ({ev["ot trials"]} trials; the shipped model's own curve, 100,000
trials from the same untrained start, is in [nn-modular.md](../nn-modular.md)):

{ev["ot curve"]}

{ev["ot adds"]}

The controller differs from the paper's:

{ev["ot controller"]}

### Learning during tracking (its sections 3 and 4.3)

`nao_ik/report_ot_track.py`: every learning trial is a tracking trial on a random straight path (the expert chosen
as in section 3 step 1, a new one founded from random postures when none reaches the first point, then equations
6-9), and the chosen expert learns the points it tracked precisely. From the untrained model, evaluated on
{size.ot_targets} held-out targets and {ev["ot paths"]} held-out paths of its own (drawn like the ones above):

{ev["ot track"]}

### Expert selection with a learned forward model (an option, against the exact one)

`nao_ik/report_ot_fm.py`: the paper selects experts by their error predicted through a learned forward model;
`nn-modular` uses NAO's exact kinematics. A 4-32-32-3 forward network learned from random configurations, used
as the selector on the shipped experts, against the exact kinematics, on the {size.ot_targets} held-out targets:

{ev["ot fm"]}

### The paper's planar 2-DOF arm (its section 4.1) reproduced

`nao_ik/report_planar.py`: the paper's arm (L1 = 0.30 m, L2 = 0.25 m, th1 in [30, 150] deg, th2 in [-150, 150]
deg), its experts (2-15-15-2, linear input and output), representative postures pinned (eq. 1), selection by the
complete forward model (MNCFM), the straight-line reaching motion in 0.02 m steps with J^+ (eqs. 2-4; a motion
that meets a singular Jacobian or a joint limit fails), r_e = 5 mm, r_eim = 0.3 m, the discontinuity check
(r_jiz = 10^2), the first expert at (0, 0); and Jordan's forward-and-inverse modelling as the single network (the
joint limits as a penalty). Experts learn with Adam on their recent solutions (the paper: back-propagation).
The run is repeated with the experts selected by a learned forward model (2-15-15-2, no previous learning,
trained on the postures the reaching motions reached: the paper's MNFM) instead of the complete one (MNCFM); the
model-alone error is always the true one. Learning from untrained, evaluated on 1,000 held-out targets (200 in
`--quick`):

![planar 2-DOF arm](planar.png)

{ev["planar"]}

{ev["planar note"]}

## Kim & Tarokh: the on-line time of the lookup alone

The paper times the lookup (reachability check, cell indices and address, binary search, the cell's model): 0.1 µs
for all the solutions of a posture. `cells` as a nao-ik method scans every swivel sector and runs the forward
kinematics on every answer to return the best one, which is not what the paper times. Timed here on their own,
for random in-limit postures with their swivel given, as the paper's queries are:

{ev["kt"]}

## Kim & Tarokh: the whole posture (eq. 7) and the network cells (eqs. 8-12)

With WristYaw free, the paper's two-stage model on NAO's arm: the four position joints from the wrist point and the
swivel (eq. 4, or a 4-5-4 network per cell, eqs. 8-12), then the wrist joint from those four angles and the hand's
orientation (eq. 7, or a 7-5-1 network per cell), beside the paper's anthropomorphic-arm figures (Tables 6a, 6b,
7a, 7b, 8):

{ev["kt pose"]}

## What could not be reproduced, and why

- Poddighe's Figure 3 (FABRIK's time constant with tolerance): measured, it grows (see Figure 3 above); the paper
  gives neither its stopping rule nor its code, so the flat curve cannot be traced.
- Poddighe's "FABRIK alone yields results at tolerance 0": no method here reaches an error of exactly 0 alone;
  every one stops at its floor (Figure 3's last column).
- Poddighe's iterations for FABRIK (7.26 ± 7.38): {ev["fabrik its"]}.
- Poddighe's section 5.3: the equations cannot be run as printed (see the check above).
- Oyama & Tachi's absolute errors (1.50 mm, 12.0 mm) belong to arms {ev["ot ratios"]} times longer than NAO's;
  only the fractions of the reach compare. Their learning during tracking is reproduced above, but with far
  fewer trials than their 10^6; the learned forward model for selection is compared above as an option
  (`nn-modular` keeps the exact one); the straight-line reaching motion (eqs. 2-4) is not in nao-ik's
  `nn-modular` (the planar reproduction above has it, and Jordan's single network); the planar arm's 1.50 mm after
  5x10^7 trials is beyond a report run; the PA-10's reach is assumed (the paper does not give its dimensions).
- Kim & Tarokh's per-solution-count rows (Tables 6b/7b rows 5-8, up to eight solutions): NAO's one-joint wrist
  adds no solution, so the whole-posture tables above have one row per model; their Puma 560 tables (2a-4) need
  that arm. Their 0.1 µs is C on a 3.0 GHz Pentium 4; Python's interpreter alone costs more per query (see the
  lookup table).

## Where each method fails

![workspace](workspace.png)

Three horizontal slices through the torso frame at and around shoulder height; colour is log10 of the
distance from the hand to the target in mm (dark: within 0.1 mm; bright: far). Points outside the
workspace are bright for every method; a method's weak spots are where it is brighter than the others.
The ALMotion-style answers are clamped to the joint limits first (where it "reaches" by leaving them, the
robot would stop at the limits).

## Continuity along paths

Straight paths of {size.path_points} points (a reachable start, a step drawn from a normal distribution with a
5 cm deviation, kept only if every point is reachable), as in Oyama & Tachi's tracking experiments. Every point
is solved from the previous answer (the first from a precise solve of the first point), so the largest joint
change between consecutive points shows branch switching and jitter. The network methods answer from their own
rule rather than from the previous posture, so they can switch branch along a path: use `dls` or `fabrik`
(or `trackPath`) for continuous motion.

{cont}
""")
    path = out / "report.md"
    path.write_text(sections[0], encoding="utf-8")
    step(f"wrote {path}")
    return path


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    p = argparse.ArgumentParser(
        prog="nao-ik report",
        description="Reproduce the paper's Table 1, Figure 3 and Table 2, compare with ikpy and an ALMotion-style "
        "pseudoinverse, map where each method fails, measure continuity; write a markdown report with figures.",
        epilog="example: nao-ik report --out docs/report   (or --quick for a one-minute version)",
    )
    p.add_argument("--out", default="report", help="output folder (default: report)")
    p.add_argument("--quick", action="store_true", help="small sizes, about a minute")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    path = run_report(a.out, a.quick, a.seed)
    print(f"report: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
