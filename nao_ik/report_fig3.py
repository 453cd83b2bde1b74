"""Figure 3 of Poddighe (2013), time against tolerance, down to tolerance 0, each algorithm alone and in production.

Tolerance 0 means "to machine precision or the method's floor": the loop runs
until its stall rule ends it (no progress of ``MIN_PROGRESS`` in ``PATIENCE``
iterations), so the cell reports the error it ends at instead of a success rate.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np

from .bench import interleaved_times
from .model import arm_model
from .report_alone import METHODS, variants
from .solvers.driver import run_batch, run_single

#: Tolerances in millimetres; 0 last.
TOLERANCES_MM = [10, 3, 1, 0.3, 0.1, 0.03, 0.01, 0.003, 0.001, 1e-6, 0]


class Point(NamedTuple):
    """One variant at one tolerance."""

    median_ms: float
    success: float
    iterations: float  # mean over targets
    median_error_m: float


def measure(targets: np.ndarray, repeats: int, arm: str = "LArm") -> dict[tuple[str, str], dict[float, Point]]:
    """Every variant at every tolerance: time of single calls (in turns), success, iterations, final error."""
    model = arm_model(arm)
    specs = variants(METHODS)
    neutral = list(model.neutral)
    q0 = np.tile(np.asarray(model.neutral), (len(targets), 1))
    out: dict[tuple[str, str], dict[float, Point]] = {k: {} for k in specs}
    listed = targets.tolist()
    for tol_mm in TOLERANCES_MM:
        tol = tol_mm * 1e-3
        calls = {
            k: (lambda t, s=s, tol=tol: run_single(s, model, t, neutral, tol, s.max_iterations))
            for k, s in specs.items()
        }
        times = interleaved_times(calls, listed * repeats, rounds=5 * repeats)
        for k, s in specs.items():
            run = run_batch(s, model, targets, q0.copy(), tol, s.max_iterations)
            err = np.asarray(run.error, dtype=float)
            out[k][tol_mm] = Point(float(np.median(times[k]) * 1e3), float(np.mean(err <= tol)),
                                   float(np.mean(run.iterations)), float(np.median(err)))  # fmt: skip
    return out


def table(data: dict[tuple[str, str], dict[float, Point]]) -> str:
    """Median ms per solve (success in brackets; at tolerance 0 the median error it ends at)."""
    head = " | ".join("0 (floor)" if t == 0 else f"{t:g} mm" for t in TOLERANCES_MM)
    lines = [f"| method | variant | {head} |", "|---|---|" + "---|" * len(TOLERANCES_MM)]
    for (m, v), pts in data.items():
        cells = []
        for t in TOLERANCES_MM:
            p = pts[t]
            tail = f"err {p.median_error_m:.0e} m" if t == 0 else f"{100 * p.success:.0f} %"
            cells.append(f"{p.median_ms:.3f} ms ({tail})")
        label = "alone" if v == "alone" else "production"
        lines.append(f"| {m} | {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def iterations_table(data: dict[tuple[str, str], dict[float, Point]]) -> str:
    """Mean iterations per solve at each tolerance (restarts included in production)."""
    head = " | ".join("0 (floor)" if t == 0 else f"{t:g} mm" for t in TOLERANCES_MM)
    lines = [f"| method | variant | {head} |", "|---|---|" + "---|" * len(TOLERANCES_MM)]
    for (m, v), pts in data.items():
        lines.append(f"| {m} | {v} | " + " | ".join(f"{pts[t].iterations:.1f}" for t in TOLERANCES_MM) + " |")
    return "\n".join(lines)


def plot(data: dict[tuple[str, str], dict[float, Point]], out: Path, n_targets: int) -> None:
    """figure3.png: time against tolerance, alone (solid) and production (dashed); 0 drawn at the right end."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [t if t > 0 else 1e-8 for t in TOLERANCES_MM]
    fig, ax = plt.subplots(figsize=(8, 4.8))
    colours = dict(zip(METHODS, plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    for (m, v), pts in data.items():
        ys = [pts[t].median_ms for t in TOLERANCES_MM]
        ax.plot(xs, ys, "-o" if v == "alone" else "--", ms=3, color=colours[m], label=f"{m} ({v})", alpha=0.9)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.invert_xaxis()
    ax.set_xticks([10, 1, 0.1, 0.01, 0.001, 1e-6, 1e-8])
    ax.set_xticklabels(["10", "1", "0.1", "0.01", "0.001", "1e-6", "0"])
    ax.set_xlabel("error tolerance (mm); 0: to machine precision or the method's floor")
    ax.set_ylabel("median time per solve (ms)")
    ax.set_title(f"Figure 3 reproduced: LArm, {n_targets} targets, from the neutral posture")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(out / "figure3.png", dpi=90)
    plt.close(fig)


def explain(data: dict[tuple[str, str], dict[float, Point]]) -> str:
    """The paragraph on the disagreement with the paper, from the measured figures."""
    fa, fp = data[("fabrik", "alone")], data[("fabrik", "production")]
    pa, ta = data[("jacobian-pinv", "alone")], data[("jacobian-transpose", "alone")]
    grow = fa[1e-6].median_ms / fa[10].median_ms
    alone = {m: pts for (m, v), pts in data.items() if v == "alone"}
    highest = max(alone, key=lambda m: alone[m][0].median_error_m)
    steepest = max(alone, key=lambda m: alone[m][1e-6].median_ms / alone[m][10].median_ms)
    return (
        f"The paper says FABRIK's time stays constant as the tolerance shrinks and that FABRIK alone gave results at "
        f"tolerance 0. Measured here, FABRIK alone takes {fa[10].median_ms:.3f} ms at 10 mm and "
        f"{fa[1e-6].median_ms:.3f} ms at 1e-6 mm ({grow:.1f} x), its mean iterations growing from "
        f"{fa[10].iterations:.1f} to {fa[1e-6].iterations:.1f}: FABRIK's alternating projections converge linearly "
        f"(a constant factor per pass), so every decade of tolerance costs about the same number of passes, and "
        f"near full stretch the factor is close to 1. The pseudoinverse converges quadratically near the solution, "
        f"so its time grows less ({pa[10].median_ms:.3f} -> {pa[1e-6].median_ms:.3f} ms); the transpose takes "
        f"{ta[10].median_ms:.3f} -> {ta[1e-6].median_ms:.3f} ms (the steepest growth alone: {steepest}). "
        f"At tolerance 0 every method alone stops by its stall rule (no progress of 1e-8 m in 5 iterations), "
        f"at a median error of "
        f"{fa[0].median_error_m:.0e} m for FABRIK, {pa[0].median_error_m:.0e} m for the pseudoinverse and "
        f"{ta[0].median_error_m:.0e} m for the transpose: none reaches exactly 0 (the highest floor alone: {highest}; "
        f"a linearly converging method meets the stall rule first). In production, tolerance 0 is reached to "
        f"{fp[0].median_error_m:.0e} m by every method, because the failed first start restarts from the swivel "
        f"seeds, which are exact closed-form solutions: that is nao-ik's geometry, not any of the algorithms. "
        f"A constant time for FABRIK could come from a fixed iteration count or an implementation dominated by "
        f"overhead (the paper's 0.78 ms for 7 passes is about 0.1 ms a pass); the paper gives neither its code nor "
        f"its stopping rule, so the difference cannot be traced further."
    )
