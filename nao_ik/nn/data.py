"""Training data for the networks.

- :func:`paper_samples`: as in Poddighe (2013): hand positions of uniformly
  random in-limit configurations, paired with those configurations. The
  inverse of a redundant arm is multi-valued, so the same region of targets
  comes with very different angles and a network can only average them.
- :func:`swivel_samples`: the same targets, each paired with the elbow
  swivel (see :mod:`nao_ik.geometry.swivel`) chosen by one fixed rule: the one
  nearest to a preferred swivel among those the joint limits allow. Its
  configuration reaches the target exactly.
"""

from __future__ import annotations

import numpy as np

from ..geometry.swivel import swivel_configurations
from ..kinematics.chain import forward_batch
from ..model.arm import ArmModel

#: The preferred swivel, radians: the elbow out to the side and a little
#: down, the angle that the limits allow for the most targets (66 % of them,
#: measured over the benchmark's target distribution).
PREFERRED_SWIVEL = np.radians(100.0)


def random_configurations(model: ArmModel, n: int, rng: np.random.Generator, wrist: float = 0.0) -> np.ndarray:
    """(n, 5) uniform in the limits of the four position joints, WristYaw fixed."""
    q = rng.uniform(model.lower, model.upper, size=(n, 5))
    q[:, 4] = wrist
    return q


def paper_samples(model: ArmModel, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(targets (n, 3), angles (n, 4)) drawn as in the paper."""
    q = random_configurations(model, n, np.random.default_rng(seed))
    return forward_batch(model, q), q[:, :4]


def preferred_configurations(
    model: ArmModel,
    targets: np.ndarray,
    wrist: float = 0.0,
    step_deg: float = 2.0,
    refine: int = 14,
    margin_deg: float = 10.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rule's configuration for each target.

    The rule: the swivel nearest to :data:`PREFERRED_SWIVEL` among the
    feasible ones, kept ``margin_deg`` (at most 30 % of the feasible interval's
    width) inside the interval's boundary, so that a model that learns it with
    a small error still lands on a feasible swivel.

    Args:
        model: the arm.
        targets: (N, 3), reachable.
        wrist: the held WristYaw.
        step_deg: swivel grid step; a pick at an interval boundary is then refined.
        refine: bisection steps at an interval boundary (2 deg / 2^14 ~ 0.0001 deg).
        margin_deg: how far inside the boundary the rule stays.

    Returns:
        (angles (N, 5), ok (N,), swivel (N,)): ok is False where no swivel is feasible.
    """
    n = targets.shape[0]
    w = np.full(n, wrist)
    grid = np.radians(np.arange(-180.0, 180.0, step_deg))
    violation = swivel_configurations(model, targets, w, grid).violation
    feasible = violation == 0
    ok = feasible.any(axis=1)
    # Circular distance of each grid swivel to the preferred one.
    dist = np.abs((grid - PREFERRED_SWIVEL + np.pi) % (2 * np.pi) - np.pi)
    k = np.where(feasible, dist[None, :], np.inf).argmin(axis=1)
    good = grid[k]
    # A pick that is not the preferred swivel itself lies at an interval
    # boundary: bisect between it and its infeasible neighbour toward phi*,
    # then step back inside by the margin.
    toward = np.sign((PREFERRED_SWIVEL - good + np.pi) % (2 * np.pi) - np.pi)
    edge = ok & (dist[k] > np.radians(step_deg) / 2)
    rows = np.flatnonzero(edge)
    if rows.size:
        g, b = good[rows], good[rows] + toward[rows] * np.radians(step_deg)
        for _ in range(refine):
            mid = 0.5 * (g + b)
            mid_ok = swivel_configurations(model, targets[rows], w[rows], mid[:, None]).violation[:, 0] == 0
            g, b = np.where(mid_ok, mid, g), np.where(mid_ok, b, mid)
        width = _run_width(feasible[rows], k[rows]) * np.radians(step_deg)
        back = np.minimum(np.radians(margin_deg), 0.3 * width)
        good[rows] = g - toward[rows] * back
    angles = swivel_configurations(model, targets, w, good[:, None]).angles
    return angles[:, 0], ok, good


def _run_width(feasible: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Cells in the circular run of feasible cells that contains cell k, per row."""
    n, m = feasible.shape
    width = np.ones(n)
    for direction in (1, -1):
        alive = np.ones(n, dtype=bool)
        for step in range(1, m):
            alive &= feasible[np.arange(n), (k + direction * step) % m]
            width += alive
            if not alive.any():
                break
    return np.minimum(width, m)


def swivel_samples(model: ArmModel, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(targets (m, 3), swivel angles (m,)), m <= n: the rule's swivel for the paper's targets."""
    targets, _ = paper_samples(model, n, seed)
    _, ok, swivel = preferred_configurations(model, targets)
    return targets[ok], swivel[ok]
