"""``nao-ik bench-nearest``: is ``analytic``'s answer the nearest solution to the start? Measured against sampling.

``analytic`` answers the exact solution whose move from the start takes least
time (:mod:`nao_ik.geometry.nearest`), found by a search along the elbow's
swivel circle that ends with a closed-form proof (a single solve's own, and
for ``solve_batch`` with a start per target :mod:`nao_ik.geometry.proof`).
Here each answer's move time, of single solves and of one ``solve_batch``
of the same pairs, is compared with the best of
:func:`nao_ik.solve_all`'s solutions sampled every 0.5 degree of swivel, on the
arm's joint limits alone, for two kinds of start/target pairs:

- near: the start's hand within 1 cm of the target, as when a path is tracked;
  every other start has ElbowRoll within 0.15 rad of its straight-arm limit
  (near a fold of the swivel circle, where the search is hardest);
- far: a random start and the hand of another random configuration.

An answer counts as farther where its move time exceeds the sampled best by
more than :data:`TOLERANCE` (the precision to which the search places a
swivel on a limit).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from typing import NamedTuple, Sequence

import numpy as np

from ..api import position as api
from ..api.all_solutions import solve_all
from ..geometry.nearest import move_time
from ..kinematics import chain as kinematics
from ..kinematics.ops import SCALAR
from ..model.arm import ARMS, arm_model

#: Seconds of move by which an answer may exceed the best sampled solution.
TOLERANCE = 1e-5
#: Near pairs: the hand moves less than this (metres); the straight-arm starts' ElbowRoll band (radians).
NEAR = 0.01
STRAIGHT = 0.15


class NearestRow(NamedTuple):
    """One arm x kind line: pairs, answers farther than sampled, the worst excess (s), median solve (µs); the same
    of ``solve_batch`` on all the pairs at once."""

    arm: str
    kind: str
    pairs: int
    farther: int
    worst_s: float
    median_us: float
    batch_farther: int
    batch_worst_s: float


def near_pairs(arm: str, n: int, seed: int, first: Sequence[tuple] = ()) -> list[tuple]:
    """``n`` (start, target) pairs whose hand moves less than :data:`NEAR` (``first`` included, counted first);
    every other start near the straight-arm limit of ElbowRoll."""
    model = arm_model(arm)
    rng = np.random.default_rng(seed)
    cases = list(first)
    while len(cases) < n:
        start = rng.uniform(model.lower, model.upper)
        if len(cases) % 2:  # ElbowRoll within STRAIGHT of its straight-arm limit
            off = rng.uniform(0, STRAIGHT)
            start[3] = model.upper[3] - off if arm == "LArm" else model.lower[3] + off
        goal = np.clip(start + rng.normal(scale=0.03, size=5), model.lower, model.upper)
        goal[4] = start[4]
        t = kinematics.forward(model, goal)
        if np.linalg.norm(t - kinematics.forward(model, start)) < NEAR:  # the near path
            cases.append((list(start), list(t)))
    return cases


def far_pairs(arm: str, n: int, seed: int) -> list[tuple]:
    """``n`` (start, target) pairs: random in-limit starts, the hands of other random configurations."""
    model = arm_model(arm)
    rng = np.random.default_rng(seed)
    cases = []
    for _ in range(n):
        goal, start = rng.uniform(model.lower, model.upper), rng.uniform(model.lower, model.upper)
        goal[4] = start[4]
        cases.append((list(start), list(kinematics.forward(model, goal))))
    return cases


def excess(arm: str, start: Sequence[float], target: Sequence[float]) -> tuple[float, float]:
    """(the answer's move time minus the best sampled one, seconds; the solve's own seconds), on the limits alone."""
    model = arm_model(arm).bodiless()  # solve_all samples the limits alone
    t0 = time.perf_counter()
    sol = api.solve(target, model, "analytic", initial=start)
    took = time.perf_counter() - t0
    return over_sampled(model, sol.angles, start, target), took


def over_sampled(model, angles: Sequence[float], start: Sequence[float], target: Sequence[float]) -> float:
    """How much longer the move to ``angles`` takes than the best of solve_all's 0.5-degree samples, seconds."""
    mine = move_time(model, angles, start, SCALAR)
    sampled = solve_all(target, model, wrist=start[4], step_deg=0.5).solutions
    return mine - min((move_time(model, s.angles, start, SCALAR) for s in sampled), default=math.inf)


def bench_arm(arm: str, pairs: int, seed: int = 0) -> list[NearestRow]:
    """The near and the far rows of one arm."""
    rows, model = [], arm_model(arm).bodiless()
    for kind, cases in (("near", near_pairs(arm, pairs, seed)), ("far", far_pairs(arm, pairs, seed + 1))):
        got = [excess(arm, s, t) for s, t in cases]
        over = [e for e, _ in got]
        batch = api.solve_batch([t for _, t in cases], model, "analytic", initial=[s for s, _ in cases]).angles
        b_over = [over_sampled(model, q, s, t) for q, (s, t) in zip(batch, cases)]
        rows.append(NearestRow(arm, kind, len(got), sum(e > TOLERANCE for e in over), max(0.0, max(over)),
                               1e6 * float(np.median([d for _, d in got])), sum(e > TOLERANCE for e in b_over),
                               max(0.0, max(b_over))))  # fmt: skip
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="nao-ik bench-nearest", description=__doc__.splitlines()[0])
    p.add_argument("--pairs", type=int, default=400, help="start/target pairs per kind and arm (default 400)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--arms", nargs="+", default=list(ARMS), choices=ARMS)
    args = p.parse_args(argv)
    if args.pairs < 1:
        p.error(f"--pairs must be >= 1, got {args.pairs}")
    out = sys.stdout
    print(f"nao-ik bench-nearest: {args.pairs} pairs per kind and arm, seed {args.seed}; farther: the answer's move "
          f"exceeds the best of solve_all's 0.5-degree samples by more than {TOLERANCE:g} s\n", file=out)  # fmt: skip
    print("| arm | pairs | kind | farther than sampled | worst excess (s) | median solve | solve_batch: farther "
          "| worst excess (s) |", file=out)  # fmt: skip
    print("|---|---:|---|---:|---:|---:|---:|---:|", file=out, flush=True)
    for arm in args.arms:
        for r in bench_arm(arm, args.pairs, args.seed):
            print(f"| {r.arm} | {r.pairs} | {r.kind} | {r.farther} | {r.worst_s:.5f} | {r.median_us:.0f} µs | "
                  f"{r.batch_farther} | {r.batch_worst_s:.5f} |", file=out, flush=True)  # fmt: skip
    return 0
