"""``nao-ik bench``: the Poddighe (2013) protocol on the NAO arms, per method.

Targets: the hand positions of uniformly random in-limit configurations
(ShoulderPitch..ElbowRoll uniform, WristYaw at the neutral posture's value so
a solver that holds the wrist can reach them all), fixed seed. Every solve
starts from the model's neutral posture, not from the previous answer.

Timings are medians over single ``solve`` calls (batch: the median of three
runs of ``solve_batch`` on all targets). The methods take turns: the targets
are timed in rounds, every method doing a slice of them in each round (and
each batch run in turn), so that a slow spell of a shared machine falls on
all methods alike and their ratios hold. The "x FK" column divides each
median by the median of one forward-kinematics call measured in the same run.
"through body": answers whose arm links overlap NAO's body (:mod:`nao_ik.model.body`).
"""

from __future__ import annotations

import argparse
import datetime
import sys
import time
from typing import NamedTuple, Sequence

import numpy as np

from ..api import position as api
from ..geometry.collision import clearance_batch
from ..model.arm import ARMS, arm_model
from ..model.body import MARGIN
from ..solvers import SOLVERS
from .protocol import Tee, interleaved_times, machine, sample_targets


class BenchRow(NamedTuple):
    """One arm x method line of the benchmark."""

    arm: str
    method: str
    targets: int
    success: float
    first_start: float
    iter_mean: float
    iter_std: float
    median_us: float
    p99_us: float
    fk_ratio: float
    batch_per_s: float
    mean_err_mm: float
    p99_err_mm: float
    max_err_mm: float
    out_of_limits: int
    through_body: int = 0


def _fk_median_us(arm: str, repeats: int = 2000) -> float:
    model = arm_model(arm)
    q = list(model.neutral)
    from ..kinematics.chain import chain

    times = np.empty(repeats)
    for i in range(repeats):
        t0 = time.perf_counter()
        chain(model, q)
        times[i] = time.perf_counter() - t0
    return float(np.median(times) * 1e6)


def bench_arm(arm: str, methods: Sequence[str], targets: np.ndarray, single: int, fk_us: float) -> list[BenchRow]:
    """Measure the methods on one arm, taking turns (see the module docstring)."""
    listed = targets[: min(single, targets.shape[0])].tolist()
    singles = interleaved_times({m: (lambda t, m=m: api.solve(t, arm, m)) for m in methods}, listed)
    batch_times: dict[str, list] = {m: [] for m in methods}
    batches = {}
    for _ in range(3):  # the median of three batch runs, in turn
        for m in methods:
            t0 = time.perf_counter()
            batches[m] = api.solve_batch(targets, arm, m)
            batch_times[m].append(time.perf_counter() - t0)
    return [_row(arm, m, targets, singles[m], float(np.median(batch_times[m])), batches[m], fk_us) for m in methods]


def _row(arm: str, method: str, targets: np.ndarray, times: np.ndarray, batch_s: float, batch, fk_us: float):
    model = arm_model(arm)
    spec = SOLVERS[api.resolve_method(method)]
    # First-start success: the algorithm alone, without restarts.
    from ..kinematics.ops import ARRAY

    t_cols = [targets[:, k] for k in range(3)]
    q0 = [np.full(targets.shape[0], v) for v in model.neutral]
    if spec.start:
        q0, _ = spec.start(model, t_cols, q0, ARRAY)
    first = spec.loop(model, t_cols, q0, api.DEFAULT_TOLERANCE, spec.max_iterations, ARRAY)
    lo, hi = np.asarray(model.lower), np.asarray(model.upper)
    oob = int(np.sum(np.any((batch.angles < lo) | (batch.angles > hi) | ~np.isfinite(batch.angles), axis=1)))
    return BenchRow(
        arm,
        method,
        targets.shape[0],
        float(batch.reached.mean()),
        float(np.mean(np.asarray(first.error) <= api.DEFAULT_TOLERANCE)),
        float(batch.iterations.mean()),
        float(batch.iterations.std()),
        float(np.median(times) * 1e6),
        float(np.percentile(times, 99) * 1e6),
        float(np.median(times) * 1e6 / fk_us),
        targets.shape[0] / batch_s,
        float(batch.error.mean() * 1e3),
        float(np.percentile(batch.error, 99) * 1e3),
        float(batch.error.max() * 1e3),
        oob,
        int(np.sum(clearance_batch(model, batch.angles)[0] < 0.0)),
    )


