"""Weighted damped least squares on the hand's 6-row pose Jacobian, inside the joint limits.

The residual of a configuration q for a target pose (p*, R*) is

    r(q) = w * [p* - p(q); log(R* R(q)^T)]

(position in metres, orientation as the FRAME_TORSO rotation vector in
radians, ``w`` the six per-component weights, zero for the components the
axisMask leaves free). The solver minimises |r|^2 with Levenberg-Marquardt
steps (damping on the diagonal of J^T J, shrunk after a step that lowers the
cost, grown after one that does not) projected on the joint limits: a joint
on a limit whose step points outward is held there and the step re-solved
without it. The orientation rows use the exact derivative of the log map,
d log(R* R^T) / dq_j = -Jr^-1(e) a_j (a_j the joint's axis, Jr the right
Jacobian of SO(3)), so where the pose cannot be reached the answer is a true
local minimum of the weighted cost, not of a linearisation.

Scalar (one pose; numpy for the 5x5 solves).
"""

from __future__ import annotations

import math
from typing import NamedTuple, Sequence

import numpy as np

from ..kinematics.chain import chain
from ..kinematics.hand_pose import rotation_vector
from ..model.arm import ArmModel

#: Initial damping, relative to the largest diagonal entry of J^T J.
LAMBDA0 = 1e-3
#: Largest damping tried, relative to the largest diagonal entry of J^T J.
MAX_LAMBDA = 1e12
#: Consecutive iterations without a relative cost decrease of MIN_DECREASE end the loop.
PATIENCE = 4
MIN_DECREASE = 1e-12


class PoseTarget(NamedTuple):
    """A target pose and what counts.

    Attributes:
        p: the hand point, FRAME_TORSO metres.
        r: the hand frame's rotation (rows).
        weights: six weights (x, y, z, wx, wy, wz); 0 for a free component.
    """

    p: tuple
    r: tuple
    weights: tuple


class PoseRun(NamedTuple):
    """What :func:`pose_dls` returns.

    Attributes:
        q: the five joint angles, inside the limits.
        residual: the six unweighted residual components (position m, rotation vector rad).
        cost: sum of the squared weighted residuals.
        iterations: the iterations made.
    """

    q: tuple
    residual: tuple
    cost: float
    iterations: int


def residual(model: ArmModel, target: PoseTarget, q: Sequence[float]):
    """(six unweighted residual components, the chain) of configuration ``q``."""
    ch = chain(model, q)
    x, y, z = ch.rotation
    r = ((x[0], y[0], z[0]), (x[1], y[1], z[1]), (x[2], y[2], z[2]))
    e = rotation_vector(target.r, r)
    h = ch.hand
    return (target.p[0] - h[0], target.p[1] - h[1], target.p[2] - h[2], *e), ch


def residual_cost(model: ArmModel, target: PoseTarget, q: Sequence[float]) -> float:
    """The weighted cost sum (w_i r_i)^2 of configuration ``q``."""
    return _cost(residual(model, target, list(q))[0], target.weights)


def _cost(res: Sequence[float], w: Sequence[float]) -> float:
    return sum((wi * ri) ** 2 for wi, ri in zip(w, res))


def _jacobian(res: Sequence[float], ch, w: np.ndarray) -> np.ndarray:
    """(6, 5) derivative of the weighted residual."""
    hx, hy, hz = ch.hand
    rows = []
    for (a0, a1, a2), (o0, o1, o2) in zip(ch.axes, ch.origins):
        l0, l1, l2 = hx - o0, hy - o1, hz - o2
        rows.append((a1 * l2 - a2 * l1, a2 * l0 - a0 * l2, a0 * l1 - a1 * l0, a0, a1, a2))
    jt = np.array(rows)  # (5, 6): d hand / d q and the joint axes
    e0, e1, e2 = res[3], res[4], res[5]
    theta = math.sqrt(e0 * e0 + e1 * e1 + e2 * e2)
    k = np.array([[0.0, -e2, e1], [e2, 0.0, -e0], [-e1, e0, 0.0]])
    if theta < 1e-6:
        coef = 1.0 / 12.0
    elif math.sin(theta) < 1e-6:  # a half turn: the log map's derivative is unbounded there; keep it finite
        coef = 1.0 / theta**2
    else:
        coef = 1.0 / theta**2 - (1.0 + math.cos(theta)) / (2.0 * theta * math.sin(theta))
    jr_inv = np.eye(3) + 0.5 * k + coef * (k @ k)
    jt[:, 3:] = jt[:, 3:] @ jr_inv.T
    return -(jt * w).T


