"""Each algorithm on its own, beside nao-ik's production variant, and the paper's claim tested.

"Alone": the algorithm's own iterations from the neutral posture, no restarts,
no extrapolation that is not in its paper (FABRIK without nao-ik's Aitken step).
"Production": what ``nao_ik.solve`` runs (restarts from swivel and joint-space
seeds; FABRIK with Aitken extrapolation; the continuity rule and the closest
attainable pose). The alone variant runs the loop only
(:func:`nao_ik.solvers.pipeline.run_loop`: none of the driver's rules, which
would seed a failed start with the exact solution and count it the
algorithm's success), the production one the whole driver call
(``run_single``); the variants take turns, so their times compare.
"""

from __future__ import annotations

from typing import Callable, NamedTuple, Sequence

import numpy as np

from ...model.arm import arm_model
from ...solvers import SOLVERS, SolverSpec
from ...solvers.fabrik import plain_fabrik_loop
from ...solvers.pipeline import run_batch, run_loop, run_loop_batch, run_single
from ..protocol import interleaved_times
from .stats import bootstrap_ci, fmt_p, mcnemar, wilcoxon

#: The paper's iterative methods and the two nao-ik adds, in the table's order.
METHODS = ["fabrik", "jacobian-pinv", "jacobian-transpose", "dls", "sdls"]

#: Table 1 of Poddighe (2013): method -> (ms per solve, mean iterations, std of iterations).
PAPER = {
    "fabrik": (0.78, 7.26, 7.38),
    "jacobian-pinv": (2.21, 9.99, 10.02),
    "jacobian-transpose": (27.65, 141.8, 176.4),
}


def alone_spec(method: str) -> SolverSpec:
    """The algorithm alone: no restarts; FABRIK without the Aitken extrapolation."""
    spec = SOLVERS[method]._replace(restarts=False)
    return spec._replace(loop=plain_fabrik_loop) if method == "fabrik" else spec


def variants(methods: Sequence[str] = METHODS) -> dict[tuple[str, str], SolverSpec]:
    """(method, "alone" | "production") -> spec."""
    out = {}
    for m in methods:
        out[(m, "alone")] = alone_spec(m)
        out[(m, "production")] = SOLVERS[m]
    return out


class Measured(NamedTuple):
    """Per-target results of one variant (arrays over targets)."""

    reached: np.ndarray  # (N,) bool, all targets
    iterations: np.ndarray  # (N,) all targets
    error: np.ndarray  # (N,) metres, all targets
    times: np.ndarray  # (T,) seconds, the timed targets (median over passes)


def measure(
    targets: np.ndarray, timed: int, repeats: int, tol: float, arm: str = "LArm", methods: Sequence[str] = METHODS
) -> dict[tuple[str, str], Measured]:
    """Run every variant on every target (batch, for success and iterations) and time single calls in turns.

    Args:
        targets: (N, 3).
        timed: the first ``timed`` targets are timed as single calls.
        repeats: passes over the timed targets; a target's time is its median over the passes.
        tol: success distance, metres.
    """
    model = arm_model(arm)._replace(body=())  # the paper's problem: the kinematics alone (no body)
    specs = variants(methods)
    q0 = np.tile(np.asarray(model.neutral), (len(targets), 1))
    neutral = list(model.neutral)

    def call(key: tuple, spec: SolverSpec) -> Callable:
        single = run_loop if key[1] == "alone" else run_single
        return lambda t: single(spec, model, t, neutral, tol, spec.max_iterations)

    sub = targets[:timed].tolist()
    times = interleaved_times({k: call(k, s) for k, s in specs.items()}, sub * repeats, rounds=10 * repeats)
    out = {}
    for k, spec in specs.items():
        batch = run_loop_batch if k[1] == "alone" else run_batch
        run = batch(spec, model, targets, q0.copy(), tol, spec.max_iterations)
        err = np.asarray(run.error, dtype=float)
        per_target = np.median(times[k].reshape(repeats, timed), axis=0)
        out[k] = Measured(err <= tol, np.asarray(run.iterations, dtype=float), err, per_target)
    return out


