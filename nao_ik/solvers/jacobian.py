"""Jacobian-based position IK: transpose, pseudoinverse, DLS and SDLS.

All four share :func:`_loop`: Jacobian of the active joints, a step rule, a
cap on the largest joint step, clamping to the limits at every iteration, and
joints pinned at a limit (with the step pushing them further out) taken out of
the Jacobian so the others do the work. WristYaw is held at its start value.

References: Buss, "Introduction to inverse kinematics with Jacobian transpose,
pseudoinverse and damped least squares methods" (2004); Buss & Kim, "Selectively
damped least squares for inverse kinematics" (2005); Joubert (2008) for the
step halving of the pseudoinverse; Sugihara (2011) for the error-dependent
damping of :func:`dls_step`.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from ..kinematics.chain import chain, jacobian_columns
from ..kinematics.ops import SCALAR, Ops, stack_matrix, unstack_vector
from ..model.arm import ArmModel
from .base import MIN_PROGRESS, PATIENCE, Run

Step = Callable[[list, list, Any, Ops], list]


#: Singular values below this fraction of the largest are treated as zero.
SIGMA_CUTOFF = 0.01


def _dot(a: list, b: list) -> Any:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def transpose_step(J: list, e: list, err: Any, ops: Ops) -> list:
    """Jacobian transpose with Buss's optimal scalar: dq = a J^T e, a = <e, JJ^Te>/|JJ^Te|^2."""
    g = [_dot(c, e) for c in J]
    w = [sum(c[k] * gi for c, gi in zip(J, g)) for k in range(3)]
    ww = _dot(w, w)
    alpha = _dot(e, w) / ops.maximum(ww, 1e-30)
    return [alpha * gi for gi in g]


def _damped(J: list, e: list, lam: Any, ops: Ops) -> list:
    """dq = J^T (J J^T + lam I)^-1 e, the 3x3 system solved by cofactors."""
    s00 = s11 = s22 = a01 = a02 = a12 = 0  # summed from 0 in column order, as sum() would
    for c0, c1, c2 in J:
        s00, s11, s22 = s00 + c0 * c0, s11 + c1 * c1, s22 + c2 * c2
        a01, a02, a12 = a01 + c0 * c1, a02 + c0 * c2, a12 + c1 * c2
    a00, a11, a22 = lam + s00, lam + s11, lam + s22
    b00 = a11 * a22 - a12 * a12
    b01 = a02 * a12 - a01 * a22
    b02 = a01 * a12 - a02 * a11
    b11 = a00 * a22 - a02 * a02
    b12 = a01 * a02 - a00 * a12
    b22 = a00 * a11 - a01 * a01
    inv_det = 1.0 / (a00 * b00 + a01 * b01 + a02 * b02)
    y = [
        (b00 * e[0] + b01 * e[1] + b02 * e[2]) * inv_det,
        (b01 * e[0] + b11 * e[1] + b12 * e[2]) * inv_det,
        (b02 * e[0] + b12 * e[1] + b22 * e[2]) * inv_det,
    ]
    return [_dot(c, y) for c in J]


#: DLS damping lam = DLS_GAIN * |e|^2 + DLS_FLOOR (m^2): strong far from the
#: target, vanishing near it, so the last iterations converge like Gauss-Newton.
DLS_GAIN = 1.0
DLS_FLOOR = 1e-6


def dls_step(J: list, e: list, err: Any, ops: Ops) -> list:
    """Damped least squares with error-dependent damping (Levenberg-Marquardt after Sugihara)."""
    return _damped(J, e, DLS_GAIN * err * err + DLS_FLOOR, ops)


def pinv_step(J: list, e: list, err: Any, ops: Ops) -> list:
    """Moore-Penrose pseudoinverse by SVD; singular values under 1 % of the largest ignored."""
    m = stack_matrix(J, ops)
    u, s, vt = np.linalg.svd(m, full_matrices=False)
    ev = np.array(e, dtype=float) if ops is SCALAR else np.stack(np.broadcast_arrays(*e), axis=-1)
    coef = np.einsum("...ki,...k->...i", u, ev)
    keep = s > SIGMA_CUTOFF * s[..., :1]
    coef = np.where(keep, coef / np.where(keep, s, 1.0), 0.0)
    dq = np.einsum("...ij,...i->...j", vt, coef)
    return unstack_vector(dq, ops)


#: SDLS per-step caps (Buss & Kim): 45 degrees overall.
SDLS_GAMMA_MAX = math.pi / 4