def pose_dls(
    model: ArmModel, target: PoseTarget, q0: Sequence[float], max_iter: int = 100, done: float = 0.0
) -> PoseRun:
    """Minimise the weighted pose residual from ``q0`` within the limits.

    Args:
        model: the arm.
        target: the pose and weights.
        q0: the start, inside the limits.
        max_iter: iteration cap.
        done: stop as soon as the cost is at most this (0: converge).

    Returns:
        The :class:`PoseRun` of the lowest cost found.
    """
    lo, hi = np.asarray(model.lower), np.asarray(model.upper)
    w = np.asarray(target.weights, dtype=float)
    q = np.clip(np.asarray(q0, dtype=float), lo, hi)
    res, ch = residual(model, target, q.tolist())
    cost = _cost(res, w)
    lam = None
    nu = 2.0
    stall = 0
    it = 0
    while it < max_iter and cost > done and stall < PATIENCE:
        it += 1
        j = _jacobian(res, ch, w)
        rw = w * np.asarray(res)
        jtj, g = j.T @ j, j.T @ rw
        diag = np.diag(jtj).copy()
        scale = max(float(diag.max()), 1e-30)
        if lam is None:
            lam = LAMBDA0 * scale
        # Grow the damping until a step lowers the cost (the step shrinks toward the gradient's direction).
        while True:
            q_new = _projected_step(q, jtj, g, diag, lam, lo, hi)
            res_new, ch_new = residual(model, target, q_new.tolist())
            cost_new = _cost(res_new, w)
            if cost_new < cost or lam > MAX_LAMBDA * scale:
                break
            lam *= nu
            nu *= 2.0
        if cost_new >= cost:
            break  # no step lowers the cost: a minimum within the limits
        # Nielsen's update: shrink the damping by how well the linear model predicted the decrease.
        dq = q_new - q
        predicted = -(2.0 * g @ dq + dq @ jtj @ dq)
        rho = (cost - cost_new) / predicted if predicted > 0.0 else 0.0
        lam *= max(1.0 / 3.0, 1.0 - (2.0 * rho - 1.0) ** 3)
        nu = 2.0
        stall = stall + 1 if cost - cost_new <= MIN_DECREASE * cost else 0
        q, res, ch, cost = q_new, res_new, ch_new, cost_new
    return PoseRun(tuple(float(x) for x in q), tuple(float(x) for x in res), float(cost), it)


def _projected_step(q, jtj, g, diag, lam, lo, hi) -> np.ndarray:
    """The damped step, with joints that would cross a limit held on it and the step re-solved for the others."""
    # A joint on a limit whose descent direction points outward stays on it.
    free = ~(((q <= lo) & (g > 0.0)) | ((q >= hi) & (g < 0.0)))
    dq = np.zeros(5)
    damped = jtj + np.diag(lam * (diag + 1e-12 * max(float(diag.max()), 1e-30)))
    for _ in range(5):
        if free.all():
            dq = np.linalg.solve(damped, -g)
        elif free.any():
            fixed = ~free
            sub = damped[free][:, free]
            dq[free] = np.linalg.solve(sub, -(g[free] + jtj[free][:, fixed] @ dq[fixed]))
        q_new = q + dq
        out = free & ((q_new < lo) | (q_new > hi))
        if not out.any():
            return q_new
        dq[out] = np.clip(q_new, lo, hi)[out] - q[out]
        free &= ~out
    return np.clip(q + dq, lo, hi)