def table1(measured: dict[tuple[str, str], Measured], tol_mm: float) -> str:
    """Table 1 in two variants: the algorithm alone beside the paper's row, then nao-ik's production variant."""
    lines = [
        f"| method | variant | success ({tol_mm:g} mm) | median ms | p99 ms | iterations (all) | "
        "iterations (solved) | paper: ms | paper: iterations |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for (m, variant), r in measured.items():
        paper = PAPER.get(m) if variant == "alone" else None
        label = (
            "**alone**"
            if variant == "alone"
            else "nao-ik production (restarts" + (", Aitken)" if m == "fabrik" else ")")
        )
        its, ok = r.iterations, r.reached
        solved = f"{its[ok].mean():.2f} ± {its[ok].std():.2f}" if ok.any() else "n/a"
        lines.append(
            f"| {m} | {label} | {100 * ok.mean():.2f} % | {np.median(r.times) * 1e3:.3f} | "
            f"{np.percentile(r.times, 99) * 1e3:.3f} | {its.mean():.2f} ± {its.std():.2f} | {solved} | "
            f"{'' if paper is None else f'{paper[0]:g}'} | "
            f"{'' if paper is None else f'{paper[1]} ± {paper[2]}'} |"
        )
    return "\n".join(lines)


class Comparison(NamedTuple):
    """FABRIK alone against one other method alone, on the same targets."""

    other: str
    criterion: str
    fabrik: str  # FABRIK's figure
    other_value: str
    difference: str  # FABRIK - other, with its 95 % bootstrap interval
    test: str
    p: float
    fabrik_better: bool | None  # None: no significant difference at 0.05


def _median_diff(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.median(a - b))


def _verdict(p: float, lo: float, hi: float, lower_is_better: bool) -> bool | None:
    """FABRIK better (True) or worse (False) only where the test is significant and the interval excludes 0
    on the same side as the test's direction; None otherwise (not significant, or the two disagree)."""
    if p >= 0.05 or lo <= 0.0 <= hi:
        return None
    below = hi < 0.0
    return below if lower_is_better else not below


def compare(measured: dict[tuple[str, str], Measured], reps: int = 2000) -> list[Comparison]:
    """FABRIK alone against each other method alone: time, iterations, success (paired tests)."""
    fab = measured[("fabrik", "alone")]
    out = []
    for other in [m for m, v in measured if v == "alone" and m != "fabrik"]:
        o = measured[(other, "alone")]
        # Time: Wilcoxon on the per-target times; the median paired difference and its bootstrap interval.
        w = wilcoxon(fab.times, o.times)
        lo, hi = bootstrap_ci(_median_diff, (fab.times, o.times), reps)
        d = _median_diff(fab.times, o.times)
        ok = _verdict(w.p, lo, hi, True) if (w.z < 0) == (d < 0) else None
        out.append(Comparison(other, "time per solve (ms)", f"{np.median(fab.times) * 1e3:.3f}",
                              f"{np.median(o.times) * 1e3:.3f}",
                              f"{d * 1e3:+.3f} [{lo * 1e3:+.3f}, {hi * 1e3:+.3f}] (median)",
                              _lower_higher(fab.times, o.times), w.p, ok))  # fmt: skip
        # Iterations: the same test; the interval of the mean difference (the paper reports means).
        w = wilcoxon(fab.iterations, o.iterations)
        lo, hi = bootstrap_ci(lambda a, b: float(np.mean(a - b)), (fab.iterations, o.iterations), reps)
        d = float(np.mean(fab.iterations - o.iterations))
        ok = _verdict(w.p, lo, hi, True) if (w.z < 0) == (d < 0) else None
        out.append(Comparison(other, "iterations", f"{fab.iterations.mean():.2f}", f"{o.iterations.mean():.2f}",
                              f"{d:+.2f} [{lo:+.2f}, {hi:+.2f}] (mean)", _lower_higher(fab.iterations, o.iterations),
                              w.p, ok))  # fmt: skip
        # Success: exact McNemar on the discordant targets; the difference of rates and its interval.
        mc = mcnemar(fab.reached, o.reached)
        a, b = fab.reached.astype(float), o.reached.astype(float)
        lo, hi = bootstrap_ci(lambda x, y: float(np.mean(x - y)), (a, b), reps)
        d = float(np.mean(a - b))
        out.append(Comparison(other, "success", f"{100 * a.mean():.2f} %", f"{100 * b.mean():.2f} %",
                              f"{100 * d:+.2f} [{100 * lo:+.2f}, {100 * hi:+.2f}] points",
                              f"exact McNemar: {mc.only_a} only FABRIK, {mc.only_b} only {other}", mc.p,
                              _verdict(mc.p, lo, hi, False)))  # fmt: skip
    return out


def _lower_higher(a: np.ndarray, b: np.ndarray) -> str:
    return f"Wilcoxon signed-rank: FABRIK lower on {int(np.sum(a < b))}, higher on {int(np.sum(a > b))}"


def significance_table(rows: list[Comparison]) -> str:
    """The comparisons as a markdown table."""
    lines = [
        "| FABRIK against | criterion | FABRIK | other | FABRIK - other [95 % CI] | test | p | verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        verdict = "no clear difference" if r.fabrik_better is None else (
            "FABRIK better" if r.fabrik_better else "FABRIK worse")  # fmt: skip
        lines.append(f"| {r.other} | {r.criterion} | {r.fabrik} | {r.other_value} | {r.difference} | {r.test} | "
                     f"{fmt_p(r.p)} | {verdict} |")  # fmt: skip
    return "\n".join(lines)


def claims(rows: list[Comparison]) -> str:
    """One sentence per paper claim: does FABRIK beat the paper's two Jacobian methods on NAO's arm?"""
    parts = []
    for crit in ("time per solve (ms)", "iterations", "success"):
        won = [r.other for r in rows if r.criterion == crit and r.other in PAPER and r.fabrik_better]
        lost = [r.other for r in rows if r.criterion == crit and r.other in PAPER and r.fabrik_better is False]
        tied = [r.other for r in rows if r.criterion == crit and r.other in PAPER and r.fabrik_better is None]
        name = crit.split(" (")[0]
        bits = []
        if won:
            bits.append(f"beats {', '.join(won)}")
        if lost:
            bits.append(f"loses to {', '.join(lost)}")
        if tied:
            bits.append(f"shows no clear difference from {', '.join(tied)}")
        parts.append(f"on {name}, FABRIK alone {' and '.join(bits)}")
    every = all(r.fabrik_better for r in rows if r.other in PAPER)
    verdict = "holds" if every else "does not hold on every criterion"
    return (f"The paper's claim that FABRIK beats the Jacobian transpose and pseudoinverse on every criterion "
            f"{verdict} on NAO's arm (alone against alone): " + "; ".join(parts) + ".")  # fmt: skip
