"""The old way to find the swivel intervals, kept only as a test oracle.

A 1-degree grid of swivels, then 20 bisections at each end of every run of
allowed grid points (1.7e-8 rad). It cannot see an allowed interval narrower
than its grid, which the closed form does.
"""

import math

import numpy as np

from nao_ik.all_solutions import _violations

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
    """Allowed intervals, sorted, within [-pi, pi] (a run through +-pi split in two)."""
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
