"""``nao-ik bench-intervals``: the closed-form swivel intervals against the grid-and-bisection way they replaced.

Before the closed form (:mod:`nao_ik.geometry.scalar.intervals`), the allowed
swivel intervals were found on a 1-degree grid of swivels, then 20
bisections at each end of every run of allowed grid points. That way is
kept here (:func:`grid_intervals`) as the tests' oracle and as this
benchmark's reference. Targets: hand positions of uniform random in-limit
configurations, every fourth moved off by 3 cm (some unreachable, some with
empty intervals), both branches per target. The two take turns, target by
target, so that a slow spell of a shared machine falls on both alike.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from typing import NamedTuple, Sequence

import numpy as np

from ..api.all_solutions import _violations
from ..geometry.scalar.intervals import all_intervals
from ..kinematics.chain import forward_batch
from ..model.arm import ARMS, arm_model

GRID_STEP = math.radians(1.0)
REFINE = 20


def _ok(model, t, wrist, branch, phi) -> bool:
    return _violations(model, t, wrist, np.array([phi]), branch)[1][0] == 0


def _refine(model, t, wrist, branch, inside: float, outside: float) -> float:
    for _ in range(REFINE):
        mid = 0.5 * (inside + outside)
        inside, outside = (mid, outside) if _ok(model, t, wrist, branch, mid) else (inside, mid)
    return inside


def grid_intervals(model, t, wrist: float, branch: int) -> list:
    """Allowed intervals, sorted, within [-pi, pi] (a run through +-pi split in two), from the grid.

    It cannot see an allowed interval narrower than its grid, which the closed form does.
    """
    grid = np.arange(-math.pi, math.pi, GRID_STEP)
    ok = _violations(model, np.asarray(t, dtype=float), wrist, grid, branch)[1] == 0
    if not ok.any():
        return []
    if ok.all():
        return [(-math.pi, math.pi)]
    out, n = [], grid.size
    start = int(np.argmin(ok))
    k = 0
    while k < n:
        i = (start + k) % n
        if ok[i]:
            j = k
            while j + 1 < n and ok[(start + j + 1) % n]:
                j += 1
            first, last = grid[i], grid[(start + j) % n]
            lo = _refine(model, t, wrist, branch, first, first - GRID_STEP)
            hi = _refine(model, t, wrist, branch, last, last + GRID_STEP)
            lo, hi = math.remainder(lo, 2 * math.pi), math.remainder(hi, 2 * math.pi)
            out += [(lo, math.pi), (-math.pi, hi)] if hi < lo else [(lo, hi)]
            k = j + 1
        else:
            k += 1
    return sorted(out)


class IntervalRow(NamedTuple):
    """One arm's line: median microseconds per target (both branches) and the largest end difference."""

    arm: str
    targets: int
    closed_us: float
    grid_us: float
    ratio: float
    max_diff: float


def targets(arm: str, n: int, seed: int = 0) -> tuple:
    """(model, (n, 3) targets, (n,) WristYaw): random configurations' hands, every fourth moved off by 3 cm."""
    model = arm_model(arm)
    rng = np.random.default_rng(seed)
    q = rng.uniform(model.lower, model.upper, (n, 5))
    t = forward_batch(model, q)
    t[::4] += rng.normal(scale=0.03, size=t[::4].shape)
    return model, t, q[:, 4]


def bench_arm(arm: str, n: int, seed: int = 0) -> IntervalRow:
    """Time both ways on the same targets, taking turns; compare the intervals the grid can see."""
    model, ts, ws = targets(arm, n, seed)
    closed, grid = np.empty(n), np.empty(n)
    diff = 0.0
    for i, (t, w) in enumerate(zip(ts.tolist(), ws.tolist())):
        t0 = time.perf_counter()
        exact = all_intervals(model, t, w)
        t1 = time.perf_counter()
        oracle = [grid_intervals(model, t, w, b) for b in (0, 1)]
        t2 = time.perf_counter()
        closed[i], grid[i] = t1 - t0, t2 - t1
        for b in (0, 1):
            wide = [iv for iv in exact[b] if iv[1] - iv[0] > 2 * GRID_STEP]
            seen = [iv for iv in oracle[b] if iv[1] - iv[0] > 2 * GRID_STEP]
            if len(wide) != len(seen):
                diff = math.inf
                continue
            for (a, c), (e, f) in zip(wide, seen):
                diff = max(diff, abs(a - e), abs(c - f))
    c_us, g_us = float(np.median(closed) * 1e6), float(np.median(grid) * 1e6)
    return IntervalRow(arm, n, c_us, g_us, g_us / c_us, diff)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="nao-ik bench-intervals", description=__doc__.splitlines()[0])
    p.add_argument("--targets", type=int, default=200, help="targets per arm (default 200)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--arms", nargs="+", default=list(ARMS), choices=ARMS)
    args = p.parse_args(argv)
    out = sys.stdout
    print(f"nao-ik bench-intervals: {args.targets} targets per arm, seed {args.seed}, both branches per target\n",
          file=out)  # fmt: skip
    print("| arm | targets | closed form, median | grid + bisection, median | ratio | largest end difference (rad) |",
          file=out)  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|", file=out)
    for arm in args.arms:
        r = bench_arm(arm, args.targets, args.seed)
        cells = (r.arm, r.targets, f"{r.closed_us:.1f} µs", f"{r.grid_us:,.0f} µs", f"{r.ratio:.0f}x",
                 f"{r.max_diff:.1e}")  # fmt: skip
        print("| " + " | ".join(str(c) for c in cells) + " |", file=out)
    return 0
