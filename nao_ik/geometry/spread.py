"""Postures spread evenly over an arm's joint ranges: the Halton sequence, deterministic and the same for every call.

The searches that start from many postures at once (:mod:`nao_ik.geometry.closest`,
:mod:`nao_ik.geometry.clear_search`, the solvers' restarts in :mod:`nao_ik.solvers.pipeline`) take theirs from it.
"""

from __future__ import annotations

import functools

import numpy as np

from ..model.arm import ArmModel


def spread(model: ArmModel, count: int, wrist: float) -> np.ndarray:
    """(count, 5) postures: the first ``count`` points of the Halton sequence in bases 2, 3, 5, 7 over the four
    position joints' ranges, WristYaw at ``wrist``."""
    lo, hi = np.asarray(model.lower), np.asarray(model.upper)
    u = unit_spread(count)
    return np.concatenate([lo[:4] + u * (hi[:4] - lo[:4]), np.full((count, 1), wrist)], axis=1)


@functools.lru_cache(maxsize=8)
def unit_spread(count: int) -> np.ndarray:
    """(count, 4) the sequence's points in the unit cube, from its second on (kept, read-only)."""
    u = np.empty((count, 4))
    for k, base in enumerate((2, 3, 5, 7)):  # the van der Corput sequence in each base, every index at once
        i = np.arange(1, count + 1)
        f, r = np.ones(count), np.zeros(count)
        while i.any():
            f /= base
            r += f * (i % base)
            i //= base
        u[:, k] = r
    u.setflags(write=False)
    return u