def sdls_step(J: list, e: list, err: Any, ops: Ops) -> list:
    """Buss & Kim selectively damped least squares: each singular direction gets its own cap."""
    m = stack_matrix(J, ops)
    u, s, vt = np.linalg.svd(m, full_matrices=False)
    ev = np.array(e, dtype=float) if ops is SCALAR else np.stack(np.broadcast_arrays(*e), axis=-1)
    rho = np.linalg.norm(m, axis=-2)  # (..., k) column norms
    alpha = np.einsum("...ki,...k->...i", u, ev)  # (..., 3)
    keep = s > SIGMA_CUTOFF * s[..., :1]
    s_safe = np.where(keep, s, 1.0)
    big_m = np.einsum("...ij,...j->...i", np.abs(vt), rho) / s_safe  # M_i
    gamma = np.minimum(1.0, 1.0 / np.maximum(big_m, 1e-30)) * SDLS_GAMMA_MAX
    phi = (alpha / s_safe)[..., None] * vt  # (..., 3, k)
    peak = np.max(np.abs(phi), axis=-1)
    phi = phi * np.where(keep, np.minimum(1.0, gamma / np.maximum(peak, 1e-30)), 0.0)[..., None]
    dq = phi.sum(axis=-2)
    dq = dq * np.minimum(1.0, SDLS_GAMMA_MAX / np.maximum(np.max(np.abs(dq), axis=-1), 1e-30))[..., None]
    return unstack_vector(dq, ops)


def make_loop(step: Step, max_step: float, halvings: int = 0) -> Callable[..., Run]:
    """Build a Jacobian iteration around a step rule.

    Args:
        step: the rule giving the joint step of the active joints.
        max_step: largest joint change per iteration, radians (the step is scaled).
        halvings: how many times a step that does not reduce the error is
            halved (Joubert); 0 accepts every step.

    Returns:
        A :data:`~nao_ik.solvers.base.Loop`.
    """

    def loop(model: ArmModel, t: Sequence[Any], q0: Sequence[Any], tol: float, max_iter: int, ops: Ops) -> Run:
        act = model.active
        lo, hi = model.lower, model.upper
        q = list(q0)
        ch = chain(model, q, ops)
        e = [t[0] - ch.hand[0], t[1] - ch.hand[1], t[2] - ch.hand[2]]
        err = ops.sqrt(_dot(e, e))
        best_q, best_err = q, err
        stale = 0 * err
        iters = 0
        for _ in range(max_iter):
            live = (best_err > tol) & (stale < PATIENCE)
            if not ops.any(live):
                break
            iters = iters + ops.count(live)
            J = jacobian_columns(ch, act)
            dq = step(J, e, err, ops)
            # Joints at a limit that the step pushes further out: take them out.
            blocked = [((q[i] <= lo[i]) & (d < 0)) | ((q[i] >= hi[i]) & (d > 0)) for i, d in zip(act, dq)]
            if ops.any(_any_of(blocked, ops)):
                J = [[ops.where(b, 0.0, x) for x in col] for col, b in zip(J, blocked)]
                dq = step(J, e, err, ops)
            peak = _max_abs(dq, ops)
            scale = ops.minimum(1.0, max_step / ops.maximum(peak, 1e-30))
            qn, chn, en, errn = _try(model, lo, hi, t, q, dq, scale, ops)
            for _h in range(halvings):
                worse = live & (errn >= err)
                if not ops.any(worse):
                    break
                scale = ops.where(worse, scale * 0.5, scale)
                qn, chn, en, errn = _try(model, lo, hi, t, q, dq, scale, ops)
            # Finished targets keep their angles; the chain and error vector of
            # a finished target are never read again, so they are not masked.
            q = ops.where_list(live, qn, q)
            err = ops.where(live, errn, err)
            ch, e = chn, en
            # These methods are not monotone: keep the best pose, and stop
            # after PATIENCE iterations without progress (out of reach, or
            # pinned against the limits).
            better = live & (errn < best_err - MIN_PROGRESS)
            stale = ops.where(better, 0 * stale, stale + 1)
            best_q = ops.where_list(better, qn, best_q)
            best_err = ops.where(better, errn, best_err)
        return Run(best_q, best_err, iters)

    return loop


def _try(model: ArmModel, lo: tuple, hi: tuple, t: Sequence[Any], q: list, dq: list, scale: Any, ops: Ops):
    qn = list(q)
    for i, d in zip(model.active, dq):
        qn[i] = ops.clip(q[i] + scale * d, lo[i], hi[i])
    ch = chain(model, qn, ops)
    e = [t[0] - ch.hand[0], t[1] - ch.hand[1], t[2] - ch.hand[2]]
    return qn, ch, e, ops.sqrt(_dot(e, e))


def _any_of(flags: list, ops: Ops) -> Any:
    out = flags[0]
    for f in flags[1:]:
        out = out | f
    return out


def _max_abs(v: list, ops: Ops) -> Any:
    out = ops.abs(v[0])
    for x in v[1:]:
        out = ops.maximum(out, ops.abs(x))
    return out


transpose_loop = make_loop(transpose_step, max_step=math.radians(30))
pinv_loop = make_loop(pinv_step, max_step=0.5, halvings=6)
dls_loop = make_loop(dls_step, max_step=0.5)
sdls_loop = make_loop(sdls_step, max_step=SDLS_GAMMA_MAX)
