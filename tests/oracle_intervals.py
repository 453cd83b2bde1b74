"""The old way to find the swivel intervals, kept only as a test oracle (and the benchmark's reference).

A 1-degree grid of swivels, then 20 bisections at each end of every run of
allowed grid points (1.7e-8 rad). It cannot see an allowed interval narrower
than its grid, which the closed form does. It lives in
:mod:`nao_ik.evidence.interval_bench`, which times the closed form against it.
"""

from nao_ik.evidence.interval_bench import GRID_STEP, grid_intervals

__all__ = ["GRID_STEP", "grid_intervals"]