HEADER = (
    "| arm | method | success (0.1 mm) | first start | iterations | median solve | p99 solve | x FK | "
    "batch targets/s | mean err (mm) | p99 err (mm) | max err (mm) | out of limits | through body |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def format_row(r: BenchRow) -> str:
    """A markdown table row."""
    return (
        f"| {r.arm} | {r.method} | {100 * r.success:.2f} % | {100 * r.first_start:.2f} % | "
        f"{r.iter_mean:.2f} ± {r.iter_std:.2f} | {r.median_us:.0f} µs | {r.p99_us:.0f} µs | {r.fk_ratio:.1f} | "
        f"{r.batch_per_s:,.0f} | {r.mean_err_mm:.4f} | {r.p99_err_mm:.4f} | {r.max_err_mm:.4f} | {r.out_of_limits} | "
        f"{r.through_body} |"
    )


def run(
    arms: Sequence[str] = ARMS,
    methods: Sequence[str] | None = None,
    targets: int = 10_000,
    single: int = 10_000,
    seed: int = 0,
    out=sys.stdout,
    paths: int = 0,
    unreachable: int = 0,
    body: int = 0,
    batch: Sequence[int] = (),
    against: str | None = None,
) -> list[BenchRow]:
    """Run the benchmark and print a markdown table as rows complete (``against``: another checkout of nao-ik whose
    single solves are timed beside these, :func:`nao_ik.evidence.versus.print_methods_versus`)."""
    methods = list(methods or SOLVERS)
    rows = []
    fk = {}
    print(f"nao-ik bench: {targets} targets per arm, seed {seed}, starts at the neutral posture", file=out)
    print(f"machine: {machine()}", file=out)
    print(file=out)
    print(HEADER, file=out, flush=True)
    for arm in arms:
        fk_us = fk[arm] = _fk_median_us(arm)
        t = sample_targets(arm, targets, seed)
        for row in bench_arm(arm, methods, t, single, fk_us):
            rows.append(row)
            print(format_row(row), file=out, flush=True)
    print(file=out)
    each = ", ".join(f"{arm} {us:.1f} µs" for arm, us in fk.items())
    print(f"x FK: median solve / median forward-kinematics call of the arm ({each} in this run).", file=out)
    if paths:
        print_continuity(arms, methods, paths, out)
    if unreachable:
        print_unreachable(arms, methods, unreachable, out)
    if body:
        from .body_bench import print_body

        print_body(arms, targets, seed, body, out)
    if batch:
        print_batch(arms, methods, batch, seed, out)
    if against:
        from .versus import print_methods_versus

        for arm in arms:
            print_methods_versus(out, against, sample_targets(arm, min(single, AGAINST_TARGETS), seed), arm, methods,
                                 AGAINST_PASSES)  # fmt: skip
    return rows


#: Targets and passes of the single solves timed against another checkout (``--against``).
AGAINST_TARGETS = 1000
AGAINST_PASSES = 5


#: The largest batch also timed with the body model: the targets reachable only through the body (about 16 % of the
#: protocol's) take the closest-clear-pose search, and the three runs of every method at 100,000 would take minutes.
BODY_BATCH_MAX = 10_000


class BatchRow(NamedTuple):
    """One arm x size x method line of the batch table: targets per second (median of the runs) and reached share,
    on the arm model without the body (:meth:`~nao_ik.model.arm.ArmModel.bodiless`) and with it (None: not run)."""

    arm: str
    size: int
    method: str
    bodiless_per_s: float
    bodiless_reached: float
    body_per_s: float | None
    body_reached: float | None
    body_blocked: int | None = None  # targets only configurations through the body reach ("collision: ...")
    body_searched: int | None = None  # of the targets, those the batch left to the one-target search


def bench_batch(arm: str, methods: Sequence[str], size: int, seed: int = 0, runs: int = 3) -> list[BatchRow]:
    """``solve_batch`` throughput on ``size`` protocol targets, without the body and with it (up to
    :data:`BODY_BATCH_MAX`); every method and model runs in turn, ``runs`` times, and the median counts."""
    model = arm_model(arm)
    models = {"bodiless": model.bodiless()}
    if size <= BODY_BATCH_MAX:
        models["body"] = model
    targets = sample_targets(arm, size, seed)
    times: dict[tuple, list] = {(m, k): [] for m in methods for k in models}
    reached: dict[tuple, float] = {}
    counts: dict[str, tuple] = {}
    for _ in range(runs):
        for m in methods:
            for k, mdl in models.items():
                t0 = time.perf_counter()
                sol = api.solve_batch(targets, mdl, m)
                times[(m, k)].append(time.perf_counter() - t0)
                reached[(m, k)] = float(sol.reached.mean())
                if k == "body":
                    blocked = int(sum(str(r).startswith("collision") for r in sol.reason))
                    counts[m] = (blocked, int(np.sum(sol.searched)))
    rows = []
    for m in methods:
        rate = {k: size / float(np.median(times[(m, k)])) for k in models}
        rows.append(BatchRow(arm, size, m, rate["bodiless"], reached[(m, "bodiless")], rate.get("body"),
                             reached.get((m, "body")), *counts.get(m, (None, None))))  # fmt: skip
    return rows


def body_parts(arm: str, size: int, seed: int = 0, runs: int = 3) -> tuple[float, int, float]:
    """(seconds, blocked, seconds): two parts of the body's cost that every method's batch pays, whatever its
    speed without the body (medians of ``runs``): the body check of ``size`` protocol targets' exact answers
    (one clearance each), and the nearest clear pose toward the blocked ones among them
    (:func:`~nao_ik.geometry.blocked.clear_toward`; only configurations through the body reach them)."""
    from ..geometry.blocked import clear_toward

    model = arm_model(arm)
    targets = sample_targets(arm, size, seed)
    answers = api.solve_batch(targets, model.bodiless(), "analytic").angles
    reason = api.solve_batch(targets, model, "analytic").reason
    blocked = targets[[str(r).startswith("collision") for r in reason]]
    starts = np.tile(model.neutral, (len(blocked), 1))
    check, toward = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        clearance_batch(model, answers, model.body, MARGIN)  # as the check asks it: whether the margin holds
        t1 = time.perf_counter()
        clear_toward(model, blocked, starts)
        toward.append(time.perf_counter() - t1)
        check.append(t1 - t0)
    return float(np.median(check)), len(blocked), float(np.median(toward))


def print_batch(arms: Sequence[str], methods: Sequence[str], sizes: Sequence[int], seed: int = 0,
                out=sys.stdout, runs: int = 3) -> list[BatchRow]:  # fmt: skip
    """The batch table: ``solve_batch`` targets per second by size, without the body model and with it."""
    print(file=out)
    print(f"Batch: solve_batch on the protocol's targets from the neutral posture, targets per second (median of "
          f"{runs} runs, the methods and models in turn); without the body: the arm model's bodiless() (joint limits "
          f"only); with it (the default): up to {BODY_BATCH_MAX:,} targets.", file=out)  # fmt: skip
    print(file=out)
    print("Body/no body: the ratio of the two rates; blocked: targets only configurations through the body reach "
          "(answered with the nearest clear pose toward them); one-target: of the targets, those the batch left "
          "to the single solve's search.", file=out)  # fmt: skip
    print(file=out)
    print("| arm | targets | method | targets/s, no body | reached, no body | targets/s, body | reached, body | "
          "body/no body | blocked | one-target |", file=out)  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|", file=out, flush=True)
    rows, parts = [], []
    for arm in arms:
        for size in sizes:
            for r in bench_batch(arm, methods, size, seed, runs):
                rows.append(r)
                body = ("not run", "", "", "", "") if r.body_per_s is None else (
                    f"{r.body_per_s:,.0f}", f"{100 * r.body_reached:.2f} %", f"1/{r.bodiless_per_s / r.body_per_s:.1f}",
                    f"{r.body_blocked:,}", f"{r.body_searched:,}")  # fmt: skip
                print(f"| {arm} | {size:,} | {r.method} | {r.bodiless_per_s:,.0f} | {100 * r.bodiless_reached:.2f} % | "
                      + " | ".join(body) + " |", file=out, flush=True)  # fmt: skip
    for arm in arms:
        for size in (s for s in sizes if s <= BODY_BATCH_MAX):
            check, blocked, toward = body_parts(arm, size, seed, runs)
            parts.append(f"{arm}, {size:,} targets: the check {1e3 * check:.0f} ms, the {blocked:,} blocked targets' "
                         f"nearest clear pose {1e3 * toward:.0f} ms")  # fmt: skip
    if parts:
        print(file=out)
        print(
            "Two parts of every method's time with the body, whatever its time without it (medians of "
            f"{runs}): the body check of every answer, and the search for the nearest clear pose toward the "
            "blocked targets (nao_ik.geometry.blocked.clear_toward). " + "; ".join(parts) + ".",
            file=out,
        )
    return rows


def unreachable_targets(arm: str, per_kind: int, seed: int = 0) -> np.ndarray:
    """(3 * per_kind, 3) targets no configuration reaches: beyond full stretch, inside the
    smallest shoulder-hand distance the limits allow, and behind the back."""
    from ..solvers.pipeline import reach_range

    model = arm_model(arm)
    s, rng = np.array(model.shoulder), np.random.default_rng(seed)
    near, far = reach_range(model)
    side = 1.0 if arm == "LArm" else -1.0
    out = []
    for _ in range(per_kind):
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        b = np.array([-abs(rng.normal()) - 0.5, side * rng.normal() * 0.3, rng.normal() * 0.3])
        out += [s + d * rng.uniform(far + 0.01, far + 0.2), s + d * rng.uniform(0.0, 0.9 * near),
                s + b / np.linalg.norm(b) * rng.uniform(0.05, 0.2)]  # fmt: skip
    return np.array(out)


def print_unreachable(arms: Sequence[str], methods: Sequence[str], per_kind: int, out=sys.stdout) -> None:
    """The unreachable table: how much farther than attainable each method's answer ends."""
    from ..geometry.closest import closest

    print(file=out)
    print(f"Unreachable: {3 * per_kind} targets per arm ({per_kind} beyond full stretch, inside the inner limit, "
          "behind the back), from the neutral posture; excess = the answer's distance to the target minus the "
          "closest attainable distance (nao_ik.geometry.closest).", file=out)  # fmt: skip
    print(file=out)
    print("| arm | method | mean excess (mm) | max excess (mm) | refined |", file=out)
    print("|---|---|---|---|---|", file=out, flush=True)
    for arm in arms:
        model = arm_model(arm)
        targets = unreachable_targets(arm, per_kind, seed=7)
        best = np.array([closest(model, t, model.neutral).distance for t in targets])
        for m in methods:
            sols = [api.solve(t, arm, m) for t in targets]
            excess = np.array([s.error for s in sols]) - best
            print(f"| {arm} | {m} | {1e3 * excess.mean():.4f} | {1e3 * excess.max():.4f} | "
                  f"{sum(s.refined for s in sols)} / {len(sols)} |", file=out, flush=True)  # fmt: skip


def print_continuity(arms: Sequence[str], methods: Sequence[str], paths: int, out=sys.stdout) -> None:
    """The continuity table: answers along joint-space lines, each from the previous answer."""
    from .continuity import POINTS, SLACK, joint_paths, measure

    print(file=out)
    print(f"Continuity: {paths} straight joint-space lines of {POINTS} points per arm, each point solved from the "
          f"previous answer; a jump moves a joint more than the line's own step + {SLACK} rad; forced: no solution "
          "was that close to the arm's posture. Median step: one point's api.solve from the previous answer "
          "(the service's common case).", file=out)  # fmt: skip
    print(file=out)
    print("| arm | method | steps | jumps | forced | avoidable | worst excess (rad) | median step |", file=out)
    print("|---|---|---|---|---|---|---|---|", file=out, flush=True)
    for i, arm in enumerate(arms):
        lines = joint_paths(arm, paths, seed=1 + i)
        for m in methods:
            c = measure(m, arm, lines)
            print(f"| {arm} | {m} | {c.steps} | {100 * c.jumps / c.steps:.2f} % | {100 * c.forced / c.steps:.2f} % | "
                  f"{100 * (c.jumps - c.forced) / c.steps:.2f} % | {c.worst:.3f} | {c.median_us:.0f} µs |",
                  file=out, flush=True)  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    p = argparse.ArgumentParser(
        prog="nao-ik bench",
        description="Benchmark every IK method on the paper's protocol and print a markdown table.",
        epilog="example: nao-ik bench --targets 2000 --methods fabrik dls --out bench.md",
    )
    p.add_argument("--targets", type=int, default=10_000, help="targets per arm (default 10000)")
    p.add_argument("--single", type=int, default=10_000, help="how many of them to time as single solve calls")
    p.add_argument("--methods", nargs="+", choices=api.METHODS, help="methods (default: all)")
    p.add_argument("--arms", nargs="+", choices=ARMS, default=list(ARMS))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--paths", type=int, default=30, help="joint-space lines per arm for the continuity table (0: none)")
    p.add_argument("--unreachable", type=int, default=20, help="unreachable targets per kind and arm (0: none)")
    p.add_argument(
        "--body",
        type=int,
        default=200,
        help="targets for ikpy and the ALMotion-style pseudoinverse in the body table (0: no body table)",
    )
    p.add_argument(
        "--batch",
        type=int,
        nargs="+",
        default=[],
        metavar="SIZE",
        help="also time solve_batch on SIZE targets, without the body model and with it (default: none)",
    )
    p.add_argument(
        "--against",
        metavar="DIR",
        help="also time each method's single solve (the kinematics alone) against another checkout of nao-ik, "
        "each in its own process, taking turns (e.g. `git worktree add ../then <commit>`)",
    )
    p.add_argument("--out", help="also write the table to this markdown file")
    a = p.parse_args(argv)
    if any(n < 1 for n in a.batch):
        p.error(f"--batch sizes must be >= 1, got {a.batch}")
    tee = Tee()
    run(
        a.arms,
        a.methods,
        a.targets,
        a.single,
        a.seed,
        out=tee,
        paths=a.paths,
        unreachable=a.unreachable,
        body=a.body,
        batch=a.batch,
        against=a.against,
    )
    if a.out:
        with open(a.out, "w", encoding="utf-8") as fh:
            fh.write(
                f"# nao-ik bench\n\nGenerated by `nao-ik bench {' '.join(argv if argv is not None else sys.argv[1:])}` "
                f"on {datetime.date.today()}. One run on one machine: compare methods within the run (and with "
                'the "x FK" column), re-measure on yours.\n\n'
            )
            fh.write(tee.text())
        print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
