"""The elbow swivel: the one redundant degree of freedom of the arm for a hand position.

With WristYaw held, both links are rigid (see :mod:`nao_ik.solvers.fabrik`):
the elbow centre E is at |u| from the shoulder S and at |f| from the hand. For
a target t the elbow therefore lies on a circle about the axis S -> t, and
every point of that circle, turned into joint angles by
:func:`~nao_ik.solvers.fabrik.recover_angles`, puts the hand exactly on t.
The joint limits decide which arcs of the circle are usable.

Swivel angle 0 is the elbow at its lowest (toward -z of FRAME_TORSO);
positive turns the elbow outward for the left arm (right-hand rule about S -> t).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .kinematics import forward_batch
from .model import ArmModel
from .ops import ARRAY
from .solvers.fabrik import forearm, recover_angles, upper_arm


class SwivelSet(NamedTuple):
    """Configurations at given swivel angles.

    Attributes:
        angles: (N, K, 5) joint angles (unclamped).
        violation: (N, K) summed distance outside the limits, radians (0 = feasible).
        reachable: (N,) False where the target is outside the arm's reach
            (the circle is then that of the nearest reachable distance).
    """

    angles: np.ndarray
    violation: np.ndarray
    reachable: np.ndarray


def swivel_configurations(model: ArmModel, targets: np.ndarray, wrist: np.ndarray, swivels: np.ndarray) -> SwivelSet:
    """Joint angles for each target at each swivel angle.

    Args:
        model: the arm.
        targets: (N, 3) hand targets, metres.
        wrist: (N,) WristYaw held for each target.
        swivels: (K,) swivel angles, radians.

    Returns:
        The :class:`SwivelSet`.
    """
    t = np.asarray(targets, dtype=float).reshape(-1, 3)
    wrist = np.broadcast_to(np.asarray(wrist, dtype=float), t.shape[:1])
    swivels = np.asarray(swivels, dtype=float).reshape(-1)
    s = np.asarray(model.shoulder)
    l1, _ = upper_arm(model)
    f = np.stack(np.broadcast_arrays(*forearm(model, wrist, ARRAY)), axis=-1)
    l2 = np.linalg.norm(f, axis=-1)
    dv = t - s
    d_raw = np.linalg.norm(dv, axis=1)
    n = dv / np.maximum(d_raw, 1e-12)[:, None]
    dmin, dmax = np.abs(l1 - l2) + 1e-9, l1 + l2 - 1e-9
    reachable = (d_raw >= dmin) & (d_raw <= dmax)
    d = np.clip(d_raw, dmin, dmax)
    a = (d * d + l1 * l1 - l2 * l2) / (2 * d)
    r = np.sqrt(np.maximum(l1 * l1 - a * a, 0.0))
    centre = s + a[:, None] * n
    # Zero swivel: the elbow at its lowest, i.e. -z projected on the circle's plane.
    down = np.array([0.0, 0.0, -1.0])
    u = down - (n @ down)[:, None] * n
    small = np.linalg.norm(u, axis=1) < 1e-6
    u[small] = np.array([-1.0, 0.0, 0.0]) - (n[small] @ np.array([-1.0, 0.0, 0.0]))[:, None] * n[small]
    u /= np.linalg.norm(u, axis=1)[:, None]
    v = np.cross(n, u)
    c, sn = np.cos(swivels), np.sin(swivels)
    elbow = centre[:, None, :] + r[:, None, None] * (
        c[None, :, None] * u[:, None, :] + sn[None, :, None] * v[:, None, :]
    )
    hand = s + d[:, None] * n  # the target, or the nearest reachable point toward it
    k = swivels.size
    e_flat = elbow.reshape(-1, 3)
    h_flat = np.repeat(hand, k, axis=0)
    q = recover_angles(
        model, [e_flat[:, i] for i in range(3)], [h_flat[:, i] for i in range(3)], np.repeat(wrist, k), ARRAY
    )
    angles = np.stack(np.broadcast_arrays(*q), axis=-1).reshape(t.shape[0], k, 5)
    lo, hi = np.asarray(model.lower), np.asarray(model.upper)
    violation = (np.maximum(lo - angles, 0.0) + np.maximum(angles - hi, 0.0)).sum(axis=-1)
    # Where the forearm would have to point closer to the upper arm's x axis
    # than the 12.31 mm hand offset allows, no angles put the hand on the
    # target: count the miss (in units of the forearm length) as violation.
    miss = np.linalg.norm(forward_batch(model, angles.reshape(-1, 5)) - h_flat, axis=1).reshape(t.shape[0], k)
    violation = violation + np.where(miss > 1e-9, miss / l2[:, None], 0.0)
    return SwivelSet(angles, violation, reachable)


#: Swivel angles tried for restarts: every 15 degrees.
SEED_SWIVELS = np.radians(np.arange(-180.0, 180.0, 15.0))


def swivel_seeds(model: ArmModel, targets: np.ndarray, wrist: np.ndarray, count: int) -> np.ndarray:
    """The ``count`` swivel configurations closest to the limits, clamped, per target.

    Returns:
        (N, count, 5) start postures inside the limits, least violating first.
    """
    sw = swivel_configurations(model, targets, wrist, SEED_SWIVELS)
    order = np.argsort(sw.violation, axis=1, kind="stable")[:, :count]
    seeds = np.take_along_axis(sw.angles, order[:, :, None], axis=1)
    return np.clip(seeds, model.lower, model.upper)
