"""Paired tests for the report (numpy only): Wilcoxon signed-rank, exact McNemar, bootstrap intervals.

The report compares methods on the same targets, so every comparison is
paired; times and iteration counts are skewed and heavy-tailed, so the tests
are rank-based and the intervals come from resampling targets.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np


class Wilcoxon(NamedTuple):
    """Wilcoxon signed-rank test of paired differences d = a - b.

    Attributes:
        n: pairs with a nonzero difference (zeros dropped, Wilcoxon's rule).
        w_plus: sum of the ranks of the positive differences.
        z: the normal approximation's statistic, with the ties correction.
        p: two-sided p-value.
    """

    n: int
    w_plus: float
    z: float
    p: float


def _ranks(x: np.ndarray) -> np.ndarray:
    """Average ranks (1-based) of x, ties sharing their mean rank."""
    order = np.argsort(x, kind="mergesort")
    xs = x[order]
    ranks = np.empty(len(x))
    bounds = np.flatnonzero(np.diff(xs)) + 1
    starts = np.concatenate([[0], bounds])
    ends = np.concatenate([bounds, [len(x)]])
    for s, e in zip(starts, ends):
        ranks[order[s:e]] = 0.5 * (s + 1 + e)
    return ranks


def _normal_two_sided(z: float) -> float:
    return math.erfc(abs(z) / math.sqrt(2.0))


def wilcoxon(a: np.ndarray, b: np.ndarray) -> Wilcoxon:
    """Wilcoxon signed-rank test of a against b (paired, same length), two-sided.

    Args:
        a, b: paired samples.

    Returns:
        A :class:`Wilcoxon`; ``z`` > 0 means a tends to exceed b.
    """
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    d = d[d != 0]
    n = d.size
    if n == 0:
        return Wilcoxon(0, 0.0, 0.0, 1.0)
    r = _ranks(np.abs(d))
    w_plus = float(r[d > 0].sum())
    mean = n * (n + 1) / 4.0
    _, counts = np.unique(np.abs(d), return_counts=True)
    var = n * (n + 1) * (2 * n + 1) / 24.0 - float(np.sum(counts**3 - counts)) / 48.0
    z = (w_plus - mean) / math.sqrt(var) if var > 0 else 0.0
    return Wilcoxon(n, w_plus, z, _normal_two_sided(z))


class McNemar(NamedTuple):
    """Exact McNemar test of paired successes.

    Attributes:
        only_a: pairs where a succeeded and b failed.
        only_b: pairs where b succeeded and a failed.
        p: two-sided exact binomial p-value on the discordant pairs (p = 1/2).
    """

    only_a: int
    only_b: int
    p: float


def _log_binom_cdf(k: int, n: int) -> float:
    """log P(X <= k), X ~ Binomial(n, 1/2), summed in log space (n may be thousands)."""
    if k < 0:
        return -math.inf
    logs = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) for i in range(k + 1)]
    top = max(logs)
    return top + math.log(sum(math.exp(x - top) for x in logs)) - n * math.log(2.0)


def mcnemar(a: np.ndarray, b: np.ndarray) -> McNemar:
    """Exact McNemar test: do a and b succeed on different targets more often one way than the other?

    Args:
        a, b: paired booleans (success per target).
    """
    a, b = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    only_a, only_b = int(np.sum(a & ~b)), int(np.sum(~a & b))
    n = only_a + only_b
    if n == 0:
        return McNemar(only_a, only_b, 1.0)
    p = min(1.0, 2.0 * math.exp(_log_binom_cdf(min(only_a, only_b), n)))
    return McNemar(only_a, only_b, p)


def bootstrap_ci(
    stat, samples: tuple[np.ndarray, ...], reps: int = 2000, level: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``stat(*samples)``, resampling the pairs (rows) together.

    Args:
        stat: a function of the (resampled) arrays giving one number.
        samples: arrays of the same length, resampled with the same indices.
        reps: bootstrap replicates.
        level: coverage of the interval.
        seed: the resampling's seed (the report is reproducible).

    Returns:
        (low, high).
    """
    n = len(samples[0])
    rng = np.random.default_rng(seed)
    values = np.empty(reps)
    for i in range(reps):
        idx = rng.integers(0, n, n)
        values[i] = stat(*(s[idx] for s in samples))
    tail = 100 * (1 - level) / 2
    lo, hi = np.percentile(values, [tail, 100 - tail])
    return float(lo), float(hi)


def fmt_p(p: float) -> str:
    """A p-value as the report prints it."""
    return "< 1e-300" if p < 1e-300 else (f"{p:.1e}" if p < 1e-3 else f"{p:.3f}")
