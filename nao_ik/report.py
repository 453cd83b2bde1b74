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

from . import api
from .bench import interleaved_times, machine, sample_targets
from .kinematics import forward, forward_batch, jacobian
from .model import arm_model
from .nn.networks import DATA_DIR
from .track import random_lines

ARM = "LArm"
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


FULL = Size(10_000, 1000, 3, 300, 300, 45, 40, 40)
QUICK = Size(500, 100, 1, 20, 40, 18, 6, 20)


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
        m: (lambda t, m=m: api.solve(t.tolist(), ARM, m, tolerance=tol)) for m in methods
    }
    calls[ALMOTION] = lambda t: almotion_pinv(t, tol)
    return calls


def ours_row(method: str, targets: np.ndarray, tol: float, timing: tuple[float, float]) -> Row:
    b = api.solve_batch(targets, ARM, method, tolerance=tol)
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
    lines = [
        f"| method | targets | success ({tol_mm:g} mm) | median ms | p99 ms | iterations | mean err (mm) | "
        "max err (mm) | out of limits | paper: ms | paper: iterations |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        paper = PAPER_TABLE1.get(r.method)
        its = "n/a" if r.iter_mean is None else f"{r.iter_mean:.2f} ± {r.iter_std:.2f}"
        p_ms = "" if paper is None else f"{paper[0]:g}"
        p_it = "" if paper is None else ("n/a" if paper[1] is None else f"{paper[1]} ± {paper[2]}")
        lines.append(
            f"| {r.method} | {r.targets} | {100 * r.success:.2f} % | {r.median_ms:.3f} | {r.p99_ms:.3f} | {its} | "
            f"{r.mean_err_mm:.4f} | {r.max_err_mm:.4f} | {r.out_of_limits} | {p_ms} | {p_it} |"
        )
    return "\n".join(lines)


# ------------------------------------------------------------------ figures


def figure3(targets: np.ndarray, size: Size, out: Path) -> str:
    """Time per solve against tolerance, every iterative method (and the ALMotion-style baseline)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tols_mm = [10, 3, 1, 0.3, 0.1, 0.03, 0.01, 0.003, 0.001, 1e-6]
    sub = targets[: size.figure3]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    lines = ["| method | " + " | ".join(f"{t:g} mm" for t in tols_mm) + " |", "|---|" + "---|" * len(tols_mm)]
    methods = ITERATIVE + [ALMOTION]
    timing = {}
    for tol_mm in tols_mm:
        tol = tol_mm * 1e-3
        timing[tol_mm] = _turns(_calls(ITERATIVE, tol), sub, size)
    for method in methods:
        xs, ys, cells = [], [], []
        for tol_mm in tols_mm:
            tol = tol_mm * 1e-3
            if method == ALMOTION:
                ok = np.mean([almotion_pinv(t, tol)[1] <= tol for t in sub])
            else:
                ok = api.solve_batch(sub, ARM, method, tolerance=tol).reached.mean()
            med = timing[tol_mm][method][0]
            cells.append(f"{med:.3f} ms ({100 * ok:.0f} %)")
            if ok >= 0.5:  # plotted where the method reaches most targets
                xs.append(tol_mm)
                ys.append(med)
        ax.plot(xs, ys, "-o", ms=3, label=method)
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.invert_xaxis()
    ax.set_xlabel("error tolerance (mm); 1e-6 mm is the floating-point floor")
    ax.set_ylabel("median time per solve (ms)")
    ax.set_title(f"Figure 3 reproduced: {ARM}, {len(sub)} targets, from the neutral posture")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "figure3.png", dpi=90)
    plt.close(fig)
    return "\n".join(lines)


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
                err = api.solve_batch(pts, ARM, method).error
            err_mm = np.where(np.isfinite(err), err * 1e3, 1e3)
            ax = axes[i][j]
            image = ax.imshow(np.log10(np.maximum(err_mm, 1e-4)).reshape(gx.shape), origin="lower", cmap="viridis",
                              extent=(xs[0], xs[-1], ys[0], ys[-1]), vmin=-4, vmax=2, aspect="equal")  # fmt: skip
            ax.plot(model.shoulder[0], model.shoulder[1], "r+")
            ax.set_xticks([])
            ax.set_yticks([])
            if i == 0:
                ax.set_title(method, fontsize=9)
            if j == 0:
                ax.set_ylabel(f"z = {z:.2f} m", fontsize=9)
    fig.colorbar(image, ax=axes, shrink=0.6, label="log10(error / mm)")
    fig.suptitle(f"Where each method misses: {ARM}, slices of FRAME_TORSO (x right, y up; + is the shoulder)")
    fig.savefig(out / "workspace.png", dpi=80)
    plt.close(fig)


def continuity(size: Size, ik: IkpyArm | None, seed: int) -> str:
    """Largest joint jump between consecutive answers along reachable straight paths, each from the previous."""
    model = arm_model(ARM)
    paths = random_lines(ARM, size.paths, size.path_points, seed + 7)
    methods = ["fabrik", "jacobian-pinv", "dls", "sdls", "nn", "nn-refined", "nn-modular", ALMOTION]
    methods += [IKPY] if ik else []
    lines = ["| method | paths | median of the largest jump (rad) | worst jump (rad) | paths with a jump > 0.5 rad | "
             "points reached |", "|---|---|---|---|---|---|"]  # fmt: skip
    for method in methods:
        n_paths = min(size.paths, 8) if method == IKPY else size.paths
        worst, reached, total = [], 0, 0
        for path in paths[:n_paths]:
            prev = np.asarray(api.solve(path[0].tolist(), ARM, "dls").angles)
            jumps = []
            for p in path:
                if method == ALMOTION:
                    q, err, _ = almotion_pinv(p, start=prev)
                    ok = err <= 1e-4
                elif method == IKPY:
                    q = ik.solve(p, prev)
                    ok = np.linalg.norm(forward(model, q) - p) <= 1e-4
                else:
                    sol = api.solve(p.tolist(), ARM, method, initial=prev.tolist())
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
    step("Figure 3")
    fig3 = figure3(targets, size, out)
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
targets, the methods taking turns in {10 * size.repeats} rounds so that a slow spell of this shared machine
falls on all of them alike); success and errors are over all {size.targets} targets. {ikpy_note}. "{ALMOTION}" is a
Moore-Penrose pseudoinverse with full steps and no step control or limits, as ALMotion's documentation
describes its Cartesian control: the stand-in for the robot's built-in.

## Headline

{chr(10).join(head)}

## Table 1 of the paper, reproduced

The paper's tolerance is "0.1" without a unit; read as centimetres it is 1 mm:

{table1(tables[1.0], 1.0)}

At 0.1 mm:

{table1(tables[0.1], 0.1)}

The paper's network figure (0.0028 ms) is for a batch of 10 million; ours is a single call through the full API
(validation, limits, flags). The batch throughput is in [bench.md](../bench.md).

## Figure 3 of the paper, reproduced

![time against tolerance](figure3.png)

Median time per solve (the methods taking turns; success in brackets) at each tolerance:

{fig3}

## Table 2 of the paper: hidden units of `nn-paper`

The paper's errors are Encog's: the mean squared error of the outputs normalised to [0, 1]. Ours are computed
the same way; the hand errors show what they mean at the end effector.

{sweep_text}

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
