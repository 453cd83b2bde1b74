"""The network methods.

- ``nn-paper``: one evaluation of the paper's network; its raw angles are
  clamped into the limits and the clamped joints flagged.
- ``nn``: the network predicts the elbow swivel, the arm's geometry gives the
  angles (exact where the limits allow that swivel; else the nearest allowed
  swivel among a few tried; else clamped and flagged).
- ``nn-refined``: ``nn``'s answer, then damped least squares iterations
  (the feedback refinement of Oyama & Tachi): network speed, solver accuracy.

WristYaw keeps its start value throughout.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..geometry.scalar.swivel import arm, hand_point
from ..geometry.swivel import point
from ..kinematics.chain import chain
from ..kinematics.ops import SCALAR, Ops
from ..model.arm import ArmModel
from ..nn.networks import FALLBACK_OFFSETS, nn_angles, paper_angles, predict_swivel_one
from .base import Run, Start


def _targets(t: Sequence[Any], ops: Ops) -> np.ndarray:
    return np.array([t], dtype=float) if ops is SCALAR else np.stack(np.broadcast_arrays(*t), axis=1)


def _clamped(model: ArmModel, raw: np.ndarray, wrist: Any, ops: Ops) -> tuple:
    """Clamp (N, 5) raw angles into the limits; flags of what was clamped."""
    q = np.clip(raw, model.lower, model.upper)
    flags = raw != q
    if ops is SCALAR:
        return q[0, :4].tolist() + [wrist], flags[0].tolist()
    return [q[:, i] for i in range(4)] + [wrist], [flags[:, i] for i in range(5)]


def paper_start(model: ArmModel, t: Sequence[Any], q0: Sequence[Any], ops: Ops) -> tuple:
    """``nn-paper``'s answer."""
    targets = _targets(t, ops)
    raw = np.concatenate([paper_angles(model, targets), np.zeros((len(targets), 1))], axis=1)
    return _clamped(model, raw, q0[4], ops)


def _clamped_one(model: ArmModel, raw: Sequence[float], wrist: float) -> tuple:
    q = [min(max(x, lo), hi) for x, lo, hi in zip(raw[:4], model.lower, model.upper)]
    return q + [wrist], [a != b for a, b in zip(raw[:4], q)] + [False]


def swivel_start(model: ArmModel, t: Sequence[Any], q0: Sequence[Any], ops: Ops) -> tuple:
    """``nn``'s answer."""
    if ops is not SCALAR:
        targets = _targets(t, ops)
        raw, _ = nn_angles(model, targets, q0[4])
        return _clamped(model, raw, q0[4], ops)
    phi = predict_swivel_one(model, t)
    q, violation = point(model, t, q0[4], phi)
    for off in FALLBACK_OFFSETS:
        if violation == 0.0:
            break
        q, violation = point(model, t, q0[4], phi + float(off))
    if violation != 0.0:
        q, _ = point(model, t, q0[4], phi)
    return _clamped_one(model, q, q0[4])


def cells_start(model: ArmModel, t: Sequence[Any], q0: Sequence[Any], ops: Ops) -> tuple:
    """``cells``' answer (Kim & Tarokh's cell lookup, :mod:`nao_ik.nn.cells`)."""
    from ..nn.cells import best

    targets = _targets(t, ops)
    n = targets.shape[0]
    raw, _ = best(model, targets, np.broadcast_to(np.asarray(q0[4], dtype=float), (n,)).copy())
    if ops is SCALAR:
        return _clamped_one(model, raw[0].tolist(), q0[4])
    return _clamped(model, raw, q0[4], ops)


def modular_start(model: ArmModel, t: Sequence[Any], q0: Sequence[Any], ops: Ops) -> tuple:
    """``nn-modular``'s first start: the answer of the expert with the smallest predicted error."""
    from ..nn import modular

    mod = modular.shipped()
    if ops is SCALAR:
        return _clamped_one(model, modular.best_answer_one(model, mod, t, q0[4]), q0[4])
    targets = _targets(t, ops)
    wrist = np.broadcast_to(np.asarray(q0[4], dtype=float), targets.shape[:1])
    raw = modular.answers(model, mod, targets, wrist, clamp=False)
    q = np.clip(raw, model.lower, model.upper)
    p = modular.predicted_errors(model, targets, q)
    best = p.argmin(axis=0)
    rows = np.arange(targets.shape[0])
    return _clamped(model, raw[best, rows], q0[4], ops)


def modular_seeds(model: ArmModel, targets: np.ndarray, wrist: np.ndarray) -> np.ndarray:
    """``nn-modular``'s restarts: the other experts' answers, then their representative postures."""
    from ..nn import modular

    return modular.restart_postures(model, modular.shipped(), targets, wrist)


def hold_loop(model: ArmModel, t: Sequence[Any], q0: Sequence[Any], tol: float, max_iter: int, ops: Ops) -> Run:
    """No iterations: the start is the answer (its error is measured)."""
    h = hand_point(arm(model), q0) if ops is SCALAR else chain(model, q0, ops).hand
    e0, e1, e2 = t[0] - h[0], t[1] - h[1], t[2] - h[2]
    return Run(list(q0), ops.sqrt(e0 * e0 + e1 * e1 + e2 * e2), 0)


__all__ = ["Start", "hold_loop", "modular_seeds", "modular_start", "paper_start", "swivel_start"]
