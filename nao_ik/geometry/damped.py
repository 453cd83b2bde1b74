"""One step of projected Levenberg-Marquardt from many starts at once: the closest-pose searches' descent.

The searches for the closest attainable pose (:mod:`nao_ik.geometry.closest`, and with the body
:mod:`nao_ik.geometry.clear_search`) reduce residuals by least squares over the four position joints, WristYaw held,
inside the joint limits: :func:`step` is each start's damped Gauss-Newton step projected onto the limits' box, and
:func:`damping` how each start's damping follows whether its step was taken.
"""

from __future__ import annotations

import numpy as np

#: The damping's factors where a step was taken (smaller) and where it was not (larger), and its bounds.
SHRINK = 0.3
GROW = 10.0
LEAST = 1e-12
MOST = 1e12


def step(q: np.ndarray, jac: np.ndarray, e: np.ndarray, lam: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple:
    """Each start's damped step toward removing its residual, within the limits.

    Args:
        q: (K, 5) the starts, inside the limits.
        jac: (K, R, 4) the residuals' derivatives with respect to the four position joints.
        e: (K, R) what the step should remove: the target minus the value of each residual.
        lam: (K,) the damping.
        lo, hi: (5,) the limits.

    Returns:
        (the step (K, 4), the trial (K, 5): the start plus the step, clipped into the limits). Joints at a limit
        that the gradient pushes outward stay there (the projection's active set).
    """
    grad = np.einsum("kij,ki->kj", jac, e)  # descent direction of |e|^2 / 2
    free = ~(((q[:, :4] <= lo[:4] + 1e-12) & (grad < 0)) | ((q[:, :4] >= hi[:4] - 1e-12) & (grad > 0)))
    jf = jac * free[:, None, :]
    h = np.einsum("kij,kil->kjl", jf, jf) + lam[:, None, None] * np.eye(4)
    move = np.linalg.solve(h, np.einsum("kij,ki->kj", jf, e)[..., None])[..., 0] * free
    trial = q.copy()
    trial[:, :4] = np.clip(q[:, :4] + move, lo[:4], hi[:4])
    return move, trial


def damping(lam: np.ndarray, better: np.ndarray) -> np.ndarray:
    """The next damping of each start: smaller where its step was taken (``better``), larger where it was not."""
    return np.where(better, np.maximum(lam * SHRINK, LEAST), np.minimum(lam * GROW, MOST))
